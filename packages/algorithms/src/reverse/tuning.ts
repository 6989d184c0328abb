/**
 * Tuning of reverse on the GPU (4-byte elements): a memory-bound permuting copy, one element per
 * access. Provenance: the map engine's scalar geometry (256 threads, 4 coalesced items each); not
 * measured separately (2026-11-23, webdpl issue 16).
 */
export const reverseTuning = {
  /** Threads per workgroup. */
  workgroupSize: 256,
  /** Elements each thread moves (strided by workgroupSize, coalesced). */
  itemsPerThread: 4,
  /** Accepted for uniform test matrices; the kernel uses no subgroup operations. */
  subgroups: true,
  /** Bytes per storage binding, below the device's limit when > 0 (tests: segmented runs at small n). */
  maxBindingBytes: 0,
};

export type ReverseTuning = typeof reverseTuning;
