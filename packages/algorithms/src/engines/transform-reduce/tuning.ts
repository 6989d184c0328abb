/**
 * Tuning of the transform-reduce engine, for 4-byte elements.
 * Provenance: starting points from the CUB/Onesweep literature for NVIDIA (256 threads, 16 items per
 * thread as 4 vec4 loads, ~8 workgroups per SM); to be re-measured on the H100 with `pnpm bench
 * --device-only` (docs/benchmarks/h100.md). lavapipe (8-wide subgroups, 2 CPU cores) uses the same.
 */
export const transformReduceTuning = {
  /** Threads per workgroup (power of two). */
  workgroupSize: 256,
  /** vec4 loads per thread per tile (vectorized path). */
  vecsPerThread: 4,
  /** Scalar items per thread per tile (unaligned or non-commutative path). */
  itemsPerThread: 8,
  /** Upper bound on workgroups of the first pass (each loops over a contiguous run of tiles). */
  maxWorkgroups: 2048,
  /** Use subgroup building blocks when the device has them. */
  subgroups: true,
  /** Lower the storage binding limit (bytes; 0 = the device's), to test segmented inputs. */
  maxBindingBytes: 0,
};

export type TransformReduceTuning = typeof transformReduceTuning;
