/**
 * Tuning of isSorted / isSortedUntil on the GPU (4-byte elements): a memory-bound scan of adjacent
 * pairs. Provenance: the transform-reduce engine's geometry (256 threads, 8 elements per thread);
 * not measured separately (2025, webdpl issue 5).
 */
export const isSortedTuning = {
  /** Threads per workgroup (power of two). */
  workgroupSize: 256,
  /** Elements each thread checks (strided by workgroupSize, coalesced). */
  itemsPerThread: 8,
  /** Accepted for uniform test matrices; the kernel uses no subgroup operations. */
  subgroups: true,
  /** Bytes per storage binding, below the device's limit when > 0 (tests: segmented runs at small n). */
  maxBindingBytes: 0,
};

export type IsSortedTuning = typeof isSortedTuning;
