/**
 * Stable comparison sorting on the CPU for user comparators: a bottom-up merge sort (insertion-sorted
 * runs of 32, then pairwise merges through one scratch array, skipping merges of runs already in
 * order) and a merge of two sorted ranges. Values (u32 bits) move with their keys. O(n log n)
 * comparisons; n extra elements of scratch.
 *
 * Everything lives in one self-contained task function, `mergeSortTask`, so the worker pool runs
 * exactly the code the calling thread runs (workers rebuild the comparator from its source).
 */

/** Keys as any numeric typed array. */
export type KeyArray = Uint32Array | Int32Array | Float32Array;

/** "a goes before b": a strict weak order. */
export type Before = (a: number, b: number) => boolean;

/** One job of mergeSortTask. */
export interface MergeSortJob {
  /**
   * 'sort': sort keys[begin, end) in place. 'merge': merge src runs [aLo, aHi) and [bLo, bHi) into
   * dst at out. 'claim': run `jobs`, each claimed through the shared counter `next` (by every thread
   * given this job: the workers and the calling thread).
   */
  readonly op: 'sort' | 'merge' | 'claim';
  readonly jobs?: readonly MergeSortJob[];
  readonly next?: Int32Array;
  readonly keys: KeyArray;
  readonly values?: Uint32Array;
  /** 'merge': the array the b run [bLo, bHi) is read from (and its values), when not `keys`. */
  readonly keysB?: KeyArray;
  readonly valuesB?: Uint32Array;
  /** The comparator on the calling thread. */
  readonly before?: Before;
  /** The comparator's source (a function expression), for workers. */
  readonly source?: string;
  readonly begin?: number;
  readonly end?: number;
  readonly dst?: KeyArray;
  readonly dstValues?: Uint32Array;
  readonly aLo?: number;
  readonly aHi?: number;
  readonly bLo?: number;
  readonly bHi?: number;
  readonly out?: number;
}

/** The task (self-contained: shipped to workers as source). */
export const mergeSortTask = function mergeSortTask(job: MergeSortJob): number {
  if (job.op === 'claim') {
    const jobs = job.jobs as readonly MergeSortJob[];
    const next = job.next as Int32Array;
    let ran = 0;
    for (;;) {
      const i = Atomics.add(next, 0, 1);
      if (i >= jobs.length) return ran;
      // On the calling thread the claim carries `before`: the comparator seq calls too, so the
      // merge loops' call site stays monomorphic (the compiled source beside it made both slower).
      const j = jobs[i] as MergeSortJob;
      mergeSortTask(job.before === undefined ? j : { ...j, before: job.before });
      ran++;
    }
  }
  // The comparator: the calling thread's function, or its source compiled once per thread by the
  // shared compile-once cache (policies' compile.ts; one function object keeps call sites monomorphic).
  const fromSource =
    job.before === undefined
      ? ((globalThis as unknown as { __webdplCompile: (s: string) => unknown }).__webdplCompile(String(job.source)) as (
          a: number,
          b: number,
        ) => boolean)
      : undefined;
  const before = (job.before ?? fromSource) as (a: number, b: number) => boolean;
  const merge = (
    src: KeyArray,
    sv: Uint32Array | undefined,
    srcB: KeyArray,
    svB: Uint32Array | undefined,
    dst: KeyArray,
    dv: Uint32Array | undefined,
    aLo: number,
    aHi: number,
    bLo: number,
    bHi: number,
    out: number,
  ): void => {
    let i = aLo;
    let j = bLo;
    let o = out;
    if (sv && svB && dv) {
      while (i < aHi && j < bHi) {
        if (before(srcB[j] as number, src[i] as number)) {
          dv[o] = svB[j] as number;
          dst[o++] = srcB[j++] as number;
        } else {
          dv[o] = sv[i] as number;
          dst[o++] = src[i++] as number;
        }
      }
      dv.set(sv.subarray(i, aHi), o);
      dst.set(src.subarray(i, aHi) as never, o);
      o += aHi - i;
      dv.set(svB.subarray(j, bHi), o);
      dst.set(srcB.subarray(j, bHi) as never, o);
      return;
    }
    while (i < aHi && j < bHi) {
      const y = srcB[j] as number;
      const x = src[i] as number;
      if (before(y, x)) {
        dst[o++] = y;
        j++;
      } else {
        dst[o++] = x;
        i++;
      }
    }
    dst.set(src.subarray(i, aHi) as never, o);
    o += aHi - i;
    dst.set(srcB.subarray(j, bHi) as never, o);
  };
  if (job.op === 'merge') {
    merge(
      job.keys,
      job.values,
      job.keysB ?? job.keys,
      job.valuesB ?? job.values,
      job.dst as KeyArray,
      job.dstValues,
      job.aLo as number,
      job.aHi as number,
      job.bLo as number,
      job.bHi as number,
      job.out as number,
    );
    return 0;
  }
  const begin = job.begin ?? 0;
  const end = job.end ?? job.keys.length;
  const n = end - begin;
  const RUN = 32;
  const k0 = job.keys.subarray(begin, end) as KeyArray;
  const v0 = job.values?.subarray(begin, end);
  for (let s = 0; s < n; s += RUN) {
    const hi = Math.min(s + RUN, n);
    for (let i = s + 1; i < hi; i++) {
      const x = k0[i] as number;
      const xv = v0 ? (v0[i] as number) : 0;
      let j = i;
      while (j > s && before(x, k0[j - 1] as number)) {
        k0[j] = k0[j - 1] as number;
        if (v0) v0[j] = v0[j - 1] as number;
        j--;
      }
      k0[j] = x;
      if (v0) v0[j] = xv;
    }
  }
  if (n <= RUN) return 0;
  const Ctor = k0.constructor as new (len: number) => KeyArray;
  let src = k0;
  let dst = new Ctor(n);
  let sv: Uint32Array | undefined = v0;
  let dv: Uint32Array | undefined = v0 ? new Uint32Array(n) : undefined;
  for (let width = RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      if (mid >= hi || !before(src[mid] as number, src[mid - 1] as number)) {
        dst.set(src.subarray(lo, hi) as never, lo);
        if (sv && dv) dv.set(sv.subarray(lo, hi), lo);
      } else {
        merge(src, sv, src, sv, dst, dv, lo, mid, mid, hi, lo);
      }
    }
    const t = src;
    src = dst;
    dst = t;
    const tv = sv;
    sv = dv;
    dv = tv;
  }
  if (src !== k0) {
    k0.set(src as never);
    if (v0 && sv) v0.set(sv);
  }
  return 0;
};

/** Sorts `keys` (with `values` along) stably by `before`, in place, on the calling thread. */
export function mergeSortBy(keys: KeyArray, values: Uint32Array | undefined, before: Before): void {
  mergeSortTask({ op: 'sort', keys, values, before });
}

/**
 * The merge-path split: how many of the first `diag` outputs of merging a[aLo, aHi) and
 * b[bLo, bHi) (stable, ties from the first run; b defaults to a) come from the first run.
 * O(log) comparisons.
 */
export function mergePath(
  a: KeyArray,
  aLo: number,
  aHi: number,
  bLo: number,
  bHi: number,
  diag: number,
  before: Before,
  b: KeyArray = a,
): number {
  let lo = Math.max(0, diag - (bHi - bLo));
  let hi = Math.min(diag, aHi - aLo);
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (!before(b[bLo + diag - 1 - mid] as number, a[aLo + mid] as number)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
