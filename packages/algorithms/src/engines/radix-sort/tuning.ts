/**
 * Tuning of the radix-sort engine (4-byte keys and values).
 *
 * Provenance: started from CUB's Onesweep policy (8-bit digits) and Adinets & Merrill, "Onesweep"
 * (2022); tuned on the H100 with scripts/probe/sort-probe.ts (docs/benchmarks/sort-gpu.md,
 * 2026-11-22). There the digit pass is bound by how many tiles an SM holds, which workgroup memory
 * decides (about 4 tiles of <= ~23 KiB): 256 threads x 20 keys is the largest tile that keeps 4
 * (x 22 keys drops to 3 and runs 30% slower); 2^28 u32 keys: 15 keys 12.8 ms, 18 keys 11.7 ms,
 * 20 keys 10.9 ms. A 4-slot look-back window beat 8 and 16 (11.3 vs 11.7 and 12.7 ms at 18 keys).
 * 2026-11-24 (docs/benchmarks/h100-2026-11-24g.md): a digit pass padded with 8 KiB of unused
 * workgroup memory ran 40% slower (10.45 -> 14.6 ms), so workgroup memory still bounds it; a
 * two-round scatter (`scatterRounds` 2) stages half the tile at a time, which lets 24 keys per
 * thread keep the occupancy: 2^24 / 2^28 u32 keys 0.785 / 10.33 -> 0.753 / 9.54 ms (28 keys 0.743 /
 * 9.75, 32 keys 0.90 / 12.2: past 28 registers bound it), pairs 0.936 / 12.47 -> 0.901 / 11.68.
 * 2026-11-25 (docs/benchmarks/h100-2026-11-25b.md): with the key type and order compiled in
 * (`staticKeyMode`) instead of branched on per key, the same tiles ran 8-14% faster and 4-8 KiB of
 * padding no longer slowed the pass: registers, not workgroup memory, bound it, and the freed
 * registers let 32-36 keys per thread win (2^24 / 2^28 u32 keys 0.750 / 9.56-9.60 -> 0.597 / 7.27
 * ms; pairs 0.867 / 11.69 -> 0.783 / 10.00).
 * On lavapipe (8-wide subgroups, 32 KiB workgroup memory) the subgroup ranking's per-subgroup
 * counters need 128-thread workgroups: `radixSortTuningFor` picks that from the device.
 */
import type { GpuDevice } from '@webdpl/core';
import { fitThreads, ticketTileIds } from '../../common/tuning';

export const radixSortTuning = {
  /** Threads per workgroup of the digit passes (power of two, 32..1024). */
  workgroupSize: 256,
  /** Keys per thread of a digit-pass tile (tile = workgroupSize x keysPerThread keys, < 65536). */
  keysPerThread: 24,
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
  lookbackWindow: 4,
  /**
   * Publish the tile's digit counts before ranking (CUB's early counts: one workgroup atomic per key).
   * Off: measured slower on the H100 (2^28 u32: 22.1 ms on, 14.3 ms off, 2026-11-22).
   */
  earlyCounts: false,
  /**
   * Tile ids of a digit pass from an atomic ticket (in the order workgroups start); false takes the
   * workgroup index, relying on the look-back fallback wherever workgroups start out of order.
   * @default false on hardware GPUs, true on software adapters (radixSortTuningFor)
   */
  atomicTileIds: true,
  /**
   * Scatter rounds of a digit pass (1 or 2; 2 needs the subgroup ranking): with 2 the stage holds
   * half the tile's keys at a time, so an SM holds more tiles (workgroup memory bounds the pass).
   */
  scatterRounds: 2,
  /**
   * The digit pass and the histogram with the key type and order compiled in (a pipeline per key
   * type and order) instead of read from their uniform. On hardware GPUs (radixSortTuningFor): the
   * uniform's mode, branched on for every key, cost the H100 8-14% of the sort and the registers
   * that kept larger tiles out (docs/benchmarks/h100-2026-11-25b.md); software adapters keep one
   * pipeline for every mode (lavapipe compiles an unrolled digit pass for tens of seconds).
   */
  staticKeyMode: false,
  /**
   * Diagnostics: words of unused (declared and touched) workgroup memory added to the digit pass
   * (0: none); 4-8 KiB more left the H100's sort unchanged on 2026-11-25 (registers bound it).
   */
  padWords: 0,
  /** Tests: ignore every published look-back value, so the fallback path computes all of them. */
  lookbackForceFallback: false,
  /** Largest n sorted by one workgroup in workgroup memory (0: one digit-pass tile). */
  singleWorkgroupMax: 0,
};

export type RadixSortTuning = typeof radixSortTuning;

/** Keys from which a keys-only sort on 32-wide subgroups takes 36-key tiles (see sortKeysFor). */
export const SORT_LARGE = 1 << 24;
/** Keys from which a sort with values on 32-wide subgroups takes 28-key tiles (see sortKeysFor). */
export const SORT_PAIRS_LARGE = 1 << 24;

/**
 * Keys per thread of a sort of n keys on 32-wide subgroups. H100, 2026-11-24, device ms, variants in
 * one process (docs/benchmarks/h100-2026-11-24g/small-sizes.txt, h100-2026-11-24h/sort-small.jsonl
 * and sort-sweep.jsonl):
 * - keys only, 24 keys against 16 / 8: 2^18 0.1236 / 0.1177 / 0.1131, 2^20 0.1430 / 0.1395 /
 *   0.1526, 2^22 0.2908 / 0.2781 / 0.3436, 2^23 0.4506-0.4519 / 0.4410; 2^24 0.751 / 0.760 (20
 *   keys slower everywhere): 8 below 2^19, 16 below SORT_LARGE, 24 from it;
 * - pairs, 24 keys against 12 / 16 / 28: 2^18 0.1337 / 0.1204, 2^20 0.1585 / 0.1556, 2^21 - /
 *   0.2303-0.2312 / 0.2183, 2^22 - / 0.3556-0.3563 / 0.3264, 2^23 0.5387-0.5402 / - / 0.5063 /
 *   0.5497-0.5499, 2^24 0.9009-0.9013 / - / 0.8731 / 0.8848-0.8876, 2^26 3.046-3.052 / - / 3.070 /
 *   2.968-2.985, 2^28 11.73-11.79 / - / 11.82 / 11.62-11.63: 12 below 2^20, 16 below
 *   SORT_PAIRS_LARGE, 28 from it.
 * With the key mode compiled in (staticKeyMode, 2026-11-25, docs/benchmarks/h100-2026-11-25b.md,
 * sweeps in one process), larger tiles fit the registers: keys only 16 / 24 / 32 / 36 / 40 keys at
 * 2^22 0.2511 / 0.2580 / 0.2361-0.2367 / 0.2445 / 0.2825, 2^23 - / 0.3999 / 0.3599 / 0.3645 /
 * 0.4319, 2^24 0.6787 / 0.6793 / 0.5994-0.6010 / 0.5959-0.5969 / 0.716, 2^26 2.386 / 2.334 / 1.997-2.000 /
 * 1.942-1.945 / 2.411, 2^28 9.236 / 8.951 / 7.549-7.552 / 7.264-7.266 / 9.162 (37-38 keys within
 * 1.4% of 36, 40-48 slower everywhere: the register cliff is past 38); at 2^20 32 keys 0.1322
 * against 16 0.1348. Pairs fall off it at 29 keys (1.07 ms at 2^24).
 * Pairs 16 / 24 / 28 / 30-32 keys: 2^22 0.3001 / 0.3149 / 0.3161-0.3191 / 0.389, 2^23 0.468 / 0.475 /
 * 0.4707 / 0.609, 2^24 0.810-0.812 / 0.804 / 0.782-0.783 / 1.02-1.05, 2^28 11.30 / 10.49 / 10.00 /
 * 14.0-14.3. So: keys 8 below 2^19, 16 below 2^20, 32 below SORT_LARGE, 36 from it; pairs 12 below
 * 2^20, 16 below SORT_PAIRS_LARGE, 28 from it.
 * Inputs of at most one 24-key tile keep it (sorted by one workgroup).
 */
function sortKeysFor(n: number, pairs: boolean): number {
  const k = radixSortTuning.keysPerThread;
  if (n <= radixSortTuning.workgroupSize * k) return k;
  if (pairs) return n < 1 << 20 ? 12 : n < SORT_PAIRS_LARGE ? 16 : 28;
  return n < 1 << 19 ? 8 : n < 1 << 20 ? 16 : n < SORT_LARGE ? 32 : 36;
}

/**
 * Defaults for `device` and a sort of n keys (with values: `pairs`). The 24-key tile in two scatter rounds was measured with 32-wide subgroups
 * (the H100); other devices keep 15 keys per thread in one round (the unrolled 24-key kernels take
 * lavapipe's compiler much longer, and the workgroup-memory fit that makes 24 win is only known
 * there). The subgroup ranking keeps
 * one 256-word counter block per subgroup, so devices whose subgroups may be 8 lanes or narrower get
 * 128-thread workgroups.
 */
export function radixSortTuningFor(device: GpuDevice, n = Number.POSITIVE_INFINITY, pairs = false): RadixSortTuning {
  const subgroups = device.features.has('subgroups');
  const min = device.info.subgroupMinSize || 32;
  const t =
    subgroups && min >= 32
      ? { ...radixSortTuning, keysPerThread: sortKeysFor(n, pairs) }
      : { ...radixSortTuning, workgroupSize: subgroups && min < 16 ? 128 : 256, keysPerThread: 15, scatterRounds: 1 };
  // Tile ids (ticketTileIds): sort u32 0.831-0.837 / 10.83 -> 0.797-0.802 / 10.57-10.58 ms at 2^24 /
  // 2^28 from the workgroup index on the H100 (docs/benchmarks/h100-2026-11-24f.md).
  const atomicTileIds = ticketTileIds(device);
  const staticKeyMode = device.info.kind !== 'software-gpu';
  // Within the device's threads per workgroup; workgroup memory is fitted per call (index.ts,
  // fitRadixTuning), once the overrides are known.
  return {
    ...fitThreads(device, { ...t, atomicTileIds, staticKeyMode }, ['workgroupSize', 'histogramWorkgroupSize']),
  };
}
