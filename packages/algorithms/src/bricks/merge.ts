/**
 * `cpuMerge`: the stable merge of two sorted arrays (ties take the first array's element first),
 * values (any 4-byte elements, as bits) moving with their keys. The merge of the merge sort
 * (sort/merge-sort.ts, `mergeSortTask`) over the two arrays laid end to end. seq: one merge on the
 * calling thread. par (a comparator with a source, shared memory, from the pool's parallel
 * threshold): the output split into one piece per chunk by merge-path searches (sort/merge-sort.ts,
 * `mergePath`), the pieces merged on the pool, the result copied out.
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
  const shared = pool !== undefined;
  // Both inputs end to end (the merge reads one array), keys and value bits.
  const cat = viewOf(type, borrow(n * 4, shared), n);
  cat.set(a as never);
  cat.set(b as never, na);
  const catV = values ? new Uint32Array(borrow(n * 4, shared), 0, n) : undefined;
  if (values && catV) {
    catV.set(bitsView(values.a));
    catV.set(bitsView(values.b), na);
  }
  // The result goes to scratch first where the comparator may throw (a plain JS function) or the
  // pool writes it; built-in and translated comparators cannot throw, so seq writes `out` itself.
  const direct = !shared && comp.source !== undefined;
  const dst = direct ? out : viewOf(type, borrow(n * 4, shared), n);
  const outBits = values ? bitsView(values.out) : undefined;
  const dstV = values ? (direct ? outBits : new Uint32Array(borrow(n * 4, shared), 0, n)) : undefined;
  try {
    const job = (aLo: number, aHi: number, bLo: number, bHi: number, at: number): MergeSortJob => ({
      op: 'merge',
      keys: cat,
      values: catV,
      dst,
      dstValues: dstV,
      aLo,
      aHi,
      bLo,
      bHi,
      out: at,
      ...(pool ? { source: comp.source } : { before: comp.before }),
    });
    if (pool && chunks) {
      const pieces = chunks.length;
      const jobs: MergeSortJob[] = [];
      let i0 = 0;
      let d0 = 0;
      for (let k = 1; k <= pieces; k++) {
        const d1 = Math.floor((k * n) / pieces);
        const i1 = k === pieces ? na : mergePath(cat, 0, na, na, n, d1, comp.before);
        jobs.push(job(i0, i1, na + d0 - i0, na + d1 - i1, d0));
        i0 = i1;
        d0 = d1;
      }
      await pool.run(mergeSortTask, jobs);
    } else {
      mergeSortTask(job(0, na, na, n, 0));
    }
    if (!direct) {
      out.set(dst as never);
      if (outBits && dstV) outBits.set(dstV);
    }
  } finally {
    giveBack(cat, catV, direct ? undefined : dst, direct ? undefined : dstV);
  }
}
