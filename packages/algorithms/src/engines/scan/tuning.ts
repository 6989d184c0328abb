/**
 * Tuning of the scan-scatter engine, for 4-byte elements.
 *
 * Provenance: starting points from CUB's scan/select agents and the decoupled look-back paper
 * (Merrill & Garland 2016) for NVIDIA: 256 threads x 16 items per thread (4 vec4 loads), look-back by
 * one subgroup over `subgroup size` predecessors per step. Not yet measured on the H100; the lead's
 * `pnpm bench --device-only` run (docs/benchmarks/h100.md) replaces these with measured values.
 * lavapipe (8-wide subgroups, 2 CPU cores, 2025-06) uses the same tiles and a larger spin budget,
 * since a predecessor there may sit descheduled behind the spinning workgroup on the same thread.
 */
import type { GpuDevice } from '@webdpl/core';

export const scanTuning = {
  /** Threads per workgroup (a power of two, at least the device's largest subgroup). */
  workgroupSize: 256,
  /**
   * Items each thread scans per tile (a tile is workgroupSize x itemsPerThread elements). A multiple
   * of 4 enables the vec4 path on 16-byte-aligned arrays.
   */
  itemsPerThread: 16,
  /** Use subgroup building blocks (and the subgroup look-back) when the device has them. */
  subgroups: true,
  /**
   * Use the three-pass reduce-then-scan strategy (tile reductions, a scan of the tile sums, then the
   * tiles with their carry-in) instead of the single-pass chained scan. In-place scans of a
   * DeviceArray always use it.
   */
  reduceThenScan: false,
  /**
   * Look-back polls of a predecessor that is not ready before the waiting workgroup reduces that
   * predecessor's tile itself (the fallback that makes the chained scan safe without forward-progress
   * guarantees). 0 falls back at once (tests use it).
   */
  maxSpins: 256,
  /**
   * How compaction writes its output: 0 scatters each kept element from its thread; 1 stages the
   * tile's output in workgroup memory (tile x 4 bytes, when the device allows) and writes it out
   * coalesced; 2 compacts each subgroup's elements with shuffles so stores are coalesced (needs
   * subgroups and 16-byte-aligned input; else 0).
   */
  compactionWrite: 2,
  /** Lower the storage binding limit (bytes; 0 = the device's), to test segmented inputs. */
  maxBindingBytes: 0,
};

export type ScanTuning = typeof scanTuning;

/** Defaults for `device`: the table above, with a larger spin budget on software adapters. */
export function scanDefaults(device: GpuDevice): ScanTuning {
  return device.info.kind === 'software-gpu' ? { ...scanTuning, maxSpins: 1024 } : scanTuning;
}
