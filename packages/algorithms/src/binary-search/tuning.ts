/**
 * Tuning of the vectorized searches (lowerBound, upperBound, binarySearch) on the GPU: one thread
 * per query, each a chain of log2(n) dependent loads, so occupancy is what matters.
 * Provenance: a common default (256 threads); not measured separately (2025, webdpl issue 5).
 */
export const binarySearchTuning = {
  /** Threads per workgroup (power of two); one query per thread. */
  workgroupSize: 256,
  /** Accepted for uniform test matrices; the kernel uses no subgroup operations. */
  subgroups: true,
  /** Bytes per storage binding, below the device's limit when > 0 (tests: segmented runs at small n). */
  maxBindingBytes: 0,
};

export type BinarySearchTuning = typeof binarySearchTuning;
