/**
 * Round-trip latency of the worker pool (docs/benchmarks/pool-latency-2026-11-24.md): `pools` pools
 * of one worker, run in alternating blocks of 50 calls in one process (two identical pools by
 * default: their spread is the noise; with docs/benchmarks/pool-latency-2026-11-24-experiments.patch
 * applied, pass idle names instead, e.g. `0,50,200`).
 * Per call: `start`, the delay from posting to the job starting in the worker (its wake-up), and
 * `total`, from posting to the run's promise resolving, for an empty job, calls back to back or
 * after an idle gap (the caller sleeps `gap` ms on a timer between calls, or busy-works `work` us
 * on the calling thread between posting and awaiting, as a par step does). Medians over `reps`.
 *   node_modules/.bin/esbuild scripts/probe/pool-latency.ts --bundle --platform=node --format=esm \
 *     --outfile=/tmp/pool-latency.mjs --external:webgpu && node /tmp/pool-latency.mjs [reps] [pools]
 */
import { loadavg } from 'node:os';
import { createPool } from '../../packages/policies/src/index';

const reps = Number(process.argv[2] ?? 2000);
const names = (process.argv[3] ?? 'a,b').split(',');
const BLOCK = 50;
const now = () => performance.timeOrigin + performance.now();
const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1] as number;
const p90 = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length * 0.9)] as number;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const busy = (us: number) => {
  const end = performance.now() + us / 1000;
  while (performance.now() < end);
};

/**
 * A job shaped like a par step's KernelBatch (bricks/kernels.ts): control words, 32 chunk jobs over
 * two shared 2^22-element arrays, a 4 KB kernel source.
 */
const sx = new Uint32Array(new SharedArrayBuffer(4 << 22));
const sy = new Uint32Array(new SharedArrayBuffer(4 << 22));
const batchJob = {
  ctl: new Int32Array(new SharedArrayBuffer(8)),
  out: new Float64Array(new SharedArrayBuffer(8 * 32)),
  src: ['/* kernel */ '.repeat(320)],
  jobs: Array.from({ length: 32 }, (_, c) => ({
    s: 0,
    x: sx,
    x2: undefined,
    y: sy,
    b: c << 17,
    e: (c + 1) << 17,
    h: false,
    c: 0,
  })),
};

interface Case {
  readonly batch?: boolean;
  readonly name: string;
  readonly gapMs: number;
  readonly workUs: number;
  readonly reps: number;
}
const cases: Case[] = [
  { name: 'back to back', gapMs: 0, workUs: 0, reps },
  { name: 'caller works 300 us', gapMs: 0, workUs: 300, reps },
  { name: 'gap 2 ms', gapMs: 2, workUs: 0, reps: Math.min(reps, 300) },
  { name: 'gap 2 ms, caller works 300 us', gapMs: 2, workUs: 300, reps: Math.min(reps, 300) },
  { name: 'batch job, caller works 300 us', gapMs: 0, workUs: 300, reps, batch: true },
  { name: 'batch job, gap 2 ms, works 300', gapMs: 2, workUs: 300, reps: Math.min(reps, 300), batch: true },
];

async function main(): Promise<void> {
  console.log(
    `load before ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; reps ${reps}; pools ${names.join(',')}`,
  );
  const pools = names.map(() => createPool({ size: 1 }));
  for (const p of pools)
    for (let i = 0; i < 200; i++) await p.run(() => performance.timeOrigin + performance.now(), [0]);
  for (const c of cases) {
    const start = names.map(() => [] as number[]);
    const total = names.map(() => [] as number[]);
    // Blocks of BLOCK calls per pool in turn, 5 ms apart: a pool's worker (spinning, with the patch) must not hold a
    // core while another pool's call is timed.
    for (let r0 = 0; r0 < c.reps; r0 += BLOCK) {
      for (let k = 0; k < pools.length; k++) {
        await sleep(5);
        for (let r = r0; r < Math.min(c.reps, r0 + BLOCK); r++) {
          if (c.gapMs > 0) await sleep(c.gapMs);
          const t0 = now();
          const pr = (pools[k] as (typeof pools)[0]).run(
            () => performance.timeOrigin + performance.now(),
            [c.batch ? batchJob : 0],
          );
          if (c.workUs > 0) busy(c.workUs);
          const [t1] = await pr;
          const t2 = now();
          (start[k] as number[]).push(((t1 as number) - t0) * 1000);
          (total[k] as number[]).push((t2 - t0) * 1000 - c.workUs);
        }
      }
    }
    const cells = names.map(
      (s, k) =>
        `${s}: start ${median(start[k] as number[]).toFixed(0)} total ${median(total[k] as number[]).toFixed(0)} (p90 ${p90(start[k] as number[]).toFixed(0)}, ${p90(total[k] as number[]).toFixed(0)})`,
    );
    console.log(`${c.name.padEnd(30)} ${cells.join(' | ')}  (us, median of ${c.reps}; total less caller's work)`);
  }
  console.log(
    `load after ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  await Promise.all(pools.map((p) => p.close()));
}
void main();
