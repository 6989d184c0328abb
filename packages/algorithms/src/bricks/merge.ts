/**
 * `cpuMerge`: the stable merge of two sorted arrays (ties take the first array's element first),
 * values (any 4-byte elements, as bits) moving with their keys.
 * seq: one merge on the calling thread, reading both inputs where they are (the generated loop of
 * bricks/merge-path.ts; a comparator without a source: the merge sort's merge, `mergeSortTask`).
 * par (a comparator with a source, shared memory, from MERGE_PAR_MIN elements; plain arrays only
 * under an explicit parallelThreshold, copied into shared scratch and the output back): merge-path
 * pieces merged by the calling thread and the workers straight from the inputs into the output
 * (bricks/merge-path.ts).
 */
import type { NumericType } from '@webdpl/core';
import { type CpuBackend, sharedMemoryAvailable } from '@webdpl/policies';
import { mergeKernel, mergePieces, runMergePieces } from './merge-path';
import type { CpuComparator, KeyArray } from './sort/index';
import { bitsView } from './sort/key-bits';
import { mergeSortTask } from './sort/merge-sort';
import { borrow, giveBack } from './sort/scratch';
import { plainArraysSeq } from './staging';

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
  // Plain arrays stay here under the default tuning, as for the set operations: copying both
  // inputs into shared memory and the output back cost about what the second thread saves (par
  // 0.72-0.91x seq at 2^19-2^24 by the fastest of 11 rounds, docs/benchmarks/
  // cpu-catalogue-par-2026-11-24b.md; 1.0-1.33x in the lighter-loaded runs of -24.md).
  const plainSeq = plainArraysSeq(backend, [a, b, out, values?.a, values?.b, values?.out]);
  const pieces = comp.source !== undefined && sharedMemoryAvailable() && !plainSeq ? mergePieces(backend, n) : 0;
  const pool = pieces > 0 && backend.kind === 'par' ? backend : undefined;
  const outBits = values ? bitsView(values.out) : undefined;
  if (!pool && comp.source !== undefined) {
    // One merge on the calling thread, reading both inputs where they are, writing `out` directly
    // (built-in and translated comparators cannot throw): the generated loop with the comparator
    // inlined, as every par piece runs.
    mergeKernel(comp.source, values !== undefined, type)(
      a,
      b,
      values ? bitsView(values.a) : undefined,
      values ? bitsView(values.b) : undefined,
      out,
      outBits,
    );
    return;
  }
  if (!pool) {
    // A plain JS comparator may throw midway: the result goes to scratch first and `out` is written
    // only when it is done.
    const dst = viewOf(type, borrow(n * 4, false), n);
    const dstV = values ? new Uint32Array(borrow(n * 4, false), 0, n) : undefined;
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
      out.set(dst as never);
      if (outBits && dstV) outBits.set(dstV);
    } finally {
      giveBack(dst, dstV);
    }
    return;
  }
  // The pool: merge-path pieces reading both inputs where they are (bricks/merge-path.ts).
  await runMergePieces(
    pool as CpuBackend & { kind: 'par' },
    { a, b, out, va: values?.a, vb: values?.b, outV: values?.out },
    pieces,
    comp.before,
    comp.source as string,
  );
}
