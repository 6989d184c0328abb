/**
 * CPU sort benchmark: TypedArray#sort against webdpl's sort under execution.seq (single-thread LSD
 * radix sort) and execution.par (parallel LSD radix sort on the worker pool), for u32 and f32 keys,
 * plus sortByKey (u32 pairs) and a lambda comparator sort. Every timed call sorts a fresh copy of
 * the same random input (restored untimed before each call); the first call's result is checked.
 *
 *   npx tsx packages/algorithms/bench/sort-cpu.ts [log2 n = 24] [time budget ms per task = 4000]
 *
 * Results go to stdout as a Markdown table (docs/benchmarks/sort-cpu.md records them).
 */
import { createRequire } from 'node:module';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { execution } from '@webdpl/policies';
import { sort, sortByKey } from '../src/index';
import { rng } from './xorshift';

// tinybench is a dependency of @webdpl/bench; resolve it from there.
const benchRequire = createRequire(new URL('../../bench/package.json', import.meta.url));
/** The part of tinybench's API used here (the package is not a dependency of @webdpl/algorithms). */
interface Latency {
  readonly p50: number;
  readonly mean: number;
  readonly samplesCount: number;
}
interface TinyBench {
  add(name: string, fn: () => unknown, hooks?: { beforeEach?: () => void }): TinyBench;
  run(): Promise<unknown>;
  readonly tasks: readonly { readonly name: string; readonly result?: { readonly latency?: Latency } }[];
}
const { Bench } = (await import(pathToFileURL(benchRequire.resolve('tinybench')).href)) as {
  Bench: new (options: { time: number; iterations: number; warmup: boolean; throws: boolean }) => TinyBench;
};

const log2 = Number(process.argv[2] ?? 24);
const budget = Number(process.argv[3] ?? 4000);
const n = 2 ** log2;

const r = rng(12345);
const u32 = new Uint32Array(n);
for (let i = 0; i < n; i++) u32[i] = r();
const f32 = new Float32Array(n);
for (let i = 0; i < n; i++) f32[i] = (r() / 2 ** 32) * 2e6 - 1e6;
const vals = Uint32Array.from({ length: n }, (_, i) => i);

function check(name: string, got: Uint32Array | Float32Array, want: Uint32Array | Float32Array): void {
  for (let i = 0; i < want.length; i++) {
    if (!Object.is(got[i], want[i])) throw new Error(`${name}: wrong result at ${i}: ${got[i]} vs ${want[i]}`);
  }
}

const wantU = u32.slice().sort();
const wantF = f32.slice().sort();
const workU = u32.slice();
const workF = f32.slice();
const workV = vals.slice();
const byHigh = (a: number, b: number) => a >>> 8 < b >>> 8;

// Probe calls: warm the pool (workers start lazily) and check results once.
await sort(execution.par, workU);
check('par u32', workU, wantU);
workF.set(f32);
await sort(execution.par, workF);
check('par f32', workF, wantF);
workU.set(u32);
await sort(execution.seq, workU);
check('seq u32', workU, wantU);

const bench = new Bench({ time: budget, iterations: 3, warmup: false, throws: true });
const restoreU = { beforeEach: () => workU.set(u32) };
const restoreF = { beforeEach: () => workF.set(f32) };
const restoreKV = {
  beforeEach: () => {
    workU.set(u32);
    workV.set(vals);
  },
};
bench
  .add('u32 TypedArray#sort', () => void workU.sort(), restoreU)
  .add('u32 sort(seq)', () => sort(execution.seq, workU), restoreU)
  .add('u32 sort(par)', () => sort(execution.par, workU), restoreU)
  .add('f32 TypedArray#sort', () => void workF.sort(), restoreF)
  .add('f32 sort(seq)', () => sort(execution.seq, workF), restoreF)
  .add('f32 sort(par)', () => sort(execution.par, workF), restoreF)
  .add('u32 pairs sortByKey(seq)', () => sortByKey(execution.seq, workU, workV), restoreKV)
  .add('u32 pairs sortByKey(par)', () => sortByKey(execution.par, workU, workV), restoreKV)
  .add('u32 lambda sort(seq) (a>>>8 < b>>>8)', () => sort(execution.seq, workU, byHigh), restoreU)
  .add('u32 lambda sort(par) (a>>>8 < b>>>8)', () => sort(execution.par, workU, byHigh), restoreU);
await bench.run();

const ms = (name: string) => {
  const latency = bench.tasks.find((x) => x.name === name)?.result?.latency;
  if (!latency) throw new Error(`no result for ${name}`);
  return latency;
};
const base = { u32: ms('u32 TypedArray#sort').p50, f32: ms('f32 TypedArray#sort').p50 };
console.log(`date: ${new Date().toISOString()}`);
console.log(
  `machine: ${os.cpus()[0]?.model ?? 'unknown'} x ${os.availableParallelism()} logical cores, node ${process.version}`,
);
console.log(
  `load average at the end: ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
console.log(`n = 2^${log2} keys, budget ${budget} ms per task\n`);
console.log('| task | median ms | mean ms | samples | vs TypedArray#sort |');
console.log('|---|---:|---:|---:|---:|');
for (const t of bench.tasks) {
  const l = ms(t.name);
  const ref = t.name.startsWith('f32') ? base.f32 : base.u32;
  console.log(
    `| ${t.name} | ${l.p50.toFixed(1)} | ${l.mean.toFixed(1)} | ${l.samplesCount} | ${(ref / l.p50).toFixed(2)}x |`,
  );
}
process.exit(0);
