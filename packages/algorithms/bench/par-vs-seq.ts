/**
 * par vs seq on the CPU: reduce (plus) and transform (x * 3 + 1) over 2^24 f32, with tinybench,
 * against plain JS baselines (a for loop, Array.prototype.reduce / map, the typed array's own
 * reduce / map). Prints a markdown table for docs/benchmarks/cpu-par.md.
 *
 *   npx tsx packages/algorithms/bench/par-vs-seq.ts [--log2n 24] [--time 3000] [--paired] [--sweep]
 *
 * --paired adds seq/par measured in alternating rounds (the fairest ratio on a shared machine).
 * --sweep adds a table of reduce seq vs par (forced parallel, default chunking) at 2^12..2^20, to
 * place DEFAULT_PARALLEL_THRESHOLD.
 *
 * Rows named "shared" pass arrays from allocShared (no copies); rows named "plain" pass arrays over
 * a plain ArrayBuffer: the calling thread works on its share in place and copies the workers' share
 * into shared memory (and their output back) as they go. A whole-array copy is measured alone in its
 * own row.
 */
import { cpus } from 'node:os';
import { type GpuFunction, lambda, plus } from '@webdpl/core';
import { allocShared, type CpuBackend, createPool, DEFAULT_PARALLEL_THRESHOLD, toShared } from '@webdpl/policies';
import { Bench } from 'tinybench';
import { cpuReduce } from '../src/bricks/reduce';
import { cpuTransform } from '../src/bricks/transform';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const log2n = arg('log2n', 24);
const n = 2 ** log2n;
const timeMs = arg('time', 3000);

const pool = createPool();
const seq: CpuBackend = { kind: 'seq' };
const par: CpuBackend = { kind: 'par', pool };
const fn: GpuFunction = lambda((x: number) => x * 3 + 1);

const plain = new Float32Array(n);
for (let i = 0; i < n; i++) plain[i] = Math.random();
const shared = toShared(plain);
const array: number[] = Array.from(plain);
const plainOut = new Float32Array(n);
const sharedOut = allocShared('f32', n);
const stagingCopy = allocShared('f32', n);

let sink = 0;

interface Row {
  readonly group: string;
  readonly name: string;
  readonly run: () => unknown;
}

const rows: Row[] = [
  {
    group: 'reduce',
    name: 'JS for loop, f64 accumulator (`s += x[i]`)',
    run: () => {
      let s = 0;
      for (let i = 0; i < n; i++) s += plain[i] as number;
      sink += s;
    },
  },
  {
    group: 'reduce',
    name: 'JS for loop, f32 accumulator (`s = Math.fround(s + x[i])`)',
    run: () => {
      let s = 0;
      for (let i = 0; i < n; i++) s = Math.fround(s + (plain[i] as number));
      sink += s;
    },
  },
  {
    group: 'reduce',
    name: 'Array.prototype.reduce on number[]',
    run: () => (sink += array.reduce((a, b) => a + b, 0)),
  },
  { group: 'reduce', name: 'Float32Array.prototype.reduce', run: () => (sink += plain.reduce((a, b) => a + b, 0)) },
  {
    group: 'reduce',
    name: 'cpuReduce seq (plain array)',
    run: async () => (sink += await cpuReduce(seq, plain, 0, plus)),
  },
  {
    group: 'reduce',
    name: 'cpuReduce par (shared array)',
    run: async () => (sink += await cpuReduce(par, shared, 0, plus)),
  },
  {
    group: 'reduce',
    name: "cpuReduce par (plain array: workers' share copied to shared memory)",
    run: async () => (sink += await cpuReduce(par, plain, 0, plus)),
  },
  {
    group: 'copy',
    name: 'toShared: new 64 MiB SharedArrayBuffer + copy (first touch of fresh pages)',
    run: () => (sink += toShared(plain).length),
  },
  {
    group: 'copy',
    name: 'copy of the input into reused shared memory (what par does for a plain input)',
    run: () => stagingCopy.set(plain),
  },
  {
    group: 'transform',
    name: 'JS for loop (`y[i] = x[i] * 3 + 1`)',
    run: () => {
      for (let i = 0; i < n; i++) plainOut[i] = (plain[i] as number) * 3 + 1;
    },
  },
  {
    group: 'transform',
    name: 'Array.prototype.map on number[]',
    run: () => (sink += array.map((v) => v * 3 + 1).length),
  },
  { group: 'transform', name: 'Float32Array.prototype.map', run: () => (sink += plain.map((v) => v * 3 + 1).length) },
  { group: 'transform', name: 'cpuTransform seq (plain arrays)', run: () => cpuTransform(seq, plain, plainOut, fn) },
  { group: 'transform', name: 'cpuTransform par (shared arrays)', run: () => cpuTransform(par, shared, sharedOut, fn) },
  {
    group: 'transform',
    name: "cpuTransform par (plain arrays: workers' share copied in and back)",
    run: () => cpuTransform(par, plain, plainOut, fn),
  },
];

async function check(): Promise<void> {
  let exact = 0;
  for (let i = 0; i < n; i++) exact += plain[i] as number;
  for (const b of [seq, par]) {
    const r = await cpuReduce(b, shared, 0, plus);
    if (Math.abs(r - exact) > 1e-3 * exact) throw new Error(`reduce ${b.kind}: ${r} vs ${exact}`);
    // The lambda has WGSL f32 semantics: each operation rounds to f32.
    await cpuTransform(b, shared, sharedOut, fn);
    for (let i = 0; i < n; i += 4099) {
      if (sharedOut[i] !== Math.fround(Math.fround((plain[i] as number) * 3) + 1))
        throw new Error(`transform ${b.kind} at ${i}`);
    }
  }
}

/**
 * How many cores this process can get right now: the same busy loop on 1 worker, then on 2 workers
 * at once. 2 means two free cores; about 1 means the scheduler gives this process one core's worth
 * (Linux autogroup shares CPU per session, so other sessions' load caps a process, not a thread).
 */
async function availableParallelism(): Promise<number> {
  const spin = (ms: number) => {
    const t0 = performance.now();
    let ops = 0;
    while (performance.now() - t0 < ms) {
      for (let i = 0; i < 10000; i++) ops += i & 1;
    }
    return ops;
  };
  const probe = createPool({ size: 2 });
  try {
    await probe.run(spin, [50, 50]);
    const one = (await probe.run(spin, [1000]))[0] as number;
    const two = await probe.run(spin, [1000, 1000]);
    return (two[0] as number) / one + (two[1] as number) / one;
  } finally {
    await probe.close();
  }
}

await check();
const parallelismBefore = await availableParallelism();
const results = new Map<string, { p50: number; mean: number; min: number; rme: number; samples: number }>();
for (const row of rows) {
  const bench = new Bench({ time: timeMs, iterations: 10, warmupTime: 500, warmupIterations: 3, throws: true });
  bench.add(row.name, async () => {
    await row.run();
  });
  await bench.run();
  const r = bench.tasks[0]?.result;
  if (!r || !('latency' in r)) throw new Error(`no result for ${row.name}`);
  const lat = r.latency;
  results.set(row.name, { p50: lat.p50, mean: lat.mean, min: lat.min, rme: lat.rme, samples: lat.samplesCount });
  process.stderr.write(`${row.name}: p50 ${lat.p50.toFixed(2)} ms\n`);
}

async function timeP50(run: () => unknown, time: number): Promise<number> {
  const bench = new Bench({ time, iterations: 20, warmupTime: 100, warmupIterations: 5, throws: true });
  bench.add('t', async () => {
    await run();
  });
  await bench.run();
  const r = bench.tasks[0]?.result;
  if (!r || !('latency' in r)) throw new Error('no result');
  return r.latency.p50;
}

/**
 * seq and par measured in alternation (rounds of 400 ms each), so both see the same load when the
 * machine is shared: the median of the per-round ratios is the speedup least skewed by load changes.
 */
async function paired(seqRun: () => unknown, parRun: () => unknown, rounds: number): Promise<string> {
  const ratios: number[] = [];
  const seqMs: number[] = [];
  const parMs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const a = await timeP50(seqRun, 400);
    const b = await timeP50(parRun, 400);
    seqMs.push(a);
    parMs.push(b);
    ratios.push(a / b);
  }
  const med = (v: number[]) => {
    const sorted = [...v].sort((x, y) => x - y);
    return sorted[sorted.length >> 1] as number;
  };
  return `seq ${med(seqMs).toFixed(2)} ms, par ${med(parMs).toFixed(2)} ms, median ratio ${med(ratios).toFixed(2)}x (rounds: ${ratios.map((x) => x.toFixed(2)).join(' ')})`;
}

const pairedLines: string[] = [];
if (process.argv.includes('--paired')) {
  pairedLines.push('', 'Paired rounds (seq and par alternating, shared arrays):', '');
  pairedLines.push(
    `- reduce: ${await paired(
      () => cpuReduce(seq, shared, 0, plus),
      () => cpuReduce(par, shared, 0, plus),
      8,
    )}`,
  );
  pairedLines.push(
    `- transform: ${await paired(
      () => cpuTransform(seq, shared, sharedOut, fn),
      () => cpuTransform(par, shared, sharedOut, fn),
      8,
    )}`,
  );
}

const sweep: string[] = [];
if (process.argv.includes('--sweep')) {
  const forced: CpuBackend = { kind: 'par', pool, tuning: { parallelThreshold: 0 } };
  sweep.push(
    '',
    `Break-even sweep (reduce plus f32; par forced, default chunking; current threshold 2^${Math.log2(DEFAULT_PARALLEL_THRESHOLD)}):`,
    '',
  );
  sweep.push('| n | seq ms | par shared ms | par plain ms | par shared / seq | par plain / seq |');
  sweep.push('|---:|---:|---:|---:|---:|---:|');
  for (let k = 12; k <= 20; k++) {
    const m = 2 ** k;
    const xs = shared.subarray(0, m);
    const xp = plain.subarray(0, m);
    const tSeq = await timeP50(() => cpuReduce(seq, xp, 0, plus), 300);
    const tShared = await timeP50(() => cpuReduce(forced, xs, 0, plus), 300);
    const tPlain = await timeP50(() => cpuReduce(forced, xp, 0, plus), 300);
    sweep.push(
      `| 2^${k} | ${tSeq.toFixed(3)} | ${tShared.toFixed(3)} | ${tPlain.toFixed(3)} | ${(tSeq / tShared).toFixed(2)}x | ${(tSeq / tPlain).toFixed(2)}x |`,
    );
    process.stderr.write(`sweep 2^${k} done\n`);
  }
}
await pool.close();
const parallelismAfter = await availableParallelism();

const ms = (name: string) => results.get(name)?.p50 ?? Number.NaN;
const lines: string[] = [];
lines.push(`n = 2^${log2n} f32, ${pool.size} workers; median (p50) of tinybench samples, ${timeMs} ms per row`);
lines.push('');
lines.push('| op | row | median ms | mean ms | min ms | ±rme | samples | M elem/s | vs seq |');
lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|');
for (const row of rows) {
  const r = results.get(row.name);
  if (!r) continue;
  const seqName = row.group === 'reduce' ? 'cpuReduce seq (plain array)' : 'cpuTransform seq (plain arrays)';
  const vs = row.group === 'copy' ? '' : `${(ms(seqName) / r.p50).toFixed(2)}x`;
  lines.push(
    `| ${row.group} | ${row.name} | ${r.p50.toFixed(2)} | ${r.mean.toFixed(2)} | ${r.min.toFixed(2)} | ${r.rme.toFixed(1)}% | ${r.samples} | ${(n / r.p50 / 1e3).toFixed(0)} | ${vs} |`,
  );
}
lines.push('');
lines.push(
  `Speedup par/seq (shared arrays): reduce ${(ms('cpuReduce seq (plain array)') / ms('cpuReduce par (shared array)')).toFixed(2)}x, transform ${(ms('cpuTransform seq (plain arrays)') / ms('cpuTransform par (shared arrays)')).toFixed(2)}x`,
);
lines.push(
  `Machine: ${cpus().length} logical cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, ${new Date().toISOString()}, load average ${(
    await import('node:os')
  )
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
lines.push(
  `Cores available to this process (2 workers spinning 1 s vs 1 worker): ${parallelismBefore.toFixed(2)} before, ${parallelismAfter.toFixed(2)} after`,
);
console.log([...lines, ...pairedLines, ...sweep].join('\n'));
if (sink === 42) console.log('');
