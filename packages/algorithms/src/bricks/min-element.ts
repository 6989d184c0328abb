/**
 * CPU loop of min/max element: the first index of the least and/or greatest element in the order of
 * the sorts (TypedArray#sort's: -0 before +0, NaN after everything).
 *
 * One generated loop per (element type, what is wanted), compiled once per thread (`compileOnce`;
 * workers: the pool's shared cache). It compares the values themselves and keeps the best in a local
 * (as a hand-written loop does); the float order's special cases are settled after the loop: a zero
 * minimum looks for the first -0 from the first zero on, a zero maximum for the first +0, the first
 * NaN is the maximum, and a minimum of +inf or NaN only is found by a second look.
 * seq: that loop over [0, n). par: per chunk through `runPar` (with plain arrays the calling thread
 * scans its chunks in place while workers scan staged copies of theirs; from 2^20 elements unless the
 * tuning sets a threshold), chunk winners folded in
 * chunk order (a later chunk wins only with a strictly better element). No SharedArrayBuffer on seq.
 */
import type { HostArray, NumericType } from '@webdpl/core';
import { type CpuBackend, compileOnce, planParallel, sharedMemoryAvailable } from '@webdpl/policies';
import type { Kernel, KernelJob } from './kernels';
import { runPar } from './staging';
import { warmArray, warmedSource } from './warm';

/** What a scan looks for: 1 min, 2 max, 3 both. */
export type Want = 1 | 2 | 3;

/**
 * The kernel source (a `Kernel` of kernels.ts) over x[b, e) (non-empty): want 1 the min index, 2 the max
 * index, 3 both as (min - b) + (max - b) * (e - b) (exact in a double for any chunk below 2^26).
 */
export function minMaxSource(type: NumericType, want: Want): string {
  const float = type === 'f32';
  // The step of element v at index j; `brk` ends the scan at the first NaN (max only: nothing beats it).
  const minStep = (v: string, j: string) => `if (${v} < lo) { lo = ${v}; mi = ${j}; }`;
  const maxStep = (v: string, j: string, brk: string) =>
    float
      ? `if (!(${v} <= hi)) { if (${v} !== ${v}) { if (nan < 0) nan = ${j}; ${want === 2 ? brk : ''} } else { hi = ${v}; ma = ${j}; } }`
      : `if (${v} > hi) { hi = ${v}; ma = ${j}; }`;
  const init = float
    ? 'let lo = Infinity, mi = -1, hi = -Infinity, ma = -1, nan = -1;'
    : 'let lo = x[b], mi = b, hi = x[b], ma = b, nan = -1;';
  // The first zero with `1 / x[j] sign 0` in [to + 1, e) into `to`, if any: four elements per step
  // tested for a zero first. Random [0, 1) f32 data of 2^24 elements mostly has a zero minimum, and
  // this scan then reads the rest of the array (minElement there: 24.5 -> 17.1 ms through the API
  // with this and the unrolled main loop; docs/benchmarks/cpu-seq-2026-11-24.md).
  const zero = (v: string, sign: string) => `${v} === 0 && 1 / ${v} ${sign} 0`;
  const nextZero = (to: string, sign: string) => `{
      let j = ${to} + 1, z = -1;
      for (; j + 3 < e; j += 4) {
        const v0 = x[j], v1 = x[j + 1], v2 = x[j + 2], v3 = x[j + 3];
        if (v0 === 0 || v1 === 0 || v2 === 0 || v3 === 0) {
          if (${zero('v0', sign)}) { z = j; break; }
          if (${zero('v1', sign)}) { z = j + 1; break; }
          if (${zero('v2', sign)}) { z = j + 2; break; }
          if (${zero('v3', sign)}) { z = j + 3; break; }
        }
      }
      if (z < 0) for (; j < e; j++) if (${zero('x[j]', sign)}) { z = j; break; }
      if (z >= 0) ${to} = z;
    }`;
  const fixMin = float
    ? `if (mi < 0) {
      mi = b;
      for (let i = b; i < e; i++) if (x[i] === Infinity) { mi = i; break; }
    } else if (lo === 0 && 1 / x[mi] > 0) ${nextZero('mi', '<')}`
    : '';
  const fixMax = float
    ? `if (nan >= 0) ma = nan;
    else if (ma < 0) ma = b;
    else if (hi === 0 && 1 / x[ma] < 0) ${nextZero('ma', '>')}`
    : '';
  const ret = want === 1 ? 'mi' : want === 2 ? 'ma' : '(mi - b) + (ma - b) * (e - b)';
  // In the unrolled loop the NaN's `break` leaves with i = e, so the tail loop does not run.
  const step = (v: string, j: string, brk: string): string =>
    `${want & 1 ? minStep(v, j) : ''} ${want & 2 ? maxStep(v, j, brk) : ''}`;
  // Four elements per loop step, tested at once (any better than the best so far?) before the steps
  // in index order: the arrays are parameters, and V8's simple loop over them costs ~2x a plain loop
  // over an array it closes over (f32 min, 2^20: 0.98 -> 0.60 ms, closure 0.51; 2^24: 15.1 -> 8.7
  // ms; docs/benchmarks/cpu-seq-2026-11-24.md).
  const better = (v: string) =>
    [want & 1 ? `${v} < lo` : '', want & 2 ? (float ? `!(${v} <= hi)` : `${v} > hi`) : ''].filter(Boolean).join(' || ');
  return `function minMax_${type}_${want}(x, x2, y, b, e) {
    'use strict';
    ${init}
    let i = b;
    for (; i + 3 < e; i += 4) {
      const v0 = x[i], v1 = x[i + 1], v2 = x[i + 2], v3 = x[i + 3];
      if (${better('v0')} || ${better('v1')} || ${better('v2')} || ${better('v3')}) {
        ${step('v0', 'i', 'i = e; break;')}
        ${step('v1', 'i + 1', 'i = e; break;')}
        ${step('v2', 'i + 2', 'i = e; break;')}
        ${step('v3', 'i + 3', 'i = e; break;')}
      }
    }
    for (; i < e; i++) {
      const v = x[i];
      ${step('v', 'i', 'break;')}
    }
    ${want & 1 ? fixMin : ''}
    ${want & 2 ? fixMax : ''}
    return ${ret};
  } /* webdpl minMax */`;
}

/** Longest range whose two indices (want 3) one double holds exactly: (2^26)^2 = 2^52. */
const MAX_PAIR_RANGE = 2 ** 26;

/**
 * Below this many elements par scans on the calling thread unless the tuning sets a threshold: one
 * read pass over 2^18 elements takes ~0.3 ms, less than a par step costs (measured 0.57x seq at 2^16,
 * 0.70x at 2^18, 1.15x at 2^20 on the 2-core VM).
 */
const PAR_MIN = 1 << 20;

/**
 * Statements that run a min/max kernel `k` on synthetic arrays (`warmedSource`), every tail length:
 * spread values, and for f32 the special cases' paths: a +0 minimum with +0s and then a -0 after
 * it in each lane of the unrolled zero search and in its tail (none too), the same for a -0
 * maximum, a NaN, all +Infinity, all NaN (integer arrays get plain values).
 */
function warmCalls(type: NumericType): string {
  const arrays = [warmArray(type), warmArray(type, '(i) => (i === 37 ? 0 / 0 : i * 0.25 - 3)')];
  arrays.push(warmArray(type, '() => 1 / 0'), warmArray(type, '() => 0 / 0'));
  for (const [zero, other, sign] of [
    ['0', '-0', ''],
    ['-0', '0', '-'],
  ]) {
    for (let d = 0; d < 4; d++) {
      const z = `(i) => (i === 0 || (i >= 5 && i < 9) ? ${zero} : i === ${20 + d} || i === ${60 + d} ? ${other} : ${sign}(i + 1))`;
      arrays.push(
        warmArray(type, z),
        warmArray(type, `(i) => (i === 0 ? ${zero} : i === ${60 + d} ? ${other} : ${sign}(i + 1))`),
      );
    }
    arrays.push(warmArray(type, `(i) => (i === 0 ? ${zero} : ${sign}(i + 1))`));
  }
  return `const wa = [${arrays.join(', ')}];
  for (let q = 0; q < 32; q++) for (const w of wa) k(w, undefined, undefined, q & 3, 64 - (q & 7));`;
}

const sources = new Map<string, string>();

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The element's place in the order as a number (u32/i32: itself; f32: order-preserving bits). */
function orderKey(type: NumericType, v: number): number {
  if (type !== 'f32') return v;
  if (Number.isNaN(v)) return 2 ** 32;
  f32[0] = v;
  const u = u32[0] as number;
  return u & 0x80000000 ? ~u >>> 0 : (u | 0x80000000) >>> 0;
}

/** The min/max kernel of `type` and `want` for this thread, and its (self-warming) source. */
export function minMaxKernel(type: NumericType, want: Want): { kernel: Kernel; source: string } {
  const key = `${type}${want}`;
  let source = sources.get(key);
  if (source === undefined) {
    source = warmedSource(minMaxSource(type, want), warmCalls(type), '');
    sources.set(key, source);
  }
  return { kernel: compileOnce<Kernel>(source), source };
}

/** [minIndex, maxIndex] of a non-empty `input` (first occurrences; -1 for what `want` leaves out). */
export async function cpuMinMaxIndex(
  backend: CpuBackend,
  input: HostArray,
  type: NumericType,
  want: Want,
): Promise<[number, number]> {
  const n = input.length;
  const { kernel, source } = minMaxKernel(type, want);
  const decode = (r: number, b: number, e: number): [number, number] => {
    if (want === 1) return [r, -1];
    if (want === 2) return [-1, r];
    const len = e - b;
    return [b + (r % len), b + Math.floor(r / len)];
  };
  // Chunk winners folded in index order: a later chunk wins only with a strictly better element.
  const fold = (ranges: readonly { begin: number; end: number }[], results: readonly number[]): [number, number] => {
    let mi = -1;
    let ma = -1;
    let minK = 0;
    let maxK = 0;
    for (let i = 0; i < ranges.length; i++) {
      const c = ranges[i] as { begin: number; end: number };
      const [a, z] = decode(results[i] as number, c.begin, c.end);
      if (a >= 0) {
        const k = orderKey(type, input[a] as number);
        if (mi < 0 || k < minK) [mi, minK] = [a, k];
      }
      if (z >= 0) {
        const k = orderKey(type, input[z] as number);
        if (ma < 0 || k > maxK) [ma, maxK] = [z, k];
      }
    }
    return [mi, ma];
  };
  const chunks =
    backend.kind === 'par' && backend.tuning?.parallelThreshold === undefined && n < PAR_MIN
      ? undefined
      : planParallel(backend, n);
  if (
    !chunks ||
    backend.kind !== 'par' ||
    !sharedMemoryAvailable() ||
    (want === 3 && chunks.some((c) => c.end - c.begin > MAX_PAIR_RANGE))
  ) {
    // Both indices of a range are encoded in one double: ranges of at most 2^26 elements.
    const ranges = [];
    for (let b = 0; b < n; b += MAX_PAIR_RANGE) ranges.push({ begin: b, end: Math.min(n, b + MAX_PAIR_RANGE) });
    return fold(
      ranges,
      ranges.map((c) => kernel(input, undefined, undefined, c.begin, c.end, false, 0, undefined)),
    );
  }
  const parts = await runPar(
    backend,
    chunks,
    { x: input, x2: undefined, y: undefined, n },
    (c, sh): KernelJob => ({ s: source, x: sh.x, b: c.begin, e: c.end, h: false, c: 0 }),
    (c) => kernel(input, undefined, undefined, c.begin, c.end, false, 0, undefined),
  );
  return fold(chunks, parts);
}
