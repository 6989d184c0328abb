/** The CPU backends engines run on, and when a `par` call is worth the worker pool. */
import type { Backend } from '../select-backend';
import { type Chunk, parallelChunks } from './chunks';

/** The CPU backends: sequential on the calling thread, or chunked on a worker pool. */
export type CpuBackend = Extract<Backend, { kind: 'seq' } | { kind: 'par' }>;

/**
 * Below this many elements `par` runs the `seq` loop on the calling thread: a pool run costs
 * ~0.1-0.3 ms of messaging and a plain-array input a copy into shared memory, more than the work
 * saved. Measured on the 2-core bench machine (see docs/benchmarks/cpu-par.md): break-even for
 * reduce/transform lies between 2^15 and 2^16 elements.
 * Override per call through the backend's tuning: `{ parallelThreshold: n }`.
 */
export const DEFAULT_PARALLEL_THRESHOLD = 1 << 16;

/** Shortest chunk handed to a worker. Override through the backend's tuning: `{ minChunk: n }`. */
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
 * (seq backend, n below the threshold, or a single chunk). `minChunks` lets scans ask for at least 2.
 */
export function planParallel(backend: CpuBackend, n: number, minChunks = 2): Chunk[] | undefined {
  if (backend.kind !== 'par') return undefined;
  const t = cpuTuning(backend);
  if (n < t.parallelThreshold) return undefined;
  const chunks = parallelChunks(backend.pool, n, t.minChunk);
  return chunks.length >= minChunks ? chunks : undefined;
}
