/** Splitting an index range into chunks for the worker pool. */
import { ArgumentError, describe } from '@webdpl/core';
import type { WorkerPool } from '../pool';

/** A half-open index range `[begin, end)`. */
export interface Chunk {
  readonly begin: number;
  readonly end: number;
}

/**
 * Chunks per worker. Chunks are claimed dynamically through an atomic counter (no message per
 * chunk), so many small chunks cost little, and they bound the wait for a straggler: a thread the OS
 * deschedules while holding a chunk delays the call by at most that chunk. 16 per worker keeps
 * chunks of 2^24-element calls near 0.5 M elements (1-3 ms) on 2 workers.
 */
export const CHUNKS_PER_WORKER = 16;

/**
 * Splits `[0, n)` into contiguous chunks in order: up to `CHUNKS_PER_WORKER` per worker of `pool`,
 * none shorter than `minChunk` (except when n itself is shorter), sizes differing by at most 16.
 * Boundaries are multiples of 16 elements when chunks are long enough, so no two workers write into
 * the same 64-byte cache line of a 4-byte-element output. n = 0 gives no chunks. O(chunks).
 */
export function parallelChunks(pool: Pick<WorkerPool, 'size'>, n: number, minChunk: number): Chunk[] {
  if (!Number.isInteger(n) || n < 0) throw new ArgumentError('n', 'a non-negative integer', describe(n));
  if (!(minChunk >= 1)) throw new ArgumentError('minChunk', 'a number >= 1', describe(minChunk));
  if (n === 0) return [];
  const count = Math.max(1, Math.min(Math.floor(n / minChunk), pool.size * CHUNKS_PER_WORKER));
  const align = n / count >= 256 ? 16 : 1;
  const chunks: Chunk[] = [];
  let begin = 0;
  for (let c = 1; c <= count; c++) {
    const end = c === count ? n : Math.floor((c * n) / count / align) * align;
    if (end > begin) chunks.push({ begin, end });
    begin = Math.max(begin, end);
  }
  return chunks;
}
