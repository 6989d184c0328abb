/**
 * CPU sorting for the sort family (sort, stableSort, sortByKey), every variant stable:
 *
 *  - built-in orders (less / greater): seq: TypedArray#sort below SEQ_RADIX_MIN keys (keys alone),
 *    else the radix sort of radix-kernel.ts (MSD by the top digit, then LSD in cache per bucket) on
 *    the calling thread over plain scratch memory; par: the same kernel on the worker pool from
 *    PAR_RADIX_MIN keys (tuning `parallelThreshold`), seq below.
 *  - user comparators: a stable merge sort; par runs it on the pool (chunk sorts + merge-path split
 *    merges) when the comparator has a shippable source, else on the calling thread.
 *
 * Nothing on the calling thread needs SharedArrayBuffer: where shared memory is unavailable (a
 * browser page without cross-origin isolation), par sorts run as seq. Keys sort in place in the
 * caller's array; values (any 4-byte typed array) move along as bits. The caller's arrays are left
 * as they were when a sort throws before its first write (scratch allocation failures included).
 */
import type { NumericType } from '@webdpl/core';
import { type CpuBackend, cpuTuning, sharedMemoryAvailable } from '@webdpl/policies';
import { bitsView } from './key-bits';
import { mergeSortPar } from './merge-par';
import { type Before, type KeyArray, mergeSortBy } from './merge-sort';
import { radixSortPar } from './radix-par';
import { radixSortSeq } from './radix-seq';

export { fromKeyBits, toKeyBits } from './key-bits';
export type { Before, KeyArray } from './merge-sort';

/** Below this many keys (alone), seq uses TypedArray#sort rather than the radix sort. */
export const SEQ_RADIX_MIN = 1 << 12;
/** Pairs below this many elements use the merge sort (the radix sort's histograms cost more). */
export const SEQ_PAIRS_MERGE_MAX = 256;
/** Default number of keys from which par sorts keys alone on the pool. */
export const PAR_RADIX_MIN = 1 << 17;
/**
 * Default number of pairs from which par sorts on the pool: pairs copy twice the memory into and out
 * of shared memory (par measured 0.7-1.15x seq at 2^17-2^18 pairs, 1.15-1.5x from 2^20).
 */
export const PAR_PAIRS_MIN = 1 << 19;

/** A comparator for the CPU: a built-in order, or a function (with its source for workers, if any). */
export type CpuComparator =
  | { readonly kind: 'builtin'; readonly descending: boolean; readonly before: Before; readonly source?: string }
  | { readonly kind: 'function'; readonly before: Before; readonly source?: string };

/** Sorts `keys` (of element type `type`) stably by `comp`, permuting `values` along. */
export async function cpuSort(
  backend: CpuBackend,
  keys: KeyArray,
  values: KeyArray | undefined,
  type: NumericType,
  comp: CpuComparator,
): Promise<void> {
  const n = keys.length;
  if (n < 2) return;
  const t = cpuTuning(backend);
  const parMin =
    backend.kind === 'par' && backend.tuning?.parallelThreshold !== undefined
      ? t.parallelThreshold
      : values
        ? PAR_PAIRS_MIN
        : PAR_RADIX_MIN;
  const usePool = backend.kind === 'par' && n >= parMin && sharedMemoryAvailable();
  if (comp.kind === 'function') {
    if (usePool && comp.source !== undefined && backend.kind === 'par') {
      await mergeSortPar(backend.pool, keys, values, comp.before, comp.source, t.minChunk, t.callerWorks);
      return;
    }
    // On copies: a comparator that throws half way must leave the caller's arrays as they were.
    const k = keys.slice() as KeyArray;
    const v = values ? bitsView(values).slice() : undefined;
    mergeSortBy(k, v, comp.before);
    keys.set(k as never);
    if (values && v) bitsView(values).set(v);
    return;
  }
  if (usePool && backend.kind === 'par') {
    await radixSortPar(backend.pool, keys, values, type, comp.descending, t.minChunk, t.callerWorks);
    return;
  }
  sortSeq(keys, values, type, comp);
}

/** The calling-thread sort of built-in orders. */
function sortSeq(
  keys: KeyArray,
  values: KeyArray | undefined,
  type: NumericType,
  comp: { readonly descending: boolean; readonly before: Before },
): void {
  const n = keys.length;
  if (!values && n < SEQ_RADIX_MIN) {
    keys.sort();
    if (comp.descending) {
      let end = n;
      if (type === 'f32') while (end > 0 && Number.isNaN(keys[end - 1] as number)) end--;
      keys.subarray(0, end).reverse();
    }
    return;
  }
  if (values && n <= SEQ_PAIRS_MERGE_MAX) {
    mergeSortBy(keys, bitsView(values), comp.before);
    return;
  }
  radixSortSeq(keys, values, type, comp.descending);
}
