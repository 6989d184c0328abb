/**
 * Merge-path pieces on the pool: the par form of merge, mergeByKey and the set operations.
 *
 * Both sorted inputs are cut at merge-path splits (`mergePath`, O(log n) comparisons each) into
 * PIECES_PER_THREAD pieces per thread (the set operations move each split back to the start of its
 * class of equivalent elements, so no class straddles two pieces and each piece's result is exactly
 * its share); the calling thread and `pool.size - 1` workers claim pieces in order through one
 * atomic counter (`pieceTask`) and run a generated kernel with the comparator inlined (`compileOnce`
 * on every thread) that reads a and b where they are, no concatenated copy:
 *  - merge: each piece writes its output where it belongs (i0 + j0), straight into the output.
 *  - set operations: a piece's output position is the sum of the counts before it. A piece whose
 *    predecessors have all published their counts when it starts writes straight into the output;
 *    the others write into scratch at their worst-case offset, publish their count, and whichever
 *    thread publishes a count that completes the chain up to a piece in scratch copies it into place
 *    (from cache: pieces are small). So the output is written once, with no second pass over it.
 *    Threads claim set-operation pieces in pairs (`SET_CLAIM`), so the second of a pair usually
 *    goes straight into the output.
 * Inputs and outputs must be shared for the workers: plain arrays are copied into shared scratch
 * (outputs copied back), only under an explicit parallelThreshold (staging.ts `plainArraysSeq`: the
 * loops are too cheap for the copies).
 */
import { elementTypeOf, type NumericType } from '@webdpl/core';
import { type CpuBackend, compileOnce, cpuTuning, isShared } from '@webdpl/policies';
import type { KeyArray } from './sort/index';
import { bitsView } from './sort/key-bits';
import { mergePath } from './sort/merge-sort';
import { borrow, giveBack } from './sort/scratch';
import { belowParMin, spinUntil, startWorkers } from './staging';
import { WARM_N, warmArray, warmedKernel, warmedSource } from './warm';

/** Pieces per thread: small pieces keep a set operation's scratch in cache and balance the threads. */
export const PIECES_PER_THREAD = 32;

/**
 * Consecutive pieces a thread claims at once in a set operation (one at a time among the last
 * `SET_TAIL`): the second of a pair starts right after the first, whose count this thread has
 * just published, so it lands straight in the output whenever the other thread's pieces before it
 * are done, where pieces claimed one by one nearly always start beside a piece still running on the
 * other thread. u32 union over 2^22 shared elements, 64 pieces on the 2-core VM: pieces through
 * scratch 60-61 -> 41-42, copies out of scratch ~200 -> ~120 us per thread
 * (docs/benchmarks/cpu-catalogue-par-2026-11-24i.md). Merges write at i0 + j0 and claim one.
 */
export const SET_CLAIM = 2;

/** The last pieces of a set operation, claimed one at a time (threads finish together). */
export const SET_TAIL = 2;

/**
 * Elements (a and b together) from which par merges and set operations use the pool under the
 * default tuning (docs/benchmarks/cpu-catalogue-par-2026-11-24.md).
 */
export const MERGE_PAR_MIN = 1 << 19;

/**
 * Longest the calling thread spins (ms), once it finds no piece left, for the workers to count
 * themselves returned (`pieceTask`) before it waits for their replies instead: they are at most
 * a piece or two behind (~0.06-0.08 ms each at 2^22), and a reply came 0.05-0.07 ms after the
 * worker's end (docs/benchmarks/cpu-par-2026-11-25.md).
 */
const PIECES_RETURN_SPIN_MS = 0.3;

/** Shortest piece (elements of a and b together) a par call cuts. */
const MIN_PIECE = 1 << 13;

/** The set operations. */
export type SetOp = 'union' | 'intersection' | 'difference' | 'symmetricDifference';

/** What each operation does when a's element goes first, b's goes first, or they are equivalent. */
const STEPS: Readonly<Record<SetOp, { a: string; b: string; eq: string; restA: boolean; restB: boolean }>> = {
  union: { a: 'o[k++] = a[i++];', b: 'o[k++] = b[j++];', eq: 'o[k++] = a[i++]; j++;', restA: true, restB: true },
  intersection: { a: 'i++;', b: 'j++;', eq: 'o[k++] = a[i++]; j++;', restA: false, restB: false },
  difference: { a: 'o[k++] = a[i++];', b: 'j++;', eq: 'i++; j++;', restA: true, restB: false },
  symmetricDifference: { a: 'o[k++] = a[i++];', b: 'o[k++] = b[j++];', eq: 'i++; j++;', restA: true, restB: true },
};

/** Whether a piece of `op` may write as many elements as it reads from both inputs (else from a only). */
export function writesBoth(op: SetOp): boolean {
  return op === 'union' || op === 'symmetricDifference';
}

/**
 * The generated set kernel `(a, b, o) => count`: the result of `op` over all of a and b written to
 * o from 0; returns the number written. Pieces pass subarrays: with the bounds read from the arrays
 * themselves V8 drops the bounds checks (bounds passed as arguments ran 1.6x slower, 2^22 union).
 */
export function setKernelBody(op: SetOp): string {
  const s = STEPS[op];
  return `function set_${op}(a, b, o) {
    const na = a.length, nb = b.length;
    let i = 0, j = 0, k = 0;
    while (i < na && j < nb) {
      if (before(a[i], b[j])) { ${s.a} }
      else if (before(b[j], a[i])) { ${s.b} }
      else { ${s.eq} }
    }
    ${s.restA ? 'while (i < na) o[k++] = a[i++];' : ''}
    ${s.restB ? 'while (j < nb) o[k++] = b[j++];' : ''}
    return k;
  }`;
}

/**
 * The integer merge kernel's phases (mergeKernelBody): PROBE_STEPS steps without a branch on the
 * comparison; then, when at most PROBE_SWITCHES of them took the other input than the step before
 * (runs) or than two steps before (alternation), steps with the branch until either input has moved
 * `span` elements, `span` doubling from BRANCHY_STEPS to BRANCHY_MAX while the probes keep finding
 * such patterns.
 */
const PROBE_STEPS = 64;
const PROBE_SWITCHES = 8;
const BRANCHY_STEPS = 512;
const BRANCHY_MAX = 1 << 15;

/**
 * The generated stable merge kernel `(a, b, va, vb, o, ov)`: merges all of a and b into o (ties take
 * a's element first), value bits along when `values` (subarrays, as the set kernel).
 *
 * The branch on the comparison mispredicts on interleaved inputs (half the steps, two sorted halves
 * of random keys). Integer keys (`branchless`) take the element by arithmetic instead: t =
 * +!!before(y, x) (0 or 1), out = x ^ ((x ^ y) & -t), i += 1 - t, j += t, both heads loaded each
 * step. Where the branch predicts well (runs, alternation) it is faster, so the kernel probes
 * without it and runs the branchy loop on patterns (see PROBE_STEPS). Kernel alone, u32, 2^22
 * (dev VM, load ~3.5, docs/benchmarks/cpu-catalogue-2026-11-24c.md), branchy only -> this: two
 * sorted random halves 20.7 -> 9.7 ms (2^20: 5.07 -> 2.39, the plain loop 4.3), halves of
 * 0..2^21-1 (strict alternation) 4.40 -> 4.78, alternating runs of 64 5.21 -> 5.72, one input after
 * the other 5.09 -> 5.48.
 *
 * The branchy loop keeps the heads of both inputs in locals and loads only the side that moved: the
 * same comparisons as reloading both heads every step, 7-9% faster (u32, 2^20 5.6 -> 5.1 ms, 2^24
 * 91 -> 83 ms; docs/benchmarks/cpu-seq-2026-11-24.md). f32 keys keep it alone (`branchless`
 * false): the built-in f32 orders branch inside the comparator, and the select works on bits.
 */
function mergeKernelBody(values: boolean, branchless: boolean): string {
  const v = (s: string) => (values ? s : '');
  // The branchy loop over a[i, ie) and b[j, je) (the phase's bounds: either side's span, or the ends).
  const branchy = (ie: string, je: string) => `let x = a[i], y = b[j];
        for (;;) {
          if (before(y, x)) {
            o[d] = y; ${v('ov[d] = vb[j];')} d++;
            if (++j >= ${je}) break;
            y = b[j];
          } else {
            o[d] = x; ${v('ov[d] = va[i];')} d++;
            if (++i >= ${ie}) break;
            x = a[i];
          }
        }`;
  const loop = branchless
    ? `let span = ${BRANCHY_STEPS};
    while (i < na && j < nb) {
      let sw = 0, sw2 = 0, tp = 0, tpp = 0;
      const stop = d + ${PROBE_STEPS};
      while (d < stop && i < na && j < nb) {
        const x = a[i], y = b[j];
        const t = +!!before(y, x);
        o[d] = x ^ ((x ^ y) & -t);
        ${v('const p = va[i], q = vb[j];')}
        ${v('ov[d] = p ^ ((p ^ q) & -t);')}
        d++;
        i += 1 - t;
        j += t;
        sw += t ^ tp;
        sw2 += t ^ tpp;
        tpp = tp;
        tp = t;
      }
      if (sw > ${PROBE_SWITCHES} && sw2 > ${PROBE_SWITCHES}) {
        span = ${BRANCHY_STEPS};
      } else if (i < na && j < nb) {
        const ie = Math.min(na, i + span), je = Math.min(nb, j + span);
        ${branchy('ie', 'je')}
        span = span < ${BRANCHY_MAX} ? 2 * span : span;
      }
    }`
    : `if (na > 0 && nb > 0) {
      ${branchy('na', 'nb')}
    }`;
  return `function merge${values ? '_pairs' : ''}(a, b, va, vb, o, ov) {
    const na = a.length, nb = b.length;
    let i = 0, j = 0, d = 0;
    ${loop}
    for (; i < na; i++, d++) { o[d] = a[i]; ${v('ov[d] = va[i];')} }
    for (; j < nb; j++, d++) { o[d] = b[j]; ${v('ov[d] = vb[j];')} }
    return 0;
  }`;
}

/**
 * Keys of the warm-up calls (`warmArray` generators): two interleaved sequences of the type; f32 with
 * -0, +0 and NaN among them, so every clause of the built-in f32 comparators runs.
 */
const WARM_KEYS: Readonly<Record<NumericType, readonly [string, string]>> = {
  u32: ['(i) => Math.imul(i + 1, 0x9e3779b9)', '(i) => Math.imul(i + 7, 0x85ebca6b)'],
  i32: ['(i) => Math.imul(i + 1, 0x9e3779b9)', '(i) => Math.imul(i + 7, 0x85ebca6b)'],
  f32: [
    '(i) => (i % 7 === 0 ? -0 : i % 7 === 1 ? 0 : i % 11 === 2 ? NaN : ((i * 0.37) % 3) - 1)',
    '(i) => (i % 5 === 0 ? 0 : i % 5 === 1 ? -0 : i % 13 === 3 ? NaN : ((i * 0.61) % 3) - 1.5)',
  ],
};

/**
 * The self-contained source of a kernel over the comparator's source (compiled once per thread),
 * warming itself where it is compiled (bricks/warm.ts) with `call(x, y)` on pairs of keys of `type`
 * that take every branch: interleaved, equal, either side running out first, either side empty.
 * Without it the OSR code of a piece's first call had no feedback for the tail loops and
 * deoptimized at the loop's exit in every later call, by process and thread: a merge piece of
 * 2^16 elements took 0.074 ms on one thread and 0.18 ms on the other (`--trace-deopt`: ~500-800
 * "insufficient type feedback for compare operation" bailouts per run of 30 calls), and the
 * calling thread did 2/3 of the pieces.
 */
function kernelSource(
  comparator: string,
  body: string,
  tag: string,
  type: NumericType,
  call: string,
  more = '',
): string {
  const [ga, gb] = WARM_KEYS[type];
  const kernel = `(function () {\n'use strict';\nconst before = ${comparator};\nreturn ${body};\n})()`;
  const calls = `const wa = ${warmArray(type, ga)}, wb = ${warmArray(type, gb)}, wo = ${warmArray(type)};
  const wv = ${warmArray('u32')}, wvo = ${warmArray('u32')};
  const call = ${call};
  const h = ${WARM_N >> 1};
  for (const [x, y] of [[wa, wb], [wb, wa.subarray(0, 8)], [wa.subarray(0, 8), wb], [wa, wa], [wa.subarray(0, 0), wb], [wa, wb.subarray(0, 0)]]) call(x.subarray(0, Math.min(h, x.length)), y.subarray(0, Math.min(h, y.length)));
  ${more}`;
  return warmedSource(kernel, calls, `/* webdpl ${tag} ${type} */`);
}

/**
 * The merge kernel for a comparator source, over keys of `type`. The integer kernel's phases need
 * longer inputs than the common warm-up's (which end in the first probe): keys sorted by the
 * comparator, dealt into two inputs in alternating runs of BRANCHY_STEPS / 2 (the probe finding one
 * switch, then the branchy phase taking either side), cut in two halves of 2 * PROBE_STEPS, either
 * first (the branchy phase running one input out), and dealt two to a, one to b (a probe finding
 * many switches either way: its second test got no feedback otherwise).
 * As few as that: a longer warm-up (6 calls of 1536 keys) got the kernel optimized during it, before
 * the branchy calls, in 2-3 processes of 20 (`--trace-deopt`: "insufficient type feedback" there
 * on the first real call, warm-catalogue.test.ts).
 */
export function mergeSource(comparator: string, values: boolean, type: NumericType): string {
  const call = values
    ? '(x, y) => k(x, y, wv.subarray(0, x.length), wv.subarray(0, y.length), wo, wvo)'
    : '(x, y) => k(x, y, undefined, undefined, wo, undefined)';
  const branchless = type !== 'f32';
  const run = BRANCHY_STEPS / 2;
  const more = branchless
    ? `{
    const cmp = ${comparator};
    const L = new wa.constructor(${4 * run});
    for (let i = 0; i < L.length; i++) L[i] = Math.imul(i + 3, 0x9e3779b9);
    L.sort((p, q) => (cmp(p, q) ? -1 : cmp(q, p) ? 1 : 0));
    const pick = (f, n) => [L.filter((_, i) => i < n && f(i)), L.filter((_, i) => i < n && !f(i))];
    const lo = new wa.constructor(L.length), lv = new Uint32Array(L.length);
    const longCall = ${values ? '(x, y) => k(x, y, lv.subarray(0, x.length), lv.subarray(0, y.length), lo, lv)' : '(x, y) => k(x, y, undefined, undefined, lo, undefined)'};
    for (const [x, y] of [pick((i) => Math.floor(i / ${run}) % 2 === 0, L.length), pick((i) => i < ${2 * PROBE_STEPS}, ${4 * PROBE_STEPS}), pick((i) => i % 3 !== 0, ${4 * PROBE_STEPS})]) {
      longCall(x, y);
      longCall(y, x);
    }
  }`
    : '';
  return kernelSource(comparator, mergeKernelBody(values, branchless), 'merge piece', type, call, more);
}

/** The calling thread's merge kernel for a comparator source and keys of `type` (compiled once). */
export function mergeKernel(comparator: string, values: boolean, type: NumericType): MergeKernel {
  return mergeWarmed(comparator, values, type).kernel;
}

/** A merge kernel (see mergeKernelBody): merges a and b (and their values) into o (ov). */
type MergeKernel = (
  a: KeyArray,
  b: KeyArray,
  va: Uint32Array | undefined,
  vb: Uint32Array | undefined,
  o: KeyArray,
  ov: Uint32Array | undefined,
) => number;

/** The merge kernel and its source, memoized by what determines the source (`warmedKernel`). */
function mergeWarmed(
  comparator: string,
  values: boolean,
  type: NumericType,
): { readonly kernel: MergeKernel; readonly source: string } {
  return warmedKernel<MergeKernel>(`merge ${values} ${type} ${comparator}`, () =>
    mergeSource(comparator, values, type),
  );
}

/** The set kernel of `op` for a comparator source, over keys of `type`. */
export function setSource(comparator: string, op: SetOp, type: NumericType): string {
  return kernelSource(comparator, setKernelBody(op), `set piece ${op}`, type, '(x, y) => k(x, y, wo)');
}

/** A set kernel (see setKernelBody). */
export type SetKernel = (a: KeyArray, b: KeyArray, o: KeyArray) => number;

/** One par call's pieces, as every thread sees it (all arrays over SharedArrayBuffers). */
export interface PieceJob {
  /** The kernel's source (merge or set kernel). */
  readonly src: string;
  /** 1: set kernel, chained placement; 0: merge kernel, placed at i0 + j0. */
  readonly set: number;
  /** Set operations: 1 when a piece's worst case is i0 + j0 (union, symmetric difference), else i0. */
  readonly both: number;
  /** Consecutive pieces claimed at once (`SET_CLAIM`; 1 for merges), one at a time among the last `tail`. */
  readonly claim: number;
  readonly tail: number;
  /**
   * [next piece to claim, threads whose task returned normally (counted after their last write)],
   * then per piece p: [2 + p] its count + 1 once published (0 before), [2 + P + p] its state:
   * 0 running, 2 in scratch, 3 in place.
   */
  readonly ctl: Int32Array;
  /**
   * When given, a thread waits for go[0] to turn non-zero before it reads `cut` (the job is posted
   * before the splits are searched).
   */
  readonly go?: Int32Array;
  /** Splits: piece p covers a[cut[2p], cut[2p + 2]) and b[cut[2p + 1], cut[2p + 3]). */
  readonly cut: Int32Array;
  readonly a: KeyArray;
  readonly b: KeyArray;
  readonly va: Uint32Array | undefined;
  readonly vb: Uint32Array | undefined;
  readonly out: KeyArray;
  readonly outV: Uint32Array | undefined;
  /** Set operations: scratch of a.length + b.length elements (pieces not yet placeable). */
  readonly scr: KeyArray | undefined;
}

/**
 * The pool task (and the calling thread's): claims pieces until none is left (see the file
 * comment). Returns the number of pieces this thread ran, after counting itself in ctl[1] (its
 * last write). Self-contained: shipped as source.
 */
export const pieceTask = function pieceTask(job: PieceJob): number {
  const kernel = (globalThis as unknown as { __webdplCompile: (s: string) => unknown }).__webdplCompile(job.src) as (
    ...args: unknown[]
  ) => number;
  const { ctl, cut, a, b, out, go } = job;
  if (go !== undefined) while (Atomics.load(go, 0) === 0) Atomics.wait(go, 0, 0, 1);
  const P = (cut.length >> 1) - 1;
  let ran = 0;
  // The output position of piece p when every piece before it has published its count, else -1.
  // The prefix of published counts is kept here and only extended (pre[q]: where piece q goes, for
  // q <= known): rescanning every count before p for each piece read the counts' cache lines, which
  // the other threads keep writing, ~P^2 times a call.
  const pre = new Float64Array(P + 1);
  let known = 0;
  const offsetOf = (p: number): number => {
    while (known < p) {
      const c = Atomics.load(ctl, 2 + known);
      if (c === 0) return -1;
      pre[known + 1] = (pre[known] as number) + c - 1;
      known++;
    }
    return pre[p] as number;
  };
  // The pieces [next, end) claimed and not yet run.
  let next = 0;
  let end = 0;
  for (;;) {
    if (next >= end) {
      if (job.claim <= 1) {
        next = Atomics.add(ctl, 0, 1);
        end = next + 1;
      } else {
        for (;;) {
          const c = Atomics.load(ctl, 0);
          const take = c + job.claim <= P - job.tail ? job.claim : 1;
          if (c >= P || Atomics.compareExchange(ctl, 0, c, c + take) === c) {
            next = c;
            end = c + take;
            break;
          }
        }
      }
    }
    const p = next++;
    if (p >= P) {
      Atomics.add(ctl, 1, 1);
      return ran;
    }
    ran++;
    const i0 = cut[2 * p] as number;
    const j0 = cut[2 * p + 1] as number;
    const i1 = cut[2 * p + 2] as number;
    const j1 = cut[2 * p + 3] as number;
    const sa = a.subarray(i0, i1);
    const sb = b.subarray(j0, j1);
    if (job.set === 0) {
      const d = i0 + j0;
      const { va, vb, outV } = job;
      kernel(sa, sb, va?.subarray(i0, i1), vb?.subarray(j0, j1), out.subarray(d), outV?.subarray(d));
      continue;
    }
    const scr = job.scr as KeyArray;
    const at = job.both === 1 ? i0 + j0 : i0;
    const start = offsetOf(p);
    if (start >= 0) {
      const c = kernel(sa, sb, out.subarray(start));
      Atomics.store(ctl, 2 + P + p, 3);
      Atomics.store(ctl, 2 + p, c + 1);
    } else {
      const c = kernel(sa, sb, scr.subarray(at));
      Atomics.store(ctl, 2 + P + p, 2);
      Atomics.store(ctl, 2 + p, c + 1);
    }
    // Place every piece in scratch whose position this count made known, from p on.
    let off = offsetOf(p);
    if (off < 0) continue;
    for (let q = p; q < P; q++) {
      const c = Atomics.load(ctl, 2 + q);
      if (c === 0) break;
      if (Atomics.load(ctl, 2 + P + q) === 2 && Atomics.compareExchange(ctl, 2 + P + q, 2, 3) === 2) {
        const w = job.both === 1 ? (cut[2 * q] as number) + (cut[2 * q + 1] as number) : (cut[2 * q] as number);
        out.set(scr.subarray(w, w + c - 1) as never, off);
      }
      off += c - 1;
    }
  }
};

/**
 * The splits of a par merge or set operation of a and b into `pieces` pieces: cut[2p], cut[2p + 1]
 * = where piece p starts in a and in b (cut[2P], cut[2P + 1] = a.length, b.length); `classes`:
 * each split moved back to the start of its class of equivalent elements (set operations; a piece
 * may then be empty). Each split is searched past the one before it (a valid prefix of the merge:
 * a class start is one too), and a class start from the split backwards (`classStart`): the
 * searches over all of a and b and the classes' starts bisected from 0 took 45-60 us of a 2^22 set
 * operation (docs/benchmarks/cpu-par-2026-11-25.md).
 */
export function mergeCuts(
  a: KeyArray,
  b: KeyArray,
  pieces: number,
  before: (x: number, y: number) => boolean,
  classes: boolean,
): Int32Array {
  const na = a.length;
  const nb = b.length;
  const n = na + nb;
  const cut = new Int32Array(2 * (pieces + 1));
  let pi = 0;
  let pj = 0;
  for (let k = 1; k < pieces; k++) {
    const d = Math.floor((k * n) / pieces);
    let i = pi + mergePath(a, pi, na, pj, nb, d - pi - pj, before, b);
    let j = d - i;
    if (classes) {
      const v = j >= nb || (i < na && !before(b[j] as number, a[i] as number)) ? (a[i] as number) : (b[j] as number);
      i = classStart(a, pi, i, v, before);
      j = classStart(b, pj, j, v, before);
    }
    cut[2 * k] = i;
    cut[2 * k + 1] = j;
    pi = i;
    pj = j;
  }
  cut[2 * pieces] = na;
  cut[2 * pieces + 1] = nb;
  return cut;
}

/**
 * The first index in c[lo, hi) whose element does not go before v, searched from hi backwards in
 * doubling steps and then bisected (a class of equivalent elements is short where keys vary).
 */
function classStart(c: KeyArray, lo: number, hi: number, v: number, before: (x: number, y: number) => boolean): number {
  let h = hi;
  for (let step = 1; h > lo; step *= 2) {
    const m = Math.max(lo, h - step);
    if (before(c[m] as number, v)) return lowerBound(c, m + 1, h, v, before);
    h = m;
  }
  return lo;
}

/** The first index in c[lo, hi) whose element does not go before v. */
export function lowerBound(
  c: KeyArray,
  lo: number,
  hi: number,
  v: number,
  before: (x: number, y: number) => boolean,
): number {
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
 * The number of pieces a par merge or set operation over n elements of a and b cuts, or 0 when it
 * should run on the calling thread (below the parallel threshold, or too short for two pieces).
 */
export function mergePieces(backend: CpuBackend, n: number): number {
  if (backend.kind !== 'par') return 0;
  const t = cpuTuning(backend);
  if (n < t.parallelThreshold || belowParMin(backend, n, MERGE_PAR_MIN)) return 0;
  const minPiece = backend.tuning?.minChunk !== undefined ? t.minChunk : MIN_PIECE;
  const pieces = Math.min(Math.floor(n / minPiece), backend.pool.size * PIECES_PER_THREAD);
  return pieces >= 2 ? pieces : 0;
}

/** A shared stand-in for `x` (x itself when shared, else a copy in borrowed shared scratch when `copy`). */
function shared<T extends KeyArray | Uint32Array>(x: T, copy: boolean, taken: ArrayBufferView[]): T {
  if (isShared(x)) return x;
  const Ctor = x.constructor as new (buffer: SharedArrayBuffer, offset: number, length: number) => T;
  const s = new Ctor(borrow(Math.max(1, x.length) * 4, true), 0, x.length);
  taken.push(s);
  if (copy) s.set(x as never);
  return s;
}

/** The arrays of a par merge or set operation (values: merge by key). */
export interface PieceArrays {
  readonly a: KeyArray;
  readonly b: KeyArray;
  readonly out: KeyArray;
  readonly va?: KeyArray | undefined;
  readonly vb?: KeyArray | undefined;
  readonly outV?: KeyArray | undefined;
}

/**
 * Runs a par merge (`op` undefined) or set operation over `pieces` pieces on the pool and the
 * calling thread; returns the number of elements written (a merge: all of them). Plain arrays are
 * staged in shared scratch (outputs copied back). `comparator` is the comparator's source.
 */
export async function runMergePieces(
  backend: CpuBackend & { kind: 'par' },
  arrays: PieceArrays,
  pieces: number,
  before: (x: number, y: number) => boolean,
  comparator: string,
  op?: SetOp,
): Promise<number> {
  const taken: ArrayBufferView[] = [];
  try {
    const a = shared(arrays.a, true, taken);
    const b = shared(arrays.b, true, taken);
    const out = shared(arrays.out, false, taken);
    const va = arrays.va ? shared(bitsView(arrays.va), true, taken) : undefined;
    const vb = arrays.vb ? shared(bitsView(arrays.vb), true, taken) : undefined;
    const outV = arrays.outV ? shared(bitsView(arrays.outV), false, taken) : undefined;
    const P = pieces;
    const cut = new Int32Array(new SharedArrayBuffer(4 * 2 * (P + 1)));
    // The control words and, last, `go`.
    const words = new Int32Array(new SharedArrayBuffer(4 * (3 + 2 * P)));
    const ctl = words.subarray(0, 2 + 2 * P);
    const go = words.subarray(2 + 2 * P);
    const n = a.length + b.length;
    const job: PieceJob = {
      src:
        op !== undefined
          ? warmedKernel(`set ${op} ${elementTypeOf(a)} ${comparator}`, () =>
              setSource(comparator, op, elementTypeOf(a)),
            ).source
          : mergeWarmed(comparator, va !== undefined, elementTypeOf(a)).source,
      set: op !== undefined ? 1 : 0,
      both: op !== undefined && writesBoth(op) ? 1 : 0,
      claim: op !== undefined ? SET_CLAIM : 1,
      tail: op !== undefined ? SET_TAIL : 0,
      ctl,
      go,
      cut,
      a,
      b,
      va,
      vb,
      out,
      outV,
      scr: op !== undefined ? scratchOf(a, n, taken) : undefined,
    };
    // Posted before the splits are searched: a worker starts 0.1-0.15 ms after the post.
    const { callerWorks, workers, settled, failed, returned } = startWorkers(backend, pieceTask, job, P);
    try {
      cut.set(mergeCuts(a, b, P, before, op !== undefined));
    } catch (error) {
      Atomics.store(ctl, 0, P);
      release(go);
      await settled;
      throw error;
    }
    release(go);
    if (callerWorks) {
      compileOnce(job.src);
      try {
        pieceTask(job);
      } catch (error) {
        // Leave no piece for the workers, let them finish theirs, then report.
        Atomics.store(ctl, 0, P);
        await settled;
        throw error;
      }
    }
    // Every thread that counted itself in ctl[1] has returned normally after its last write, so a
    // worker's reply can only confirm that: once all have, the pool may hand those workers new jobs
    // (`returned`) and the call does not wait for the replies.
    if (!(spinUntil(ctl, 1, workers + (callerWorks ? 1 : 0), PIECES_RETURN_SPIN_MS) && returned())) {
      await settled;
      const f = failed();
      if (f) throw f.error;
    }
    let written = n;
    if (op !== undefined) {
      written = 0;
      for (let p = 0; p < P; p++) written += (ctl[2 + p] as number) - 1;
    }
    if (out !== arrays.out) arrays.out.set(out.subarray(0, written) as never);
    if (outV && arrays.outV && !isShared(arrays.outV)) bitsView(arrays.outV).set(outV);
    return written;
  } finally {
    giveBack(...taken);
  }
}

/** Lets the threads waiting on `go` (`PieceJob.go`) read the splits. */
function release(go: Int32Array): void {
  Atomics.store(go, 0, 1);
  Atomics.notify(go, 0);
}

/** A view of n elements of `like`'s type over borrowed shared scratch. */
function scratchOf(like: KeyArray, n: number, taken: ArrayBufferView[]): KeyArray {
  const Ctor = like.constructor as new (buffer: SharedArrayBuffer, offset: number, length: number) => KeyArray;
  const s = new Ctor(borrow(Math.max(1, n) * 4, true), 0, n);
  taken.push(s);
  return s;
}
