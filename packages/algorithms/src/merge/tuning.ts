/**
 * Tuning of merge and mergeByKey on the GPU (4-byte keys): the merge sort engine's fields (its
 * partition and tile-merge kernels), with merge's own defaults; a policy's 'merge-sort' entries
 * apply too (the engine's), then 'merge' / 'mergeByKey' entries. Tiles are fitted to the device's
 * workgroup memory (fewer keys per thread, then fewer threads) unless the field was overridden.
 *
 * Provenance: NVIDIA H100 (Dawn/Vulkan, driver 580.159.04), 2026-11-23, u32 keys, two sorted halves
 * of n/2, device time through the public API: `node scripts/probe/build.mjs`, then on the GPU
 * machine `PROBE_SIZES=24,28 PROBE_MERGE_SWEEP=1 node .probe/catalogue-probe.mjs` (second process).
 * 2^28: 512 x 7 1.501 ms, 512 x 8 1.587, 256 x 7 1.550, 256 x 8 1.572, 128 x 7 1.656, 128 x 8 (the
 * merge sort's) 1.694 (CUB DeviceMerge 0.791 in the same session); 12 to 24 keys per thread were
 * slower (2.0 to 3.7 ms). At 2^24 the figures varied up to 2x between runs (0.15 to 0.45 ms).
 * 2026-11-24 (docs/benchmarks/h100-2026-11-24h.md, merge-tiles.jsonl: variants interleaved in one
 * process, two sorted halves that interleave), ms at 2^24 / 2^26 / 2^28: 512 x 7 0.1187 / 0.3899 /
 * 1.493, **512 x 6 0.1078 / 0.3438 / 1.321**, 512 x 5 0.1120 / 0.3653 / 1.418, 512 x 9 1.21-1.26x,
 * 256 x 7 0.98-1.03x, 256 x 11, 1024 x 5 / 7 and 128 x 15 1.07-1.47x: 6 keys per thread.
 */
import { mergeSortTuning } from '../engines/merge-sort/tuning';

export const mergeTuning: typeof mergeSortTuning = {
  ...mergeSortTuning,
  workgroupSize: 512,
  itemsPerThread: 6,
};

/**
 * mergeByKey's defaults: merge's, with 3 keys per thread (values double what a tile holds). H100,
 * 2026-11-24 (docs/benchmarks/h100-2026-11-24h.md, mbk-tiles.jsonl and mbk-check.jsonl, variants
 * interleaved in one process), ms at 2^20 / 2^24 / 2^26 / 2^28: 512 x 6 0.0232 / 0.1685 / 0.5972 /
 * 2.346, 512 x 4 0.0224 / 0.1527 / 0.5307 / 2.096, **512 x 3 0.99 / 0.94 / 0.94 / 0.94x of 4**
 * (0.0222 / 0.1444 / 0.5011 / 1.976), 512 x 5 0.99-1.04x of 6, 512 x 7 (merge's old tile, which
 * mergeByKey took until then) 1.2-1.8x of 4, 256 x 6 0.96-1.00x of 6, 256 x 8 1.13-1.24x of 6.
 */
export const mergeByKeyTuning: typeof mergeSortTuning = {
  ...mergeTuning,
  itemsPerThread: 3,
};
