/**
 * Warming a pool's workers before they take chunks of a new kernel (staging.ts `parWarming`,
 * kernels.ts `KernelBatch.w`): the first par calls of a kernel on a pool that asks for it
 * (`warmKernels`, the default pool) run on the calling thread while every worker compiles and warms
 * that kernel, and are exact; once every worker has counted itself done and PAR_WARM_MS have passed,
 * the calls post their chunks again. Pools that do not ask, and `callerWorks: false`, never wait.
 */
import { type GpuFunction, plus } from '@webdpl/core';
import { type CpuBackend, compileOnce, createPool, type WorkerPool } from '@webdpl/policies';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { histogramSource } from './histogram';
import { type KernelBatch, runKernelBatch } from './kernels';
import { cpuReduce } from './reduce';
import { PAR_WARM_MS, PAR_WARM_REPS, parWarming } from './staging';
import { inlineFunction } from './test-functions';
import { cpuTransform } from './transform';
import { warmArray, warmedSource } from './warm';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A pool that records the batches of every run (`warmKernels` as asked). */
function recording(inner: WorkerPool, warmKernels: boolean) {
  const batches: KernelBatch[][] = [];
  const pool: WorkerPool = {
    size: inner.size,
    warmKernels,
    run: (task, jobs) => {
      batches.push(jobs as unknown as KernelBatch[]);
      return inner.run(task, jobs);
    },
    returned: (r) => inner.returned?.(r),
    close: () => inner.close(),
  };
  return { pool, batches };
}

function sharedU32(n: number, gen: (i: number) => number): Uint32Array {
  const a = new Uint32Array(new SharedArrayBuffer(4 * n));
  for (let i = 0; i < n; i++) a[i] = gen(i);
  return a;
}

const pools: WorkerPool[] = [];
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
});

describe('runKernelBatch warm-up batches (w)', () => {
  it('counts the thread started (ctl[0]), runs each __warm w times, counts it done (ctl[1]), claims no chunk', () => {
    const tag = `/* warm-count ${Math.random()} */`;
    const src = `(() => { const k = () => 7; k.__warm = () => { globalThis.__parWarmTest = (globalThis.__parWarmTest ?? 0) + 1; }; return k; })() ${tag}`;
    const g = globalThis as unknown as { __parWarmTest?: number };
    g.__parWarmTest = 0;
    const x = new Uint32Array(8);
    const batch: KernelBatch = {
      ctl: new Int32Array(2),
      out: new Float64Array([-1, -1]),
      src: [src],
      jobs: [
        { s: 0, x, b: 0, e: 4, h: false, c: 0 },
        { s: 0, x, b: 4, e: 8, h: false, c: 0 },
      ],
      w: 5,
    };
    expect(runKernelBatch(batch)).toBe(0);
    expect(g.__parWarmTest).toBe(5);
    expect(Array.from(batch.ctl)).toEqual([1, 1]); // started, done; no chunk claimed
    expect(Array.from(batch.out)).toEqual([-1, -1]);
  });

  it('counts the thread done even when a warm-up throws', () => {
    const src = `(() => { const k = () => 0; k.__warm = () => { throw new Error('warm'); }; return k; })() /* warm-throws ${Math.random()} */`;
    const batch: KernelBatch = { ctl: new Int32Array(2), out: new Float64Array(0), src: [src], jobs: [], w: 3 };
    expect(() => runKernelBatch(batch)).toThrow('warm');
    expect(Array.from(batch.ctl)).toEqual([1, 1]);
  });

  it('self-warming sources expose their warm-up as __warm', () => {
    const hist = compileOnce<{ __warm?: unknown }>(histogramSource('u32', 'shift'));
    expect(typeof hist.__warm).toBe('function');
    const calls = `k(${warmArray('u32')}); k(${warmArray('u32')});`;
    const k = compileOnce<{ __warm?: () => void }>(
      warmedSource(
        '(x) => { globalThis.__parWarmSeen = (globalThis.__parWarmSeen ?? 0) + x.length; }',
        calls,
        `/* ${Math.random()} */`,
      ),
    );
    const g = globalThis as unknown as { __parWarmSeen?: number };
    expect(g.__parWarmSeen).toBeGreaterThan(0);
    const before = g.__parWarmSeen as number;
    k.__warm?.();
    expect(g.__parWarmSeen).toBe(before + 128);
  });
});

describe('parWarming', () => {
  /** A pool that never runs a job (its runs stay pending, or reject with `fail`). */
  const idle = (size: number, warmKernels: boolean, fail = false) => {
    const runs: KernelBatch[][] = [];
    const pool: WorkerPool = {
      size,
      warmKernels,
      run: (_task, jobs) => {
        runs.push(jobs as unknown as KernelBatch[]);
        return fail ? Promise.reject(new Error('no workers')) : new Promise(() => {});
      },
      close: async () => {},
    };
    return { pool, runs };
  };

  it('posts one warm-up batch to every worker, then waits for all of them and PAR_WARM_MS', async () => {
    const { pool, runs } = idle(3, true);
    const b = { kind: 'par', pool } as const;
    const first = parWarming(b, ['a']);
    expect(first).toBeInstanceOf(Promise);
    let started = false;
    void (first as Promise<void>).then(() => {
      started = true;
    });
    expect(runs.length).toBe(1);
    const jobs = runs[0] as KernelBatch[];
    expect(jobs.length).toBe(3);
    const warm = jobs[0] as KernelBatch;
    expect(jobs.every((j) => j === warm)).toBe(true);
    expect(warm.w).toBe(PAR_WARM_REPS);
    expect(warm.src).toEqual(['a']);
    expect(warm.jobs.length).toBe(0);
    // The first call's promise waits for every worker to start the warm-up (ctl[0]), not to end it.
    Atomics.add(warm.ctl, 0, 2);
    Atomics.notify(warm.ctl, 0);
    await sleep(10);
    expect(started).toBe(false);
    Atomics.add(warm.ctl, 0, 1);
    Atomics.notify(warm.ctl, 0);
    await first;
    expect(started).toBe(true);
    expect(parWarming(b, ['a'])).toBeTruthy();
    Atomics.add(warm.ctl, 1, 2);
    expect(parWarming(b, ['a'])).toBeTruthy(); // two of three workers done
    Atomics.add(warm.ctl, 1, 1);
    let now = 1000;
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => now);
    try {
      expect(parWarming(b, ['a'])).toBeTruthy(); // all done, seen now: PAR_WARM_MS from here
      now += PAR_WARM_MS - 1;
      expect(parWarming(b, ['a'])).toBeTruthy();
      now += 1;
      expect(parWarming(b, ['a'])).toBe(false);
    } finally {
      clock.mockRestore();
    }
    // A batch with a new source warms that one (only).
    expect(parWarming(b, ['a', 'b'])).toBeTruthy();
    expect(runs.length).toBe(2);
    expect((runs[1] as KernelBatch[])[0]?.src).toEqual(['b']);
    expect(runs.flat().every((j) => j.jobs.length === 0)).toBe(true);
  });

  it('never on a pool that does not ask for it, nor with callerWorks off', () => {
    const plain = idle(2, false);
    expect(parWarming({ kind: 'par', pool: plain.pool }, ['a'])).toBe(false);
    const asks = idle(2, true);
    expect(parWarming({ kind: 'par', pool: asks.pool, tuning: { callerWorks: false } }, ['a'])).toBe(false);
    expect(plain.runs.length + asks.runs.length).toBe(0);
  });

  it('a warm-up that fails ends the wait', async () => {
    const { pool } = idle(2, true, true);
    const b = { kind: 'par', pool } as const;
    expect(parWarming(b, ['a'])).toBeTruthy();
    await sleep(0);
    expect(parWarming(b, ['a'])).toBe(false);
  });
});

describe('par calls on a pool that warms kernels', () => {
  /** An operator of its own source, so its kernel is new to every pool. */
  const fresh = (): GpuFunction =>
    inlineFunction({
      name: `plus_w${Math.random()}`,
      arity: 2,
      source: () => `(a, b) => (a + b) >>> 0 /* ${Math.random()} */`,
    });

  it('run on the calling thread while the workers warm, exact, then post chunks again', async () => {
    const inner = createPool({ size: 2 });
    pools.push(inner);
    const { pool, batches } = recording(inner, true);
    const b: CpuBackend = { kind: 'par', pool, tuning: { parallelThreshold: 0, minChunk: 1024 } };
    const n = 1 << 16;
    const x = sharedU32(n, (i) => Math.imul(i + 1, 0x9e3779b9) >>> 0);
    let want = 0;
    for (let i = 0; i < n; i++) want = (want + (x[i] as number)) >>> 0;
    const op = fresh();
    expect(await cpuReduce(b, x, 0, op)).toBe(want);
    // One run: the warm-up, on both workers, which the first call saw both start (the pool's start
    // stays inside the first call).
    expect(batches.length).toBe(1);
    const warm = (batches[0] as KernelBatch[])[0] as KernelBatch;
    expect(warm.w).toBe(PAR_WARM_REPS);
    expect(Atomics.load(warm.ctl, 0)).toBe(2);
    expect(await cpuReduce(b, x, 0, op)).toBe(want);
    expect(batches.length).toBe(1);
    for (let t = 0; Atomics.load(warm.ctl, 1) < 2; t++) {
      if (t > 2000) throw new Error('the workers never warmed up');
      await sleep(5);
    }
    expect(await cpuReduce(b, x, 0, op)).toBe(want); // sees them done
    expect(batches.length).toBe(1);
    await sleep(PAR_WARM_MS + 5);
    expect(await cpuReduce(b, x, 0, op)).toBe(want);
    expect(batches.length).toBe(2);
    expect(((batches[1] as KernelBatch[])[0] as KernelBatch).w).toBeUndefined();
    expect(((batches[1] as KernelBatch[])[0] as KernelBatch).jobs.length).toBeGreaterThan(1);
  });

  it('plain arrays (the split path) and maps are exact while warming', async () => {
    const inner = createPool({ size: 2 });
    pools.push(inner);
    const { pool, batches } = recording(inner, true);
    const b: CpuBackend = { kind: 'par', pool, tuning: { parallelThreshold: 0, minChunk: 1024 } };
    const n = 40000;
    const x = new Uint32Array(n).map((_, i) => i * 7 + 1);
    let want = 0;
    for (let i = 0; i < n; i++) want = (want + (x[i] as number)) >>> 0;
    expect(await cpuReduce(b, x, 0, plus)).toBe(want);
    const y = new Uint32Array(n);
    const f = inlineFunction({
      name: `t_w${Math.random()}`,
      arity: 1,
      source: () => `(v) => (v * 3 + 1) >>> 0 /* ${Math.random()} */`,
    });
    await cpuTransform(b, x, y, f);
    for (let i = 0; i < n; i++) if (y[i] !== ((x[i] as number) * 3 + 1) >>> 0) throw new Error(`y[${i}]`);
    expect(batches.every((r) => (r[0] as KernelBatch).w === PAR_WARM_REPS)).toBe(true);
  });

  it('a pool that does not ask posts its chunks from the first call', async () => {
    const inner = createPool({ size: 2 });
    pools.push(inner);
    const { pool, batches } = recording(inner, false);
    const b: CpuBackend = { kind: 'par', pool, tuning: { parallelThreshold: 0, minChunk: 1024 } };
    const x = sharedU32(1 << 14, (i) => i);
    expect(await cpuReduce(b, x, 0, fresh())).toBe(((1 << 14) * ((1 << 14) - 1)) / 2);
    expect(batches.length).toBe(1);
    expect(((batches[0] as KernelBatch[])[0] as KernelBatch).w).toBeUndefined();
  });
});
