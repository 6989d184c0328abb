/** Test support for the CPU engine tests: seeded data, backends under test, sizes. */
import type { HostArray, NumericType } from '@webdpl/core';
import type { CpuBackend, WorkerPool } from '@webdpl/policies';

/** A seeded generator of u32 values (xorshift32). */
export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s;
  };
}

export type DataKind = 'random' | 'constant' | 'sparse';

/**
 * `n` elements of `type`: random over the whole u32/i32 range or [-1, 1) for f32; a constant
 * (7, -3, 0.75); or sparse (70% zeros, for "last non-zero").
 */
export function makeData(type: NumericType, n: number, kind: DataKind, seed = 1): HostArray {
  const r = rng(seed + n * 7919);
  const a = type === 'u32' ? new Uint32Array(n) : type === 'i32' ? new Int32Array(n) : new Float32Array(n);
  for (let i = 0; i < n; i++) {
    if (kind === 'constant') a[i] = type === 'u32' ? 7 : type === 'i32' ? -3 : 0.75;
    else if (kind === 'sparse') a[i] = r() % 10 < 7 ? 0 : type === 'f32' ? (r() % 1000) / 8 - 60 : r();
    else a[i] = type === 'f32' ? r() / 2 ** 31 - 1 : r();
  }
  return a;
}

/**
 * The backends every engine is checked on: seq, and par with tiny chunks (run by the workers alone),
 * small chunks and default chunking (shared by the calling thread and the workers).
 */
export function testBackends(pool: WorkerPool): { name: string; backend: CpuBackend }[] {
  return [
    { name: 'seq', backend: { kind: 'seq' } },
    {
      name: 'par chunks >= 1, workers only',
      backend: { kind: 'par', pool, tuning: { parallelThreshold: 0, minChunk: 1, callerWorks: false } },
    },
    { name: 'par chunks >= 16', backend: { kind: 'par', pool, tuning: { parallelThreshold: 0, minChunk: 16 } } },
    { name: 'par default tuning', backend: { kind: 'par', pool } },
  ];
}

/** 0, 1, 2, 3, 7, 100, around the chunk boundaries of minChunk 16 on 2 workers, and 2^17 + 3. */
export const TEST_SIZES: readonly number[] = [
  0,
  1,
  2,
  3,
  7,
  15,
  16,
  17,
  33,
  100,
  127,
  128,
  129,
  255,
  256,
  257,
  4099,
  2 ** 17 + 3,
];

export const TYPES: readonly NumericType[] = ['u32', 'i32', 'f32'];

/** A copy of `a` over a SharedArrayBuffer. */
export function sharedCopy<T extends HostArray>(a: T): T {
  const Ctor = a.constructor as new (b: SharedArrayBuffer) => T;
  const c = new Ctor(new SharedArrayBuffer(a.byteLength));
  c.set(a);
  return c;
}

/** An empty array of `type` and length n. */
export function alloc(type: NumericType, n: number): HostArray {
  return type === 'u32' ? new Uint32Array(n) : type === 'i32' ? new Int32Array(n) : new Float32Array(n);
}

/**
 * '' when `actual` holds exactly `want` (Object.is per element, same length), else a description of
 * the first difference. Fast on millions of elements, unlike deep equality.
 */
export function diff(actual: ArrayLike<number>, want: ArrayLike<number>): string {
  if (actual.length !== want.length) return `length ${actual.length} != ${want.length}`;
  for (let i = 0; i < want.length; i++) {
    if (!Object.is(actual[i], want[i])) return `at ${i}: got ${actual[i]}, want ${want[i]}`;
  }
  return '';
}

/** `pool` behind a counter of its runs (tests that par really uses the pool, or never does). */
export function countingPool(pool: WorkerPool): { pool: WorkerPool; runs(): number; reset(): void } {
  let runs = 0;
  return {
    pool: {
      size: pool.size,
      run: (task, jobs) => {
        runs++;
        return pool.run(task, jobs);
      },
      returned: pool.returned ? (run) => pool.returned?.(run) : undefined,
      close: () => pool.close(),
    },
    runs: () => runs,
    reset: () => {
      runs = 0;
    },
  };
}

/** `pool` behind a counter of the runs it was told had returned (`WorkerPool.returned`). */
export function tellingPool(pool: WorkerPool): { pool: WorkerPool; told(): number; reset(): void } {
  let told = 0;
  return {
    pool: {
      size: pool.size,
      run: (task, jobs) => pool.run(task, jobs),
      returned: (run) => {
        told++;
        pool.returned?.(run);
      },
      close: async () => {},
    },
    told: () => told,
    reset: () => {
      told = 0;
    },
  };
}

/** A pool over `pool`'s workers whose every task throws 'worker failed' (a par call may still run every chunk itself). */
export function failingPool(pool: WorkerPool): WorkerPool {
  return {
    size: pool.size,
    run: (_task, jobs) =>
      pool.run(() => {
        throw new Error('worker failed');
      }, jobs) as never,
    returned: (run) => pool.returned?.(run),
    close: async () => {},
  };
}
