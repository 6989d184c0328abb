/**
 * `cpuSetOp`: std::set_union / set_intersection / set_difference / set_symmetric_difference of two
 * sorted ranges, with multiplicities: among m equivalent elements of a and n of b, union writes the
 * m of a and then the last max(n - m, 0) of b, intersection the first min(m, n) of a, difference the
 * last max(m - n, 0) of a, symmetric difference the last |m - n| of the range that has more.
 * seq: one merge-like loop, generated per operation with the comparator inlined when it has a
 * source (`compileOnce`). par (a comparator with a source, shared memory, from MERGE_PAR_MIN
 * elements; plain arrays only under an explicit parallelThreshold, staging.ts `plainArraysSeq`):
 * merge-path pieces cut at class starts, run by the calling thread and the workers, each placed
 * into the output as soon as the counts before it are known (bricks/merge-path.ts).
 */
import { elementTypeOf } from '@webdpl/core';
import { type CpuBackend, compileOnce, sharedMemoryAvailable } from '@webdpl/policies';
import { mergePieces, runMergePieces, type SetKernel, type SetOp, setKernelBody, setSource } from './merge-path';
import type { CpuComparator, KeyArray } from './sort/index';
import { plainArraysSeq } from './staging';

export type { SetOp } from './merge-path';

const byFunction = new Map<SetOp, (before: (x: number, y: number) => boolean) => SetKernel>();

/**
 * Writes the result of `op` over sorted `a` and `b` (ordered by `comp`) to `out` and returns its
 * length; `out` holds enough elements for the worst case and overlaps neither input.
 */
export async function cpuSetOp(
  backend: CpuBackend,
  op: SetOp,
  a: KeyArray,
  b: KeyArray,
  out: KeyArray,
  comp: CpuComparator,
): Promise<number> {
  const pieces =
    comp.source !== undefined && sharedMemoryAvailable() && !plainArraysSeq(backend, [a, b, out])
      ? mergePieces(backend, a.length + b.length)
      : 0;
  if (pieces > 0 && backend.kind === 'par' && comp.source !== undefined) {
    return runMergePieces(backend, { a, b, out }, pieces, comp.before, comp.source, op);
  }
  return setOpSeq(op, a, b, out, comp);
}

function setOpSeq(op: SetOp, a: KeyArray, b: KeyArray, out: KeyArray, comp: CpuComparator): number {
  if (comp.source !== undefined) {
    return compileOnce<SetKernel>(setSource(comp.source, op, elementTypeOf(a)))(a, b, out);
  }
  // A comparator without a source (a plain JS function) may throw half way: the result goes to a
  // copy first, so the caller's output is left as it was then.
  let make = byFunction.get(op);
  if (!make) {
    make = compileOnce<(before: (x: number, y: number) => boolean) => SetKernel>(`(before) => ${setKernelBody(op)}`);
    byFunction.set(op, make);
  }
  const tmp = out.slice() as KeyArray;
  const k = make(comp.before)(a, b, tmp);
  out.set(tmp.subarray(0, k) as never);
  return k;
}
