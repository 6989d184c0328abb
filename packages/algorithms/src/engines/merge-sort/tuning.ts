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

/**
 * The merge sort's defaults for keys without values: 512 threads x 6 keys. H100, 2026-11-24
 * (docs/benchmarks/h100-2026-11-24h.md, msort-tiles.jsonl: a copy of 2^20 / 2^22 / 2^24 random u32
 * sorted by a comparator lambda, variants interleaved in one process), ratio to 128 x 8: 512 x 6
 * 0.938 / 0.904 / 0.894, 256 x 6 1.00 / 0.91 / 0.90, 512 x 4 0.90 / 0.92 / 0.95, 256 x 8 0.95-0.97,
 * 128 x 6 0.92-1.03, 128 x 12 and 256 x 12 1.01-1.08. Pairs keep 128 x 8 (not measured).
 */
export const mergeSortKeysTuning: MergeSortTuning = {
  ...mergeSortTuning,
  workgroupSize: 512,
  itemsPerThread: 6,
};
