/**
 * `cpuSetOp`: std::set_union / set_intersection / set_difference / set_symmetric_difference of two
 * sorted ranges, with multiplicities: among m equivalent elements of a and n of b, union writes the
 * m of a and then the last max(n - m, 0) of b, intersection the first min(m, n) of a, difference the
 * last max(m - n, 0) of a, symmetric difference the last |m - n| of the range that has more. One
 * merge-like loop, generated per operation with the comparator inlined when it has a source
 * (`compileOnce`), on the calling thread for every CPU policy (a single pass at memory speed).
 */
import { compileOnce } from '@webdpl/policies';
import type { CpuComparator, KeyArray } from './sort/index';

/** The set operations. */
export type SetOp = 'union' | 'intersection' | 'difference' | 'symmetricDifference';

/** What each operation does when a's element goes first, b's goes first, or they are equivalent. */
const STEPS: Readonly<Record<SetOp, { a: string; b: string; eq: string; restA: boolean; restB: boolean }>> = {
  union: { a: 'o[k++] = a[i++];', b: 'o[k++] = b[j++];', eq: 'o[k++] = a[i++]; j++;', restA: true, restB: true },
  intersection: { a: 'i++;', b: 'j++;', eq: 'o[k++] = a[i++]; j++;', restA: false, restB: false },
  difference: { a: 'o[k++] = a[i++];', b: 'j++;', eq: 'i++; j++;', restA: true, restB: false },
  symmetricDifference: { a: 'o[k++] = a[i++];', b: 'o[k++] = b[j++];', eq: 'i++; j++;', restA: true, restB: true },
};

function loopBody(op: SetOp): string {
  const s = STEPS[op];
  return `const na = a.length, nb = b.length;
    let i = 0, j = 0, k = 0;
    while (i < na && j < nb) {
      if (before(a[i], b[j])) { ${s.a} }
      else if (before(b[j], a[i])) { ${s.b} }
      else { ${s.eq} }
    }
    ${s.restA ? 'while (i < na) o[k++] = a[i++];' : ''}
    ${s.restB ? 'while (j < nb) o[k++] = b[j++];' : ''}
    return k;`;
}

type SetKernel = (a: KeyArray, b: KeyArray, o: KeyArray) => number;

const byFunction = new Map<SetOp, (before: (x: number, y: number) => boolean) => SetKernel>();

/**
 * Writes the result of `op` over sorted `a` and `b` (ordered by `comp`) to `out` and returns its
 * length; `out` holds enough elements for the worst case and overlaps neither input.
 */
export function cpuSetOp(op: SetOp, a: KeyArray, b: KeyArray, out: KeyArray, comp: CpuComparator): number {
  if (comp.source !== undefined) {
    const kernel = compileOnce<SetKernel>(`(function () {
  'use strict';
  const before = ${comp.source};
  return function set_${op}(a, b, o) {
    ${loopBody(op)}
  };
})() /* webdpl set operation */`);
    return kernel(a, b, out);
  }
  // A comparator without a source (a plain JS function) may throw half way: the result goes to a
  // copy first, so the caller's output is left as it was then.
  let make = byFunction.get(op);
  if (!make) {
    make = compileOnce<(before: (x: number, y: number) => boolean) => SetKernel>(
      `(before) => function set_${op}_fn(a, b, o) {\n${loopBody(op)}\n}`,
    );
    byFunction.set(op, make);
  }
  const tmp = out.slice() as KeyArray;
  const k = make(comp.before)(a, b, tmp);
  out.set(tmp.subarray(0, k) as never);
  return k;
}
