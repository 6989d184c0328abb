/**
 * Tuning of the GPU radix select (nthElement, partialSort, topK; 4-byte keys). Field names are the
 * select's own, so a call's tuning also carries the sort engines' fields (the k selected are sorted
 * by the radix sort; user comparators run the merge sort).
 *
 * Provenance: not measured yet (2026-11-23, webdpl issue 16; lavapipe timings are not representative
 * of a GPU). Geometry from the histogram-style kernels: 256 threads, 8 items per thread for the
 * tiled phases (a tile of 2048 keys, staged in 8 KiB of workgroup memory; the default shrinks to fit
 * a device's workgroup storage), at most 1024 workgroups striding over the data: 1024 x 256 threads
 * is about one full wave of an H100 (132 SMs x 2048 resident threads), so the grid-stride loop
 * keeps every SM busy with 8 striped loads in flight per thread (2^24 keys: 8 tiles per workgroup).
 * `fullSortMax` from the structure of the two paths: beyond one radix tile the full sort is 6
 * dispatches (histogram, plan, 4 digit passes with look-back) moving ~36 B per key; the select is
 * 5 dispatches (4 histogram rounds, the later ones over the candidates only, and the scatter)
 * moving ~16 B per key plus, for partialSort/topK, a sort of the k selected. Up to one radix tile
 * (a single-workgroup sort, one dispatch) the full sort does less; 2^13 keys covers that tile on
 * every device (256 x 24 on the H100, 128 x 15 on lavapipe) with margin for the select's fixed
 * cost of a second submission. To be swept on the H100 (`pnpm bench --algorithms nth-element`).
 */
export const selectTuning = {
  /** Threads per workgroup of the select kernels (power of two, 32..1024). */
  selectWorkgroupSize: 256,
  /** Items per thread of every phase (loads in flight per thread; the tiled phases stage the tile in workgroup memory). */
  selectItemsPerThread: 8,
  /** Most workgroups of a select dispatch (each strides over the data). */
  selectMaxWorkgroups: 1024,
  /** Up to this many keys the GPU sorts the whole range instead (see above). */
  fullSortMax: 1 << 13,
};

export type SelectTuning = typeof selectTuning;
