/**
 * Tuning of the radix-sort engine (4-byte keys and values).
 *
 * Provenance: starting points from CUB's Onesweep policy for NVIDIA (256 threads x 15 keys per tile,
 * 8-bit digits, ~16-key histogram tiles) and Adinets & Merrill, "Onesweep" (2022). Not yet measured
 * on the H100: re-tune with `pnpm bench --device-only` (docs/benchmarks/h100.md). On lavapipe
 * (8-wide subgroups, 32 KiB workgroup memory) the subgroup ranking needs 128 threads to fit the
 * per-subgroup counters next to the tile: `radixSortTuningFor` picks that from the device.
 * Date: 2025 (initial values, webdpl issue 5).
 */
import type { GpuDevice } from '@webdpl/core';

export const radixSortTuning = {
  /** Threads per workgroup of the digit passes (power of two, 32..1024). */
  workgroupSize: 256,
  /** Keys per thread of a digit-pass tile (tile = workgroupSize x keysPerThread keys, < 65536). */
  keysPerThread: 15,
  /** Rank keys with subgroup ballots when the device has subgroups (else workgroup-memory ranking). */
  subgroups: true,
  /** Threads per workgroup of the global histogram pass (power of two). */
  histogramWorkgroupSize: 256,
  /** Keys per thread per histogram tile. */
  histogramKeysPerThread: 16,
  /** Most workgroups of the histogram pass (each loops over a contiguous run of tiles). */
  histogramMaxWorkgroups: 1024,
  /** Polls of a predecessor's look-back slot before computing its digit counts from its keys. */
  lookbackSpins: 256,
  /** Predecessor slots a look-back step loads at once (their latencies overlap). */
  lookbackWindow: 8,
  /**
   * Publish the tile's digit counts before ranking (CUB's early counts: one workgroup atomic per key).
   * Off: measured slower on the H100 (2^28 u32: 22.1 ms on, 14.3 ms off, 2026-11-22).
   */
  earlyCounts: false,
  /** Tests: ignore every published look-back value, so the fallback path computes all of them. */
  lookbackForceFallback: false,
  /** Largest n sorted by one workgroup in workgroup memory (0: one digit-pass tile). */
  singleWorkgroupMax: 0,
};

export type RadixSortTuning = typeof radixSortTuning;

/**
 * Defaults for `device`: the subgroup ranking keeps one 128-word counter block per subgroup, so
 * devices whose subgroups may be 8 lanes or narrower get 128-thread workgroups.
 */
export function radixSortTuningFor(device: GpuDevice): RadixSortTuning {
  const min = device.info.subgroupMinSize || 32;
  return { ...radixSortTuning, workgroupSize: device.features.has('subgroups') && min < 16 ? 128 : 256 };
}
