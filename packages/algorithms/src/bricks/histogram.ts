/**
 * `cpuHistogram`: counts of elements per bin (see histogram/bins.ts for the edges). One generated
 * loop per element type and bin kind (compiled once, `compileOnce`; the workers share the cache):
 * exact integer bins shift or divide after one unsigned range compare, other even bins estimate the
 * bin arithmetically and correct it against the edges (a step or two at most), explicit boundaries
 * binary-search the edges. seq: the loop over the whole input into the
 * counts. par: chunks on the pool, each counting into its own bins of one shared array (per-thread
 * privatized bins; with plain arrays the calling thread counts its chunks in place, `runPar`), summed
 * at the end, from HISTOGRAM_PAR_MIN elements (plain input: HISTOGRAM_PLAIN_MIN); bins x chunks
 * beyond PAR_BIN_WORDS stay seq.
 */
import type { HostArray, NumericType } from '@webdpl/core';
import { type Chunk, type CpuBackend, planParallel, sharedMemoryAvailable } from '@webdpl/policies';
import type { Kernel, KernelJob } from './kernels';
import { belowParMin, plainMemoryBoundSeq, runPar } from './staging';
import { warmArray, warmedKernel, warmedSource } from './warm';

/**
 * Elements from which par counts on the pool (allocShared input), and from which a plain input goes
 * to the pool (the calling thread counts its chunks in place, the workers' share is copied,
 * `runPar`: 1.3x seq at 2^18, 1.55-1.8x from 2^19; 1.0x at 2^17;
 * docs/benchmarks/cpu-catalogue-par-2026-11-24.md). First measured from 2^17 (par at 2^16 0.6-0.9x
 * seq, from 2^17 1.0-1.65x, in multi-size runs); in a process of its own per size (medians of 200
 * calls, 256 even bins over the u32 range; docs/benchmarks/cpu-par-minimum-2026-11-25.md) par took
 * 1.2x seq's time at 2^17, 1.05x at 2^18, 0.97x at 2^19: from 2^19 since.
 */
export const HISTOGRAM_PAR_MIN = 1 << 19;
/** Plain inputs: the same minimum (at 2^18 a plain input's par was measured 1.3x seq in multi-size runs only). */
export const HISTOGRAM_PLAIN_MIN = HISTOGRAM_PAR_MIN;

/** Most words of per-chunk bins a par call allocates (16 MiB); beyond it the call runs seq. */
export const PAR_BIN_WORDS = 1 << 22;

/**
 * How the CPU loop finds an element's bin: 'even' estimates (v - lo) * scale and corrects it against
 * the edges, 'edges' binary-searches them, 'shift' / 'div' (integer types whose edges are exactly
 * lo + k * width, bins.ts `exactBins`) compute (v - lo) >>> shift or floor((v - lo) / width) with no
 * edge read (then `scale` holds the shift or the width).
 */
export type CpuBinKind = 'even' | 'edges' | 'shift' | 'div';

/**
 * Most bins the integer kernels ('shift', 'div') count into a local Int32Array (when the range has
 * at least as many elements as bins): counting into the caller's array, a parameter, ran 2.1 ms at
 * 2^20 and 30 ms at 2^24 (256 bins, u32), into a local array with four elements per loop step 1.2
 * and 20 ms (a plain loop over arrays it closes over: 0.77-1.4 and 12-22 ms);
 * docs/benchmarks/cpu-seq-2026-11-24.md.
 */
const LOCAL_BINS_MAX = 1 << 16;

/**
 * Elements per step of the integer kernels' local-bins loop, loaded first: u32, 256 bins, 2^20 /
 * 2^22 / 2^24 elements 0.95 / 3.76 / 15.2 ms at 4, 0.90 / 3.60 / 14.4 at 8, 0.95 / 3.77 / 15.3 at 16
 * (an element range check each); 'shift' tests the step's 8 range checks in one condition before 8
 * unchecked counts (each checked on the other side): 0.94 -> 0.86 ms at 2^20, against 0.74 with no
 * check at all; 'div' ran slower that way (1.46 -> 1.64 ms) and keeps a check per element
 * (docs/benchmarks/cpu-catalogue-2026-11-24c.md).
 */
const HIST_UNROLL = 8;

/** A step's offsets d0.. and their loads, d = (v - lo) mod 2^32, all loaded first (HIST_UNROLL). */
const STEP = Array.from({ length: HIST_UNROLL }, (_, q) => `d${q}`);
const STEP_LOADS = `const ${STEP.map((d, q) => `${d} = (x[i${q ? ` + ${q}` : ''}] - lo) >>> 0`).join(', ')};`;

/**
 * 'shift' with bins of at least 2^16 (w >= 16) over at least WIDE_MIN elements, and 16 elements per
 * word of 2^(32 - w): counts into 2^(32 - w) words with no range check (WIDE_LOOP), clearing at most
 * 256 KiB. u32, 256 bins of 2^16, 2^20 elements: 0.87 -> 0.81 ms (the plain loop 0.76-1.5 ms; no
 * check in the checked loop's place, not exact: 0.75; docs/benchmarks/cpu-catalogue-2026-11-24c.md).
 */
const WIDE_MIN = 512;

/**
 * Elements of the sample that decides the wide loop (at most 1/16 of them outside the bins). With
 * nearly all values outside (u32 over the whole range into bins over [0, 2^24), 2^22 elements) the
 * wide loop ran 3.73 ms against the checked loop's 1.98; with all inside 2.98 against 3.66.
 */
const WIDE_SAMPLE = 256;

/**
 * The kernel source: over x[b, e) into f[c + bin]; x2 holds the parameters
 * [lo, scale, edge count m, open (1/0), edge 0 .. edge m-1] (a Float64Array).
 */
export function histogramSource(type: NumericType, kind: CpuBinKind): string {
  return warmedSource(histogramKernel(type, kind), warmCalls(type, kind), '/* webdpl histogram */');
}

/**
 * The warm-up calls of a histogram kernel (bricks/warm.ts: it runs them where it is compiled;
 * without them the OSR code of its first real call had no feedback for the code after the loop and
 * deoptimized there in every later call, `--trace-deopt` in the catalogue probe): two bins over
 * [0, 2), or three with the last open, over values in and out of range (NaN for f32), through the
 * local-bins loop and its tail and the direct loop (fewer elements than bins).
 */
function warmCalls(type: NumericType, kind: CpuBinKind): string {
  const gen =
    type === 'f32'
      ? '(i) => (i % 13 === 0 ? NaN : ((i * 0.37) % 4) - 1)'
      : // Every third element has the top bit set (u32 above 2^31, i32 negative), so each load of the
        // unrolled step (i + q, q < HIST_UNROLL, coprime to 3) sees one: a load that saw only
        // small values took "lost precision" deopts on real u32 data (warm-catalogue.test.ts).
        '(i) => (i % 3 === 0 ? Math.imul(i, 0x9e3779b9) | 0x80000000 : i % 9)';
  // [lo, bin width, P[1]]: small bins from 0, and (integers) wide bins from the type's bottom, whose
  // range and differences pass 2^31 as real ones do.
  const wide =
    type === 'f32'
      ? '[-5, 0.25, 4]'
      : `[${type === 'i32' ? -(2 ** 31) : 0}, ${kind === 'shift' ? 2 ** 31 : 3e9}, ${kind === 'shift' ? 31 : kind === 'div' ? 3e9 : 1 / 3e9}]`;
  // 'shift' warms on wide bins alone: with the small ones too, its loop over 2^22 u32 into 256 bins
  // ran 5.1-5.4 ms instead of 4.1-4.3 (the bound seen both as a small integer and above 2^31). The
  // second wide set starts at the type's middle, so half the values fall outside it (the loop's
  // per-element side; from the bottom, bins of 2^31 cover every value).
  const small =
    kind === 'shift'
      ? `[${type === 'i32' ? 0 : 2 ** 31}, ${2 ** 30}, 30], `
      : kind === 'div'
        ? '[0, 3, 3], '
        : '[0, 2, 1], ';
  // Twice over: V8 allocates the feedback vector lazily (after some bytecode has run), so the first
  // calls may leave a branch without feedback.
  // 'shift': WIDE_MIN + 3 elements (the wide loop when w = 31, with a tail), wx over and over (a
  // bigger WIDE_MIN made this warm-up the most of it: 4099 elements, ~6 ms against 0.2 without).
  return `const wx = ${warmArray(type, gen)}, wf = ${warmArray('u32')};
  const wl = new wx.constructor(${WIDE_MIN + 3});
  for (let i = 0; i < wl.length; i++) wl[i] = wx[i % wx.length];
  for (let r = 0; r < 2; r++)
  for (const [lo, width, w] of [${small}${wide}]) {
    for (const open of [0, 1]) {
      const P = new Float64Array([lo, w, 3, open, lo, lo + width, lo + 2 * width]);
      k(wx, P, undefined, 0, wx.length, false, 0, wf);
      k(wx, P, undefined, 3, wx.length, false, 0, wf);
      k(wx, P, undefined, 5, 6, false, 3, wf);
      ${kind === 'shift' ? `k(wl, P, undefined, 0, wl.length, false, 0, wf);` : ''}
    }
  }`;
}

/**
 * The 'shift' kernel's loop without a range check (WIDE_MIN, WIDE_SAMPLE): counts of every d >>> w,
 * d = (v - lo) mod 2^32, into 2^(32 - w) local words; bins k < bins are the counts (d >>> w < bins
 * exactly when d is in range, bins.ts exactBins), the rest fall outside them.
 */
const WIDE_LOOP = `let wide = w >= 16 && e - b >= ${WIDE_MIN} && e - b >= 16 * 2 ** (32 - w);
    if (wide) {
      // Only when few elements fall outside the bins (a sample of the first ${WIDE_SAMPLE}): the
      // checked loop skips those with no store, the wide one counts each in a word of its own.
      let out = 0;
      for (let q = b; q < b + ${WIDE_SAMPLE}; q++) out += +(((x[q] - lo) >>> 0) > top);
      wide = out <= ${WIDE_SAMPLE >> 4};
    }
    if (wide) {
      const g = new Int32Array(2 ** (32 - w));
      for (; i + ${HIST_UNROLL - 1} < e; i += ${HIST_UNROLL}) {
        ${STEP_LOADS}
        ${STEP.map((d) => `g[${d} >>> w]++;`).join('\n        ')}
      }
      for (; i < e; i++) g[((x[i] - lo) >>> 0) >>> w]++;
      const m = bins < g.length ? bins : g.length;
      for (let k = 0; k < m; k++) f[c + k] += g[k];
      return 0;
    }`;

/** The kernel's expression (see histogramSource). */
function histogramKernel(type: NumericType, kind: CpuBinKind): string {
  if (kind === 'shift' || kind === 'div') {
    // Exact integer bins cover [lo, lo + bins * width) (bins = m - 1 edges' worth, or m when open:
    // then lo + bins * width is one past the type's greatest value). One unsigned compare of
    // d = (v - lo) mod 2^32 decides the range: below lo, d >= 2^32 - (lo - min) >= bins * width.
    const bin = (d: string) => (kind === 'shift' ? `${d} >>> w` : `(${d} / w) >>> 0`);
    // 'shift': the step's counts unchecked when all of its elements are in range (see HIST_UNROLL).
    const allIn =
      kind === 'shift'
        ? `if (${STEP.map((d) => `${d} <= top`).join(' && ')}) {
        ${STEP.map((d) => `g[${bin(d)}]++;`).join('\n        ')}
      } else `
        : '';
    return `(function () {
  'use strict';
  return function histogram_${type}_${kind}(x, P, y, b, e, h, c, f) {
    // lo is an integer of the type's range (bins.ts exactBins), so (v - lo) mod 2^32 is
    // (v - (lo | 0)) mod 2^32: an int32 subtraction of the loaded word where v - lo (a double)
    // cost a float subtraction and a truncation per element (u32, 256 bins, 2^20: 1.26 -> 0.95 ms).
    const lo = P[0] | 0, w = P[1] >>> 0, bins = P[3] === 1 ? P[2] : P[2] - 1;
    const range = bins * ${kind === 'shift' ? '2 ** w' : 'w'};
    // The bound as a u32 (d <= top): comparing d with the double \`range\` ran ~20x slower for
    // large inputs once V8 had optimized the loop on many small ones (pnpm bench --quick: 10.5 ms
    // instead of 0.5 at 2^18 after the 2^10 and 2^14 rounds).
    const top = (range >= 4294967296 ? 4294967295 : range - 1) >>> 0;
    let i = b;
    if (bins > ${LOCAL_BINS_MAX} || bins > e - b) {
      for (; i < e; i++) {
        const d = (x[i] - lo) >>> 0;
        if (d <= top) f[c + (${bin('d')})]++;
      }
      return 0;
    }
    ${kind === 'shift' ? WIDE_LOOP : ''}
    // Counted into a local array (added into f at the end, mod 2^32 as f's own counts),
    // ${HIST_UNROLL} elements per loop step with their loads first ('shift': one branch when all of
    // them are in range): see LOCAL_BINS_MAX, HIST_UNROLL.
    const g = new Int32Array(bins);
    for (; i + ${HIST_UNROLL - 1} < e; i += ${HIST_UNROLL}) {
      ${STEP_LOADS}
      ${allIn}{
        ${STEP.map((d) => `if (${d} <= top) g[${bin(d)}]++;`).join('\n        ')}
      }
    }
    for (; i < e; i++) {
      const d = (x[i] - lo) >>> 0;
      if (d <= top) g[${bin('d')}]++;
    }
    for (let k = 0; k < bins; k++) f[c + k] += g[k];
    return 0;
  };
})()`;
  }
  const find =
    kind === 'even'
      ? `const q = (v - lo) * scale;
        // Clamped before the conversion, so k stays a small integer (NaN: 0).
        k = q < 0 ? 0 : q >= top - 1 ? top - 1 : Math.floor(q) | 0;
        while (k > 0 && P[4 + k] > v) k--;
        while (P[5 + k] <= v) k++;`
      : `let l = 0;
        let r = top;
        while (r - l > 1) {
          const mid = (l + r) >>> 1;
          if (P[4 + mid] <= v) l = mid;
          else r = mid;
        }
        k = l;`;
  return `(function () {
  'use strict';
  return function histogram_${type}_${kind}(x, P, y, b, e, h, c, f) {
    const lo = P[0], scale = P[1], m = P[2] | 0, open = P[3] === 1;
    const top = m - 1, e0 = P[4], eTop = P[4 + top];
    for (let i = b; i < e; i++) {
      const v = x[i];
      if (!(v >= e0)) continue;
      let k;
      if (v >= eTop) {
        if (!open) continue;
        k = top;
      } else {
        ${find}
      }
      f[c + k]++;
    }
    return 0;
  };
})()`;
}

/**
 * Writes the number of elements of `x` in each bin into `counts[0, bins)` (overwriting).
 * @param params [lo, scale, m, open, edge 0 .. edge m-1] (see histogramSource)
 */
export async function cpuHistogram(
  backend: CpuBackend,
  x: HostArray,
  type: NumericType,
  kind: CpuBinKind,
  params: Float64Array,
  counts: Uint32Array,
  bins: number,
): Promise<void> {
  counts.fill(0, 0, bins);
  const n = x.length;
  if (n === 0 || params[2] === 0) return;
  const { kernel, source } = warmedKernel<Kernel>(`histogram ${type} ${kind}`, () => histogramSource(type, kind));
  const seq = belowParMin(backend, n, HISTOGRAM_PAR_MIN) || plainMemoryBoundSeq(backend, n, [x], HISTOGRAM_PLAIN_MIN);
  const chunks = seq ? undefined : planParallel(backend, n);
  if (!chunks || backend.kind !== 'par' || !sharedMemoryAvailable() || chunks.length * bins > PAR_BIN_WORDS) {
    kernel(x, params as unknown as HostArray, undefined, 0, n, false, 0, counts);
    return;
  }
  // Every chunk counts into its own `bins` words of one shared array; the parameters go whole to
  // every thread (shared).
  const per = new Uint32Array(new SharedArrayBuffer(4 * bins * chunks.length));
  const p = new Float64Array(new SharedArrayBuffer(params.byteLength));
  p.set(params);
  const index = new Map<Chunk, number>(chunks.map((c, i) => [c, i]));
  const ps = p as unknown as HostArray;
  await runPar(
    backend,
    chunks,
    { x, x2: undefined, y: undefined, n },
    (c, sh): KernelJob => ({
      s: source,
      x: sh.x,
      x2: ps,
      b: c.begin,
      e: c.end,
      h: false,
      c: (index.get(c) as number) * bins,
      f: per,
    }),
    (c) => kernel(x, ps, undefined, c.begin, c.end, false, (index.get(c) as number) * bins, per),
  );
  for (let q = 0; q < chunks.length; q++) {
    const base = q * bins;
    for (let k = 0; k < bins; k++) counts[k] = (counts[k] as number) + (per[base + k] as number);
  }
}
