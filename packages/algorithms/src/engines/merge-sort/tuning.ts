/**
 * Tuning of the merge-sort engine (comparison sort for user comparators), for 4-byte keys.
 *
 * Provenance: ModernGPU's mergesort defaults for 4-byte keys (128 threads x 8-15 items per thread);
 * tiles of 1024 keys keep keys and values (8 KiB) well inside 16 KiB of workgroup memory. Not yet
 * measured on the H100 (re-tune with `pnpm bench --device-only`). Date: 2025 (webdpl issue 5).
 */
export const mergeSortTuning = {
  /** Threads per workgroup of the block sort and the merge passes (power of two, >= 32). */
  workgroupSize: 128,
  /** Keys per thread (tile = workgroupSize x itemsPerThread keys). */
  itemsPerThread: 8,
  /** Accepted for uniform test matrices; the merge sort uses no subgroup operations. */
  subgroups: true,
};

export type MergeSortTuning = typeof mergeSortTuning;
