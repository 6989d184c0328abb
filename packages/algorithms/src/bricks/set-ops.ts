/**
 * `cpuSetOp`: std::set_union / set_intersection / set_difference / set_symmetric_difference of two
 * sorted ranges, with multiplicities: among m equivalent elements of a and n of b, union writes the
 * m of a and then the last max(n - m, 0) of b, intersection the first min(m, n) of a, difference the
 * last max(m - n, 0) of a, symmetric difference the last |m - n| of the range that has more.
 * seq: one merge-like loop, generated per operation with the comparator inlined when it has a
 * source (`compileOnce`). par (a comparator with a source, shared memory, from the pool's parallel
 * threshold): both ranges end to end in shared memory, cut into one piece per chunk at merge-path
 * splits moved back to the start of their class of equivalent elements (no class straddles two
 * pieces, so each piece's result is exactly its share), the pieces run on the pool (`setOpTask`)
 * into scratch at their worst-case offsets, and the results are copied out one after another.
 */
import { type CpuBackend, compileOnce, planParallel, sharedMemoryAvailable } from '@webdpl/policies';
import type { CpuComparator, KeyArray } from './sort/index';
import { mergePath } from './sort/merge-sort';
import { borrow, giveBack } from './sort/scratch';

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

/** One piece of a par set operation: ranges of `keys` (a then b end to end) into `dst` at `at`. */
export interface SetOpJob {
  readonly op: SetOp;
  readonly keys: KeyArray;
  readonly dst: KeyArray;
  readonly aLo: number;
  readonly aHi: number;
  readonly bLo: number;
  readonly bHi: number;
  readonly at: number;
  /** The comparator's source (a function expression), compiled once per worker. */
  readonly source: string;
}

/** The task of a piece (self-contained: shipped to workers as source); returns the count written. */
export const setOpTask = function setOpTask(job: SetOpJob): number {
  const before = (globalThis as unknown as { __webdplCompile: (s: string) => unknown }).__webdplCompile(job.source) as (
    x: number,
    y: number,
  ) => boolean;
  const { op, keys: c, dst: o } = job;
  const takeA = op !== 'intersection';
  const takeB = op === 'union' || op === 'symmetricDifference';
  const keepEq = op === 'union' || op === 'intersection';
  let i = job.aLo;
  let j = job.bLo;
  let k = job.at;
  while (i < job.aHi && j < job.bHi) {
    const x = c[i] as number;
    const y = c[j] as number;
    if (before(x, y)) {
      if (takeA) o[k++] = x;
      i++;
    } else if (before(y, x)) {
      if (takeB) o[k++] = y;
      j++;
    } else {
      if (keepEq) o[k++] = x;
      i++;
      j++;
    }
  }
  if (takeA) while (i < job.aHi) o[k++] = c[i++] as number;
  if (takeB) while (j < job.bHi) o[k++] = c[j++] as number;
  return k - job.at;
};

/** The first index in c[lo, hi) whose element does not go before v. */
function lowerBound(c: KeyArray, lo: number, hi: number, v: number, before: (x: number, y: number) => boolean): number {
  let l = lo;
  let h = hi;
  while (l < h) {
    const mid = (l + h) >>> 1;
    if (before(c[mid] as number, v)) l = mid + 1;
    else h = mid;
  }
  return l;
}

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
  const chunks =
    comp.source !== undefined && sharedMemoryAvailable() ? planParallel(backend, a.length + b.length) : undefined;
  if (chunks && chunks.length > 1 && backend.kind === 'par' && comp.source !== undefined) {
    return setOpPar(backend, op, a, b, out, comp.before, comp.source, chunks.length);
  }
  return setOpSeq(op, a, b, out, comp);
}

/** The par path (see the file comment) over `pieces` pieces. */
async function setOpPar(
  backend: CpuBackend & { kind: 'par' },
  op: SetOp,
  a: KeyArray,
  b: KeyArray,
  out: KeyArray,
  before: (x: number, y: number) => boolean,
  source: string,
  pieces: number,
): Promise<number> {
  const na = a.length;
  const n = na + b.length;
  const Ctor = a.constructor as new (buffer: SharedArrayBuffer, offset: number, length: number) => KeyArray;
  const cat = new Ctor(borrow(n * 4, true), 0, n);
  cat.set(a as never);
  cat.set(b as never, na);
  const scratch = new Ctor(borrow(Math.max(n, 1) * 4, true), 0, n);
  try {
    // Splits (i in a, j in b) at class starts, nondecreasing; the pieces lie between them.
    const splits: [number, number][] = [[0, 0]];
    for (let k = 1; k < pieces; k++) {
      const d = Math.floor((k * n) / pieces);
      const i = mergePath(cat, 0, na, na, n, d, before);
      const j = d - i;
      if (i >= na && j >= n - na) break;
      const v =
        j >= n - na || (i < na && !before(cat[na + j] as number, cat[i] as number))
          ? (cat[i] as number)
          : (cat[na + j] as number);
      const [pi, pj] = splits[splits.length - 1] as [number, number];
      const si = Math.max(pi, lowerBound(cat, 0, na, v, before));
      const sj = Math.max(pj, lowerBound(cat, na, n, v, before) - na);
      if (si !== pi || sj !== pj) splits.push([si, sj]);
    }
    splits.push([na, n - na]);
    const both = op === 'union' || op === 'symmetricDifference';
    const jobs: SetOpJob[] = [];
    for (let k = 0; k + 1 < splits.length; k++) {
      const [i0, j0] = splits[k] as [number, number];
      const [i1, j1] = splits[k + 1] as [number, number];
      jobs.push({
        op,
        keys: cat,
        dst: scratch,
        aLo: i0,
        aHi: i1,
        bLo: na + j0,
        bHi: na + j1,
        at: both ? i0 + j0 : i0,
        source,
      });
    }
    const counts = await backend.pool.run(setOpTask, jobs);
    let pos = 0;
    jobs.forEach((job, k) => {
      const c = counts[k] as number;
      out.set(scratch.subarray(job.at, job.at + c) as never, pos);
      pos += c;
    });
    return pos;
  } finally {
    giveBack(cat, scratch);
  }
}

function setOpSeq(op: SetOp, a: KeyArray, b: KeyArray, out: KeyArray, comp: CpuComparator): number {
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
