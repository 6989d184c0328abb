/**
 * Tuning of histogram on the GPU (4-byte elements). Shape: CUB's HistogramEven (privatized bins in
 * workgroup memory merged with global atomics, a capped persistent grid), vec4 loads.
 * Provenance: NVIDIA H100 (Dawn/Vulkan, driver 580.159.04), 2026-11-23, u32 (hash >> 8), 256 even
 * bins over [0, 2^24), device time through the public API: `node scripts/probe/build.mjs`, then on
 * the GPU machine `PROBE_SIZES=24,28 PROBE_HIST_SWEEP=1 node .probe/catalogue-probe.mjs` (second
 * process). These defaults: 0.355 ms at 2^28 in each of five runs, 0.039..0.087 ms at 2^24 (CUB
 * HistogramEven 0.592 / 0.0549 in the final run: docs/benchmarks/catalogue-h100.md). Sweep (2^24 /
 * 2^28, one run): 2 or 4 sub-histograms, itemsPerThread 4 or 16, workgroupSize 512: within 1%;
 * maxWorkgroups 264 0.056 / 0.430, 528 0.048 / 0.360, 2048 0.066 / 0.367; scalar loads 0.069 /
 * 0.475; the f32 estimate and edge check with scalar loads 0.103 / 0.708. Subgroup aggregation on
 * (an earlier run): 0.268 / 1.206 on this data, and 1.535 vs 0.357 ms at 2^28 on constant data
 * (every element in one bin), so it stays off.
 */
export const histogramTuning = {
  /** Threads per workgroup. */
  workgroupSize: 256,
  /**
   * Elements each thread bins per tile (strided by workgroupSize, coalesced; the vector path loads
   * ceil(itemsPerThread / 4) vec4s).
   */
  itemsPerThread: 8,
  /** Load the input as vec4s (the elements before the first and after the last whole vec4 one by one). */
  vectorize: true,
  /** Copies of the privatized bins per workgroup (thread i adds into copy i % subHistograms), >= 1. */
  subHistograms: 1,
  /** Most workgroups of a dispatch; each loops over tiles and merges its bins once. */
  maxWorkgroups: 1024,
  /**
   * Most bins counted in workgroup memory (more, or beyond the device's workgroup memory: global
   * atomics only). 0: never privatize (tests).
   */
  privateBins: 4096,
  /** Copy the edges into workgroup memory next to the privatized bins, where they fit. */
  cacheEdges: true,
  /**
   * Integer even bins of an integer width bin by one division (a shift for powers of two) without
   * reading edges; false: the f32 estimate and edge check of other even bins (tests, sweeps).
   */
  exactBins: true,
  /**
   * Subgroup aggregation: a subgroup whose elements all fall in one bin adds once. Off by default:
   * on the H100 it was 3.4x slower at 2^28 on random data and 4.3x on constant data (see the
   * provenance above); the tests turn it on.
   */
  subgroups: false,
  /** Bytes per storage binding, below the device's limit when > 0 (tests: segmented runs at small n). */
  maxBindingBytes: 0,
};

export type HistogramTuning = typeof histogramTuning;
