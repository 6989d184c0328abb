/**
 * Stable comparison sorts on the CPU for user comparators: a bottom-up merge sort (insertion-sorted
 * runs of 32, then pairwise merges through one scratch array, skipping merges of runs already in
 * order), and the merge step alone for the parallel sort's merge rounds. Values (u32 bits) move with
 * their keys. O(n log n) comparisons; n extra elements of scratch.
 */

/** Keys as any numeric typed array. */
export type KeyArray = Uint32Array | Int32Array | Float32Array;

/** "a goes before b": a strict weak order. */
export type Before = (a: number, b: number) => boolean;

const RUN = 32;

function insertionSort(k: KeyArray, v: Uint32Array | undefined, lo: number, hi: number, before: Before): void {
  for (let i = lo + 1; i < hi; i++) {
    const x = k[i] as number;
    const xv = v ? (v[i] as number) : 0;
    let j = i;
    while (j > lo && before(x, k[j - 1] as number)) {
      k[j] = k[j - 1] as number;
      if (v) v[j] = v[j - 1] as number;
      j--;
    }
    k[j] = x;
    if (v) v[j] = xv;
  }
}

/**
 * Merges the sorted runs src[lo, mid) and src[mid, hi) into dst[out, out + (hi - lo)), stably
 * (ties take the left run). Values follow when both value arrays are given.
 */
export function mergeRuns(
  src: KeyArray,
  srcV: Uint32Array | undefined,
  dst: KeyArray,
  dstV: Uint32Array | undefined,
  lo: number,
  mid: number,
  hi: number,
  out: number,
  before: Before,
): void {
  let i = lo;
  let j = mid;
  let o = out;
  if (srcV && dstV) {
    while (i < mid && j < hi) {
      if (before(src[j] as number, src[i] as number)) {
        dstV[o] = srcV[j] as number;
        dst[o++] = src[j++] as number;
      } else {
        dstV[o] = srcV[i] as number;
        dst[o++] = src[i++] as number;
      }
    }
    dstV.set(srcV.subarray(i, mid), o);
    dst.set(src.subarray(i, mid) as never, o);
    o += mid - i;
    dstV.set(srcV.subarray(j, hi), o);
    dst.set(src.subarray(j, hi) as never, o);
    return;
  }
  while (i < mid && j < hi) {
    if (before(src[j] as number, src[i] as number)) dst[o++] = src[j++] as number;
    else dst[o++] = src[i++] as number;
  }
  dst.set(src.subarray(i, mid) as never, o);
  o += mid - i;
  dst.set(src.subarray(j, hi) as never, o);
}

/**
 * The merge-path split: how many of the first `diag` outputs of merging a[aLo, aHi) and
 * b[bLo, bHi) (stable, ties from a) come from a. O(log) comparisons.
 */
export function mergePath(a: KeyArray, aLo: number, aHi: number, bLo: number, bHi: number, diag: number, before: Before): number {
  let lo = Math.max(0, diag - (bHi - bLo));
  let hi = Math.min(diag, aHi - aLo);
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (!before(a[bLo + diag - 1 - mid] as number, a[aLo + mid] as number)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Sorts `keys` (with `values` along) stably by `before`, in place. */
export function mergeSortBy(keys: KeyArray, values: Uint32Array | undefined, before: Before): void {
  const n = keys.length;
  for (let s = 0; s < n; s += RUN) insertionSort(keys, values, s, Math.min(s + RUN, n), before);
  if (n <= RUN) return;
  const Ctor = keys.constructor as new (n: number) => KeyArray;
  let src = keys;
  let dst = new Ctor(n);
  let srcV = values;
  let dstV = values ? new Uint32Array(n) : undefined;
  for (let width = RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      if (mid >= hi || !before(src[mid] as number, src[mid - 1] as number)) {
        dst.set(src.subarray(lo, hi) as never, lo);
        if (srcV && dstV) dstV.set(srcV.subarray(lo, hi), lo);
      } else {
        mergeRuns(src, srcV, dst, dstV, lo, mid, hi, lo, before);
      }
    }
    [src, dst] = [dst, src];
    [srcV, dstV] = [dstV, srcV];
  }
  if (src !== keys) {
    keys.set(src as never);
    if (values && srcV) values.set(srcV);
  }
}
