/**
 * The radix sort kernel of the CPU sorts (seq and par), generated as JS source per (key type, order,
 * pairs) and compiled once per thread (`compileOnce` here, `globalThis.__webdplCompile` in workers),
 * so the key transform is inlined into the loops that read and write keys and the hot loops stay
 * monomorphic.
 *
 * Keys are sorted as order-preserving u32 bits (see key-bits.ts) in three digits: top = bits 21..31,
 * mid = bits 10..20, low = bits 0..9. The sort is MSD first, then LSD inside each bucket:
 *
 *  1. 'hist': one read of the caller's keys (transformed on the fly) counts all three digits.
 *  2. The driver picks the highest digit that is not the same for every key (none: all keys are
 *     equal, nothing moves) and turns its counts into offsets.
 *  3. 'scatter': the caller's keys move, transformed, into scratch `a` by that digit (stable), values
 *     along: buckets of ~n/2048 keys that fit in cache when the top digit splits the keys evenly.
 *  4. 'buckets': each bucket is sorted by the digits below the level digit (LSD, at most 2 passes,
 *     skipping digits that are the same across the bucket) and written into `out` with the key
 *     transform undone on the way; buckets of <= 64 keys use an insertion sort. Buckets are
 *     independent: par workers claim them one at a time from a shared counter.
 *
 * So a sort of random u32 keys reads the input twice and scatters it once out of cache, then does two
 * scatters per bucket in cache; no separate pass converts keys to bits or back. Stable throughout.
 * The counting-sort scatters load 8 keys (and values) before placing them in order (`scatterLoop`).
 */
import type { NumericType } from '@webdpl/core';
import { compileOnce } from '@webdpl/policies';
import { warmedSource } from '../warm';

/** Digits: [shift, mask] of top, mid and low. */
export const DIGITS: readonly (readonly [number, number])[] = [
  [21, 0x7ff],
  [10, 0x7ff],
  [0, 0x3ff],
];

/** Histogram words per chunk in a 'hist' job (the three digits, 2048 words each). */
export const HIST_WORDS = 3 * 2048;

/** Buckets up to this many keys sort through thread-local buffers (they fit in L2). */
export const LOCAL_MAX = 1 << 16;

/** Buckets up to this many keys (above INSERTION_MAX) sort by LSD passes of 7-bit digits. */
export const SMALL_MAX = 1024;

/** Buckets up to this many keys use an insertion sort. */
export const INSERTION_MAX = 64;

/** One kernel call. Short names: par jobs are structured-cloned. */
export interface RadixJob {
  /** 0 hist, 1 scatter, 2 buckets. */
  readonly op: 0 | 1 | 2;
  /** The kernel source (workers compile it once; the calling thread passes its compiled kernel). */
  readonly s: string;
  /** hist, scatter: the input keys' raw bits and range [b, e). */
  readonly k?: Uint32Array;
  readonly v?: Uint32Array | undefined;
  readonly b?: number;
  readonly e?: number;
  /** hist: counts out (HIST_WORDS at `ho`); scatter: next offset per digit (2048 words at `ho`). */
  readonly h?: Int32Array;
  readonly ho?: number;
  /** scatter: the level digit's index into DIGITS. */
  readonly dg?: number;
  /** scatter: destination; buckets: source (key bits). */
  readonly a: Uint32Array;
  readonly va?: Uint32Array | undefined;
  /** buckets: destination (raw key bits) and values. */
  readonly o?: Uint32Array;
  readonly vo?: Uint32Array | undefined;
  /** buckets: bucket starts (2049 words) and the digits below the level digit (0, 1 or 2 of them). */
  readonly st?: Int32Array;
  readonly lv?: number;
  /** buckets: a shared claim counter (par); without it the job sorts every bucket. */
  readonly c?: Int32Array | undefined;
  /** buckets: the size above which a bucket takes the large-bucket path (LOCAL_MAX; less in the warm-up). */
  readonly lm?: number;
  /** buckets: the size up to which a bucket takes the small LSD path (SMALL_MAX; less in the warm-up). */
  readonly sm?: number;
}

/**
 * The kernel's parameters, in order: a job's fields but its source. The kernel takes them one by one
 * (`callRadix`), not the job object: par's jobs reach a worker structured-cloned, as objects of
 * another map than the calling thread's, and the kernel's reads of the job then deoptimized on a
 * 'wrong map' in the workers (`--trace-deopt`, radix-warm.test.ts).
 */
export const RADIX_ARGS = [
  'op',
  'k',
  'v',
  'b',
  'e',
  'h',
  'ho',
  'dg',
  'a',
  'va',
  'o',
  'vo',
  'st',
  'lv',
  'c',
  'lm',
  'sm',
] as const;

/** A compiled kernel (see RADIX_ARGS). */
export type RadixKernel = (...args: unknown[]) => number;

/** Calls `kernel` with the fields of `job` (RADIX_ARGS). */
export function callRadix(kernel: RadixKernel, j: RadixJob): number {
  return kernel(j.op, j.k, j.v, j.b, j.e, j.h, j.ho, j.dg, j.a, j.va, j.o, j.vo, j.st, j.lv, j.c, j.lm, j.sm);
}

// f32 keys: branch-free sign handling (negative: all bits flipped; positive: the sign bit set), so
// random signs cost no mispredictions; NaN (rare) is the one branch.
function keyExpr(type: NumericType, descending: boolean, x: string): string {
  if (type === 'u32') return descending ? `(~${x})` : x;
  if (type === 'i32') return `(${x} ^ ${descending ? '0x7fffffff' : '0x80000000'})`;
  const body = `(${x} ^ ((${x} >> 31) | 0x80000000))`;
  return `((${x} & 0x7fffffff) > 0x7f800000 ? -1 : ${descending ? `~${body}` : body})`;
}

function unkeyExpr(type: NumericType, descending: boolean, t: string): string {
  if (type === 'u32') return descending ? `(~${t})` : t;
  if (type === 'i32') return `(${t} ^ ${descending ? '0x7fffffff' : '0x80000000'})`;
  const u = descending ? `(~${t})` : t;
  return `(${t} === 0xffffffff ? 0x7fc00000 : ${u} ^ (~(${u} >> 31) | 0x80000000))`;
}

/** Keys per step of the unrolled counting-sort scatters (see `scatterLoop`). */
const SCATTER_UNROLL = 8;

/**
 * A counting-sort scatter over [b, e), unrolled: each step loads `SCATTER_UNROLL` keys (`load(i)`,
 * and values, `vload(i)`) before it places them one after another in order (`place(t, w)`: reads
 * and bumps a counter, stores the key t and value w), so the order and stability of the plain loop
 * are kept; a scalar loop does the tail. V8 does not move the loads of the next keys above the
 * stores through the counters and the destination (arrays that may alias), so the plain loop waits
 * on each; batched, an in-cache scatter (a bucket's LSD pass) ran 2.3x faster (2^16 keys by an
 * 11-bit digit, dev VM 2026-11-24: 0.25 -> 0.11 ms; docs/benchmarks/cpu-gather-2026-11-24.md).
 */
function scatterLoop(
  b: string,
  e: string,
  load: (i: string) => string,
  vload: ((i: string) => string) | undefined,
  place: (t: string, w: string) => string,
): string {
  const ks = Array.from({ length: SCATTER_UNROLL }, (_, k) => k);
  const at = (k: number) => (k === 0 ? 'i' : `i + ${k}`);
  const values = vload === undefined ? '' : `const ${ks.map((k) => `w${k} = ${vload(at(k))}`).join(', ')};`;
  return `{
        let i = ${b};
        for (const lim = ${e} - ${SCATTER_UNROLL - 1}; i < lim; i += ${SCATTER_UNROLL}) {
          const ${ks.map((k) => `t${k} = ${load(at(k))}`).join(', ')};
          ${values}
          ${ks.map((k) => `{ ${place(`t${k}`, `w${k}`)} }`).join('\n          ')}
        }
        for (; i < ${e}; i++) {
          const t0 = ${load('i')};
          ${vload === undefined ? '' : `const w0 = ${vload('i')};`}
          ${place('t0', 'w0')}
        }
      }`;
}

/**
 * The kernel source: a function expression `(job) => number` for keys of `type` in `descending` (or
 * ascending) order, moving values along when `pairs`.
 */
export function radixKernelSource(type: NumericType, descending: boolean, pairs: boolean): string {
  const KEY = (x: string) => keyExpr(type, descending, x);
  const UNKEY = (x: string) => unkeyExpr(type, descending, x);
  // Statements moving a value along (empty for keys alone).
  const V = (s: string) => (pairs ? s : '');
  // The level scatter of k[J_b, e) into a by the digit `digit` of the transformed key x.
  const LEVEL_SCATTER = (digit: (x: string) => string) =>
    scatterLoop(
      'J_b',
      'e',
      (i) => KEY(`k[${i}]`),
      pairs ? (i) => `v[${i}]` : undefined,
      (t, w) => `const d = o + ${digit(t)}; const p = h[d]; h[d] = p + 1; a[p] = ${t};${V(` va[p] = ${w};`)}`,
    );
  // src[b, e) -> out[b, e) with the transform undone (values along).
  const COPY = (src: string, vsrc: string, b: string, e: string) => `for (let i = ${b}; i < ${e}; i++) {
        const t = ${src}[i];
        out[i] = ${UNKEY('t')};
        ${V(`vo[i] = ${vsrc}[i];`)}
      }`;
  const UNKEY_IN_PLACE = (b: string, e: string) => `for (let i = ${b}; i < ${e}; i++) {
        const t = out[i];
        out[i] = ${UNKEY('t')};
      }`;
  // Stable insertion of src[b + 1, e) into out[b, e), whose out[b] is in place (src may be out).
  const INSERT = (src: string, vsrc: string, b: string, e: string) => `for (let i = ${b} + 1; i < ${e}; i++) {
        const x = ${src}[i];
        ${V(`const y = ${vsrc}[i];`)}
        let p = i;
        while (p > ${b} && out[p - 1] > x) {
          out[p] = out[p - 1];
          ${V('vo[p] = vo[p - 1];')}
          p--;
        }
        out[p] = x;
        ${V('vo[p] = y;')}
      }`;
  // A small bucket's LSD pass by (sh, mk) through hs: `store(t)` writes key t at p, values to vdst.
  const SMALL_PASS = (store: (t: string) => string, vdst: string) =>
    scatterLoop(
      '0',
      'm',
      (i) => `src[so + ${i}]`,
      pairs ? (i) => `vsrc[so + ${i}]` : undefined,
      (t, w) => `const d = (${t} >>> sh) & mk; const p = hs[d]; hs[d] = p + 1; ${store(t)}${V(` ${vdst}[p] = ${w};`)}`,
    );
  // Counts -> first positions from `base`.
  const SCAN = (h: string, size: number, base: string) => `{
      let s = ${base};
      for (let d = 0; d < ${size}; d++) {
        const c = ${h}[d];
        ${h}[d] = s;
        s += c;
      }
    }`;
  // A stable scatter of src[b, e) by the digit (sh, mk) through positions h into dst.
  const SCATTER = (
    src: string,
    vsrc: string,
    b: string,
    e: string,
    h: string,
    sh: string,
    mk: string,
    dst: string,
    vdst: string,
    unkey: boolean,
  ) =>
    scatterLoop(
      b,
      e,
      (i) => `${src}[${i}]`,
      pairs ? (i) => `${vsrc}[${i}]` : undefined,
      (t, w) =>
        `const d = ${sh === '0' ? `${t} & ${mk}` : `(${t} >>> ${sh}) & ${mk}`}; const p = ${h}[d]; ${h}[d] = p + 1; ` +
        `${dst}[p] = ${unkey ? UNKEY(t) : t};${V(` ${vdst}[p] = ${w};`)}`,
    );
  return `function radixKernel_${type}_${descending ? 'desc' : 'asc'}_${pairs ? 'pairs' : 'keys'}(${RADIX_ARGS.map((x) => `J_${x}`).join(', ')}) {
  'use strict';
  if (J_op === 0) {
    const k = J_k, h = J_h, o = J_ho, e = J_e;
    for (let i = J_b; i < e; i++) {
      const x = ${KEY('k[i]')};
      h[o + (x >>> 21)]++;
      h[o + 2048 + ((x >>> 10) & 0x7ff)]++;
      h[o + 4096 + (x & 0x3ff)]++;
    }
    return 0;
  }
  if (J_op === 1) {
    // One loop per level digit, so shifts and masks are literals (V8 then drops the counters' bounds
    // checks: ~1.5x faster than a variable shift here).
    const k = J_k, a = J_a, h = J_h, o = J_ho, e = J_e;
    const v = J_v, va = J_va;
    if (J_dg === 0) {
      ${LEVEL_SCATTER((x) => `(${x} >>> 21)`)}
    } else if (J_dg === 1) {
      ${LEVEL_SCATTER((x) => `((${x} >>> 10) & 0x7ff)`)}
    } else {
      ${LEVEL_SCATTER((x) => `(${x} & 0x3ff)`)}
    }
    return 0;
  }
  // op 2: sort buckets from J_a into J_o.
  const a = J_a, out = J_o, va = J_va, vo = J_vo, st = J_st, lv = J_lv, ctl = J_c, lm = J_lm, sm = J_sm;
  const g = globalThis;
  let loc = g.__webdplRadixLocal;
  if (loc === undefined) {
    loc = {
      k: new Uint32Array(8192),
      v: new Uint32Array(8192),
      k2: new Uint32Array(${SMALL_MAX}),
      v2: new Uint32Array(${SMALL_MAX}),
      hl: new Int32Array(1024),
      hm: new Int32Array(2049),
      hs: new Int32Array(128),
      sb: new Int32Array(2049),
    };
    g.__webdplRadixLocal = loc;
  }
  const hl = loc.hl, hm = loc.hm;
  let next = 0;
  for (;;) {
    const q = ctl !== undefined ? Atomics.add(ctl, 0, 1) : next++;
    if (q >= 2048) break;
    const b = st[q], e = st[q + 1], m = e - b;
    if (m === 0) continue;
    if (lv === 0 || m === 1) {
      ${COPY('a', 'va', 'b', 'e')}
      continue;
    }
    if (m <= ${INSERTION_MAX}) {
      // Insertion sort of the key bits into out (stable: strict comparison), then undo the transform.
      out[b] = a[b];
      ${V('vo[b] = va[b];')}
      ${INSERT('a', 'va', 'b', 'e')}
      ${UNKEY_IN_PLACE('b', 'e')}
      continue;
    }
    if (m <= sm) {
      // A small bucket: LSD passes of 7 bits (5 for the low digit alone) through two local buffers,
      // so the counters cleared and scanned per pass (128) stay below the bucket's size.
      const w = lv === 2 ? 7 : 5;
      const passes = lv === 2 ? 3 : 2;
      const mk = (1 << w) - 1;
      const hs = loc.hs;
      if (loc.k.length < m) loc.k = new Uint32Array(m);
      ${V('if (loc.v.length < m) loc.v = new Uint32Array(m);')}
      let src = a, dst = loc.k, so = b, last = false;
      ${V('let vsrc = va, vdst = loc.v;')}
      for (let pass = 0; pass < passes; pass++) {
        const sh = pass * w;
        last = pass === passes - 1;
        for (let d = 0; d <= mk; d++) hs[d] = 0;
        for (let i = 0; i < m; i++) hs[(src[so + i] >>> sh) & mk]++;
        if (hs[(src[so] >>> sh) & mk] === m) continue;
        if (last) {
          dst = out;
          ${V('vdst = vo;')}
        }
        let sum = last ? b : 0;
        for (let d = 0; d <= mk; d++) {
          const c = hs[d];
          hs[d] = sum;
          sum += c;
        }
        if (last) {
          ${SMALL_PASS((t) => `out[p] = ${UNKEY(t)};`, 'vo')}
        } else {
          ${SMALL_PASS((t) => `dst[p] = ${t};`, 'vdst')}
          src = dst;
          so = 0;
          dst = src === loc.k ? loc.k2 : loc.k;
          ${V('vsrc = vdst; vdst = vsrc === loc.v ? loc.v2 : loc.v;')}
        }
      }
      if (dst !== out) {
        // The last pass was skipped (its digit is the same across the bucket): copy out.
        for (let i = 0; i < m; i++) {
          const t = src[so + i];
          out[b + i] = ${UNKEY('t')};
          ${V('vo[b + i] = vsrc[so + i];')}
        }
      }
      continue;
    }
    hl.fill(0);
    if (lv === 2) {
      hm.fill(0);
      for (let i = b; i < e; i++) {
        const x = a[i];
        hl[x & 0x3ff]++;
        hm[(x >>> 10) & 0x7ff]++;
      }
    } else {
      for (let i = b; i < e; i++) hl[a[i] & 0x3ff]++;
    }
    const x0 = a[b];
    const useLow = hl[x0 & 0x3ff] !== m;
    const useMid = lv === 2 && hm[(x0 >>> 10) & 0x7ff] !== m;
    if (useLow) ${SCAN('hl', 1024, 'b')}
    if (useMid) ${SCAN('hm', 2048, 'b')}
    if (!useLow && !useMid) {
      ${COPY('a', 'va', 'b', 'e')}
    } else if (!useMid) {
      ${SCATTER('a', 'va', 'b', 'e', 'hl', '0', '0x3ff', 'out', 'vo', true)}
    } else if (!useLow) {
      ${SCATTER('a', 'va', 'b', 'e', 'hm', '10', '0x7ff', 'out', 'vo', true)}
    } else if (m <= lm) {
      // Two passes through thread-local buffers: a -> local (low digit), local -> out (mid digit).
      if (loc.k.length < m) loc.k = new Uint32Array(m);
      ${V('if (loc.v.length < m) loc.v = new Uint32Array(m);')}
      const lk = loc.k;
      ${V('const lvv = loc.v;')}
      for (let d = 0; d < 1024; d++) hl[d] -= b;
      ${SCATTER('a', 'va', 'b', 'e', 'hl', '0', '0x3ff', 'lk', 'lvv', false)}
      ${SCATTER('lk', 'lvv', '0', 'm', 'hm', '10', '0x7ff', 'out', 'vo', true)}
    } else {
      // A large bucket (skewed keys): MSD by the mid digit into out, then each part by the low digit
      // through the local buffers (in cache unless the mid digit is skewed too).
      const sb = loc.sb;
      for (let d = 0; d < 2048; d++) sb[d] = hm[d];
      sb[2048] = e;
      ${SCATTER('a', 'va', 'b', 'e', 'hm', '10', '0x7ff', 'out', 'vo', false)}
      for (let d = 0; d < 2048; d++) {
        const pb = sb[d], pe = sb[d + 1], pm = pe - pb;
        if (pm === 0) continue;
        if (pm <= ${INSERTION_MAX}) {
          if (pm > 1) {
            ${INSERT('out', 'vo', 'pb', 'pe')}
          }
          ${UNKEY_IN_PLACE('pb', 'pe')}
          continue;
        }
        if (loc.k.length < pm) loc.k = new Uint32Array(pm);
        ${V('if (loc.v.length < pm) loc.v = new Uint32Array(pm);')}
        const lk = loc.k;
        ${V('const lvv = loc.v;')}
        hl.fill(0);
        for (let i = pb; i < pe; i++) {
          const x = out[i];
          lk[i - pb] = x;
          ${V('lvv[i - pb] = vo[i];')}
          hl[x & 0x3ff]++;
        }
        if (hl[lk[0] & 0x3ff] === pm) {
          ${UNKEY_IN_PLACE('pb', 'pe')}
          continue;
        }
        ${SCAN('hl', 1024, 'pb')}
        ${SCATTER('lk', 'lvv', '0', 'pm', 'hl', '0', '0x3ff', 'out', 'vo', true)}
      }
    }
  }
  return 0;
}`;
}

/**
 * The warm-up of a radix kernel (bricks/warm.ts): whole sorts as radix-seq.ts runs them ('hist', the
 * level digit, 'scatter', 'buckets'), of key bits made to take every path: random keys (the top digit
 * splits them: buckets of 1 and up to INSERTION_MAX), four top digits (small LSD buckets, lv 2, with
 * a skipped first or last pass), four mid digits under one top digit (lv 1), two top digits with
 * buckets above `sm` (the two local passes, and each digit constant in turn), buckets above `lm`
 * (the large-bucket path, its parts of 1, <= INSERTION_MAX and more, one of constant low digit), and
 * one top and mid digit (lv 0: copies), each growing the thread's bucket buffers from 16 keys; the
 * random keys also with a claim counter (par's buckets); values along for `pairs`. `sm` and `lm`
 * (WARM_SM, WARM_LM) are lowered so that a few hundred keys reach every path. Without the warm-up,
 * `--trace-deopt` showed 4-8 "insufficient type feedback" bailouts of each radixKernel_* per bench
 * process (docs/benchmarks/cpu-seq-2026-11-24b.md).
 */
function warmCalls(pairs: boolean): string {
  return `const hash = (i) => { let x = Math.imul(i + 0x6b43a9b5, 0x9e3779b9); x ^= x >>> 15; return Math.imul(x, 0x85ebca6b) >>> 0; };
  // Buckets above ${WARM_SM} keys take the local passes and above ${WARM_LM} the large-bucket path
  // here (sm, lm), so the sorts stay small: with SMALL_MAX and LOCAL_MAX this warm-up took 20-28 ms.
  const sortBits = (n, bits, counter) => {
    const run = (o) => k(${RADIX_ARGS.map((x) => WARM_ARGS[x] ?? `o.${x}`).join(', ')});
    // The thread's bucket buffers shrunk, so this sort grows them (the growth code gets feedback).
    const loc = globalThis.__webdplRadixLocal;
    if (loc !== undefined) {
      loc.k = new Uint32Array(16);
      loc.v = new Uint32Array(16);
    }
    const key = new Uint32Array(n);
    for (let i = 0; i < n; i++) key[i] = bits(i);
    const v = ${pairs ? 'key.slice()' : 'undefined'};
    const h = new Int32Array(${HIST_WORDS});
    run({ op: 0, k: key, b: 0, e: n, h, a: key });
    let dg = -1;
    for (let g = 0; g < 3 && dg < 0; g++) {
      let used = 0;
      for (let d = 0; d < 2048 && used < 2; d++) if (h[g * 2048 + d] !== 0) used++;
      if (used > 1) dg = g;
    }
    if (dg < 0) return;
    const st = new Int32Array(2049);
    for (let d = 0, sum = 0; d < 2048; d++) { st[d] = sum; sum += h[dg * 2048 + d]; st[d + 1] = sum; }
    const a = new Uint32Array(n), va = ${pairs ? 'new Uint32Array(n)' : 'undefined'};
    run({ op: 1, k: key, v, b: 0, e: n, h: st.slice(), dg, a, va });
    // With a counter, buckets are claimed as par's workers claim them.
    run({ op: 2, a, va, o: key, vo: v, st, lv: 2 - dg, c: counter ? new Int32Array(1) : undefined });
  };
  const top = (t) => (t & 0x7ff) << 21, mid = (m) => (m & 0x7ff) << 10;
  sortBits(701, hash, true);
  sortBits(701, hash, false);
  sortBits(363, (i) => top(i & 3) | (hash(i) & 0x1fffff), false);
  sortBits(365, (i) => top(i & 3) | (hash(i) & 0x1fff80), false);
  sortBits(367, (i) => top(i & 3) | (hash(i) & 0x3fff), false);
  sortBits(369, (i) => top(5) | mid(i & 3) | (hash(i) & 0x3ff), false);
  sortBits(301, (i) => top(i & 1) | (hash(i) & 0x1fffff), false);
  sortBits(303, (i) => top(i & 1) | (hash(i) & 0x3ff), false);
  sortBits(305, (i) => top(i & 1) | (hash(i) & 0x1ffc00), false);
  sortBits(307, (i) => top(i & 1) | mid(7), false);
  sortBits(309, (i) => top(9) | mid(i & 1) | (hash(i) & 0x3ff), false);
  sortBits(501, (i) => top(i & 1) | (i % 3 === 0 ? mid(hash(i) % 200) | (hash(i) & 0x3ff) : i % 3 === 1 ? mid(900) | (hash(i) & 0x3ff) : mid(901) | 5), false);
  sortBits(303, (i) => top(3) | mid(3) | (hash(i) & 0x3ff), false);`;
}

/** The warm-up's bucket sizes of the small LSD path and of the local passes (see warmCalls). */
const WARM_SM = 100;
const WARM_LM = 200;

/** The warm-up's kernel arguments (RADIX_ARGS) that are not its job object's field (`o.<name>`). */
const WARM_ARGS: Partial<Record<(typeof RADIX_ARGS)[number], string>> = {
  b: 'o.b ?? 0',
  e: 'o.e ?? 0',
  ho: '0',
  dg: 'o.dg ?? 0',
  lv: 'o.lv ?? 0',
  lm: `${WARM_LM}`,
  sm: `${WARM_SM}`,
};

const sources = new Map<string, string>();

/** The kernel source for (type, order, pairs), warming itself where it is compiled, built once. */
export function radixSource(type: NumericType, descending: boolean, pairs: boolean): string {
  const key = `${type}|${descending}|${pairs}`;
  let s = sources.get(key);
  if (s === undefined) {
    s = warmedSource(radixKernelSource(type, descending, pairs), warmCalls(pairs), `/* webdpl radix ${key} */`);
    sources.set(key, s);
  }
  return s;
}

/**
 * A job with every field present, always in the same order, so every call hands the kernel objects
 * of one shape (differing shapes deoptimize it on a 'wrong map').
 */
export function radixJob(j: RadixJob): RadixJob {
  return {
    op: j.op,
    s: j.s,
    k: j.k,
    v: j.v,
    b: j.b ?? 0,
    e: j.e ?? 0,
    h: j.h,
    ho: j.ho ?? 0,
    dg: j.dg ?? 0,
    a: j.a,
    va: j.va,
    o: j.o,
    vo: j.vo,
    st: j.st,
    lv: j.lv ?? 0,
    c: j.c,
    lm: j.lm ?? LOCAL_MAX,
    sm: j.sm ?? SMALL_MAX,
  };
}

/** The compiled kernel on the calling thread, called with a job (`callRadix`). */
export function radixKernel(source: string): (job: RadixJob) => number {
  const kernel = compileOnce<RadixKernel>(source);
  return (job) => callRadix(kernel, job);
}

/** The pool task (self-contained: shipped to workers as source): runs the job's kernel (RADIX_ARGS). */
export const radixTask = function radixTask(j: RadixJob): number {
  const compile = (globalThis as unknown as { __webdplCompile: (s: string) => (...args: unknown[]) => number })
    .__webdplCompile;
  return compile(j.s)(j.op, j.k, j.v, j.b, j.e, j.h, j.ho, j.dg, j.a, j.va, j.o, j.vo, j.st, j.lv, j.c, j.lm, j.sm);
};

/** Jobs that threads claim one at a time through a shared counter (`radixClaimTask`). */
export interface RadixClaims {
  readonly jobs: readonly RadixJob[];
  /** [next job to claim] */
  readonly next: Int32Array;
}

/**
 * The pool task (and the calling thread's) of a par sort's hist and scatter steps: runs the jobs
 * it claims until none is left; returns how many it ran. Self-contained: shipped as source.
 */
export const radixClaimTask = function radixClaimTask(w: RadixClaims): number {
  const compile = (globalThis as unknown as { __webdplCompile: (s: string) => (...args: unknown[]) => number })
    .__webdplCompile;
  let ran = 0;
  for (;;) {
    const i = Atomics.add(w.next, 0, 1);
    if (i >= w.jobs.length) return ran;
    const j = w.jobs[i] as RadixJob;
    compile(j.s)(j.op, j.k, j.v, j.b, j.e, j.h, j.ho, j.dg, j.a, j.va, j.o, j.vo, j.st, j.lv, j.c, j.lm, j.sm);
    ran++;
  }
};

/**
 * The level digit (index into DIGITS) from the global counts of the three digits (`total(digit, d)`),
 * or -1 when every key has the same bits (nothing to sort).
 */
export function levelDigit(n: number, total: (digit: number, d: number) => number): number {
  for (let dg = 0; dg < 3; dg++) {
    const size = dg === 2 ? 1024 : 2048;
    let constant = false;
    for (let d = 0; d < size; d++) {
      const c = total(dg, d);
      if (c === n) constant = true;
      if (c !== 0) break;
    }
    if (!constant) return dg;
  }
  return -1;
}
