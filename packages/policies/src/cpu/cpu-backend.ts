/** The CPU backends engines run on, and when a `par` call is worth the worker pool. */
import { sharedMemoryAvailable } from '../policy';
import type { Backend } from '../select-backend';
import { type Chunk, parallelChunks } from './chunks';

/** The CPU backends: sequential on the calling thread, or chunked on a worker pool. */
export type CpuBackend = Extract<Backend, { kind: 'seq' } | { kind: 'par' }>;

/**
 * Below this many elements `par` runs the `seq` loop on the calling thread. A par step costs one
 * message per worker (a round trip of ~90 us was measured on the loaded 2-core machine) and, for
 * plain-ArrayBuffer arrays, a copy into shared memory; a 2^16-element f32 reduce takes ~0.16 ms
 * seq there, so below 2^16 half the work cannot pay for waking a worker. With no free core a par
 * step above the threshold costs 5-10% over seq (docs/benchmarks/cpu-par.md, `--sweep`); the
 * break-even on a quiet machine is still to be measured.
 * Override per call through the policy's tuning: `{ parallelThreshold: n }`.
 */
export const DEFAULT_PARALLEL_THRESHOLD = 1 << 16;

/** Shortest chunk handed to a thread. Override through the policy's tuning: `{ minChunk: n }`. */
export const DEFAULT_MIN_CHUNK = 1 << 14;

/** CPU tuning read from a par backend's `tuning` record. */
export interface CpuTuning {
  /** Elements below which par runs seq. @default DEFAULT_PARALLEL_THRESHOLD (65536) */
  readonly parallelThreshold: number;
  /** Shortest chunk handed to a worker. @default DEFAULT_MIN_CHUNK (16384) */
  readonly minChunk: number;
  /**
   * Whether the calling thread claims chunks too (alongside `pool.size - 1` workers) instead of
   * waiting for `pool.size` workers. It blocks the caller for the call, as seq does. @default true
   */
  readonly callerWorks: boolean;
}

function num(v: number | boolean | undefined, fallback: number, min: number): number {
  return typeof v === 'number' && v >= min ? v : fallback;
}

/** The CPU tuning of `backend` (defaults for seq and for par without overrides). */
export function cpuTuning(backend: CpuBackend): CpuTuning {
  const t = backend.kind === 'par' ? backend.tuning : undefined;
  return {
    parallelThreshold: num(t?.parallelThreshold, DEFAULT_PARALLEL_THRESHOLD, 0),
    minChunk: num(t?.minChunk, DEFAULT_MIN_CHUNK, 1),
    callerWorks: typeof t?.callerWorks === 'boolean' ? t.callerWorks : true,
  };
}

/**
 * The chunks a par call over `n` elements runs as, or undefined when it should run the seq loop
 * (seq backend, n below the threshold, a single chunk, or no usable SharedArrayBuffer: then every
 * brick runs on the calling thread with plain memory, as `selectBackend` would have chosen).
 * `minChunks` lets scans ask for at least 2.
 */
export function planParallel(backend: CpuBackend, n: number, minChunks = 2): Chunk[] | undefined {
  if (backend.kind !== 'par' || !sharedMemoryAvailable()) return undefined;
  const t = cpuTuning(backend);
  if (n < t.parallelThreshold) return undefined;
  const chunks = parallelChunks(backend.pool, n, t.minChunk);
  return chunks.length >= minChunks ? chunks : undefined;
}
