/**
 * The browser suite's table: one entry per algorithm family exported by @webdpl/algorithms, each
 * run at every size of SIZES under every policy of POLICIES and checked against a plain JS loop.
 * Runs in the page (bundled by esbuild with the packages' browser entries); the Node side
 * (browser.test.ts) only asks for (family, policy) pairs and reports what failed.
 *
 * A new algorithm gets a row here: `covers` lists the exports it exercises, and a test in Node
 * (browser.test.ts) fails while an export of @webdpl/algorithms is in no row's `covers`.
 */
import {
  adjacentDifference,
  adjacentFind,
  allOf,
  anyOf,
  binarySearch,
  copy,
  copyIf,
  count,
  countIf,
  counting,
  equal,
  exclusiveScan,
  exclusiveScanByKey,
  fill,
  findIf,
  forEach,
  gather,
  gatherIf,
  generate,
  greater,
  histogram,
  inclusiveScan,
  inclusiveScanByKey,
  innerProduct,
  iota,
  isPartitioned,
  isSorted,
  isSortedUntil,
  keyEqual,
  less,
  lowerBound,
  maxElement,
  merge,
  mergeByKey,
  minElement,
  minmaxElement,
  mismatch,
  noneOf,
  nthElement,
  partialSort,
  partition,
  reduce,
  reduceByKey,
  removeIf,
  replace,
  replaceIf,
  reverse,
  rotate,
  scatter,
  scatterIf,
  setDifference,
  setIntersection,
  setSymmetricDifference,
  setUnion,
  sort,
  sortByKey,
  stablePartition,
  stableSort,
  topK,
  transform,
  transformExclusiveScan,
  transformIf,
  transformInclusiveScan,
  transformReduce,
  unique,
  uniqueByKey,
  upperBound,
  zip,
} from '@webdpl/algorithms';
import { DeviceArray, type GpuDevice, maximum, multiplies, plus } from '@webdpl/core';
import { allocShared, execution, isShared, type Policy } from '@webdpl/policies';

/** Sizes every family runs at: empty, tiny, around the engines' tiles (map/reduce 2048, compaction 4096, scan 6144), a few thousand, ~1e5. */
export const SIZES: readonly number[] = [0, 1, 2, 3, 17, 1000, 2047, 2048, 2049, 4097, 6143, 6145, 20_000, 100_003];

/**
 * The policies of the table: names the Node side passes in. `device-tiny` is the GPU with the
 * tests' tiny tiles (testing/matrix.ts), so multi-tile passes, look-back and segments run at the
 * suite's sizes on the browser's compiler stack too.
 */
export const POLICIES = ['seq', 'par', 'device', 'device-tiny', 'auto'] as const;
export type PolicyName = (typeof POLICIES)[number];

export interface CaseContext {
  readonly policy: Policy;
  readonly name: PolicyName;
  /** The GPU the device policy runs on (for DeviceArray cases). */
  readonly gpu: GpuDevice;
}

export interface Family {
  readonly name: string;
  /** Exports of @webdpl/algorithms this row exercises. */
  readonly covers: readonly string[];
  /** Runs the family at `n` elements; throws with a message on a wrong answer. */
  run(ctx: CaseContext, n: number): Promise<void>;
}

// ---- data and checks ----

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** u32 values below `range`, seeded by n so every policy sees the same data. */
function u32(n: number, range = 1000, seed = 1): Uint32Array {
  const r = rng(n * 7919 + seed);
  return Uint32Array.from({ length: n }, () => Math.floor(r() * range));
}

function i32(n: number, seed = 2): Int32Array {
  const r = rng(n * 7919 + seed);
  return Int32Array.from({ length: n }, () => Math.floor(r() * 2000) - 1000);
}

function f32(n: number, seed = 3): Float32Array {
  const r = rng(n * 7919 + seed);
  return Float32Array.from({ length: n }, () => Math.fround((r() - 0.5) * 1000));
}

function fail(what: string, got: unknown, want: unknown): never {
  throw new Error(`${what}: got ${String(got)}, want ${String(want)}`);
}

function eq(what: string, got: unknown, want: unknown): void {
  if (!Object.is(got, want)) fail(what, got, want);
}

function near(what: string, got: number, want: number, rel = 1e-5): void {
  if (!(Math.abs(got - want) <= rel * Math.max(1, Math.abs(want)))) fail(what, got, want);
}

/** Equal element by element (Object.is: -0 and NaN exact), naming the first difference. */
function same(what: string, got: ArrayLike<number>, want: ArrayLike<number>, length = want.length): void {
  if (got.length < length) fail(`${what} length`, got.length, length);
  for (let i = 0; i < length; i++) {
    if (!Object.is(got[i], want[i])) fail(`${what}[${i}]`, got[i], want[i]);
  }
}

/** Calls `f` on a copy of `input` and checks the original copy was not written. */
async function readOnly<A extends Uint32Array | Int32Array | Float32Array, R>(
  input: A,
  f: (a: A) => Promise<R>,
): Promise<R> {
  const before = input.slice() as A;
  const r = await f(input);
  same('input after the call', input, before);
  return r;
}

function totalOrder(a: number, b: number): number {
  if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : 1;
  if (Number.isNaN(b)) return -1;
  if (a === b) return Object.is(a, -0) && Object.is(b, 0) ? -1 : Object.is(a, 0) && Object.is(b, -0) ? 1 : 0;
  return a < b ? -1 : 1;
}

// ---- the table ----

export const FAMILIES: readonly Family[] = [
  {
    name: 'reduce',
    covers: ['reduce'],
    async run({ policy }, n) {
      const a = u32(n);
      let s = 0;
      for (const x of a) s = (s + x) >>> 0;
      eq('reduce u32', await readOnly(a, (x) => reduce(policy, x)), s);
      const b = i32(n);
      let t = 5;
      for (const x of b) t = (t + x) | 0;
      eq('reduce i32 init 5', await reduce(policy, b, 5), t);
      const c = f32(n);
      let m = Number.NEGATIVE_INFINITY;
      for (const x of c) m = Math.max(m, x);
      eq('reduce f32 maximum', await reduce(policy, c, Number.NEGATIVE_INFINITY, maximum), m);
    },
  },
  {
    name: 'transformReduce and innerProduct',
    covers: ['transformReduce', 'innerProduct'],
    async run({ policy }, n) {
      const a = u32(n, 100);
      const b = u32(n, 100, 9);
      let s = 3;
      let p = 0;
      for (let i = 0; i < n; i++) {
        s = (s + a[i] * 2 + 1) >>> 0;
        p = (p + a[i] * b[i]) >>> 0;
      }
      eq('transformReduce', await transformReduce(policy, a, 3, plus, (x: number) => x * 2 + 1), s);
      eq('transformReduce binary', await transformReduce(policy, a, b, 0, plus, (x: number, y: number) => x * y), p);
      eq('innerProduct', await innerProduct(policy, a, b), p);
      const f = f32(n);
      let q = 0;
      for (const x of f) q += x * x;
      near('innerProduct f32', await innerProduct(policy, f, f), q, 1e-4);
    },
  },
  {
    name: 'count, countIf, anyOf, allOf, noneOf, findIf',
    covers: ['count', 'countIf', 'anyOf', 'allOf', 'noneOf', 'findIf'],
    async run({ policy }, n) {
      const a = u32(n, 50);
      const is7 = (x: number) => x === 7;
      eq('count', await count(policy, a, 7), a.filter(is7).length);
      eq('countIf', await countIf(policy, a, (x: number) => x % 3 === 0), a.filter((x) => x % 3 === 0).length);
      eq('anyOf', await anyOf(policy, a, (x: number) => x === 7), a.some(is7));
      eq(
        'allOf',
        await allOf(policy, a, (x: number) => x < 49),
        a.every((x) => x < 49),
      );
      eq('noneOf', await noneOf(policy, a, (x: number) => x === 7), !a.some(is7));
      eq('findIf', await findIf(policy, a, (x: number) => x === 7), a.findIndex(is7));
      // the last element only: the whole input is searched
      const b = new Uint32Array(n);
      if (n > 0) b[n - 1] = 1;
      eq('findIf last', await findIf(policy, b, (x: number) => x === 1), n - 1);
    },
  },
  {
    name: 'minElement, maxElement, minmaxElement',
    covers: ['minElement', 'maxElement', 'minmaxElement'],
    async run({ policy }, n) {
      const a = f32(n);
      let lo = -1;
      let hi = -1;
      for (let i = 0; i < n; i++) {
        if (lo < 0 || totalOrder(a[i], a[lo]) < 0) lo = i;
        if (hi < 0 || totalOrder(a[i], a[hi]) > 0) hi = i;
      }
      const min = await readOnly(a, (x) => minElement(policy, x));
      eq('minElement index', min.index, lo);
      eq('minElement value', min.value, lo < 0 ? undefined : a[lo]);
      eq('maxElement index', (await maxElement(policy, a)).index, hi);
      const mm = await minmaxElement(policy, u32(n, 10));
      const b = u32(n, 10);
      let bl = -1;
      let bh = -1;
      for (let i = 0; i < n; i++) {
        if (bl < 0 || b[i] < b[bl]) bl = i;
        if (bh < 0 || b[i] > b[bh]) bh = i;
      }
      eq('minmaxElement min index (first least)', mm.min.index, bl);
      eq('minmaxElement max index (first greatest)', mm.max.index, bh);
    },
  },
  {
    name: 'isSorted, isSortedUntil',
    covers: ['isSorted', 'isSortedUntil'],
    async run({ policy }, n) {
      const a = u32(n).sort();
      eq('isSorted sorted', await isSorted(policy, a), true);
      const at = n >> 1;
      if (n > 1) a[at] = a[at - 1] + 1;
      let until = n;
      for (let i = 1; i < n; i++) {
        if (a[i] < a[i - 1]) {
          until = i;
          break;
        }
      }
      eq('isSortedUntil', await isSortedUntil(policy, a), until);
      eq('isSorted greater', await isSorted(policy, a.slice().reverse(), greater), until === n);
    },
  },
  {
    name: 'lowerBound, upperBound, binarySearch',
    covers: ['lowerBound', 'upperBound', 'binarySearch'],
    async run({ policy }, n) {
      const sorted = u32(n, 400).sort();
      const queries = u32(257, 420, 5);
      const lb = (q: number) => {
        let i = 0;
        while (i < n && sorted[i] < q) i++;
        return i;
      };
      const ub = (q: number) => {
        let i = 0;
        while (i < n && sorted[i] <= q) i++;
        return i;
      };
      same('lowerBound', await lowerBound(policy, sorted, queries), Array.from(queries, lb));
      same('upperBound', await upperBound(policy, sorted, queries), Array.from(queries, ub));
      same(
        'binarySearch',
        await binarySearch(policy, sorted, queries),
        Array.from(queries, (q) => (sorted.includes(q) ? 1 : 0)),
      );
    },
  },
  {
    name: 'scans',
    covers: ['inclusiveScan', 'exclusiveScan', 'transformInclusiveScan', 'transformExclusiveScan'],
    async run({ policy }, n) {
      const a = u32(n);
      const inc = new Uint32Array(n);
      const exc = new Uint32Array(n);
      const tinc = new Uint32Array(n);
      const texc = new Uint32Array(n);
      let s = 0;
      let e = 7;
      let t = 0;
      let u = 1;
      for (let i = 0; i < n; i++) {
        s = (s + a[i]) >>> 0;
        inc[i] = s;
        exc[i] = e;
        e = (e + a[i]) >>> 0;
        t = (t + a[i] * 3) >>> 0;
        tinc[i] = t;
        texc[i] = u;
        u = Math.imul(u, (a[i] % 3) + 1) >>> 0;
      }
      same('inclusiveScan', await readOnly(a, (x) => inclusiveScan(policy, x, new Uint32Array(n))), inc);
      same('exclusiveScan init 7', await exclusiveScan(policy, a, new Uint32Array(n), 7), exc);
      same(
        'transformInclusiveScan',
        await transformInclusiveScan(policy, a, new Uint32Array(n), plus, (x: number) => x * 3),
        tinc,
      );
      const texcGot = await transformExclusiveScan(
        policy,
        a,
        new Uint32Array(n),
        1,
        multiplies,
        (x: number) => (x % 3) + 1,
      );
      same('transformExclusiveScan multiplies', texcGot, texc);
      const inPlace = a.slice();
      await inclusiveScan(policy, inPlace, inPlace);
      same('inclusiveScan in place', inPlace, inc);
    },
  },
  {
    name: 'compaction',
    covers: ['copyIf', 'removeIf', 'partition', 'stablePartition', 'unique'],
    async run({ policy }, n) {
      const a = u32(n, 10);
      const even = (x: number) => x % 2 === 0;
      const kept = a.filter(even);
      const out = new Uint32Array(n);
      eq('copyIf count', await readOnly(a, (x) => copyIf(policy, x, out, (v: number) => v % 2 === 0)), kept.length);
      same('copyIf', out, kept);
      const stencil = u32(n, 3, 8);
      const byStencil = a.filter((_, i) => stencil[i] === 1);
      const so = new Uint32Array(n);
      eq('copyIf stencil count', await copyIf(policy, a, stencil, so, (v: number) => v === 1), byStencil.length);
      same('copyIf stencil', so, byStencil);
      const notByStencil = a.filter((_, i) => stencil[i] === 0);
      const ro = new Uint32Array(n);
      eq('removeIf stencil count', await removeIf(policy, a, stencil, ro), notByStencil.length);
      same('removeIf stencil (truthiness)', ro, notByStencil);
      const r = a.slice();
      const odd = a.filter((x) => !even(x));
      eq('removeIf length', await removeIf(policy, r, (v: number) => v % 2 === 0), odd.length);
      same('removeIf', r, odd);
      const sp = a.slice();
      eq('stablePartition count', await stablePartition(policy, sp, (v: number) => v % 2 === 0), kept.length);
      same('stablePartition', sp, [...kept, ...odd]);
      const p = a.slice();
      const k = await partition(policy, p, (v: number) => v % 2 === 0);
      eq('partition count', k, kept.length);
      for (let i = 0; i < n; i++)
        if (even(p[i]) !== i < k) fail(`partition[${i}] on the wrong side`, p[i], i < k ? 'even' : 'odd');
      same('partition is a permutation', p.slice().sort(), a.slice().sort());
      const d = u32(n, 3);
      const want = d.filter((x, i) => i === 0 || x !== d[i - 1]);
      eq('unique length', await unique(policy, d), want.length);
      same('unique', d, want);
    },
  },
  {
    name: 'maps: transform, forEach, copy, fill, iota, adjacentDifference',
    covers: ['transform', 'forEach', 'copy', 'fill', 'iota', 'adjacentDifference', 'minus'],
    async run({ policy }, n) {
      const a = f32(n);
      const out = new Float32Array(n);
      await readOnly(a, (x) => transform(policy, x, out, (v: number) => v * 2 + 1));
      same(
        'transform',
        out,
        Float32Array.from(a, (v) => v * 2 + 1),
      );
      const b = u32(n);
      const c = u32(n, 1000, 4);
      const sum = new Uint32Array(n);
      await transform(policy, b, c, sum, (x: number, y: number) => x + y);
      same(
        'transform binary',
        sum,
        Uint32Array.from(b, (x, i) => x + c[i]),
      );
      const e = b.slice();
      await forEach(policy, e, (x: number) => x * 3);
      same(
        'forEach',
        e,
        Uint32Array.from(b, (x) => x * 3),
      );
      const cp = new Uint32Array(n);
      await copy(policy, b, cp);
      same('copy', cp, b);
      const fl = new Int32Array(n);
      await fill(policy, fl, -4);
      same('fill', fl, new Int32Array(n).fill(-4));
      const io = new Uint32Array(n);
      await iota(policy, io, 10);
      same(
        'iota',
        io,
        Uint32Array.from({ length: n }, (_, i) => i + 10),
      );
      const ad = new Int32Array(n);
      const src = i32(n);
      await adjacentDifference(policy, src, ad);
      same(
        'adjacentDifference',
        ad,
        Int32Array.from(src, (x, i) => (i === 0 ? x : x - src[i - 1])),
      );
    },
  },
  {
    name: 'gather, scatter',
    covers: ['gather', 'gatherIf', 'scatter', 'scatterIf'],
    async run({ policy }, n) {
      const input = f32(n);
      const r = rng(n + 11);
      const map = Uint32Array.from({ length: n }, () => Math.floor(r() * n));
      const out = new Float32Array(n);
      await readOnly(input, (x) => gather(policy, map, x, out));
      same(
        'gather',
        out,
        Float32Array.from(map, (m) => input[m]),
      );
      const stencil = u32(n, 2, 6);
      const gi = new Float32Array(n).fill(-1);
      await gatherIf(policy, map, stencil, input, gi);
      same(
        'gatherIf',
        gi,
        Float32Array.from(map, (m, i) => (stencil[i] ? input[m] : -1)),
      );
      // a permutation: every output element written once
      const perm = Uint32Array.from({ length: n }, (_, i) => i);
      for (let i = n - 1; i > 0; i--) {
        const j = Math.floor(r() * (i + 1));
        [perm[i], perm[j]] = [perm[j], perm[i]];
      }
      const sc = new Float32Array(n);
      await scatter(policy, input, perm, sc);
      const want = new Float32Array(n);
      for (let i = 0; i < n; i++) want[perm[i]] = input[i];
      same('scatter', sc, want);
      const si = new Float32Array(n).fill(-1);
      await scatterIf(policy, input, perm, stencil, si, (x: number) => x === 0);
      const wantIf = new Float32Array(n).fill(-1);
      for (let i = 0; i < n; i++) if (stencil[i] === 0) wantIf[perm[i]] = input[i];
      same('scatterIf', si, wantIf);
    },
  },
  {
    name: 'equal, mismatch, adjacentFind, isPartitioned',
    covers: ['equal', 'mismatch', 'adjacentFind', 'isPartitioned'],
    async run({ policy }, n) {
      const a = u32(n);
      const b = a.slice();
      const at = Math.floor(n * 0.7);
      if (n > 0) b[at] += 1;
      eq('equal (same)', await readOnly(a, (x) => equal(policy, x, a.slice())), true);
      eq('equal (one differs)', await equal(policy, a, b), n === 0);
      eq('equal (lengths differ)', await equal(policy, a, a.subarray(0, n >> 1)), n === 0 || n >> 1 === n);
      eq('mismatch', await mismatch(policy, a, b), n === 0 ? 0 : at);
      eq('mismatch (prefix)', await mismatch(policy, a, a.subarray(0, n >> 1)), n >> 1);
      const c = Uint32Array.from({ length: n }, (_, i) => i * 2);
      const k = Math.floor(n * 0.6);
      if (n >= 2 && k + 1 < n) c[k + 1] = c[k];
      let want = -1;
      for (let i = 0; i + 1 < n; i++) {
        if (c[i] === c[i + 1]) {
          want = i;
          break;
        }
      }
      eq('adjacentFind', await adjacentFind(policy, c), want);
      const odd = (x: number) => x % 2 === 1;
      const parted = Uint32Array.from([...a.filter(odd), ...a.filter((x) => !odd(x))]);
      eq('isPartitioned (partitioned)', await isPartitioned(policy, parted, (x: number) => x % 2 === 1), true);
      let isPart = true;
      for (let i = 1; i < n; i++) if (!odd(a[i - 1]) && odd(a[i])) isPart = false;
      eq('isPartitioned (random)', await isPartitioned(policy, a, (x: number) => x % 2 === 1), isPart);
    },
  },
  {
    name: 'replace, replaceIf, generate, reverse, rotate',
    covers: ['replace', 'replaceIf', 'generate', 'reverse', 'rotate'],
    async run({ policy }, n) {
      const a = u32(n, 10);
      const r = a.slice();
      await replace(policy, r, 7, 99);
      same(
        'replace in place',
        r,
        Uint32Array.from(a, (x) => (x === 7 ? 99 : x)),
      );
      const ri = new Uint32Array(n);
      await readOnly(a, (x) => replaceIf(policy, x, (v: number) => v % 2 === 0, 1, ri));
      same(
        'replaceIf into output',
        ri,
        Uint32Array.from(a, (x) => (x % 2 === 0 ? 1 : x)),
      );
      const g = new Float32Array(n);
      await generate(policy, g, (i: number) => i * 0.5 - 3);
      same(
        'generate f32',
        g,
        Float32Array.from({ length: n }, (_, i) => i * 0.5 - 3),
      );
      const gi = new Int32Array(n);
      await generate(policy, gi, (i: number) => -i);
      same(
        'generate i32',
        gi,
        Int32Array.from({ length: n }, (_, i) => -i),
      );
      const f = f32(n);
      const rv = f.slice();
      await reverse(policy, rv);
      same('reverse in place', rv, f.slice().reverse());
      const ro = new Float32Array(n);
      await readOnly(f, (x) => reverse(policy, x, ro));
      same('reverse into output', ro, f.slice().reverse());
      const m = Math.floor(n / 3);
      const rt = a.slice();
      eq('rotate returns', await rotate(policy, rt, m), n - m);
      same('rotate in place', rt, [...a.subarray(m), ...a.subarray(0, m)]);
    },
  },
  {
    name: 'transformIf',
    covers: ['transformIf'],
    async run({ policy, name, gpu }, n) {
      const a = u32(n, 10);
      const keep = (x: number) => x % 3 === 0;
      // Written only where pred holds: the rest keeps its (odd) values.
      const o = Uint32Array.from({ length: n }, (_, i) => 2 * i + 1);
      await readOnly(a, (x) => transformIf(policy, x, o, (v: number) => v * 7 + 2, keep));
      same(
        'transformIf into output',
        o,
        Uint32Array.from(a, (x, i) => (keep(x) ? x * 7 + 2 : 2 * i + 1)),
      );
      const f = f32(n);
      const st = i32(n);
      const fo = Float32Array.from({ length: n }, (_, i) => -i);
      await transformIf(policy, f, st, fo, (v: number, i: number) => v * 2 + i);
      same(
        'transformIf with a stencil and an index lambda',
        fo,
        Float32Array.from(f, (v, i) => (st[i] !== 0 ? Math.fround(Math.fround(v * 2) + i) : -i)),
      );
      const ip = f.slice();
      await transformIf(
        policy,
        ip,
        ip,
        (v: number) => v > 0,
        (v: number) => v < 100,
      );
      same(
        'transformIf in place, bool result',
        ip,
        Float32Array.from(f, (v) => (v < 100 ? (v > 0 ? 1 : 0) : v)),
      );
      const b = u32(n, 10, 5);
      const zo = Uint32Array.from({ length: n }, (_, i) => i);
      await transformIf(
        policy,
        zip(a, b),
        zo,
        (x: number, y: number) => x * 10 + y,
        (x: number, y: number) => x < y,
      );
      same(
        'transformIf over a zip',
        zo,
        Uint32Array.from(a, (x, i) => (x < (b[i] as number) ? x * 10 + (b[i] as number) : i)),
      );
      if (name === 'seq' || name === 'par') return; // DeviceArrays pin calls to their GPU
      const d = DeviceArray.from(gpu, a);
      const padded = DeviceArray.from(gpu, new Uint32Array(n + 2).fill(5));
      try {
        await transformIf(
          policy,
          d,
          counting(n),
          padded.view(1, n),
          (v: number) => v + 1,
          (i: number) => i % 2 === 0,
        );
        const want = new Uint32Array(n + 2).fill(5);
        for (let i = 0; i < n; i += 2) want[i + 1] = (a[i] as number) + 1;
        same('transformIf on DeviceArrays, a counting stencil', await padded.read(), want);
      } finally {
        d.destroy();
        padded.destroy();
      }
    },
  },
  {
    name: 'histogram',
    covers: ['histogram'],
    async run({ policy }, n) {
      const a = u32(n, 1000);
      const even = new Uint32Array(10);
      for (const x of a) even[Math.floor(x / 100)]++;
      same('histogram even bins', await readOnly(a, (x) => histogram(policy, x, { bins: 10, lo: 0, hi: 1000 })), even);
      const boundaries = [0, 10, 100, 500, 999];
      const counts = new Uint32Array(4);
      for (const x of a) {
        for (let b = 0; b < 4; b++) if (x >= boundaries[b] && x < boundaries[b + 1]) counts[b]++;
      }
      const out = new Uint32Array(4).fill(7);
      await histogram(policy, a, { boundaries }, out);
      same('histogram boundaries into output', out, counts);
    },
  },
  {
    name: 'index lambdas and counting',
    covers: ['counting'],
    async run({ policy }, n) {
      const a = u32(n);
      const out = new Uint32Array(n);
      await transform(policy, a, out, (x: number, i: number) => x + i);
      same(
        'transform (x, i)',
        out,
        Uint32Array.from(a, (x, i) => x + i),
      );
      const sq = new Uint32Array(n);
      await transform(policy, counting(n), sq, (i: number) => i * i);
      same(
        'transform counting(n)',
        sq,
        Uint32Array.from({ length: n }, (_, i) => Math.imul(i, i) >>> 0),
      );
      // counting(n) as a stencil: the predicate gets the index.
      const kept = new Uint32Array(n);
      const k = await copyIf(policy, a, counting(n), kept, (i: number) => i % 3 === 0);
      same(
        'copyIf with a counting(n) stencil',
        kept.subarray(0, k),
        a.filter((_, i) => i % 3 === 0),
      );
    },
  },
  {
    name: 'zip: transform, tuple transformReduce, copyIf, sortByKey, lexicographic sort, stablePartition, unique',
    covers: ['zip'],
    async run({ policy }, n) {
      const x = f32(n);
      const y = u32(n);
      const z = i32(n);
      const out = new Float32Array(n);
      await transform(policy, zip(x, y, z), out, (a: number, b: number, c: number) => a + b * c);
      same(
        'transform zip(x, y, z)',
        out,
        Float32Array.from(x, (a, i) => a + Math.fround(Math.imul(y[i] as number, z[i] as number))),
      );
      const o1 = new Uint32Array(n);
      const o2 = new Float32Array(n);
      await transform(policy, zip(x, y), zip(o1, o2), (a: number, b: number, i: number) => [b + i, a * 2]);
      same(
        'zip output [0]',
        o1,
        Uint32Array.from(y, (b, i) => b + i),
      );
      same(
        'zip output [1]',
        o2,
        Float32Array.from(x, (a) => a * 2),
      );
      const box = [Infinity, -Infinity, 0, 0];
      for (let i = 0; i < n; i++) {
        box[0] = Math.min(box[0] as number, x[i] as number);
        box[1] = Math.max(box[1] as number, x[i] as number);
        box[2] = Math.max(box[2] as number, y[i] as number);
        box[3] = ((box[3] as number) + (z[i] as number)) | 0;
      }
      const got = await transformReduce(
        policy,
        zip(x, y, z),
        [Infinity, -Infinity, 0, 0],
        (a: number[], b: number[]) => [
          Math.min(a[0] as number, b[0] as number),
          Math.max(a[1] as number, b[1] as number),
          Math.max(a[2] as number, b[2] as number),
          (a[3] as number) + (b[3] as number),
        ],
        (a: number, b: number, c: number) => [a, a, b, c],
      );
      same('transformReduce zip bounding box', got, box);
      const ox = new Float32Array(n);
      const oy = new Uint32Array(n);
      const keep = (i: number) => (y[i] as number) % 3 === 0;
      const count = await copyIf(policy, zip(x, y), zip(ox, oy), (_a: number, b: number) => b % 3 === 0);
      eq('copyIf zip count', count, y.filter((_, i) => keep(i)).length);
      same(
        'copyIf zip [0]',
        ox.subarray(0, count),
        x.filter((_, i) => keep(i)),
      );
      same(
        'copyIf zip [1]',
        oy.subarray(0, count),
        y.filter((_, i) => keep(i)),
      );
      const keys = u32(n, 50, 9);
      const ord = Array.from(keys.keys()).sort((i, j) => (keys[i] as number) - (keys[j] as number) || i - j);
      const [sx, sy] = [x.slice(), y.slice()];
      await sortByKey(policy, keys, zip(sx, sy));
      same(
        'sortByKey zip values [0]',
        sx,
        Float32Array.from(ord, (i) => x[i] as number),
      );
      same(
        'sortByKey zip values [1]',
        sy,
        Uint32Array.from(ord, (i) => y[i] as number),
      );
      // A lexicographic sort over zipped keys (few distinct first keys: the second decides ties).
      const k0 = u32(n, 4, 21);
      const k1 = u32(n, 50, 22);
      const lex = Array.from(k0.keys()).sort(
        (i, j) => (k0[i] as number) - (k0[j] as number) || (k1[i] as number) - (k1[j] as number) || i - j,
      );
      const [l0, l1] = [k0.slice(), k1.slice()];
      await sort(policy, zip(l0, l1));
      same(
        'sort zip keys [0]',
        l0,
        Uint32Array.from(lex, (i) => k0[i] as number),
      );
      same(
        'sort zip keys [1]',
        l1,
        Uint32Array.from(lex, (i) => k1[i] as number),
      );
      // stablePartition and unique over a zip: every array moves together.
      const [p0, p1] = [k0.slice(), k1.slice()];
      const first = (i: number) => (k0[i] as number) < 2;
      const split = await stablePartition(policy, zip(p0, p1), (a: number, _b: number) => a < 2);
      const order = [...Array.from(k0.keys()).filter(first), ...Array.from(k0.keys()).filter((i) => !first(i))];
      eq('stablePartition zip count', split, Array.from(k0.keys()).filter(first).length);
      same(
        'stablePartition zip [1]',
        p1,
        Uint32Array.from(order, (i) => k1[i] as number),
      );
      const [u0, u1] = [l0.slice(), Uint32Array.from(l1, (v) => v >> 4)];
      const runs = Array.from(u0.keys()).filter((i) => i === 0 || u0[i] !== u0[i - 1] || u1[i] !== u1[i - 1]);
      const m = await unique(policy, zip(u0, u1));
      eq('unique zip count', m, runs.length);
      same(
        'unique zip [1]',
        u1.subarray(0, m),
        Uint32Array.from(runs, (i) => (l1[i] as number) >> 4),
      );
    },
  },
  {
    name: 'merge, mergeByKey',
    covers: ['merge', 'mergeByKey'],
    async run({ policy }, n) {
      const a = u32(n, 500).sort();
      const b = u32(n >> 1, 500, 12).sort();
      const out = new Uint32Array(a.length + b.length);
      await readOnly(a, (x) => merge(policy, x, b, out));
      same('merge', out, Uint32Array.from([...a, ...b]).sort());
      // stable: on equal keys a's elements first, each range in its order
      const va = Uint32Array.from(a, (_, i) => i);
      const vb = Uint32Array.from(b, (_, j) => 1_000_000 + j);
      const ko = new Uint32Array(out.length);
      const vo = new Uint32Array(out.length);
      await mergeByKey(policy, a, b, va, vb, ko, vo);
      const want: number[] = [];
      let i = 0;
      let j = 0;
      while (i < a.length || j < b.length) {
        if (j >= b.length || (i < a.length && a[i] <= b[j])) want.push(va[i++]);
        else want.push(vb[j++]);
      }
      same('mergeByKey keys', ko, out);
      same('mergeByKey values (stable)', vo, want);
    },
  },
  {
    name: 'nthElement, partialSort, topK',
    covers: ['nthElement', 'partialSort', 'topK'],
    async run({ policy }, n) {
      const a = u32(n, 500, 5);
      const sorted = a.slice().sort();
      if (n > 0) {
        const k = n >> 1;
        const d = a.slice();
        await nthElement(policy, d, k);
        same('nthElement n-th', [d[k] as number], [sorted[k] as number]);
        for (let i = 0; i < n; i++) {
          if ((i < k && (d[i] as number) > (d[k] as number)) || (i > k && (d[i] as number) < (d[k] as number)))
            fail(`nthElement side at ${i}`, d[i], d[k]);
        }
        same('nthElement permutation', d.slice().sort(), sorted);
      }
      const k = Math.min(n, 37);
      const p = a.slice();
      await partialSort(policy, p, k);
      same('partialSort', p, sorted, k);
      same('partialSort permutation', p.slice().sort(), sorted);
      const out = new Uint32Array(k + 1).fill(7);
      await readOnly(a, (x) => topK(policy, x, k, out, { largest: true }));
      same('topK largest', out, sorted.slice().reverse(), k);
      same('topK past k', [out[k] as number], [7]);
    },
  },
  {
    name: 'by key',
    covers: ['inclusiveScanByKey', 'exclusiveScanByKey', 'reduceByKey', 'uniqueByKey', 'keyEqual'],
    async run({ policy }, n) {
      // Keys 0..3 at random: runs of random lengths, many of length 1.
      const keys = u32(n, 4, 21);
      const vals = u32(n, 1000, 22);
      const inc: number[] = [];
      const exc: number[] = [];
      const rk: number[] = [];
      const rv: number[] = [];
      const uv: number[] = [];
      for (let i = 0; i < n; i++) {
        const head = i === 0 || keys[i] !== keys[i - 1];
        inc.push(head ? vals[i] : (inc[i - 1] + vals[i]) >>> 0);
        exc.push(head ? 5 : (exc[i - 1] + vals[i - 1]) >>> 0);
        if (head) {
          rk.push(keys[i]);
          rv.push(vals[i]);
          uv.push(vals[i]);
        } else rv[rv.length - 1] = (rv[rv.length - 1] + vals[i]) >>> 0;
      }
      same(
        'inclusiveScanByKey',
        await readOnly(vals, (v) => inclusiveScanByKey(policy, keys, v, new Uint32Array(n))),
        inc,
      );
      same('exclusiveScanByKey init 5', await exclusiveScanByKey(policy, keys, vals, new Uint32Array(n), 5), exc);
      const ko = new Uint32Array(n);
      const vo = new Uint32Array(n);
      const runs = await reduceByKey(policy, keys, vals, ko, vo, plus, keyEqual);
      same('reduceByKey runs', [runs], [rk.length]);
      same('reduceByKey keys', ko.subarray(0, runs), rk);
      same('reduceByKey sums', vo.subarray(0, runs), rv);
      const u = await uniqueByKey(policy, keys, vals, ko, vo);
      same('uniqueByKey runs', [u], [rk.length]);
      same('uniqueByKey values', vo.subarray(0, u), uv);
    },
  },
  {
    name: 'set operations',
    covers: ['setUnion', 'setIntersection', 'setDifference', 'setSymmetricDifference'],
    async run({ policy }, n) {
      const a = u32(n, 300).sort();
      const b = u32(n >> 1, 300, 13).sort();
      // std's multiset loops; equal u32 values are indistinguishable, so which copy is taken does not show
      const ref = (keepA: boolean, keepB: boolean, keepBoth: boolean) => {
        const r: number[] = [];
        let i = 0;
        let j = 0;
        while (i < a.length && j < b.length) {
          if (a[i] < b[j]) {
            if (keepA) r.push(a[i]);
            i++;
          } else if (b[j] < a[i]) {
            if (keepB) r.push(b[j]);
            j++;
          } else {
            if (keepBoth) r.push(a[i]);
            i++;
            j++;
          }
        }
        if (keepA) r.push(...a.subarray(i));
        if (keepB) r.push(...b.subarray(j));
        return r;
      };
      const ops = [
        ['setUnion', setUnion, ref(true, true, true)],
        ['setIntersection', setIntersection, ref(false, false, true)],
        ['setDifference', setDifference, ref(true, false, false)],
        ['setSymmetricDifference', setSymmetricDifference, ref(true, true, false).sort((x, y) => x - y)],
      ] as const;
      for (const [what, op, want] of ops) {
        const out = new Uint32Array(a.length + b.length);
        eq(`${what} count`, await op(policy, a, b, out), want.length);
        same(what, out, want);
      }
    },
  },
  {
    name: 'sorts',
    covers: ['sort', 'stableSort', 'greater', 'less'],
    async run({ policy }, n) {
      const a = u32(n, 1 << 30);
      const s = a.slice();
      await sort(policy, s);
      same('sort u32', s, a.slice().sort());
      const l = a.slice();
      await sort(policy, l, less);
      same('sort u32 less', l, s);
      const f = f32(n);
      if (n > 3) {
        f[0] = Number.NaN;
        f[1] = -0;
        f[2] = 0;
      }
      const g = f.slice();
      await sort(policy, g, greater);
      // greater: descending numbers (+0 before -0), NaN still last
      const desc = f.slice().sort().reverse();
      same('sort f32 greater', g, [...desc.filter((x) => !Number.isNaN(x)), ...desc.filter((x) => Number.isNaN(x))]);
      const i = i32(n);
      const st = i.slice();
      await stableSort(policy, st);
      same('stableSort i32', st, i.slice().sort());
    },
  },
  {
    name: 'sortByKey',
    covers: ['sortByKey'],
    async run({ policy }, n) {
      const keys = u32(n, 64);
      const values = Uint32Array.from({ length: n }, (_, i) => i);
      const k = keys.slice();
      await sortByKey(policy, k, values);
      const want = Array.from(values.keys()).sort((x, y) => keys[x] - keys[y] || x - y);
      same(
        'sortByKey keys',
        k,
        Uint32Array.from(want, (x) => keys[x]),
      );
      same('sortByKey values (stable)', values, want);
    },
  },
  {
    name: 'fallback and error paths',
    covers: [],
    async run({ policy, name }, n) {
      const a = u32(n);
      const before = a.slice();
      let s = 0;
      for (const x of a) s = (s + x) >>> 0;
      // a lambda with no identity: the GPU cannot reduce with it, the CPU can
      const add = (x: number, y: number) => x + y;
      if (name === 'device' || name === 'device-tiny') {
        let error = 'none';
        try {
          await reduce(policy, a, 0, add);
        } catch (e) {
          error = (e as Error).name;
        }
        if (n > 0) eq("fallback: 'error' throws", error, 'UnsupportedOnDeviceError');
        same('input after the error', a, before);
        eq('execution.device (fallback cpu) answers on the CPU', await reduce(execution.device, a, 0, add), s);
      } else {
        eq('reduce with a lambda', await reduce(policy, a, 0, add), s);
      }
      // an argument error is thrown before anything runs: the caller's keys stay as they were
      const keys = f32(n);
      const copy = keys.slice();
      let argError = 'none';
      try {
        await sort(policy, keys, 'sideways' as never);
      } catch (e) {
        argError = (e as Error).name;
      }
      eq('sort with a bad comparator throws', argError, 'ArgumentError');
      same('keys after the argument error', keys, copy);
    },
  },
  {
    name: 'DeviceArray chain',
    covers: [],
    async run({ policy, name, gpu }, n) {
      if (name === 'seq' || name === 'par') return; // DeviceArrays pin calls to their GPU
      const a = DeviceArray.from(gpu, u32(n));
      const b = DeviceArray.from(gpu, new Uint32Array(n));
      try {
        // no awaits in between: calls on a device run in call order
        void transform(policy, a, b, (x: number) => x + 1);
        void inclusiveScan(policy, b, b);
        const total = await reduce(policy, b);
        const host = u32(n);
        let s = 0;
        let t = 0;
        for (const x of host) {
          s = (s + x + 1) >>> 0;
          t = (t + s) >>> 0;
        }
        eq('transform -> inclusiveScan -> reduce on DeviceArrays', total, t);
        if (n > 0) eq('read back last', (await b.read())[n - 1], s);
      } finally {
        a.destroy();
        b.destroy();
      }
    },
  },
  {
    // Typed arrays over a SharedArrayBuffer (what par users hold) on every policy: the GPU policies
    // upload them (through core's staging slices; Chromium's writeBuffer would take them as they are,
    // Dawn's in Node does not) and read results back into them. Only the isolated page has them.
    name: 'allocShared arrays',
    covers: ['reduce', 'inclusiveScan', 'copyIf', 'sort', 'transform'],
    async run({ policy, name, gpu }, n) {
      if (!(globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated) {
        eq('SharedArrayBuffer without cross-origin isolation', typeof globalThis.SharedArrayBuffer, 'undefined');
        return;
      }
      const shared = <A extends Uint32Array | Int32Array | Float32Array>(a: A): A => {
        const s = allocShared(a instanceof Uint32Array ? 'u32' : a instanceof Int32Array ? 'i32' : 'f32', a.length);
        s.set(a);
        return s as A;
      };
      const x = i32(n);
      const sx = shared(x);
      eq('allocShared is shared', isShared(sx), true);
      eq('reduce', await reduce(policy, sx), await reduce(policy, x));
      const o = new Int32Array(n);
      const so = shared(new Int32Array(n));
      await inclusiveScan(policy, x, o);
      await inclusiveScan(policy, sx, so);
      same('inclusiveScan', so, o);
      const c = new Int32Array(n).fill(-1);
      const sc = shared(c);
      const odd = (v: number) => v % 2 !== 0;
      eq('copyIf count', await copyIf(policy, sx, sc, odd), await copyIf(policy, x, c, odd));
      same('copyIf', sc, c);
      const f = f32(n);
      const sf = shared(f);
      await sort(policy, f);
      await sort(policy, sf);
      same('sort', sf, f);
      const t = shared(new Float32Array(n));
      await transform(policy, sf, t, (v: number) => v * 2);
      same(
        'transform',
        t,
        Float32Array.from(f, (v) => v * 2),
      );
      if (name === 'seq' || name === 'par' || n === 0) return;
      const d = DeviceArray.from(gpu, sx);
      try {
        same('DeviceArray.from(shared)', await d.read(), x);
        d.write(so);
        const back = shared(new Int32Array(n));
        back.set(await d.read());
        same('write(shared) and read into shared', back, o);
      } finally {
        d.destroy();
      }
    },
  },
];

/** Exports of @webdpl/algorithms that are not algorithms run by policies (engines for the bench, helpers). */
export const NOT_ALGORITHMS: readonly string[] = ['radixSortDevice', 'mergeSortDevice'];
