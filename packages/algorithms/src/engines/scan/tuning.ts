/**
 * Tuning of the scan-scatter engine, for 4-byte elements.
 *
 * Provenance: NVIDIA H100 80GB (Dawn via Vulkan, driver 580.159), 2026-11-22, device time from
 * timestamp queries, medians of round-robin runs of the variants in one process (an ad-hoc harness
 * of the scan engineer, not committed; runs varied up to 1.8x between processes with the placement
 * of the 1 GiB buffers, so only same-run ratios count). Chosen: 256 threads; 24 items per thread
 * (6 striped vec4 rows) for scans, 16 (4 rows) for compaction (since 2026-11-24: 32 and 24, below). Striped vec4 rows beat per-thread
 * contiguous vec4 blocks (~1.6x at 2^28); 512- or 128-thread workgroups, 8 or 32 items, look-back
 * windows of 2-8 predecessors per lane, staging compaction output in workgroup memory, subgroup-
 * shuffle compaction and rows as WGSL loops over private arrays were all slower. Same-run figures
 * (striped vec4 copy = 2.6-3.0 TB/s): inclusive u32 ~1.65-1.75 TB/s at 2^24 (CUB 1.89) and
 * ~1.96 TB/s at 2^28 (CUB 2.43); copyIf f32 50% with a lambda predicate ~0.9-1.1 TB/s (CUB 1.71 /
 * 2.26). Taking tile ids from the workgroup index (atomicTileIds: false) saved 2-8%; reduce-then-
 * scan matched the chained scan at 2^28 and was 10-20% slower below. lavapipe (8-wide subgroups,
 * 2 cores): 64 spins before the fallback ran fastest (1024: 2x slower at 2^20), since a
 * predecessor there may sit descheduled behind the spinning workgroup.
 * 2026-11-24, staging tried again as CUB's agent_select does it (the whole tile's kept elements in
 * workgroup memory in output order, one barrier, then a striped write-out; one device call, copyIf
 * u32 50%, docs/benchmarks/h100-2026-11-24b/staged.jsonl): 0.118 / 1.71 ms at 2^24 / 2^28 against
 * 0.098 / 1.35 unstaged (CUB 0.056 / 0.709); 8 items staged 0.104 / 1.50, 24 items 0.157 / 2.30.
 * Not kept: the compaction's gap to CUB is not its store pattern.
 * 2026-11-24, rows scanned together (workgroupExclusiveScanRows: one exchange of subgroup totals
 * per tile instead of one workgroup scan per row; compactions at first packed their rows' counts 16
 * bits each into one vecN<u32> scan, withdrawn: see below), same device call against the commit before (docs/benchmarks/
 * h100-2026-11-24b/rows.txt, ms at 2^24 / 2^28): inclusive u32 0.082-0.084 / 1.074-1.085 ->
 * 0.078 / 1.020-1.023, exclusive 0.076 / 0.997-0.999 -> 0.073-0.075 / 0.963-0.967, copyIf u32 50%
 * 0.097-0.100 / 1.335-1.345 -> 0.086 / 1.152-1.164. With the per-row cost gone larger tiles pay:
 * scans 32 items 0.077 / 0.967 (16: 0.082 / 1.108, 40: 0.079 / 0.980; 512 threads x 16 or 24
 * 0.083-0.084 / 1.067-1.077), compaction 24 items 0.083 / 1.066 (20: 0.088 / 1.155). Chosen: 32
 * items for scans, 24 for compaction (CUB in the same session: inclusive 0.068 / 0.881, copy_if
 * 0.056 / 0.709). The packed counts gave wrong results on the H100 with vec2/vec3 words (partition
 * at 16 and 24 items, and an experimental shuffled write; copyIf itself checked right), though
 * lavapipe and SwiftShader were right: compactions now use the scalar rows scan, checked on the H100
 * at 8-32 items and without subgroups (scripts/probe/scan-verify.ts; h100-2026-11-24b/verify.txt):
 * copyIf 0.087 / 1.12 ms (packed: 0.083 / 1.07; one scan per row: 0.098 / 1.35).
 */
import type { GpuDevice } from '@webdpl/core';
import { maxWorkgroupThreads, ticketTileIds, useSubgroups } from '../../common/tuning';

export const scanTuning = {
  /** Threads per workgroup (a power of two, at least the device's largest subgroup). @default 256 */
  workgroupSize: 256,
  /**
   * Items each thread scans per tile (a tile is workgroupSize x itemsPerThread elements). A multiple
   * of 4 enables the vec4 path on 16-byte-aligned arrays. @default 32 for scans, 24 for compaction
   */
  itemsPerThread: 32,
  /** Use subgroup building blocks (and the subgroup look-back) when the device has them. @default true */
  subgroups: true,
  /**
   * Use the three-pass reduce-then-scan strategy (tile reductions, a scan of the tile sums, then the
   * tiles with their carry-in) instead of the single-pass chained scan. In-place scans of a
   * DeviceArray always use it; scans by key never do (reduceByKey always does: by-key/runs.ts).
   * @default false
   */
  reduceThenScan: false,
  /**
   * Look-back polls of a predecessor that is not ready before the waiting workgroup reduces that
   * predecessor's tile itself (the fallback that makes the chained scan safe without forward-progress
   * guarantees). 0 falls back at once (tests use it). @default 256 (64 on software adapters)
   */
  maxSpins: 256,
  /**
   * Chained scan: tile ids from an atomic counter (in the order workgroups start); false takes the
   * workgroup index, saving one atomic round trip per tile, and relies on the look-back fallback
   * wherever the device starts workgroups out of order (results are the same either way).
   * @default false on hardware GPUs, true on software adapters (scanDefaults)
   */
  atomicTileIds: true,
  /**
   * Predecessors each lane of the look-back subgroup polls per step: the window is subgroup size x
   * this. Wider windows polled slower than they propagated on the H100. @default 1
   */
  lookbackPerLane: 1,
  /**
   * On the vec4 path with subgroups: consecutive items each thread holds per row of the tile (a
   * multiple of 4 dividing itemsPerThread; else 4). Larger rows fold more items per thread serially
   * and run fewer subgroup scans per element, with less coalesced loads. @default 4
   */
  rowItems: 4,
  /** Lower the storage binding limit (bytes; 0 = the device's), to test segmented inputs. @default 0 */
  maxBindingBytes: 0,
  /**
   * Reduce-then-scan (in-place scans, `reduceThenScan`) from this many elements: the reduce pass
   * takes the tiles last to first, so the input it leaves in L2 is the first tiles', which the scan
   * pass reads first. @default 2^24 on hardware GPUs, Infinity (never) on software adapters
   */
  reduceReverseFrom: Number.POSITIVE_INFINITY,
};

export type ScanTuning = typeof scanTuning;

/**
 * Kinds of scan-engine call with their own defaults: scans, compactions on the rows layout (by key;
 * any compaction without subgroups), striped compactions ('select': an element hook's and unique's,
 * kernels.ts `stripedKind`), scans by key (pairs of head flag and value), and reduceByKey's tiles
 * ('runs': by-key/runs.ts, which takes the scan engine's tuning).
 */
export type ScanKind = 'scan' | 'compaction' | 'select' | 'by-key' | 'runs';

/** Elements from which a striped compaction ('select') takes its large tiles (see scanDefaults). */
export const SELECT_LARGE = 1 << 22;
/** Elements from which a scan takes its large tiles on hardware GPUs with subgroups (see scanDefaults). */
export const SCAN_LARGE = 1 << 25;

/**
 * Elements from which a call of `kind` takes its large tiles in `scanDefaults` (striped compactions
 * from SELECT_LARGE, scans from SCAN_LARGE; no size rule elsewhere): the defaults differ only on
 * either side of it, which is what the engine memoizes them by.
 */
export function largeTilesFrom(kind: ScanKind): number {
  return kind === 'select' ? SELECT_LARGE : kind === 'scan' ? SCAN_LARGE : Number.POSITIVE_INFINITY;
}

/**
 * Defaults for `device`, the kind of call and whether it may use subgroups (false: a policy turned
 * them off; devices without them never do): the table above; 24 items per thread for compaction;
 * for scans by key on hardware GPUs 512 threads x 40 items, for reduceByKey's reduce-then-scan 512 x
 * 16 (below). H100, 2026-11-24, by-key-probe with keys i >> 4 (runs of 16), one fresh process per
 * tuning and size, device ms at 2^24 / 2^26 (docs/benchmarks/h100-2026-11-24/by-key-sweep-*.txt):
 * inclusiveScanByKey 256 x 24 (the scans' default) 0.147 / 0.533, 256 x 32 0.135 / 0.485, 512 x 16
 * 0.133 / 0.472, 512 x 32 0.133 / 0.463, 512 x 36 0.129 / 0.454, 512 x 40 0.133 / 0.447, 1024 x 16
 * 0.139 / 0.485, 256 x 36..64 and 128 x 32..48 slower. On software
 * adapters 64 threads x 32 items (below) and 64 spins.
 */
export function scanDefaults(device: GpuDevice, kind: ScanKind, subgroups = true, n = 0): ScanTuning {
  const t = { ...scanTuning };
  const large = n >= largeTilesFrom(kind);
  // Scans from SCAN_LARGE elements: 36 items per thread. H100, 2026-11-24 (docs/benchmarks/
  // h100-2026-11-24h.md, scan-tiles*.jsonl, variants interleaved in one process), ms of 32 -> 36
  // items: inclusive 0.955 -> 0.931 and exclusive 0.944 -> 0.921 at 2^28, 0.253 -> 0.247 and 0.248
  // -> 0.246 at 2^26; at 2^22 36 items are 2-4% slower, at 2^24 within +-1%; 40-48 items slower.
  if (kind === 'scan' && large) t.itemsPerThread = 36;
  if (kind === 'compaction') t.itemsPerThread = 24;
  if (kind === 'select') {
    // The striped compaction ('select': an element hook's compaction with subgroups; kernels.ts),
    // H100 2026-11-24 (docs/benchmarks/h100-2026-11-24c/compaction-tiles.txt and
    // select-tiles.txt), copyIf of 50% kept, ms at 2^24 / 2^28: 512 x 48 0.0699-0.0703 /
    // 0.847-0.850, 512 x 40 0.0697-0.0702 / 0.868-0.870, 512 x 32 0.071-0.074 / 0.908-0.922,
    // 512 x 64 0.074-0.075 / 0.925, 256 x 48 0.070-0.071 / 0.885-0.890, 512 x 24 0.077-0.078 /
    // 1.058, 256 x 24 0.080-0.081 / 1.13-1.14, 1024 x 16-24 0.076-0.086 / 1.02-1.23. Below 2^22
    // large tiles leave SMs idle (2^20: 512 x 48 0.0174, 512 x 16 0.0149-0.0150, 256 x 24 0.0154;
    // 2^22: 512 x 48 0.0228, 512 x 16 0.0244-0.0245).
    t.workgroupSize = 512;
    t.itemsPerThread = large ? 48 : 16;
  }
  if (kind === 'by-key') {
    t.workgroupSize = 512;
    t.itemsPerThread = 40;
    // Scans by key gained nothing from longer rows (docs/benchmarks/h100-2026-11-24d/rows.txt:
    // 512 x 32 in 8s 0.134 / 0.469 ms at 2^24 / 2^26 against 0.133 / 0.450), nor did scans (256 x 32
    // in 8s 0.089 / 1.148 against 0.078 / 0.966 at 2^24 / 2^28: less coalesced loads).
  }
  if (kind === 'runs') {
    // reduceByKey as reduce-then-scan (by-key/runs.ts: a keys-only count pass, a scan of the tile
    // counts, the tile pass and the fix-up; no look-back): each thread holds itemsPerThread
    // consecutive keys and values. Chosen from the look-back-free micro kernel of the same tile
    // (docs/benchmarks/h100-2026-11-24d.md, runs-micro.txt, ms at 2^24 / 2^26: 256 x 8 0.0587 /
    // 0.200, 256 x 16 0.0604 / 0.2005, 512 x 16 0.0610, 128 x 32 0.0714), 16 items to halve the
    // tiles the spine and the fix-up walk through one workgroup. Swept on the H100 through the API
    // (the lead, 2026-11-24, by-key-probe PROBE_RBK_FORMS, one process, keys i >> 4, device ms at
    // 2^24 / 2^26; docs/benchmarks/reduce-by-key-rts-2026-11-24.md): 512 x 16 0.1274 / 0.3855,
    // 256 x 16 0.133 / 0.419, 512 x 8 0.132 / 0.427, 128 x 16 0.139 / 0.442, 256 x 8 0.142 /
    // 0.467, 256 x 32 0.153 / 0.452: 512 x 16 chosen (half the tiles of 256 x 16 for the
    // one-workgroup spine and fix-up). (The chained one-pass form it replaced, with a count
    // look-back, ran 512 x 16 in rows of 16: 0.125-0.129 / 0.409-0.416 ms at 2^24 / 2^26,
    // h100-2026-11-24e.md and -24f.md.)
    t.workgroupSize = 512;
    t.itemsPerThread = 16;
  }
  if (!useSubgroups(device, subgroups) && (kind === 'scan' || kind === 'compaction' || kind === 'select')) {
    // Without subgroups a tile is one row of consecutive items per thread under a workgroup-memory
    // scan: H100 with subgroups off, 2026-11-24 (docs/benchmarks/h100-2026-11-24b/no-subgroups-
    // sweep.jsonl and no-sg-sweep2.jsonl, ms at 2^24 / 2^28): scans 512 x 16 0.093 / 1.18 (512 x
    // 12: 0.094 / 1.27; 256 x 16: 0.099 / 1.33, x 8: 0.133 / 1.93, x 24: 0.107 / 1.41; 1024 x 8:
    // 0.102 / 1.40; 128 x 16-32 0.111-0.119 / 1.52-1.59); compaction 1024 x 8 0.119 / 1.65 (512 x
    // 8: 0.123 / 1.76, x 12-16: 0.126-0.145 / 1.75-1.97; 256 x 8-24: 0.133-0.159 / 1.90-2.18).
    t.workgroupSize = kind === 'scan' ? 512 : 1024;
    t.itemsPerThread = kind === 'scan' ? 16 : 8;
  }
  // Tile ids (ticketTileIds): H100, 2026-11-24 (docs/benchmarks/h100-2026-11-24f.md, three
  // alternating rounds in one device call, ms at 2^24 / 2^28): inclusive scan 0.0773-0.0787 /
  // 0.968-0.978 -> 0.0748-0.0762 / 0.955, exclusive 0.0753-0.0772 / 0.955-0.957 -> 0.0734-0.0748 /
  // 0.943-0.945, copyIf 50% 0.0699-0.0722 / 0.848-0.860 -> 0.0685-0.0708 / 0.820-0.845,
  // inclusiveScanByKey 0.1329 / 0.4506 -> 0.1286 / 0.4500, reduceByKey 0.1279 / 0.4164 -> 0.1254 /
  // 0.4086 (ticket -> workgroup index).
  t.atomicTileIds = ticketTileIds(device);
  // Reduce-then-scan's reduce pass last to first from 2^24 elements on hardware GPUs: the scan pass
  // then finds the first tiles' input in L2. H100, 2026-11-24 (docs/benchmarks/h100-2026-11-24j.md,
  // call 13, in-place inclusiveScan, variants interleaved), ms forward -> reversed: 0.1397 ->
  // 0.1248 at 2^24, 0.2726 -> 0.2579 at 2^25, 0.5108 -> 0.4976 at 2^26, 1.9326 -> 1.9160 at 2^28;
  // 2^23 0.0641 -> 0.0665 (slower: the input fits in L2 either way), 2^20-2^22 within 1%.
  if (device.info.kind !== 'software-gpu') t.reduceReverseFrom = 1 << 24;
  if (device.info.kind === 'software-gpu') {
    // Software adapters run a workgroup's threads on one CPU thread, barrier by barrier: fewer
    // threads with more items each. lavapipe (2 cores, Mesa 25.0.7), 2026-11-24, tuning-sweep.ts
    // (every variant interleaved call by call in one process), device ms of 256 x 8 -> 64 x 32 at
    // 2^12 / 2^16 / 2^20: inclusiveScan 0.076 / 0.634 / 10.8 -> 0.053 / 0.251 / 3.44, copyIf
    // 0.072 / 0.580 / 8.91 -> 0.057 / 0.322 / 4.68, inclusiveScanByKey 0.076 / 0.649 / 10.3 ->
    // 0.060 / 0.305 / 4.35, reduceByKey 0.683 / 8.00 -> 0.475 / 4.27 at 2^16 / 2^20 (32 x 32 and
    // 128 x 32 within 10-20% of it, 64 items compile for seconds); without subgroups 2^20 scan 20.6
    // -> 5.8 ms. The tile keeps its 2048 elements.
    t.workgroupSize = 64;
    t.itemsPerThread = 32;
    t.maxSpins = 64;
    if (kind === 'scan') {
      // Plain scans: one subgroup's worth of threads (8, or the adapter's subgroup width) over a
      // 1024-element tile, so a workgroup is one SIMD row on one CPU thread. lavapipe, 2026-11-24,
      // tuning-sweep.ts, variants interleaved (docs/benchmarks/lavapipe-tiles-2026-11-24i.md), ms
      // inclusive / exclusive, 64 x 32 -> 8 x 128: 2^12 0.0605 / 0.0580 -> 0.0577 / 0.0581, 2^16
      // 0.246 / 0.242 -> 0.209 / 0.214, 2^18 0.884 / 0.849 -> 0.718 / 0.739, 2^20 3.92 / 3.75 ->
      // 2.91 / 2.88; without subgroups 2^16 0.342 / 0.343 -> 0.198 / 0.200, 2^20 5.36 / 5.06 -> 3.05
      // / 3.04. 8 x 256 was slower at 2^12; compactions, scans by key and reduceByKey gained nothing
      // (they keep 64 x 32).
      t.workgroupSize = Math.max(8, device.info.subgroupMaxSize || 8);
      t.itemsPerThread = Math.max(4, 1024 / t.workgroupSize);
    }
  }
  // Workgroup memory is the workgroup scans' (with subgroups workgroupSize / minSubgroupSize values
  // per row of 4 items: 2 KiB at 256 x 32 and 4-wide subgroups; without, workgroupSize values): at
  // most 8 KiB at 512 threads, within every device's 16 KiB.
  t.workgroupSize = Math.min(t.workgroupSize, maxWorkgroupThreads(device));
  return t;
}
