/**
 * `cpuMerge`: the stable merge of two sorted arrays (ties take the first array's element first),
 * values (any 4-byte elements, as bits) moving with their keys. The merge of the merge sort
 * (sort/merge-sort.ts, `mergeSortTask`). seq: one merge on the calling thread, reading both inputs
 * where they are. par (a comparator with a source, shared memory, from the pool's parallel
 * threshold): the output split into one piece per chunk by merge-path searches (sort/merge-sort.ts,
 * `mergePath`) over the two inputs laid end to end in shared scratch, the pieces merged on the
 * pool, the result copied out.
 */
import type { NumericType } from '@webdpl/core';
import { type CpuBackend, planParallel, sharedMemoryAvailable } from '@webdpl/policies';
import type { CpuComparator, KeyArray } from './sort/index';
import { bitsView } from './sort/key-bits';
import { type MergeSortJob, mergePath, mergeSortTask } from './sort/merge-sort';
import { borrow, giveBack } from './sort/scratch';

/** Values of a merge: the two inputs' and the output's (any 4-byte typed arrays). */
export interface MergeValues {
  readonly a: KeyArray;
  readonly b: KeyArray;
  readonly out: KeyArray;
}

function viewOf(type: NumericType, buffer: ArrayBuffer | SharedArrayBuffer, n: number): KeyArray {
  return type === 'u32'
    ? new Uint32Array(buffer, 0, n)
    : type === 'i32'
      ? new Int32Array(buffer, 0, n)
      : new Float32Array(buffer, 0, n);
}

/**
 * Merges sorted `a` and `b` (of element type `type`) into `out[0, a.length + b.length)` by `comp`,
 * and the values along. `out` must not overlap the inputs.
 */
export async function cpuMerge(
  backend: CpuBackend,
  a: KeyArray,
  b: KeyArray,
  out: KeyArray,
  type: NumericType,
  comp: CpuComparator,
  values?: MergeValues,
): Promise<void> {
  const na = a.length;
  const n = na + b.length;
  if (n === 0) return;
  const chunks = comp.source !== undefined && sharedMemoryAvailable() ? planParallel(backend, n) : undefined;
  const pool = chunks && backend.kind === 'par' ? backend.pool : undefined;
  const outBits = values ? bitsView(values.out) : undefined;
  if (!pool) {
    // One merge on the calling thread, reading both inputs where they are. Built-in and translated
    // comparators cannot throw, so the result goes straight to `out`; a plain JS comparator may
    // throw midway, so its result goes to scratch first and `out` is written only when it is done.
    const direct = comp.source !== undefined;
    const dst = direct ? out : viewOf(type, borrow(n * 4, false), n);
    const dstV = values ? (direct ? outBits : new Uint32Array(borrow(n * 4, false), 0, n)) : undefined;
    try {
      mergeSortTask({
        op: 'merge',
        keys: a,
        values: values ? bitsView(values.a) : undefined,
        keysB: b,
        valuesB: values ? bitsView(values.b) : undefined,
        dst,
        dstValues: dstV,
        aLo: 0,
        aHi: na,
        bLo: 0,
        bHi: n - na,
        out: 0,
        before: comp.before,
      });
      if (!direct) {
        out.set(dst as never);
        if (outBits && dstV) outBits.set(dstV);
      }
    } finally {
      if (!direct) giveBack(dst, dstV);
    }
    return;
  }
  // The pool: both inputs end to end in shared scratch (the pieces read one array), keys and value
  // bits; the pieces write shared scratch, copied out at the end.
  const cat = viewOf(type, borrow(n * 4, true), n);
  cat.set(a as never);
  cat.set(b as never, na);
  const catV = values ? new Uint32Array(borrow(n * 4, true), 0, n) : undefined;
  if (values && catV) {
    catV.set(bitsView(values.a));
    catV.set(bitsView(values.b), na);
  }
  const dst = viewOf(type, borrow(n * 4, true), n);
  const dstV = values ? new Uint32Array(borrow(n * 4, true), 0, n) : undefined;
  try {
    const pieces = (chunks as readonly unknown[]).length;
    const jobs: MergeSortJob[] = [];
    let i0 = 0;
    let d0 = 0;
    for (let k = 1; k <= pieces; k++) {
      const d1 = Math.floor((k * n) / pieces);
      const i1 = k === pieces ? na : mergePath(cat, 0, na, na, n, d1, comp.before);
      jobs.push({
        op: 'merge',
        keys: cat,
        values: catV,
        dst,
        dstValues: dstV,
        aLo: i0,
        aHi: i1,
        bLo: na + d0 - i0,
        bHi: na + d1 - i1,
        out: d0,
        source: comp.source,
      });
      i0 = i1;
      d0 = d1;
    }
    await pool.run(mergeSortTask, jobs);
    out.set(dst as never);
    if (outBits && dstV) outBits.set(dstV);
  } finally {
    giveBack(cat, catV, dst, dstV);
  }
}
