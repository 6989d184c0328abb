/**
 * par / seq of the issue-16 catalogue on the CPU (docs/benchmarks/cpu-catalogue-par-2026-11-24.md):
 * reduceByKey, uniqueByKey, inclusiveScanByKey, exclusiveScanByKey, histogram, merge, mergeByKey,
 * the four set operations, nthElement, partialSort and topK, u32 elements, on plain typed arrays
 * and on allocShared arrays.
 *
 * Per algorithm and size: one warm-up call of each variant, then `rounds` rounds in which seq plain,
 * par plain, par plain staged (an explicit parallelThreshold, which makes par copy plain arrays into
 * shared memory where the default keeps them seq), seq shared and par shared run once each in turn
 * (interleaved, so a noisy neighbour hits all alike); the medians are printed with par/seq for plain
 * arrays, staged plain arrays and shared arrays. In-place
 * algorithms (nthElement, partialSort) get a fresh copy of their input before each call, outside
 * the timing. The load average is printed before and after: on a 2-core machine with another busy
 * process par cannot reach 2x, so read the figures together with the load.
 *
 * At the end it lists the rows whose par/seq is below 1.7x on allocShared arrays (issue 16's target)
 * and the cells below 0.95x (par slower than seq beyond noise; issue 11), to read beside the load.
 * The last two columns are par/seq of the minimum times (plain, shared): on a shared machine the
 * fastest round of each variant is the one least disturbed by other processes, so they estimate
 * what a quiet machine gives; the medians are what this run's machine gave.
 *
 * Run bundled, under plain node (under tsx the calling thread ran the merge kernel 40% slower than
 * the workers, which skews seq and par alike; docs/benchmarks/cpu-catalogue-par-2026-11-24b.md):
 *   node_modules/.bin/esbuild scripts/probe/cpu-catalogue-par.ts --bundle --platform=node --format=esm \
 *     --outfile=/tmp/probe.mjs --external:webgpu && node /tmp/probe.mjs [log2 sizes, default 22,24] [rounds, default 7] [algorithms]
 * (~70-90 s with the defaults on the 2-core VM; `16,17,18,19,20 9` checks the par minimums in ~10 s)
 */
import { loadavg } from 'node:os';
import {
  exclusiveScanByKey,
  histogram,
  inclusiveScanByKey,
  merge,
  mergeByKey,
  nthElement,
  partialSort,
  reduceByKey,
  setDifference,
  setIntersection,
  setSymmetricDifference,
  setUnion,
  topK,
  uniqueByKey,
} from '../../packages/algorithms/src/index';
import { allocShared, defaultPool, execution, makeHostPolicy } from '../../packages/policies/src/index';

const sizes = (process.argv[2] ?? '22,24').split(',').map(Number);
const rounds = Number(process.argv[3] ?? 7);
const only = process.argv[4]?.split(',');

type Policy = typeof execution.seq | typeof execution.par;

/**
 * par with the default threshold set explicitly: an explicit parallelThreshold makes par stage plain
 * arrays in shared memory where the default keeps them seq, so 'staged' shows what that would cost.
 */
const staged: Policy = makeHostPolicy('par', { tuning: { '*': { parallelThreshold: 1 << 16 } } });

/** An array of n u32 from `f`, plain or shared. */
function u32(n: number, shared: boolean, f: (i: number) => number): Uint32Array {
  const a = shared ? (allocShared('u32', n) as Uint32Array) : new Uint32Array(n);
  for (let i = 0; i < n; i++) a[i] = f(i);
  return a;
}

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s;
  };
}

/** One algorithm's call over arrays made for it: `prep` (untimed) then `run`. */
interface Case {
  readonly prep?: () => void;
  readonly run: (p: Policy) => Promise<unknown>;
}

/** The cases of each algorithm over n elements, plain or shared. */
function cases(n: number, shared: boolean): Record<string, () => Case> {
  const arr = (f: (i: number) => number) => u32(n, shared, f);
  const out = (m: number) => u32(m, shared, () => 0);
  let keys: Uint32Array | undefined;
  let vals: Uint32Array | undefined;
  const byKeyInputs = () => {
    keys ??= arr((i) => i >>> 4); // runs of 16
    const r = lcg(12345);
    vals ??= arr(() => r() >>> 8);
    return { k: keys, v: vals };
  };
  // Two sorted halves of n / 2 each (random values, so about 1 in 4 equal across a and b at n/2 values).
  const sortedHalves = () => {
    const ra = lcg(1);
    const rb = lcg(2);
    const h = n >>> 1;
    const a = Uint32Array.from({ length: h }, () => ra() % (n >>> 1)).sort();
    const b = Uint32Array.from({ length: h }, () => rb() % (n >>> 1)).sort();
    return { a: u32(h, shared, (i) => a[i] as number), b: u32(h, shared, (i) => b[i] as number) };
  };
  const setCase = (f: typeof setUnion) => () => {
    const { a, b } = sortedHalves();
    const o = out(n);
    return { run: (p: Policy) => f(p, a, b, o) };
  };
  const random = () => {
    const r = lcg(7);
    return arr(() => r());
  };
  const inPlace = (f: (p: Policy, d: Uint32Array) => Promise<unknown>) => () => {
    const src = random();
    const d = out(n);
    return { prep: () => d.set(src), run: (p: Policy) => f(p, d) };
  };
  return {
    reduceByKey: () => {
      const { k, v } = byKeyInputs();
      const ko = out(n >>> 4);
      const vo = out(n >>> 4);
      return { run: (p) => reduceByKey(p, k, v, ko, vo) };
    },
    uniqueByKey: () => {
      const { k, v } = byKeyInputs();
      const ko = out(n >>> 4);
      const vo = out(n >>> 4);
      return { run: (p) => uniqueByKey(p, k, v, ko, vo) };
    },
    inclusiveScanByKey: () => {
      const { k, v } = byKeyInputs();
      const o = out(n);
      return { run: (p) => inclusiveScanByKey(p, k, v, o) };
    },
    exclusiveScanByKey: () => {
      const { k, v } = byKeyInputs();
      const o = out(n);
      return { run: (p) => exclusiveScanByKey(p, k, v, o, 0) };
    },
    histogram: () => {
      const x = random();
      const o = out(256);
      return { run: (p) => histogram(p, x, { bins: 256, lo: 0, hi: 2 ** 32 }, o) };
    },
    histogramEven: () => {
      // Bins of a width that is no power of two (the 'div' loop) over half the values.
      const x = random();
      const o = out(1000);
      return { run: (p) => histogram(p, x, { bins: 1000, lo: 0, hi: 3_000_000_000 }, o) };
    },
    merge: () => {
      const { a, b } = sortedHalves();
      const o = out(n);
      return { run: (p) => merge(p, a, b, o) };
    },
    mergeByKey: () => {
      const { a, b } = sortedHalves();
      const va = arr((i) => i).subarray(0, a.length);
      const vb = arr((i) => i + 1).subarray(0, b.length);
      const ko = out(n);
      const vo = out(n);
      return { run: (p) => mergeByKey(p, a, b, va, vb, ko, vo) };
    },
    setUnion: setCase(setUnion),
    setIntersection: setCase(setIntersection),
    setDifference: setCase(setDifference),
    setSymmetricDifference: setCase(setSymmetricDifference),
    nthElement: inPlace((p, d) => nthElement(p, d, n >>> 1)),
    partialSort: inPlace((p, d) => partialSort(p, d, 1024)),
    partialSortHalf: inPlace((p, d) => partialSort(p, d, n >>> 1)),
    topK: () => {
      const x = random();
      const o = out(n >>> 2);
      return { run: (p) => topK(p, x, n >>> 2, o) };
    },
  };
}

function median(a: number[]): number {
  const s = [...a].sort((x, y) => x - y);
  return s[s.length >> 1] as number;
}

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

async function time(c: Case, p: Policy): Promise<number> {
  c.prep?.();
  const t0 = performance.now();
  await c.run(p);
  return performance.now() - t0;
}

async function main() {
  await defaultPool().run((x: number) => x, [1, 2]);
  const below17: string[] = [];
  const belowSeq: string[] = [];
  const t0 = performance.now();
  console.log(
    `cpu-catalogue-par: node ${process.version}, ${defaultPool().size} workers, sizes 2^${sizes.join(',2^')}, ${rounds} rounds, ${new Date().toISOString()}, load ${load()}`,
  );
  console.log(
    'algorithm         size  seq plain  par plain  par/seq  p.staged st./seq | seq shared par shared par/seq | by minimum: plain shared  (medians, ms)',
  );
  for (const lg of sizes) {
    const n = 2 ** lg;
    const plain = cases(n, false);
    const shr = cases(n, true);
    for (const name of Object.keys(plain)) {
      if (only && !only.includes(name)) continue;
      const cp = (plain[name] as () => Case)();
      const cs = (shr[name] as () => Case)();
      const variants: [Case, Policy][] = [
        [cp, execution.seq],
        [cp, execution.par],
        [cp, staged],
        [cs, execution.seq],
        [cs, execution.par],
      ];
      for (const [c, p] of variants) await time(c, p);
      const t = variants.map(() => [] as number[]);
      for (let r = 0; r < rounds; r++) {
        for (let j = 0; j < variants.length; j++) {
          const [c, p] = variants[j] as [Case, Policy];
          (t[j] as number[]).push(await time(c, p));
        }
      }
      const [sp, pp, st, ss, ps] = t.map(median) as [number, number, number, number, number];
      const [mSp, mPp, , mSs, mPs] = t.map((x) => Math.min(...x)) as [number, number, number, number, number];
      if (ss / ps < 1.7) below17.push(`${name} 2^${lg} ${(ss / ps).toFixed(2)}x`);
      for (const [what, r] of [
        ['plain', sp / pp],
        ['shared', ss / ps],
      ] as const) {
        if (r < 0.95) belowSeq.push(`${name} 2^${lg} ${what} ${r.toFixed(2)}x`);
      }
      const f = (x: number, w: number) => x.toFixed(1).padStart(w);
      const r = (x: number, w: number) => `${x.toFixed(2).padStart(w)}x`;
      console.log(
        `${name.padEnd(22)} 2^${lg} ${f(sp, 8)} ${f(pp, 9)} ${r(sp / pp, 7)} ${f(st, 9)} ${r(sp / st, 7)} | ${f(ss, 9)} ${f(ps, 9)} ${r(ss / ps, 6)} | ${r(mSp / mPp, 5)} ${r(mSs / mPs, 5)}`,
      );
    }
  }
  console.log(`allocShared par/seq below 1.7x: ${below17.join('; ') || 'none'}`);
  console.log(`par below 0.95x seq (default par, plain or shared): ${belowSeq.join('; ') || 'none'}`);
  console.log(`done in ${((performance.now() - t0) / 1000).toFixed(0)} s, load ${load()}`);
  await defaultPool().close();
  process.exit(0);
}

void main();
