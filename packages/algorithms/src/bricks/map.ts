/**
 * CPU loops of the map algorithms without an expression to run (fill, iota, copy). seq: one
 * typed-array loop (or fill/set, which run at memory speed). par: per-chunk loops on the worker pool
 * when the arrays already live in shared memory; otherwise the calling thread does the work, since
 * staging a plain-ArrayBuffer array through shared memory (a copy in and out) costs more than these
 * single passes themselves.
 */
import type { HostArray, NumericType } from '@webdpl/core';
import { type CpuBackend, isShared, planParallel } from '@webdpl/policies';

/** One chunk of a fill, iota or copy. */
export interface FillJob {
  /** 0 fill, 1 iota, 2 copy. */
  readonly k: number;
  readonly y: HostArray;
  readonly x?: HostArray | undefined;
  /** fill: the value; iota: the start. */
  readonly v: number;
  /** iota: 0 u32, 1 i32, 2 f32. */
  readonly m: number;
  readonly b: number;
  readonly e: number;
}

/** Pool task (self-contained: shipped to workers as source). */
export function fillChunk(j: FillJob): number {
  const y = j.y;
  const b = j.b;
  const e = j.e;
  if (j.k === 0) {
    y.fill(j.v, b, e);
  } else if (j.k === 2) {
    y.set((j.x as HostArray).subarray(b, e), b);
  } else if (j.m === 0) {
    for (let i = b; i < e; i++) y[i] = (j.v + i) >>> 0;
  } else if (j.m === 1) {
    for (let i = b; i < e; i++) y[i] = (j.v + i) | 0;
  } else {
    for (let i = b; i < e; i++) y[i] = j.v + Math.fround(i);
  }
  return 0;
}

/** Runs a fill (k 0), iota (k 1) or copy (k 2) of `n` elements into `y`. */
export async function cpuFill(
  backend: CpuBackend,
  k: 0 | 1 | 2,
  y: HostArray,
  n: number,
  v: number,
  type: NumericType,
  x?: HostArray,
): Promise<void> {
  const m = type === 'u32' ? 0 : type === 'i32' ? 1 : 2;
  const chunks = planParallel(backend, n);
  if (!chunks || backend.kind !== 'par' || !isShared(y) || (x !== undefined && !isShared(x))) {
    fillChunk({ k, y, x, v, m, b: 0, e: n });
    return;
  }
  await backend.pool.run(
    fillChunk,
    chunks.map((c) => ({ k, y, x, v, m, b: c.begin, e: c.end })),
  );
}
