/**
 * Radix selection for built-in orders (less / greater), the CPU side of nthElement, partialSort and
 * topK from RADIX_SELECT_MIN elements: the k-th key is found digit by digit on the sort's
 * order-preserving key bits (bricks/sort/key-bits.ts: -0 before +0, every NaN last and equal to every
 * other NaN), then the data is partitioned stably around it, so the result is one defined
 * arrangement (every key before the k-th's class in input order, then its class, then the rest),
 * the same on seq and par.
 *
 * Passes over the n elements (each a generated loop, `compileOnce`, one per type and order):
 *  1-3. histograms of the key bits' digits 31..21, 20..10 and 9..0 (2048 / 2048 / 1024 bins), the
 *       second and third only over the keys whose higher digits are the k-th's; each chunk counts
 *       into its own bins, so the per-chunk counts of keys before the k-th and equal to it fall out
 *       of the three rounds (no counting pass). When the first round leaves at most n / COMPACT_RATIO
 *       candidates (keys whose digit 31..21 is the k-th's: ~n / 2048 for spread-out keys), the
 *       second round also copies them, chunk by chunk, into a compact buffer, and the third round
 *       reads only that buffer (on the calling thread when it is short): one pass over n and one
 *       pool round trip fewer;
 *  4.   the stable partition: each chunk scatters its keys before / equal to / after the k-th into
 *       scratch at its offsets (the before / after choice without a branch, see scatterSource);
 *  5.   the scratch is copied back (with a destination, topK's copy of its input, the partition
 *       writes there and nothing is copied).
 * par (from SELECT_PAR_MIN elements) runs every pass over chunks on the pool and the calling thread
 * (`runChunks`); plain (non-shared) data from SELECT_PLAIN_MIN elements (or under an explicit
 * parallelThreshold) is copied into shared scratch first and back at the end. 4-5 reads and 2
 * writes of n words against the introselect's 2-3 passes of data-dependent swaps and branches: faster
 * on seq too (docs/benchmarks/cpu-catalogue-par-2026-11-24.md and -24b.md).
 */
import type { NumericType } from '@webdpl/core';
import {
  type Chunk,
  type CpuBackend,
  compileOnce,
  cpuTuning,
  isShared,
  planParallel,
  sharedMemoryAvailable,
} from '@webdpl/policies';
import type { Kernel, KernelJob } from './kernels';
import type { KeyArray } from './sort/index';
import { bitsView } from './sort/key-bits';
import { borrow, giveBack } from './sort/scratch';
import { belowParMin, plainMemoryBoundSeq, runChunks } from './staging';
import { warmArray, warmedKernel, warmedSource } from './warm';

/** From this many elements the built-in orders select by radix (below, the introselect). */
export const RADIX_SELECT_MIN = 1 << 12;

/** The key bits of the element bits `b`, as a u32 expression (bricks/sort/key-bits.ts's mapping). */
function keyExpr(type: NumericType, descending: boolean, b: string): string {
  if (type === 'u32') return descending ? `(~${b} >>> 0)` : b;
  if (type === 'i32') return `((${b} ^ ${descending ? '0x7fffffff' : '0x80000000'}) >>> 0)`;
  const flip = descending ? ' ^ -1' : '';
  return `((${b} & 0x7fffffff) > 0x7f800000 ? 0xffffffff : (((${b} & 0x80000000) !== 0 ? ~${b} : ${b} ^ 0x80000000)${flip}) >>> 0)`;
}

/**
 * The histogram kernel (x the elements' bits, x2 = P: [round, prefix, _, then per chunk where its
 * candidates go], f the bins from c): round 0 counts digit 31..21 of every key, round 1 digit
 * 20..10 of the keys whose bits 31..21 are the prefix, round 2 digit 9..0 of those whose bits
 * 31..10 are; round 3 is round 1 that also copies those keys to y (see the file comment).
 */
export function histSource(type: NumericType, descending: boolean): string {
  const key = keyExpr(type, descending, 'w');
  // Every round over keys of which half share their high bits with the first (candidates), then
  // one element at another chunk's bins (see WARM_BITS).
  const calls = `${WARM_BITS} const wf = new Uint32Array(4096), P = new Uint32Array(5);
  const key0 = ((w) => ${key})(wx[0]);
  for (const r of [0, 1, 3, 2]) {
    P[0] = r; P[1] = r === 2 ? key0 >>> 10 : key0 >>> 21;
    k(wx, P, wy, 0, wx.length, false, 0, wf);
    k(wx, P, wy, 1, 2, false, 2048, wf);
  }`;
  return warmedSource(histKernel(type, descending, key), calls, '/* webdpl radix select */');
}

/** The histogram kernel's expression (see histSource). */
function histKernel(type: NumericType, descending: boolean, key: string): string {
  return `(function () {
  'use strict';
  return function select_hist_${type}${descending ? '_desc' : ''}(x, P, y, b, e, h, c, f) {
    const r = P[0], pre = P[1];
    if (r === 0) {
      for (let i = b; i < e; i++) { const w = x[i]; const k = ${key}; f[c + (k >>> 21)]++; }
    } else if (r === 1) {
      for (let i = b; i < e; i++) { const w = x[i]; const k = ${key}; if ((k >>> 21) === pre) f[c + ((k >>> 10) & 2047)]++; }
    } else if (r === 3) {
      // Round 1 that also copies the candidates to y, chunk c / 2048's from P[3 + c / 2048] on.
      let o = P[3 + (c >>> 11)];
      for (let i = b; i < e; i++) {
        const w = x[i]; const k = ${key};
        if ((k >>> 21) === pre) { y[o++] = w; f[c + ((k >>> 10) & 2047)]++; }
      }
    } else {
      for (let i = b; i < e; i++) { const w = x[i]; const k = ${key}; if ((k >>> 10) === pre) f[c + (k & 1023)]++; }
    }
    return 0;
  };
})()`;
}

/**
 * The partition kernel: x the elements' bits, x2 = P: [_, branch (1: keys equal to v take a branch,
 * 0: no branch at all), v (the k-th key)], y the scratch, f the offsets (f[3c], f[3c + 1],
 * f[3c + 2]: where chunk c's keys before / equal to / after v go).
 */
export function scatterSource(type: NumericType, descending: boolean): string {
  const key = keyExpr(type, descending, 'w');
  // Around the first key: some before, some equal, some after it, at their exact offsets.
  const calls = `${WARM_BITS} const P = new Uint32Array(3);
  const keyOf = (w) => ${key};
  P[2] = keyOf(wx[0]);
  let lt = 0, eq = 0;
  for (let i = 0; i < wx.length; i++) { const q = keyOf(wx[i]); if (q < P[2]) lt++; else if (q === P[2]) eq++; }
  // Several calls of both loops: V8 gives a function its feedback vector only after its first runs.
  for (let j = 0; j < 8; j++) {
    P[1] = j & 1;
    k(wx, P, wy, 0, wx.length, false, 0, new Uint32Array([0, lt, lt + eq]));
  }`;
  return warmedSource(scatterKernel(type, descending, key), calls, '/* webdpl radix select */');
}

/** The partition kernel's expression (see scatterSource). */
function scatterKernel(type: NumericType, descending: boolean, key: string): string {
  return `(function () {
  'use strict';
  return function select_scatter_${type}${descending ? '_desc' : ''}(x, P, y, b, e, h, c, f) {
    const v = P[2];
    // Before / after without a branch (a branch per element ran 5x slower: the classes of random
    // keys cannot be predicted): g = 1 picks the after cursor by arithmetic, and the cursors stay in
    // registers (three cursors in an array indexed by the class ran 1.5x slower, each store waiting
    // for the last one's cursor). Keys equal to the k-th take a branch when they are few or nearly
    // all (P[1] = 1, see EQ_BRANCH), else the equal cursor is picked by arithmetic too.
    let lt = f[3 * c] | 0, eq = f[3 * c + 1] | 0, gt = f[3 * c + 2] | 0;
    if (P[1] === 1) {
      for (let i = b; i < e; i++) {
        const w = x[i];
        const k = ${key};
        if (k === v) { y[eq++] = w; continue; }
        const g = (k > v) | 0;
        y[lt + (gt - lt) * g] = w;
        lt = (lt + 1 - g) | 0;
        gt = (gt + g) | 0;
      }
      return 0;
    }
    for (let i = b; i < e; i++) {
      const w = x[i];
      const k = ${key};
      const g = (k > v) | 0, q = (k === v) | 0;
      y[lt + (gt - lt) * g + (eq - lt) * q] = w;
      lt = (lt + 1 - g - q) | 0;
      gt = (gt + g) | 0;
      eq = (eq + q) | 0;
    }
    return 0;
  };
})()`;
}

/**
 * The warm-up data of the radix select's kernels (bricks/warm.ts: each kernel runs on it where it is
 * compiled; without it the OSR code of the first real call had no feedback for the code after its
 * loop and deoptimized there in later calls): wx, element bits with half of them near wx[0]
 * (candidates of every round), NaN and -0 bits, and bits above 2^31; wy, an output.
 */
const WARM_BITS = `const wx = ${warmArray(
  'u32',
  '(i) => (i % 8 === 3 ? 0x7fc00000 : i % 8 === 5 ? 0x80000000 : i % 2 === 0 ? 0x5a5a0000 + i * 3 : Math.imul(i + 1, 0x9e3779b9) >>> 0)',
)}, wy = ${warmArray('u32')};`;

/** Copies x[b, e) to y[b, e). */
const COPY_SOURCE = `(function () {
  'use strict';
  return function select_copy(x, P, y, b, e) { y.set(x.subarray(b, e), b); return 0; };
})() /* webdpl radix select */`;

/**
 * Elements from which par selects on the pool under the default tuning, and from which plain data is
 * copied into shared memory for it (nthElement at 2^18 on allocShared data 1.2x seq; plain data
 * copied in and back: 1.1x at 2^18, 1.3x at 2^19, 1.35-1.5x from 2^20; see the file comment's doc).
 */
export const SELECT_PAR_MIN = 1 << 18;
export const SELECT_PLAIN_MIN = 1 << 20;

/**
 * The partition branches on keys equal to the k-th when fewer than n / EQ_BRANCH of them (or of the
 * others) are: u32 2^22, keys equal to the k-th at random places, seq ms (branch / no branch /
 * the former class-indexed cursors): none 7.8 / ~9.2 / 12.4; 10% 29.4 (branch) / 30.2 (cursors);
 * 30% 52.9 (branch) / 45.6 (cursors), the branch mispredicted.
 */
export const EQ_BRANCH = 32;

/** Bins of each round: digits of 11, 11 and 10 bits. */
const BINS = [2048, 2048, 1024] as const;

/**
 * The second round copies its candidates out when there are at most n / COMPACT_RATIO of them: the
 * copy writes what the third round then saves reading (one sequential word per candidate against
 * a pass over all n).
 */
export const COMPACT_RATIO = 4;

/**
 * Rearranges `a` (of `type`) so that a[k] is the element a stable sort by the built-in order
 * (`descending`: greater) puts there, every element that goes before it first and every element
 * that goes after it last, each group in input order (see the file comment). With `dest` (as long
 * as `a`, overlapping nothing of it) the arrangement goes there instead and `a` is only read: the
 * partition writes straight into it, with no copy of the data in and no copy back (topK).
 */
export async function cpuRadixSelect(
  backend: CpuBackend,
  a: KeyArray,
  k: number,
  type: NumericType,
  descending: boolean,
  dest?: KeyArray,
): Promise<void> {
  const n = a.length;
  const par =
    backend.kind === 'par' &&
    sharedMemoryAvailable() &&
    !plainMemoryBoundSeq(backend, n, [a], SELECT_PLAIN_MIN) &&
    !belowParMin(backend, n, SELECT_PAR_MIN)
      ? planParallel(backend, n)
      : undefined;
  const chunks: readonly Chunk[] = par ?? [{ begin: 0, end: n }];
  const C = chunks.length;
  const hist = warmedKernel(`radix select hist ${type} ${descending}`, () => histSource(type, descending)).source;
  const scatter = warmedKernel(`radix select scatter ${type} ${descending}`, () =>
    scatterSource(type, descending),
  ).source;
  const taken: ArrayBufferView[] = [];
  const shared = par !== undefined;
  const words = (m: number) => {
    const w = new Uint32Array(borrow(Math.max(1, m) * 4, shared), 0, m);
    taken.push(w);
    return w;
  };
  try {
    const bits = bitsView(a);
    let x = bits;
    if (shared && !isShared(bits)) {
      x = words(n);
      x.set(bits);
    }
    const P = shared ? new Uint32Array(new SharedArrayBuffer(4 * (3 + C))) : new Uint32Array(3 + C);
    const bins = words(C * 2048);
    const offsets = words(3 * C);
    /** Runs `source` over `over` (x as given, y, f; c: the chunk's index times `stride`), on the pool when `pool`. */
    const pass = async (
      source: string,
      src: Uint32Array,
      y: Uint32Array | undefined,
      f: Uint32Array,
      stride: number,
      over: readonly Chunk[] = chunks,
      pool = par !== undefined,
    ): Promise<void> => {
      if (backend.kind === 'par' && pool) {
        await runChunks(
          backend,
          over,
          (ch, i): KernelJob => ({ s: source, x: src, x2: P, y, b: ch.begin, e: ch.end, h: false, c: i * stride, f }),
        );
        return;
      }
      const kernel = compileOnce<Kernel>(source);
      over.forEach((ch, i) => {
        kernel(src, P, y, ch.begin, ch.end, false, i * stride, f);
      });
    };
    // lt[c] / eq[c]: chunk c's keys before / equal to the k-th (eq known after the last round).
    const lt = new Float64Array(C);
    const eq = new Float64Array(C);
    // Each chunk's keys in the digit picked last; all chunks' keys per digit.
    const inBin = new Float64Array(C);
    const totals = new Float64Array(2048);
    let rank = k;
    let prefix = 0;
    // The keys in the digits picked so far (all of them before round 0), and what the next round
    // reads: x over the chunks, or the candidates copied out in round 1 over their segments.
    let candidates = n;
    let src = x;
    let over: readonly Chunk[] = chunks;
    let onPool = par !== undefined;
    for (let r = 0; r < 3; r++) {
      const B = BINS[r] as number;
      bins.fill(0, 0, C * 2048);
      P[1] = prefix;
      if (r === 1 && candidates * COMPACT_RATIO <= n) {
        // Round 1 copies the candidates out: chunk c's (inBin[c] of them) after those of the chunks
        // before it; round 2 then reads each chunk's segment of that buffer, on the pool only when
        // it is long enough.
        const cand = words(candidates);
        let at = 0;
        const segs: Chunk[] = [];
        for (let c = 0; c < C; c++) {
          P[3 + c] = at;
          segs.push({ begin: at, end: at + (inBin[c] as number) });
          at += inBin[c] as number;
        }
        P[0] = 3;
        await pass(hist, x, cand, bins, 2048);
        src = cand;
        over = segs;
        onPool =
          par !== undefined &&
          candidates >= cpuTuning(backend).parallelThreshold &&
          !belowParMin(backend, candidates, SELECT_PAR_MIN);
      } else {
        P[0] = r;
        await pass(hist, src, undefined, bins, 2048, over, onPool);
      }
      // The digit holding the wanted rank, and how many keys of each chunk fall before it and in it
      // (row by row: walking the digits across the chunks' rows took 0.11 ms a round at 32 chunks).
      totals.fill(0);
      for (let c = 0; c < C; c++) {
        const row = c * 2048;
        for (let q = 0; q < B; q++) totals[q] = (totals[q] as number) + (bins[row + q] as number);
      }
      let d = 0;
      while (rank >= (totals[d] as number)) rank -= totals[d++] as number;
      candidates = totals[d] as number;
      for (let c = 0; c < C; c++) {
        const row = c * 2048;
        let before = 0;
        for (let q = 0; q < d; q++) before += bins[row + q] as number;
        lt[c] = (lt[c] as number) + before;
        inBin[c] = bins[row + d] as number;
      }
      prefix = r === 0 ? d : (prefix << (r === 1 ? 11 : 10)) | d;
      if (r === 2) eq.set(inBin);
    }
    // Offsets: all chunks' keys before v, then all equal to it, then the rest, chunk by chunk.
    let totalLt = 0;
    let totalEq = 0;
    for (let c = 0; c < C; c++) {
      totalLt += lt[c] as number;
      totalEq += eq[c] as number;
    }
    let oLt = 0;
    let oEq = totalLt;
    let oGt = totalLt + totalEq;
    chunks.forEach((ch, c) => {
      offsets[3 * c] = oLt;
      offsets[3 * c + 1] = oEq;
      offsets[3 * c + 2] = oGt;
      oLt += lt[c] as number;
      oEq += eq[c] as number;
      oGt += ch.end - ch.begin - (lt[c] as number) - (eq[c] as number);
    });
    P[2] = prefix >>> 0;
    P[1] = totalEq * EQ_BRANCH < n || (n - totalEq) * EQ_BRANCH < n ? 1 : 0;
    // Into `dest` itself where the threads can write it (the calling thread alone, or shared).
    const into = dest === undefined ? undefined : bitsView(dest);
    const direct = into !== undefined && (!shared || isShared(into));
    const out = direct ? into : words(n);
    await pass(scatter, x, out, offsets, 1);
    if (direct) return;
    // Back into the data: on the pool where the data is shared (out is still in the cache: copying
    // the data out in round 0 instead, and partitioning from that copy into the data, took longer
    // than this pass, 2^22 u32: round 0 5.95 -> 8.5 ms against 0.7 ms here), else one copy here.
    if (into !== undefined) into.set(out);
    else if (x === bits) await pass(COPY_SOURCE, out, bits, offsets, 0);
    else bits.set(out);
  } finally {
    giveBack(...taken);
  }
}
