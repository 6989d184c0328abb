/**
 * Tuning of histogram on the GPU (4-byte elements). Provenance: the transform-reduce engine's
 * geometry (256 threads, several coalesced items each) and CUB's HistogramEven shape (privatized
 * bins in workgroup memory merged with global atomics, a capped persistent grid); not measured yet
 * (2026-11-23, webdpl issue 16).
 */
export const histogramTuning = {
  /** Threads per workgroup. */
  workgroupSize: 256,
  /** Elements each thread bins per tile (strided by workgroupSize, coalesced). */
  itemsPerThread: 8,
  /** Most workgroups of a dispatch; each loops over tiles and merges its bins once. */
  maxWorkgroups: 1024,
  /**
   * Most bins counted in workgroup memory (more, or beyond the device's workgroup memory: global
   * atomics only). 0: never privatize (tests).
   */
  privateBins: 4096,
  /** Copy the edges into workgroup memory next to the privatized bins, where they fit. */
  cacheEdges: true,
  /** Subgroup aggregation: a subgroup whose elements all fall in one bin adds once. */
  subgroups: true,
  /** Bytes per storage binding, below the device's limit when > 0 (tests: segmented runs at small n). */
  maxBindingBytes: 0,
};

export type HistogramTuning = typeof histogramTuning;
