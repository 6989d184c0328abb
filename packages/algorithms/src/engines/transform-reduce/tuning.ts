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
  /**
   * Fewest tiles a workgroup of the first pass takes (while there are that many): an input of at
   * most this many tiles is one workgroup and one pass, with no second pass to fold partials.
   */
  minTilesPerWorkgroup: 1,
  /**
   * Integer plus / or / xor (max over u32) fold the workgroups' totals with an atomic into one
   * cleared word: one pass instead of two (kernels.ts `atomicFoldOf`).
   */
  atomicFold: true,
  /** Use subgroup building blocks when the device has them. */
  subgroups: true,
  /** Lower the storage binding limit (bytes; 0 = the device's), to test segmented inputs. */
  maxBindingBytes: 0,
};

export type TransformReduceTuning = typeof transformReduceTuning;

/**
 * Software adapters (lavapipe, SwiftShader) run a workgroup on one CPU thread and pay per workgroup
 * and per pass: few small workgroups, each over a long contiguous run of tiles, and no second pass
 * for small inputs. lavapipe (2 cores, Mesa 25.0.7), 2026-11-24, scripts/probe/tuning-sweep.ts
 * (variants interleaved call by call in one process), reduce u32 device ms at 2^12 / 2^16 / 2^20 /
 * 2^22: 256 x 4 vec4s, up to 2048 workgroups 0.046 / 0.137 / 2.37 / 10.1; 64 x 4, up to 8
 * workgroups 0.059 / 0.075 / 0.370 / 1.34 (up to 32: 0.060 / 0.098 / 0.401 / 1.33; 64 x 16: 1.7x
 * slower at 2^22); the 2^12 loss is the second pass, which 4 tiles per workgroup remove.
 */
export const softwareTransformReduceTuning: TransformReduceTuning = {
  ...transformReduceTuning,
  workgroupSize: 64,
  maxWorkgroups: 8,
  minTilesPerWorkgroup: 4,
  // lavapipe: the clear before the pass cost more than the second pass saves (reduce u32 at 2^14 /
  // 2^16: 0.050-0.056 / 0.066-0.067 ms two-pass against 0.071-0.125 / 0.090-0.132 atomic).
  atomicFold: false,
};
