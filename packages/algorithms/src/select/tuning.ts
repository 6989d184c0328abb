/**
 * Tuning of the GPU radix select (nthElement, partialSort, topK; 4-byte keys). Field names are the
 * select's own, so a call's tuning also carries the sort engines' fields (the k selected are sorted
 * by the radix sort; user comparators run the merge sort).
 *
 * Provenance: not measured yet (2026-11-23, webdpl issue 16; lavapipe timings are not representative
 * of a GPU). Geometry from the histogram-style kernels: 256 threads, 8 items per thread for the
 * tiled phases, at most 1024 workgroups striding over the data.
 * `fullSortMax` from the structure of the two paths: beyond one radix tile the full sort is 6
 * dispatches (histogram, plan, 4 digit passes with look-back) moving ~36 B per key; the select is
 * 5 dispatches (4 histogram rounds, the later ones over the candidates only, and the scatter)
 * moving ~16 B per key plus, for partialSort/topK, a sort of the k selected. Up to one radix tile
 * (a single-workgroup sort, one dispatch) the full sort does less; 2^13 keys covers that tile on
 * every device (256 x 20 on the H100, 128 x 15 on lavapipe) with margin for the select's fixed
 * cost of a second submission. To be swept on the H100 (`pnpm bench --algorithms nth-element`).
 */
export const selectTuning = {
  /** Threads per workgroup of the select kernels (power of two, 32..1024). */
  selectWorkgroupSize: 256,
  /** Items per thread of the tiled phases (candidate append, scatter). */
  selectItemsPerThread: 8,
  /** Most workgroups of a select dispatch (each strides over the data). */
  selectMaxWorkgroups: 1024,
  /** Up to this many keys the GPU sorts the whole range instead (see above). */
  fullSortMax: 1 << 13,
};

export type SelectTuning = typeof selectTuning;
