/**
 * Tuning of the map engine, for 4-byte elements.
 * Provenance: starting points for a bandwidth-bound elementwise kernel on NVIDIA (CUB's
 * DeviceTransform keeps ~64 bytes per thread in flight: 256 threads, 4 vec4 loads per input per
 * thread, one tile per workgroup, no bounds checks on full tiles); to be re-measured on the H100 with
 * `pnpm bench --device-only` (docs/benchmarks/h100.md). lavapipe (2 CPU cores) uses the same.
 */
export const mapTuning = {
  /** Threads per workgroup. */
  workgroupSize: 256,
  /** vec4 loads (per input) and stores per thread per tile, all loads issued before the stores (vectorized path). */
  vecsPerThread: 4,
  /** Scalar elements per thread per tile (unaligned path: some array starts off a 16-byte boundary). */
  itemsPerThread: 8,
  /** Cap on workgroups per dispatch (0: one per tile); capped workgroups loop over tiles, grid-stride. */
  maxWorkgroups: 0,
  /** Accepted for uniformity with the other engines (test matrices turn it off everywhere); map kernels use no subgroup operations. */
  subgroups: true,
  /** Lower the storage binding limit (bytes; 0 = the device's), to test segmented arrays. */
  maxBindingBytes: 0,
};

export type MapTuning = typeof mapTuning;
