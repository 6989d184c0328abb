/**
 * The CPU side of compaction (copyIf, removeIf, partition, unique); the CPU scans are
 * `cpuInclusiveScan` / `cpuExclusiveScan` of @webdpl/policies.
 *
 * seq: one loop on the calling thread, writing kept elements in order (in place is safe: the write
 * position never passes the read position, and unique keeps the previous element in a local).
 * par: the same two phases as the GPU engine, on the worker pool: (1) each chunk counts its kept
 * elements; (2) the calling thread turns the counts into offsets; (3) each chunk writes its kept
 * (and, for partitions, rejected) elements at its offsets into a shared output, which is then copied
 * into the destination. Below the parallel threshold par runs the seq loop.
 * Predicates follow JS truthiness (a number is kept when non-zero and not NaN).
 */
import { allocHost, type GpuFunction, type HostArray, type NumericType } from '@webdpl/core';
import { allocShared, type CpuBackend, planParallel, toShared } from '@webdpl/policies';

/** Which elements are kept. */
export type CpuKeep =
  | { readonly kind: 'predicate'; readonly fn: GpuFunction; readonly type: NumericType }
  | { readonly kind: 'adjacent-different' };

/** Where rejected elements go: nowhere, or after the kept ones in input order (stable partition). */
export type CpuCompactMode = 'compact' | 'partition';

/** One chunk job of the par path. Short names: jobs are structured-cloned. */
interface CompactJob {
  /** Predicate source ('' for adjacent-different). */
  readonly s: string;
  readonly x: HostArray;
  readonly y?: HostArray;
  readonly b: number;
  readonly e: number;
  /** Kept offset, rejected offset (partition; -1 for none). */
  readonly o: number;
  readonly r: number;
}

/**
 * Pool task: counts (no `y`) or scatters (with `y`) one chunk. Self-contained: shipped to workers as
 * source; predicates are compiled once per worker from their source.
 */
function compactTask(job: CompactJob): number {
  const g = globalThis as unknown as { __webdplPreds?: Map<string, (x: number) => unknown> };
  let cache = g.__webdplPreds;
  if (cache === undefined) {
    cache = new Map();
    g.__webdplPreds = cache;
  }
  let f: ((x: number) => unknown) | undefined;
  if (job.s !== '') {
    f = cache.get(job.s);
    if (f === undefined) {
      if (cache.size >= 256) cache.clear();
      f = new Function(`return (${job.s});`)() as (x: number) => unknown;
      cache.set(job.s, f);
    }
  }
  const x = job.x;
  const y = job.y;
  let kept = 0;
  let o = job.o;
  let r = job.r;
  for (let i = job.b; i < job.e; i++) {
    const v = x[i] as number;
    const keep = f ? !!f(v) : i === 0 || v !== x[i - 1];
    if (keep) {
      kept++;
      if (y) y[o++] = v;
    } else if (y && r >= 0) y[r++] = v;
  }
  return kept;
}

function seqCompact(src: HostArray, dst: HostArray, keep: CpuKeep, mode: CpuCompactMode): number {
  const n = src.length;
  const rejected: number[] = [];
  let j = 0;
  if (keep.kind === 'predicate') {
    const f = keep.fn.js([keep.type]) as (x: number) => unknown;
    for (let i = 0; i < n; i++) {
      const v = src[i] as number;
      if (f(v)) dst[j++] = v;
      else if (mode === 'partition') rejected.push(v);
    }
  } else {
    let prev = 0;
    for (let i = 0; i < n; i++) {
      const v = src[i] as number;
      if (i === 0 || v !== prev) dst[j++] = v;
      else if (mode === 'partition') rejected.push(v);
      prev = v;
    }
  }
  for (let q = 0; q < rejected.length; q++) dst[j + q] = rejected[q] as number;
  return j;
}

/**
 * Writes the kept elements of `src` in order to `dst[0, count)` (partition: then the rejected ones in
 * order) and returns count. `dst` may be `src` (in place); it needs `count` elements (partition: n).
 * Costs one pass (seq); par reads the input twice and adds the copies into and out of shared memory.
 */
export async function cpuCompact(
  backend: CpuBackend,
  src: HostArray,
  dst: HostArray,
  keep: CpuKeep,
  mode: CpuCompactMode,
): Promise<number> {
  const n = src.length;
  const chunks = planParallel(backend, n);
  if (!chunks || backend.kind !== 'par') return seqCompact(src, dst, keep, mode);
  const s = keep.kind === 'predicate' ? keep.fn.jsSource([keep.type]) : '';
  const x = toShared(src);
  const counts = await backend.pool.run(
    compactTask,
    chunks.map((c) => ({ s, x, b: c.begin, e: c.end, o: 0, r: -1 })),
  );
  const total = counts.reduce((a, b) => a + b, 0);
  const type: NumericType = src instanceof Uint32Array ? 'u32' : src instanceof Int32Array ? 'i32' : 'f32';
  const y = allocShared(type, mode === 'partition' ? n : total);
  let kept = 0;
  const jobs = chunks.map((c, q) => {
    const job: CompactJob = {
      s,
      x,
      y,
      b: c.begin,
      e: c.end,
      o: kept,
      r: mode === 'partition' ? total + c.begin - kept : -1,
    };
    kept += counts[q] as number;
    return job;
  });
  await backend.pool.run(compactTask, jobs);
  dst.set(y);
  return total;
}

/** A host array of `type` and `n` elements (for results computed before they are checked). */
export function scratchHost(type: NumericType, n: number): HostArray {
  return allocHost(type, n) as HostArray;
}
