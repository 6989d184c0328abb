/**
 * The CPU bricks against the best plain-JS loop, and par against seq, measured in interleaved rounds
 * (every variant of a row once per round, the order rotating), so a shared machine's load changes
 * hit every variant alike. Prints a markdown table for docs/benchmarks/cpu-bricks.md.
 *
 *   npx tsx packages/algorithms/bench/par-vs-seq.ts [--sizes 10,20,22,24] [--rounds 5] [--time 150]
 *       [--only reduce-u32,countIf-f32] [--front] [--min]
 *
 * Rows are the entries of `pnpm bench` that run on the bricks (same data shapes and plain-JS loops):
 * reduce u32/f32, transformReduce f32 (x*x), countIf f32 (x > 0.5), inclusive/exclusive scans
 * u32/f32, transform f32 (x*2+1), fill u32, copy u32. Functions are written as inline arrow
 * functions in the timed call and normalized with `toGpuFunction`, as the algorithm fronts do, so a
 * per-call lambda cost shows. Variants: `js` (the fastest plain loop of the entry), `seq` (the
 * brick), `par` on plain arrays and `par shared` on `allocShared` arrays; with `--front`, also the
 * public algorithm on seq (what the front adds over the brick).
 * Figures: the median over rounds of each variant's median call time, and the median over rounds
 * of the per-round ratios (seq speed / js speed, par / seq).
 */
import { cpus, loadavg } from 'node:os';
import { type GpuFunction, type HostArray, plus, toGpuFunction } from '@webdpl/core';
import { allocShared, type CpuBackend, createPool, type Policy } from '@webdpl/policies';
import { cpuFill } from '../src/bricks/map';
import { cpuCountIf, cpuReduce, cpuTransformReduce } from '../src/bricks/reduce';
import { cpuExclusiveScan, cpuInclusiveScan } from '../src/bricks/scan';
import { cpuTransform } from '../src/bricks/transform';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] as string) : fallback;
}

const sizes = arg('sizes', '10,20,22,24').split(',').map(Number);
const rounds = Number(arg('rounds', '5'));
const budgetMs = Number(arg('time', '150'));
const only = arg('only', '').split(',').filter(Boolean);
const withFront = process.argv.includes('--front');
const useMin = process.argv.includes('--min');

const pool = createPool();
const seq: CpuBackend = { kind: 'seq' };
const par: CpuBackend = { kind: 'par', pool };

type Api = Record<string, (policy: Policy, ...args: unknown[]) => Promise<unknown>>;
let api: Api | undefined;
let execution: { seq: Policy } | undefined;
if (withFront) {
  api = (await import('../src/index')) as unknown as Api;
  execution = (await import('@webdpl/policies')).execution as unknown as { seq: Policy };
}

/** Same generator as the bench's data (xorshift32); f32 uniform in [0, 1). */
function makeU32(n: number): Uint32Array {
  const a = new Uint32Array(n);
  let s = 2463534242;
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    a[i] = s;
  }
  return a;
}

interface Arrays {
  readonly u32: Uint32Array;
  readonly f32: Float32Array;
  readonly u32s: Uint32Array;
  readonly f32s: Float32Array;
  readonly outU32: Uint32Array;
  readonly outF32: Float32Array;
  readonly outU32s: Uint32Array;
  readonly outF32s: Float32Array;
}

function arrays(n: number): Arrays {
  const u32 = makeU32(n);
  const f32 = Float32Array.from(u32, (v) => v / 2 ** 32);
  const u32s = allocShared('u32', n);
  u32s.set(u32);
  const f32s = allocShared('f32', n);
  f32s.set(f32);
  return {
    u32,
    f32,
    u32s,
    f32s,
    outU32: new Uint32Array(n),
    outF32: new Float32Array(n),
    outU32s: allocShared('u32', n),
    outF32s: allocShared('f32', n),
  };
}

/** A row: the plain loop, and the brick call on a backend with plain or shared arrays. */
interface Row {
  readonly id: string;
  js(a: Arrays): unknown;
  brick(b: CpuBackend, a: Arrays, shared: boolean): Promise<unknown>;
  /** The public algorithm (with --front). */
  front?(policy: Policy, a: Arrays): Promise<unknown>;
}

const pred = (f: unknown) => toGpuFunction(f, 'pred', 1);
const ins = (a: Arrays, s: boolean, t: 'u32' | 'f32'): HostArray =>
  t === 'u32' ? (s ? a.u32s : a.u32) : s ? a.f32s : a.f32;
const outs = (a: Arrays, s: boolean, t: 'u32' | 'f32'): HostArray =>
  t === 'u32' ? (s ? a.outU32s : a.outU32) : s ? a.outF32s : a.outF32;

function scanRow(kind: 'inclusive' | 'exclusive', t: 'u32' | 'f32'): Row {
  const name = kind === 'inclusive' ? 'inclusiveScan' : 'exclusiveScan';
  return {
    id: `${name}-${t}`,
    js: (a) => {
      const x = ins(a, false, t);
      const y = outs(a, false, t);
      let s = 0;
      if (t === 'u32') {
        for (let i = 0; i < x.length; i++) {
          if (kind === 'exclusive') y[i] = s;
          s = (s + (x[i] as number)) >>> 0;
          if (kind === 'inclusive') y[i] = s;
        }
      } else {
        for (let i = 0; i < x.length; i++) {
          if (kind === 'exclusive') y[i] = s;
          s += x[i] as number;
          if (kind === 'inclusive') y[i] = s;
        }
      }
      return y;
    },
    brick: (b, a, s) =>
      kind === 'inclusive'
        ? cpuInclusiveScan(b, ins(a, s, t), outs(a, s, t), plus)
        : cpuExclusiveScan(b, ins(a, s, t), outs(a, s, t), plus, 0),
    front: (p, a) =>
      kind === 'inclusive'
        ? ((api as Api)[name]?.(p, ins(a, false, t), outs(a, false, t)) as Promise<unknown>)
        : ((api as Api)[name]?.(p, ins(a, false, t), outs(a, false, t), 0) as Promise<unknown>),
  };
}

function reduceRow(t: 'u32' | 'f32'): Row {
  return {
    id: `reduce-${t}`,
    js: (a) => {
      let s = 0;
      if (t === 'u32') {
        const x = a.u32;
        for (let i = 0; i < x.length; i++) s = (s + (x[i] as number)) >>> 0;
      } else {
        const x = a.f32;
        for (let i = 0; i < x.length; i++) s += x[i] as number;
      }
      return s;
    },
    brick: (b, a, s) => cpuReduce(b, ins(a, s, t), 0, plus),
    front: (p, a) => (api as Api).reduce?.(p, ins(a, false, t)) as Promise<unknown>,
  };
}

const ROWS: Row[] = [
  reduceRow('u32'),
  reduceRow('f32'),
  {
    id: 'transformReduce-f32',
    js: (a) => {
      const x = a.f32;
      let s = 0;
      for (let i = 0; i < x.length; i++) s += (x[i] as number) * (x[i] as number);
      return s;
    },
    brick: (b, a, s) =>
      cpuTransformReduce(
        b,
        ins(a, s, 'f32'),
        0,
        plus,
        pred((x: number) => x * x),
      ),
    front: (p, a) => (api as Api).transformReduce?.(p, a.f32, 0, plus, (x: number) => x * x) as Promise<unknown>,
  },
  {
    id: 'countIf-f32',
    js: (a) => {
      const x = a.f32;
      let k = 0;
      for (let i = 0; i < x.length; i++) if ((x[i] as number) > 0.5) k++;
      return k;
    },
    brick: (b, a, s) =>
      cpuCountIf(
        b,
        ins(a, s, 'f32'),
        pred((x: number) => x > 0.5),
      ),
    front: (p, a) => (api as Api).countIf?.(p, a.f32, (x: number) => x > 0.5) as Promise<unknown>,
  },
  scanRow('inclusive', 'u32'),
  scanRow('exclusive', 'u32'),
  scanRow('inclusive', 'f32'),
  scanRow('exclusive', 'f32'),
  {
    id: 'transform-f32',
    js: (a) => {
      const x = a.f32;
      const y = a.outF32;
      for (let i = 0; i < x.length; i++) y[i] = (x[i] as number) * 2 + 1;
      return y;
    },
    brick: (b, a, s) =>
      cpuTransform(
        b,
        ins(a, s, 'f32'),
        outs(a, s, 'f32'),
        toGpuFunction((x: number) => x * 2 + 1, 'fn', 1) as GpuFunction,
      ),
    front: (p, a) => (api as Api).transform?.(p, a.f32, a.outF32, (x: number) => x * 2 + 1) as Promise<unknown>,
  },
  {
    id: 'fill-u32',
    js: (a) => a.outU32.fill(7),
    brick: (b, a, s) => cpuFill(b, 0, outs(a, s, 'u32'), a.u32.length, 7, 'u32'),
    front: (p, a) => (api as Api).fill?.(p, a.outU32, 7) as Promise<unknown>,
  },
  {
    id: 'copy-u32',
    js: (a) => a.outU32.set(a.u32),
    brick: (b, a, s) => cpuFill(b, 2, outs(a, s, 'u32'), a.u32.length, 0, 'u32', ins(a, s, 'u32')),
    front: (p, a) => (api as Api).copy?.(p, a.u32, a.outU32) as Promise<unknown>,
  },
];

/**
 * Call time (ms) of `run` over about `budget` ms (at least 3 calls): the median, or with `--min` the
 * fastest sample (steadier on a loaded machine: other processes only ever add time).
 */
async function timeIt(run: () => unknown, budget: number): Promise<number> {
  const t0 = performance.now();
  await run();
  const first = performance.now() - t0;
  const reps = Math.max(3, Math.min(20000, Math.floor(budget / Math.max(first, 0.0005))));
  // Batches of calls for tiny calls, so the timer's resolution does not dominate.
  const batch = first < 0.05 ? Math.max(1, Math.floor(0.05 / Math.max(first, 0.0005))) : 1;
  const samples: number[] = [];
  for (let r = 0; r < reps; r += batch) {
    const s = performance.now();
    for (let k = 0; k < batch; k++) {
      const v = run();
      if (v instanceof Promise) await v;
    }
    samples.push((performance.now() - s) / batch);
  }
  samples.sort((x, y) => x - y);
  return useMin ? (samples[0] as number) : (samples[samples.length >> 1] as number);
}

const med = (v: number[]) => [...v].sort((x, y) => x - y)[v.length >> 1] as number;

interface Variant {
  readonly name: string;
  readonly run: () => unknown;
}

const lines: string[] = [];
lines.push(
  `| row | n | js ms | seq ms | seq vs js | par ms | par / seq | par shared ms | par shared / seq |${withFront ? ' front seq ms | front / brick |' : ''}`,
);
lines.push(`|---|---:|---:|---:|---:|---:|---:|---:|---:|${withFront ? '---:|---:|' : ''}`);
for (const log2 of sizes) {
  const n = 2 ** log2;
  const a = arrays(n);
  for (const row of ROWS) {
    if (only.length > 0 && !only.includes(row.id)) continue;
    const variants: Variant[] = [
      { name: 'js', run: () => row.js(a) },
      { name: 'seq', run: () => row.brick(seq, a, false) },
      { name: 'par', run: () => row.brick(par, a, false) },
      { name: 'parShared', run: () => row.brick(par, a, true) },
    ];
    if (withFront && row.front && execution) {
      const policy = execution.seq;
      variants.push({ name: 'front', run: () => (row.front as NonNullable<Row['front']>)(policy, a) });
    }
    const ms = new Map<string, number[]>(variants.map((v) => [v.name, []]));
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < variants.length; k++) {
        const v = variants[(k + r) % variants.length] as Variant;
        (ms.get(v.name) as number[]).push(await timeIt(v.run, budgetMs));
      }
    }
    const m = (name: string) => med(ms.get(name) ?? [Number.NaN]);
    const ratio = (num: string, den: string) =>
      med((ms.get(num) ?? []).map((t, i) => t / ((ms.get(den) ?? [])[i] as number))).toFixed(2);
    const f = (t: number) => (t < 0.1 ? t.toFixed(4) : t.toFixed(2));
    lines.push(
      `| ${row.id} | 2^${log2} | ${f(m('js'))} | ${f(m('seq'))} | ${ratio('js', 'seq')}x | ${f(m('par'))} | ${ratio('seq', 'par')}x | ${f(m('parShared'))} | ${ratio('seq', 'parShared')}x |${
        withFront ? ` ${f(m('front'))} | ${ratio('front', 'seq')}x |` : ''
      }`,
    );
    process.stderr.write(`${lines.at(-1)}\n`);
  }
}
await pool.close();
console.log(
  [
    `Machine: ${cpus().length} logical cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, ${new Date().toISOString()}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(
        ' ',
      )}; ${rounds} interleaved rounds of ${budgetMs} ms per variant, ${useMin ? 'fastest' : 'median'} call per round`,
    '',
    ...lines,
  ].join('\n'),
);
