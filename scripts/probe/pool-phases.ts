/**
 * Phases of the worker's share of a par call (docs/benchmarks/pool-latency-2026-11-24.md): merge,
 * setUnion, histogram (256 bins) and uniqueByKey (runs of 16) over 2^22 allocShared u32, each par
 * call right after a seq call (as in cpu-catalogue-par.ts). The par policy runs on a wrapper of the
 * default pool that wraps each task to time it in the worker, so per call (the last pool step of the
 * call; medians of 30): the caller's setup before the post, post -> the worker's first instruction,
 * the worker's task, the worker's end -> the call's end; and, separately, post -> start of an empty
 * task (and of one carrying the par step's job) posted right after a seq call.
 *   node_modules/.bin/esbuild scripts/probe/pool-phases.ts --bundle --platform=node --format=esm \
 *     --outfile=/tmp/pool-phases.mjs --external:webgpu && node /tmp/pool-phases.mjs
 */
import { loadavg } from 'node:os';
import { histogram, merge, setUnion, uniqueByKey } from '../../packages/algorithms/src/index';
import {
  allocShared,
  defaultPool,
  execution,
  makeHostPolicy,
  type WorkerPool,
} from '../../packages/policies/src/index';

const n = 1 << 22;
const inner = defaultPool();
/** Written by the wrapped task: start, end (worker clock, epoch ms). */
const times = new Float64Array(new SharedArrayBuffer(16));
let tPost = 0;
let lastJobs: readonly unknown[] = [];
const wrapped = new Map<string, (w: unknown) => unknown>();
const now = () => performance.timeOrigin + performance.now();

const pool: WorkerPool = {
  size: inner.size,
  close: () => inner.close(),
  run<A, R>(task: (job: A) => R, jobs: readonly A[]): Promise<R[]> {
    const src = task.toString();
    let w = wrapped.get(src);
    if (!w) {
      w = new Function(`return (w) => { const t0 = performance.timeOrigin + performance.now();
        const r = (${src})(w.j);
        w.t[0] = t0; w.t[1] = performance.timeOrigin + performance.now();
        return r; }`)() as (w: unknown) => unknown;
      wrapped.set(src, w);
    }
    lastJobs = jobs;
    tPost = now();
    return inner.run(
      w,
      jobs.map((j) => ({ j, t: times })),
    ) as Promise<R[]>;
  },
};
const par = makeHostPolicy('par', { pool });

const shared = (f: (i: number) => number) => {
  const a = allocShared('u32', n) as Uint32Array;
  for (let i = 0; i < n; i++) a[i] = f(i);
  return a;
};
let seed = 1;
const rnd = () => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed;
};
const a = shared(() => rnd() % (n >>> 1))
  .subarray(0, n >>> 1)
  .sort();
const b = shared(() => rnd() % (n >>> 1))
  .subarray(0, n >>> 1)
  .sort();
const o = allocShared('u32', n) as Uint32Array;
const x = shared(() => rnd());
const ho = allocShared('u32', 256) as Uint32Array;
const k = shared((i) => i >>> 4);
const v = shared(() => rnd() >>> 8);
const ko = allocShared('u32', n >>> 4) as Uint32Array;
const vo = allocShared('u32', n >>> 4) as Uint32Array;
const algorithms: Record<string, (p: typeof execution.seq) => Promise<unknown>> = {
  merge: (p) => merge(p, a, b, o),
  setUnion: (p) => setUnion(p, a, b, o),
  histogram: (p) => histogram(p, x, { bins: 256, lo: 0, hi: 2 ** 32 }, ho),
  uniqueByKey: (p) => uniqueByKey(p, k, v, ko, vo),
};
const median = (xs: number[]) => [...xs].sort((p, q) => p - q)[xs.length >> 1] as number;
const us = (xs: number[]) => `${median(xs).toFixed(0)} us`;

async function main(): Promise<void> {
  console.log(
    `pool-phases: node ${process.version}, 2^22, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  for (const [name, f] of Object.entries(algorithms)) {
    const setup: number[] = [];
    const wake: number[] = [];
    const task: number[] = [];
    const tail: number[] = [];
    const call: number[] = [];
    for (let i = 0; i < 40; i++) {
      await f(execution.seq);
      const t = now();
      await f(par);
      const e = now();
      if (i < 10) continue;
      setup.push((tPost - t) * 1e3);
      wake.push(((times[0] as number) - tPost) * 1e3);
      task.push(((times[1] as number) - (times[0] as number)) * 1e3);
      tail.push((e - (times[1] as number)) * 1e3);
      call.push((e - t) * 1e3);
    }
    const empty = async (payload: boolean) => {
      const st: number[] = [];
      for (let i = 0; i < 30; i++) {
        await f(execution.seq);
        const t0 = now();
        const [t1] = await inner.run(
          (_j: unknown) => performance.timeOrigin + performance.now(),
          [payload ? lastJobs[0] : 0],
        );
        st.push(((t1 as number) - t0) * 1e3);
      }
      return st;
    };
    console.log(
      `${name}: setup->post ${us(setup)}, post->worker start ${us(wake)}, worker task ${us(task)}, ` +
        `worker end->call end ${us(tail)}, par call ${us(call)}; after a seq call, post->start of an empty ` +
        `task ${us(await empty(false))}, of one carrying the step's job ${us(await empty(true))}`,
    );
  }
  console.log(
    `load after ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  process.exit(0);
}
void main();
