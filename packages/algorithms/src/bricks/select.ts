/**
 * CPU selection for nthElement, partialSort and topK: an introselect (quickselect with a
 * median-of-3 pivot and a Hoare partition, which splits runs of equal keys evenly; after
 * 2 log2(n) partitions that did not finish it switches to a heapselect, so the worst case is
 * O(n log n)), generated with the comparator inlined when it has a source (`compileOnce`), else
 * calling it. partialSort and topK select the k-th element, then sort the k - 1 before it with the
 * sort family's CPU sort (bricks/sort: TypedArray#sort, radix or merge sort; par on the pool where
 * that sort is). topK of few (k <= n / HEAP_TOPK_RATIO) keeps a max-heap of k while reading the
 * input once instead (no copy of the input), then sorts the heap.
 *
 * Built-in orders from RADIX_SELECT_MIN elements select by radix instead (bricks/radix-select.ts:
 * digit histograms of the key bits, then a stable partition around the k-th key; par on the pool
 * over shared data), on seq and par alike, so both give the same arrangement. The introselect
 * (user comparators, small inputs) runs on the calling thread; partialSort's and topK's sort of the
 * first k uses the pool where the sort does.
 * A comparator without a source (a plain JS function, which may throw) works on a copy, so the
 * caller's array is as it was when it throws.
 */
import type { NumericType } from '@webdpl/core';
import { type CpuBackend, compileOnce, isShared, sharedMemoryAvailable } from '@webdpl/policies';
import { cpuRadixSelect, RADIX_SELECT_MIN, SELECT_PAR_MIN, SELECT_PLAIN_MIN } from './radix-select';
import { type CpuComparator, cpuSort, type KeyArray } from './sort/index';
import { borrow, giveBack } from './sort/scratch';
import { belowParMin, plainMemoryBoundSeq } from './staging';

/**
 * Places the k-th element (0-based) of a[lo, hi) at k: before it nothing after it, after it nothing
 * before. `depth`: partitions before the heapselect takes over (default 2 log2(hi - lo); tests).
 */
export type SelectKernel = (a: KeyArray, lo: number, hi: number, k: number, depth?: number) => void;

/** The k = h.length first elements of x (in the order of the comparator, unsorted) into h, x untouched. */
type HeapTopKernel = (x: KeyArray, h: KeyArray) => void;

/** The generated kernels of one comparator. */
export interface SelectKernels {
  readonly select: SelectKernel;
  readonly heapTop: HeapTopKernel;
}

/** The introselect's body, over `before(x, y)` ("x goes before y"). */
const SELECT_BODY = `
  function swap(a, i, j) { const t = a[i]; a[i] = a[j]; a[j] = t; }
  function sift(a, lo, i, n) {
    // Max-heap (by before) over a[lo, lo + n), root at lo; sifts position i down.
    const v = a[lo + i];
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && before(a[lo + c], a[lo + c + 1])) c++;
      if (!before(v, a[lo + c])) break;
      a[lo + i] = a[lo + c];
      i = c;
    }
    a[lo + i] = v;
  }
  function heapSelect(a, lo, hi, k) {
    // The k - lo + 1 first elements of a[lo, hi) in order go to a max-heap; a smaller one replaces its top.
    const n = k - lo + 1;
    for (let i = (n >> 1) - 1; i >= 0; i--) sift(a, lo, i, n);
    for (let i = k + 1; i < hi; i++) {
      if (before(a[i], a[lo])) { swap(a, i, lo); sift(a, lo, 0, n); }
    }
    swap(a, lo, k);
  }
  function insertion(a, lo, hi) {
    for (let i = lo + 1; i < hi; i++) {
      const v = a[i];
      let j = i - 1;
      while (j >= lo && before(v, a[j])) { a[j + 1] = a[j]; j--; }
      a[j + 1] = v;
    }
  }
  function heapTop(x, h) {
    // A max-heap of the first k elements; each later element that goes before its top replaces it.
    const k = h.length;
    for (let i = 0; i < k; i++) h[i] = x[i];
    for (let i = (k >> 1) - 1; i >= 0; i--) sift(h, 0, i, k);
    for (let i = k, n = x.length; i < n; i++) {
      const v = x[i];
      if (before(v, h[0])) { h[0] = v; sift(h, 0, 0, k); }
    }
  }
  function select(a, lo, hi, k, depth = 2 * (32 - Math.clz32(hi - lo))) {
    while (hi - lo > 16) {
      if (depth-- === 0) { heapSelect(a, lo, hi, k); return; }
      const mid = lo + ((hi - lo) >>> 1);
      const last = hi - 1;
      if (before(a[mid], a[lo])) swap(a, lo, mid);
      if (before(a[last], a[mid])) {
        swap(a, mid, last);
        if (before(a[mid], a[lo])) swap(a, lo, mid);
      }
      // a[lo] <= p <= a[last]: sentinels for both scans.
      const p = a[mid];
      let i = lo;
      let j = last;
      for (;;) {
        do i++; while (before(a[i], p));
        do j--; while (before(p, a[j]));
        if (i >= j) break;
        swap(a, i, j);
      }
      // a[lo, j] are not after p, a[j + 1, hi) not before it; both sides are non-empty.
      if (k <= j) hi = j + 1;
      else lo = j + 1;
    }
    insertion(a, lo, hi);
  }
  return { select, heapTop };`;

const inlined = new Map<string, SelectKernels>();

/** The introselect (and heap top-k) for `comp`: compiled with its source inlined, or calling `before`. */
export function selectKernel(comp: CpuComparator): SelectKernels {
  if (comp.source !== undefined) {
    let k = inlined.get(comp.source);
    if (!k) {
      k = compileOnce<SelectKernels>(
        `(function () {\n'use strict';\nconst before = ${comp.source};${SELECT_BODY}\n})() /* webdpl select */`,
      );
      inlined.set(comp.source, k);
    }
    return k;
  }
  return compileOnce<(before: CpuComparator['before']) => SelectKernels>(
    `(function (before) {\n'use strict';${SELECT_BODY}\n}) /* webdpl select (function) */`,
  )(comp.before);
}

/** Runs `f` on `a`, or on a copy written back afterwards when the comparator may throw. */
async function guarded(a: KeyArray, comp: CpuComparator, f: (x: KeyArray) => Promise<void> | void): Promise<void> {
  if (comp.source !== undefined) {
    await f(a);
    return;
  }
  const copy = a.slice() as KeyArray;
  await f(copy);
  a.set(copy as never);
}

/**
 * Places the n-th element of `x` at n (see SelectKernel): built-in orders from RADIX_SELECT_MIN
 * elements by the radix select (par on the pool), others by the introselect on the calling thread.
 */
function selectAt(
  backend: CpuBackend,
  x: KeyArray,
  n: number,
  type: NumericType,
  comp: CpuComparator,
): Promise<void> | void {
  if (comp.kind === 'builtin' && x.length >= RADIX_SELECT_MIN)
    return cpuRadixSelect(backend, x, n, type, comp.descending);
  selectKernel(comp).select(x, 0, x.length, n);
}

/** std::nth_element: a[n] becomes what a sort by `comp` puts there; before it nothing after it, after it nothing before. */
export function cpuNthElement(
  backend: CpuBackend,
  a: KeyArray,
  n: number,
  type: NumericType,
  comp: CpuComparator,
): Promise<void> {
  return guarded(a, comp, (x) => selectAt(backend, x, n, type, comp));
}

/** std::partial_sort: a[0, k) becomes the k first elements in the order of `comp`; the rest in no order. */
export function cpuPartialSort(
  backend: CpuBackend,
  a: KeyArray,
  k: number,
  type: NumericType,
  comp: CpuComparator,
): Promise<void> {
  return guarded(a, comp, async (x) => {
    // The k-th goes to k - 1 with everything before it not after it: only those need sorting.
    const m = k < x.length ? k - 1 : k;
    if (m < k) await selectAt(backend, x, m, type, comp);
    await cpuSort(backend, x.subarray(0, m) as KeyArray, undefined, type, comp);
  });
}

/**
 * topK takes the heap path when k <= n / this: the heap reads the input once, but an input in the
 * reverse order replaces the top every time (n log k comparisons against the introselect's ~3n).
 */
export const HEAP_TOPK_RATIO = 64;

/** topK: out[0, k) = the first k elements of `input` in the order of `comp`, sorted; input untouched. */
export async function cpuTopK(
  backend: CpuBackend,
  input: KeyArray,
  k: number,
  out: KeyArray,
  type: NumericType,
  comp: CpuComparator,
): Promise<void> {
  if (k <= input.length / HEAP_TOPK_RATIO) {
    // Few of many: one read of the input through a heap of k (no copy of it), then a sort of k.
    const h = new (input.constructor as new (n: number) => KeyArray)(k);
    selectKernel(comp).heapTop(input, h);
    await cpuSort(backend, h, undefined, type, comp);
    out.set(h as never);
    return;
  }
  // The copy that topK makes anyway goes to shared scratch under par, so the selection and the sort
  // of k run on the pool whether the input is shared or not (a plain copy kept them seq).
  const n = input.length;
  const shared = backend.kind === 'par' && sharedMemoryAvailable() && !belowParMin(backend, n, SELECT_PAR_MIN);
  const Ctor = input.constructor as new (buffer: ArrayBufferLike, offset: number, length: number) => KeyArray;
  // The radix select reads the input where it is (seq, shared, or plain data it copies into shared
  // memory itself) and partitions it straight into the copy: no copy of the input first, none back
  // (u32 2^22, k = 2^20, allocShared: seq 26.0 -> 24.9 ms, par 15.0-15.8 -> 13.6-14.2 ms;
  // docs/benchmarks/cpu-catalogue-par-2026-11-24h.md). Plain data too short for it to copy stays
  // on the copy below, which runs on the pool.
  const direct =
    comp.kind === 'builtin' &&
    n >= RADIX_SELECT_MIN &&
    k < n &&
    (!shared || isShared(input) || !plainMemoryBoundSeq(backend, n, [input], SELECT_PLAIN_MIN));
  // The copy is borrowed scratch (shared under par), kept between calls: a fresh 4n-byte buffer per
  // call cost seq its page faults and a scavenge each time.
  const x = new Ctor(borrow(n * 4, shared), 0, n);
  try {
    if (direct) {
      await cpuRadixSelect(backend, input, k - 1, type, comp.descending, x);
      await cpuSort(backend, x.subarray(0, k - 1) as KeyArray, undefined, type, comp);
    } else {
      x.set(input as never);
      await cpuPartialSort(backend, x, k, type, comp);
    }
    out.set(x.subarray(0, k) as never);
  } finally {
    giveBack(x);
  }
}
