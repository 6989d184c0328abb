/**
 * Loop kernels of the CPU bricks, generated as JS source and compiled once (`compileOnce`, the one
 * compile-once cache of @webdpl/policies, shared by the calling thread and the workers).
 *
 * Why generated: a loop shared by every operator (`acc = f(acc, x[i])` in one function) sees many
 * functions and array kinds at its call site and V8 stops inlining there (measured 5.6x slower than
 * a hand-written loop). Each kernel here is compiled from its own source text, tagged with its
 * element types, so V8 keeps separate type feedback for it and inlines the operator: within a few
 * percent of a hand-written loop.
 *
 * One kernel is `(t, r) => (x, x2, y, b, e, h, c, f) => result` (a job's fields as arguments, see
 * `Kernel`): `t` is the transform or predicate (unary over `x`, or binary over `x` and `x2`) and `r`
 * the binary operator. Functions whose JS form is fully defined by
 * their source (built-in operators, and lambdas: marked by lambda.ts) are spliced into the kernel
 * as source (`fn.jsSource(argTypes)`): the kernel is one self-contained source text, the same on the
 * calling thread and in the workers, cached by the functions' stable names, so a call with a new
 * arrow function of the same source costs a map lookup and compiles nothing. Other functions (the
 * explicit `{ js, wgsl }` form, whose `js` may be a closure) are bound as objects on the calling
 * thread, cached by their identity; par ships their source, which must then be self-contained.
 *
 * Accumulators are coerced to their type when a loop starts (`>>> 0`, `| 0`, unary `+`), so V8 keeps
 * them unboxed: an accumulator seeded from a job field (a tagged number) made the phi of u32 sums
 * tagged, and a u32 reduce allocated a heap number per element (4x slower than a plain loop).
 *
 * ## f32 accuracy (`summation`)
 * f32 reductions and scans keep a bound independent of the order of the data:
 * - the built-in `plus` accumulates in f64 ('wide') and rounds to f32 once, at the end (reduce) or
 *   at each store (scans): |result - exact| <= 2^-24 * |exact| + n * 2^-53 * sum |x_i|, i.e. within
 *   one f32 rounding of the exact sum for n up to 2^28 or so (0.5 ulp + 2^-25 * sum |x_i|);
 * - any other f32 operator (lambdas, multiplies) is folded blockwise ('blocked'): sequentially
 *   within blocks of `SUM_BLOCK` elements (a reduce's full block as `reduceChains` contiguous
 *   parts side by side, then the parts in order: shorter chains, the same bound), then the block
 *   results pairwise (a binary counter of partial results, combined in order, so non-commutative
 *   associative operators stay exact). For
 *   a sum-like operator the error is at most (SUM_BLOCK + 2 * ceil(log2 n) + 2) * 2^-24 * sum |x_i|
 *   (about 1.1e-5 of the sum of magnitudes at n = 2^24), scans bound each prefix the same way;
 * - min / max and the logical built-ins are exact in any order and run the plain loop.
 * par combines chunk results the same way (f64 sums; pairwise for blocked operators).
 * Integer accumulators wrap exactly as before (u32 modulo 2^32, i32 two's complement).
 */
import type { GpuFunction, HostArray, NumericType } from '@webdpl/core';
import { compileOnce } from '@webdpl/policies';

/** What a kernel does over `[b, e)`. */
export type KernelKind =
  | 'map'
  | 'reduce'
  | 'inclusiveScan'
  | 'exclusiveScan'
  | 'findFirst'
  /** y[b..e) = c (no function). */
  | 'fill'
  /** y[i] = c + i in y's type (no function). */
  | 'iota'
  /** y[b..e) = x[b..e) (no function). */
  | 'copy'
  /** The number of x[i] === c in [b, e) (no function). */
  | 'count'
  /** y[i] = t(i), the index in y's type (f32: rounded); x is not read. */
  | 'generate';

/** A function and the argument types it is called with. */
export interface BoundFunction {
  readonly fn: GpuFunction;
  readonly argTypes: readonly NumericType[];
}

export interface KernelSpec {
  readonly kind: KernelKind;
  /** Transform or predicate over each element (of `x`, or of `x` and `x2`); none reads `x[i]`. */
  readonly t?: BoundFunction | undefined;
  /** The binary operator (reduce and scans); its first argument type is the accumulator's. */
  readonly r?: BoundFunction | undefined;
  /** Number of input arrays (1 or 2; 2 needs a binary `t`). */
  readonly inputs: 1 | 2;
  /**
   * Argument k of the transform (or, for 0 without a transform, the value) is the element's index
   * instead of an array element: 0, the input is `counting(n)` (x is not read); 1, the transform is
   * an index lambda `(x, i) => ...` (inputs 2, x2 is not read). @default none
   */
  readonly indexArg?: 0 | 1 | undefined;
  /** Turn each transformed value into 1 or 0 by truthiness (predicates, counts). */
  readonly bit: boolean;
  /** Element types of x, x2 and y, for the source tag (undefined where absent). */
  readonly arrays: readonly (NumericType | undefined)[];
}

/**
 * One kernel call. Field names are short: the job is structured-cloned for every par chunk.
 * Results: map returns 0; reduce and scans return the last accumulator (an f64 sum for 'wide'
 * summation: round it with the accumulator type); findFirst the index or -1.
 */
export interface KernelJob {
  /** Kernel source (par only; the seq path passes ''). */
  readonly s: string;
  readonly x: HostArray;
  readonly x2?: HostArray | undefined;
  readonly y?: HostArray | undefined;
  /** Range [b, e). */
  readonly b: number;
  readonly e: number;
  /** Whether `c` is a carry-in / initial value (reduce, inclusive scan; exclusive scans always have one). */
  readonly h: boolean;
  readonly c: number;
  /**
   * findFirst: a shared Int32Array[1] holding the least index found so far, for early exit;
   * gather/scatter kernels (bricks/gather.ts): the stencil.
   */
  readonly f?: HostArray | undefined;
}

/**
 * A kernel: the job's fields as arguments (`x, x2, y, b, e, h, c, f`). Never a job object: jobs of
 * different origins (literals without `y`, structured clones in workers, spread copies) have
 * different maps, and property loads at the top of the kernel then deoptimized it ("wrong map");
 * a u32 reduce over 2^20 elements was left in baseline code, 4-5x slower, for the rest of a run.
 */
export type Kernel = (
  x: HostArray,
  x2: HostArray | undefined,
  y: HostArray | undefined,
  b: number,
  e: number,
  h: boolean,
  c: number,
  f: HostArray | undefined,
) => number;

/** How a reduction or scan accumulates (see the file comment): f64 sum, blockwise, or in order. */
export type Summation = 'wide' | 'blocked' | 'plain';

/** Block length of 'blocked' summation (elements folded in order before the pairwise step). */
export const SUM_BLOCK = 128;

/** Elements a fill of shared memory writes with TypedArray#fill before doubling them (kernel 'fill'). */
export const SHARED_FILL_BLOCK = 256;

/** Built-in operators that are exact in any association on f32 (no rounding error to bound). */
const EXACT_BUILTINS: ReadonlySet<string> = new Set(['minimum', 'maximum', 'logicalAnd', 'logicalOr']);

/** How the operator of `spec` accumulates: only f32 accumulators are not 'plain'. */
export function summation(spec: Pick<KernelSpec, 'r'>): Summation {
  const r = spec.r;
  if (r === undefined || r.argTypes[0] !== 'f32') return 'plain';
  if (r.fn.builtin) return r.fn.name === 'plus' ? 'wide' : EXACT_BUILTINS.has(r.fn.name) ? 'plain' : 'blocked';
  return 'blocked';
}

/** `e` coerced to the accumulator type (keeps V8's representation of the accumulator unboxed). */
function accOf(spec: KernelSpec, e: string): string {
  switch (spec.r?.argTypes[0]) {
    case 'u32':
      return `((${e}) >>> 0)`;
    case 'i32':
      return `((${e}) | 0)`;
    default:
      return `(+(${e}))`;
  }
}

/**
 * Whether the transform of `spec` is a source-defined function whose result type is 'bool': its JS
 * form returns true/false, so `+v` turns it into 1/0 without a branch (a counting loop over random
 * data ran 4-7x faster than with `v ? 1 : 0`, which mispredicts half the time).
 */
function boolResult(spec: KernelSpec): boolean {
  const t = spec.t;
  return t !== undefined && sourceName(t.fn) !== undefined && t.fn.resultType(t.argTypes) === 'bool';
}

function valueExpr(spec: KernelSpec, i: string): string {
  const a0 = spec.indexArg === 0 ? i : `x[${i}]`;
  const a1 = spec.indexArg === 1 ? i : `x2[${i}]`;
  let v = spec.t ? (spec.inputs === 2 ? `t(${a0}, ${a1})` : `t(${a0})`) : a0;
  if (spec.bit) v = boolResult(spec) ? `(+${v})` : `(${v} ? 1 : 0)`;
  return v;
}

/** The stack of 'blocked' partial results: merge the block result `a` in, then `p` = their fold. */
const PUSH_BLOCK = `k++;
      for (let q = k; (q & 1) === 0; q >>= 1) a = r(st[--top], a);
      st[top++] = a;`;
const FOLD_STACK = `let p = st[top - 1];
      for (let q = top - 2; q >= 0; q--) p = r(st[q], p);`;

/** Adds the values of [i, end) into a0..a3, four at a time (the tail into a0); leaves i = end. */
const UNROLLED_SUM = (v: (i: string) => string, end: string): string =>
  `for (; i + 3 < ${end}; i += 4) { a0 += ${v('i')}; a1 += ${v('i + 1')}; a2 += ${v('i + 2')}; a3 += ${v('i + 3')}; }
    for (; i < ${end}; i++) a0 += ${v('i')};`;

/**
 * y[i] = v(i) over [b, e), `u` stores per loop step in index order, then the tail: the same stores
 * in the same order as the simple loop. Over arrays passed as parameters V8's simple loop costs ~2.5x
 * a plain loop over arrays it closes over; unrolled, about the same (f32 x*2+1, standalone, median
 * of 31: 2^20 1.17 -> 0.50 ms, closure 0.47; 2^24 18.9 -> 8.2 ms, closure 7.7; unrolled by 4 0.65 /
 * 10.5 ms; docs/benchmarks/cpu-seq-2026-11-24.md). `u` from `mapUnroll`.
 */
const UNROLLED_MAP = (v: (i: string) => string, u: number): string => {
  const at = (k: number) => (k === 0 ? 'i' : `i + ${k}`);
  const stores = Array.from({ length: u }, (_, k) => `y[${at(k)}] = ${v(at(k))};`);
  const rows: string[] = [];
  for (let k = 0; k < u; k += 4) rows.push(stores.slice(k, k + 4).join(' '));
  return `let i = b;
    for (; i + ${u - 1} < e; i += ${u}) {
      ${rows.join('\n      ')}
    }
    for (; i < e; i++) y[i] = ${v('i')};`;
};

/**
 * Inlined bytecode V8's optimizing compiler allows one function (--max-inlined-bytecode-size-
 * cumulative, 920 in Node 20): an unrolled map inlines its transform once per store, and past this
 * the last copies stay calls and the whole loop runs 2-4x slower.
 */
export const INLINE_BUDGET = 920;

/**
 * Stores per step of the map loop: the most of 16, 8, 4, 2, 1 whose copies of the transform's JS
 * source (its length standing in for its bytecode) fit INLINE_BUDGET; 8 for a transform without a
 * source. Standalone, 2^20 elements, ms for 1 / 2 / 4 / 8 / 16 stores per step (dev VM 2026-11-24):
 * f32 x*2+1 (42 characters) 1.35 / 0.88 / 0.64 / 0.51 / 0.48 (plain closure loop 0.48); f32
 * x*x+3*x-1 (76) 1.56 / 1.35 / 1.27 / 1.25 / 2.63; f32 sqrt(x*x+1)*0.5-x/3 (119) 2.88 / 2.84 / 2.82 /
 * 4.15 / 9.57; u32 (x^(x>>>3))*2654435761 (61) 1.51 / 1.15 / 0.94 / 0.79 / 0.74
 * (docs/benchmarks/cpu-seq-2026-11-24b.md).
 */
export function mapUnroll(spec: KernelSpec): number {
  const t = spec.t;
  if (t === undefined) return 8;
  let length: number;
  try {
    length = t.fn.jsSource(t.argTypes).length;
  } catch {
    return 8;
  }
  for (const u of [16, 8, 4, 2]) if (u * length <= INLINE_BUDGET) return u;
  return 1;
}

/**
 * Contiguous parts a full 'blocked' reduce block folds side by side: 4 where the copies of the
 * transform and the operator the kernel then holds (9 and 11 of them) fit INLINE_BUDGET, else 1.
 * One chain waits on each operator's latency: an f32 lambda sum `fround(a + fround(x * x))` of 2^10
 * elements took 2.8 us per call against 0.7 us for a plain f64 loop.
 */
export function reduceChains(spec: KernelSpec): number {
  let length = 0;
  try {
    if (spec.t) length += 9 * spec.t.fn.jsSource(spec.t.argTypes).length;
    if (spec.r) length += 11 * spec.r.fn.jsSource(spec.r.argTypes).length;
  } catch {
    return 1;
  }
  return length <= INLINE_BUDGET ? 4 : 1;
}

function reduceBody(spec: KernelSpec, v: (i: string) => string): string {
  const acc = (e: string) => accOf(spec, e);
  switch (summation(spec)) {
    case 'wide':
      // Four f64 accumulators: independent adds (one accumulator waits on each add's latency).
      return `let i = b, a0, a1 = 0, a2 = 0, a3 = 0;
    if (hc) a0 = +cin; else { a0 = +${v('b')}; i++; }
    ${UNROLLED_SUM(v, 'e')}
    return (a0 + a1) + (a2 + a3);`;
    case 'blocked': {
      // A full block folds as `reduceChains(spec)` contiguous parts side by side (each in order,
      // then the parts in order: associativity only), so the operator's latency chains overlap.
      const c = reduceChains(spec);
      const part = SUM_BLOCK / c;
      const ids = Array.from({ length: c }, (_, q) => q);
      const at = (q: number, i: string) => (q === 0 ? i : `${i} + ${q * part}`);
      const fold = (lo: number, hi: number): string =>
        hi - lo === 1 ? `a${lo}` : `r(${fold(lo, (lo + hi) >> 1)}, ${fold((lo + hi) >> 1, hi)})`;
      const full =
        c === 1
          ? ''
          : `if (m - s === ${SUM_BLOCK}) {
        let ${ids.map((q) => `a${q} = +${v(at(q, 's'))}`).join(', ')};
        for (let i = s + 1; i < s + ${part}; i++) {
          ${ids.map((q) => `a${q} = r(a${q}, ${v(at(q, 'i'))});`).join(' ')}
        }
        a = ${fold(0, c)};
      } else `;
      return `let top = 0, k = 0;
    for (let s = b; s < e; s += ${SUM_BLOCK}) {
      const m = s + ${SUM_BLOCK} < e ? s + ${SUM_BLOCK} : e;
      let a;
      ${full}{
        a = +${v('s')};
        for (let i = s + 1; i < m; i++) a = r(a, ${v('i')});
      }
      ${PUSH_BLOCK}
    }
    if (top === 0) return +cin;
    ${FOLD_STACK}
    return hc ? r(+cin, p) : p;`;
    }
    case 'plain': {
      const t = spec.r?.argTypes[0];
      if (spec.r?.fn.builtin && spec.r.fn.name === 'plus' && (t === 'u32' || t === 'i32')) {
        // Integer sums: add in f64 (exact below 2^53) and wrap once per 2^20 elements (at most
        // 2^20 * 2^32 = 2^52 in between), instead of wrapping after every element.
        // Four accumulators of at most 2^20 elements each per block of 2^22, wrapped after it.
        return `let i = b, a0, a1 = 0, a2 = 0, a3 = 0;
    if (hc) a0 = +cin; else { a0 = +${v('b')}; i++; }
    while (i < e) {
      const m = e - i > 4194304 ? i + 4194304 : e;
      ${UNROLLED_SUM(v, 'm')}
      a0 = ${acc('a0')}; a1 = ${acc('a1')}; a2 = ${acc('a2')}; a3 = ${acc('a3')};
    }
    return ${acc('a0 + a1 + a2 + a3')};`;
      }
      return `let i = b, acc;
    if (hc) acc = ${acc('cin')}; else { acc = ${acc(v('b'))}; i++; }
    for (; i < e; i++) acc = r(acc, ${v('i')});
    return acc;`;
    }
  }
}

function scanBody(spec: KernelSpec, v: (i: string) => string, inclusive: boolean): string {
  const acc = (e: string) => accOf(spec, e);
  switch (summation(spec)) {
    case 'wide': {
      // Rounded to f32 at each store (an f32 output rounds by itself).
      const st = (e: string) => (spec.arrays[2] === 'f32' ? e : `Math.fround(${e})`);
      return inclusive
        ? `let i = b, acc;
    if (hc) acc = +cin; else { acc = +${v('b')}; y[b] = ${st('acc')}; i++; }
    for (; i < e; i++) { acc += ${v('i')}; y[i] = ${st('acc')}; }
    return acc;`
        : `let acc = +cin;
    for (let i = b; i < e; i++) { const v = ${v('i')}; y[i] = ${st('acc')}; acc += v; }
    return acc;`;
    }
    case 'blocked': {
      // y[i] = carry op (prefix of the block up to i): the carry comes from the pairwise stack.
      const block = inclusive
        ? `let a = +${v('s')};
      if (has) {
        y[s] = r(c, a);
        for (let i = s + 1; i < m; i++) { a = r(a, ${v('i')}); y[i] = r(c, a); }
      } else {
        y[s] = a;
        for (let i = s + 1; i < m; i++) { a = r(a, ${v('i')}); y[i] = a; }
      }`
        : `let a = +${v('s')};
      y[s] = c;
      for (let i = s + 1; i < m; i++) { const w = ${v('i')}; y[i] = r(c, a); a = r(a, w); }`;
      return `let top = 0, k = 0, has = hc, c = +cin;
    for (let s = b; s < e; s += ${SUM_BLOCK}) {
      const m = s + ${SUM_BLOCK} < e ? s + ${SUM_BLOCK} : e;
      ${block}
      ${PUSH_BLOCK}
      ${FOLD_STACK}
      c = hc ? r(+cin, p) : p;
      has = true;
    }
    return c;`;
    }
    case 'plain':
      return inclusive
        ? `let i = b, acc;
    if (hc) acc = ${acc('cin')}; else { acc = ${acc(v('b'))}; y[b] = acc; i++; }
    for (; i < e; i++) { acc = r(acc, ${v('i')}); y[i] = acc; }
    return acc;`
        : `let acc = ${acc('cin')};
    for (let i = b; i < e; i++) { const v = ${v('i')}; y[i] = acc; acc = r(acc, v); }
    return acc;`;
  }
}

/** The factory source `(t, r) => (x, x2, y, b, e, hc, cin, found) => { ... }` of a kernel. */
export function factorySource(spec: KernelSpec): string {
  const v = (i: string) => valueExpr(spec, i);
  let body: string;
  switch (spec.kind) {
    case 'map':
      body = `${UNROLLED_MAP(v, mapUnroll(spec))}
    return 0;`;
      break;
    case 'reduce':
      body = reduceBody(spec, v);
      break;
    case 'inclusiveScan':
      body = scanBody(spec, v, true);
      break;
    case 'exclusiveScan':
      body = scanBody(spec, v, false);
      break;
    case 'fill':
      // TypedArray#fill on shared memory stores element by element (V8: 4x slower than on an
      // ArrayBuffer, 0.98 against 0.25 ms at 2^22 u32 on the dev VM): there one block is filled and
      // doubled with copyWithin (a memmove), 1.9x faster from 2^12 elements on (0.52 ms at 2^22;
      // docs/benchmarks/cpu-2026-11-24f.md).
      body = `if (e - b > ${SHARED_FILL_BLOCK} && typeof SharedArrayBuffer !== 'undefined' && y.buffer instanceof SharedArrayBuffer) {
      y.fill(cin, b, b + ${SHARED_FILL_BLOCK});
      for (let len = ${SHARED_FILL_BLOCK}; b + len < e; ) {
        const m = Math.min(len, e - b - len);
        y.copyWithin(b + len, b, b + m);
        len += m;
      }
    } else y.fill(cin, b, e);
    return 0;`;
      break;
    case 'copy':
      body = `y.set(x.subarray(b, e), b);
    return 0;`;
      break;
    case 'count':
      body = `let k = 0;
    for (let i = b; i < e; i++) k += +(x[i] === cin);
    return k;`;
      break;
    case 'iota': {
      const t = spec.arrays[2];
      const v = t === 'u32' ? '(cin + i) >>> 0' : t === 'i32' ? '(cin + i) | 0' : 'cin + Math.fround(i)';
      body = `for (let i = b; i < e; i++) y[i] = ${v};
    return 0;`;
      break;
    }
    case 'generate': {
      const i = spec.arrays[2] === 'f32' ? 'Math.fround(i)' : 'i';
      body = `for (let i = b; i < e; i++) y[i] = t(${i});
    return 0;`;
      break;
    }
    case 'findFirst':
      body = `const f = found;
    for (let s = b; s < e; s += 8192) {
      if (f !== undefined && Atomics.load(f, 0) < b) return -1;
      const m = Math.min(s + 8192, e);
      for (let i = s; i < m; i++) {
        if (${v('i')}) {
          if (f !== undefined) {
            for (;;) {
              const cur = Atomics.load(f, 0);
              if (cur <= i || Atomics.compareExchange(f, 0, cur, i) === cur) break;
            }
          }
          return i;
        }
      }
    }
    return -1;`;
      break;
  }
  const stack = summation(spec) === 'blocked' && spec.kind !== 'map' ? '\n  const st = new Float64Array(64);' : '';
  return `(t, r) => {${stack}
  return (x, x2, y, b, e, hc, cin, found) => {
    ${body}
  };
}`;
}

function tag(spec: KernelSpec, ids: string): string {
  const fnTypes = (f: BoundFunction | undefined) => (f ? f.argTypes.join(',') : '-');
  return `/* webdpl ${spec.kind} x:${spec.arrays.map((a) => a ?? '-').join(',')} t:${fnTypes(spec.t)} r:${fnTypes(spec.r)} bit:${spec.bit} idx:${spec.indexArg ?? '-'}${ids} */`;
}

function specKey(spec: KernelSpec): string {
  return `${spec.kind}|${spec.inputs}|${spec.bit}|${spec.arrays.join(',')}|${spec.t?.argTypes.join(',')}|${spec.r?.argTypes.join(',')}|${spec.indexArg ?? '-'}`;
}

/**
 * Marks a GpuFunction whose JS form is fully defined by `jsSource` and `name` (lambdas; set by
 * core's lambda.ts under the same registered symbol): kernels are then cached by name.
 */
const JS_FROM_SOURCE = Symbol.for('webdpl.jsFromSource');

/** The stable cache key of `fn` when its JS form follows from its source, else undefined. */
function sourceName(fn: GpuFunction): string | undefined {
  if (fn.builtin) return `=${fn.name}`;
  return (fn as unknown as Record<symbol, unknown>)[JS_FROM_SOURCE] === true ? fn.name : undefined;
}

const fnIds = new WeakMap<GpuFunction, number>();
let nextFnId = 1;

function fnId(fn: GpuFunction | undefined): number {
  if (!fn) return 0;
  let id = fnIds.get(fn);
  if (id === undefined) {
    id = nextFnId++;
    fnIds.set(fn, id);
  }
  return id;
}

/** Most kernels of source-defined functions kept (the oldest is dropped past it). */
const SOURCE_CACHE_LIMIT = 512;

interface Entry {
  /** Whether the kernel binds `fn.js` objects (functions that are not source-defined). */
  readonly bound: boolean;
  /** The self-contained kernel source (par; and seq for source-defined functions). */
  source: string | undefined;
  kernel: Kernel | undefined;
}

/** Kernels of source-defined functions, by spec and function names. */
const bySource = new Map<string, Entry>();

/** Kernels of other functions, by the spec's first function object (collected with it). */
const byIdentity = new WeakMap<GpuFunction, Map<string, Entry>>();

/** The key of `spec` among source-defined kernels, or undefined when a function is not one. */
function sourceKey(spec: KernelSpec): string | undefined {
  let tn = '-';
  let rn = '-';
  if (spec.t) {
    const n = sourceName(spec.t.fn);
    if (n === undefined) return undefined;
    tn = n;
  }
  if (spec.r) {
    const n = sourceName(spec.r.fn);
    if (n === undefined) return undefined;
    rn = n;
  }
  return `${specKey(spec)}|${tn}|${rn}`;
}

/** The entry of `spec` by names (source-defined functions) or by function objects (others). */
function slowEntry(spec: KernelSpec): Entry {
  const key = sourceKey(spec);
  if (key !== undefined) {
    let hit = bySource.get(key);
    if (hit === undefined) {
      if (bySource.size >= SOURCE_CACHE_LIMIT) bySource.delete(bySource.keys().next().value as string);
      hit = { bound: false, source: undefined, kernel: undefined };
      bySource.set(key, hit);
    }
    return hit;
  }
  const owner = (spec.t?.fn ?? spec.r?.fn) as GpuFunction;
  let m = byIdentity.get(owner);
  if (!m) {
    m = new Map();
    byIdentity.set(owner, m);
  }
  const idKey = `${specKey(spec)}|${fnId(spec.t?.fn)}|${fnId(spec.r?.fn)}`;
  let hit = m.get(idKey);
  if (hit === undefined) {
    hit = { bound: true, source: undefined, kernel: undefined };
    m.set(idKey, hit);
  }
  return hit;
}

const KINDS: readonly KernelKind[] = [
  'map',
  'reduce',
  'inclusiveScan',
  'exclusiveScan',
  'findFirst',
  'fill',
  'iota',
  'copy',
  'count',
  'generate',
];

function typeCode(t: NumericType | undefined): number {
  return t === 'u32' ? 1 : t === 'i32' ? 2 : t === 'f32' ? 3 : 0;
}

/** Everything of `spec` but its functions, as one small integer (no string built per call). */
function shapeOf(spec: KernelSpec): number {
  const t = spec.t?.argTypes;
  const r = spec.r?.argTypes;
  return (
    KINDS.indexOf(spec.kind) |
    (spec.inputs << 4) |
    ((spec.bit ? 1 : 0) << 6) |
    (typeCode(spec.arrays[0]) << 7) |
    (typeCode(spec.arrays[1]) << 9) |
    (typeCode(spec.arrays[2]) << 11) |
    (typeCode(t?.[0]) << 13) |
    (typeCode(t?.[1]) << 15) |
    (typeCode(r?.[0]) << 17) |
    (typeCode(r?.[1]) << 19) |
    ((spec.indexArg === undefined ? 0 : spec.indexArg + 1) << 21)
  );
}

interface FastEntry {
  /** The spec's operator when it also has a transform (the first function is the key). */
  readonly other: GpuFunction | undefined;
  readonly entry: Entry;
}

/**
 * The per-call path: entries by the first function object and the spec's shape (an integer), so a
 * call with the same function objects (toGpuFunction returns the same object for an inline arrow
 * function of a source seen before) costs a WeakMap and a Map lookup.
 */
const fast = new WeakMap<GpuFunction, Map<number, FastEntry[]>>();

/** Entries of kernels without functions (fill, iota, copy), by shape. */
const noFunction = new Map<number, Entry>();

function entryOf(spec: KernelSpec): Entry {
  const first = spec.t?.fn ?? spec.r?.fn;
  const other = spec.t ? spec.r?.fn : undefined;
  const shape = shapeOf(spec);
  if (first === undefined) {
    let e = noFunction.get(shape);
    if (e === undefined) {
      e = slowEntry(spec);
      noFunction.set(shape, e);
    }
    return e;
  }
  let byShape = fast.get(first);
  if (byShape === undefined) {
    byShape = new Map();
    fast.set(first, byShape);
  }
  let list = byShape.get(shape);
  if (list !== undefined) {
    for (const f of list) if (f.other === other) return f.entry;
  } else {
    list = [];
    byShape.set(shape, list);
  }
  const entry = slowEntry(spec);
  if (list.length >= 8) list.shift();
  list.push({ other, entry });
  return entry;
}

const WARM_CTOR: Readonly<Record<NumericType, string>> = {
  u32: 'Uint32Array',
  i32: 'Int32Array',
  f32: 'Float32Array',
};

/**
 * Source that runs kernel `k` over small synthetic arrays (both `h` branches, integer and fractional
 * carries), wherever the kernel is compiled: V8 allocates a function's feedback vector lazily, so
 * the code before the loop ran without feedback in the first real call; the first full
 * optimization then deoptimized there ("insufficient type feedback") and V8 sometimes left the
 * kernel in baseline code for the rest of the run (a u32 reduce over 2^20 elements at 4.4 ms
 * instead of 0.9 ms). Values cover the types' ranges (u32 above 2^31, negative i32, fractional
 * f32), as real data does. Only for source-defined functions, which are pure. ~20 us, once.
 */
function warmSource(spec: KernelSpec): string {
  const arr = (type: NumericType | undefined) =>
    type === undefined
      ? 'undefined'
      : `w(${WARM_CTOR[type]}, ${type === 'f32' ? '(i) => ((i * 0.37) % 3) - 1' : '(i) => Math.imul(i + 1, 0x9e3779b9)'})`;
  // 160 elements: ranges of 153-160 hold one full 'blocked' block (SUM_BLOCK) and a partial one.
  return `const w = (T, g) => { const a = new T(160); for (let i = 0; i < 160; i++) a[i] = g(i); return a; };
  const wx = ${arr(spec.arrays[0])}, wx2 = ${arr(spec.arrays[1])}, wy = ${arr(spec.arrays[2])};
  for (let q = 0; q < 24; q++) k(wx, wx2, wy, q & 3, 160 - (q & 7), (q & 1) === 1, q & 2 ? 0.5 : 0, undefined);`;
}

/** The self-contained kernel source: the factory applied to the functions' JS sources, warmed. */
function selfContained(spec: KernelSpec): string {
  const t = spec.t ? spec.t.fn.jsSource(spec.t.argTypes) : 'undefined';
  const r = spec.r ? spec.r.fn.jsSource(spec.r.argTypes) : 'undefined';
  return `(() => {
  const k = (${factorySource(spec)})(\n${t},\n${r}\n);
  ${warmSource(spec)}
  return k;
})() ${tag(spec, '')}`;
}

type Factory = (t: unknown, r: unknown) => Kernel;

/**
 * The kernel for the calling thread. Source-defined functions (built-ins, lambdas): the
 * self-contained source through `compileOnce`, cached by the functions' names, so the workers and
 * the calling thread compile the same text once each. Others: the factory compiled once per spec
 * and function objects, with `fn.js(argTypes)` bound. A few ms the first time; then a lookup by
 * function objects (or, for new function objects, by names).
 */
export function seqKernel(spec: KernelSpec): Kernel {
  const e = entryOf(spec);
  if (e.kernel !== undefined) return e.kernel;
  if (!e.bound) {
    e.source ??= selfContained(spec);
    e.kernel = compileOnce<Kernel>(e.source);
  } else {
    // Function ids in the tag: a kernel per function object, each with its own type feedback.
    const ids = ` #${fnId(spec.t?.fn)} #${fnId(spec.r?.fn)}`;
    const factory = compileOnce<Factory>(`${factorySource(spec)} ${tag(spec, ids)}`);
    e.kernel = factory(spec.t?.fn.js(spec.t.argTypes), spec.r?.fn.js(spec.r.argTypes));
  }
  return e.kernel;
}

/** The self-contained kernel source for workers (their functions' `jsSource` must be self-contained). */
export function parKernelSource(spec: KernelSpec): string {
  const e = entryOf(spec);
  e.source ??= selfContained(spec);
  return e.source;
}

/**
 * Combines results of a reduce or scan spec in order (an initial value, chunk results), the way its
 * summation needs: an f64 sum ('wide'), pairwise ('blocked'), or left to right. `values` is not
 * empty. The result of 'wide' is an f64 sum: round it with the accumulator type.
 */
export function combineInOrder(spec: Pick<KernelSpec, 'r'>, values: readonly number[]): number {
  const mode = summation(spec);
  let acc = values[0] as number;
  if (mode === 'wide') {
    for (let i = 1; i < values.length; i++) acc += values[i] as number;
    return acc;
  }
  const r = spec.r as BoundFunction;
  const op = r.fn.js(r.argTypes) as (a: number, b: number) => number;
  if (mode === 'blocked') return pairwise(op, values, 0, values.length);
  for (let i = 1; i < values.length; i++) acc = op(acc, values[i] as number);
  return acc;
}

function pairwise(op: (a: number, b: number) => number, v: readonly number[], lo: number, hi: number): number {
  if (hi - lo === 1) return v[lo] as number;
  const mid = (lo + hi) >>> 1;
  return op(pairwise(op, v, lo, mid), pairwise(op, v, mid, hi));
}

/**
 * Chunk jobs shared by the calling thread and the workers of one par step. Each thread claims the
 * next chunk with `Atomics.add(ctl, 0, 1)`, runs it, stores its result in `out[chunk]` and counts it
 * in `ctl[1]` (with a notify), until every chunk is claimed.
 */
export interface KernelBatch {
  /**
   * Over a SharedArrayBuffer. Shared queue: [next chunk to claim, chunks completed]. Split queue
   * (`split`): [front | back << 16, chunks completed by workers, lowest staged chunk, generation].
   */
  readonly ctl: Int32Array;
  /** Result of each chunk, over a SharedArrayBuffer (f64 holds every u32/i32/f32/index exactly). */
  readonly out: Float64Array;
  /** The kernel sources of the batch, each once (a message carries one copy of each). */
  readonly src: readonly string[];
  /** Jobs whose `s` is an index into `src`. */
  readonly jobs: readonly BatchJob[];
  /**
   * Split queue (see `runSplit` in staging.ts): the calling thread works through chunks from the
   * front on the caller's own arrays, workers take chunks from the back once the calling thread has
   * staged their inputs (chunks at or above `ctl[2]`); a claim moves `front` or `back` with one
   * compareExchange on `ctl[0]`. Workers wait on the generation word `ctl[3]`, which the calling
   * thread bumps (and notifies) whenever it stages a chunk or claims one.
   */
  readonly split?: boolean;
  /** Split queue: set to 1 per chunk once a worker has stored its result (over a SharedArrayBuffer). */
  readonly fin?: Int32Array;
}

/** A job as a batch carries it: `s` indexes the batch's sources. */
export type BatchJob = Omit<KernelJob, 's'> & { readonly s: number };

/** The sources and jobs of a batch: each distinct kernel source once, jobs pointing at it. */
export function batchJobs(jobs: readonly KernelJob[]): { src: string[]; jobs: BatchJob[] } {
  const src: string[] = [];
  return {
    src,
    jobs: jobs.map((j) => {
      let k = src.indexOf(j.s);
      if (k < 0) k = src.push(j.s) - 1;
      return { ...j, s: k };
    }),
  };
}

/**
 * The pool task of every CPU engine (and what the calling thread runs too): claims chunks of `batch`
 * until none is left; compiles each kernel source of the batch once per thread, before claiming
 * (`globalThis.__webdplCompile`, the compile-once cache of @webdpl/policies, installed on the
 * calling thread and in every worker). Returns the number of chunks this thread ran. Self-contained: it is
 * shipped to workers as source.
 */
export function runKernelBatch(batch: KernelBatch): number {
  const compile = (globalThis as unknown as { __webdplCompile: (source: string) => Kernel }).__webdplCompile;
  // Every kernel of the batch up front (one lookup each once compiled): a thread that finds no chunk
  // left still has them ready for the next call.
  const kernels = batch.src.map((s) => compile(s));
  const { ctl, out, jobs } = batch;
  let ran = 0;
  for (;;) {
    let c: number;
    if (batch.split) {
      const gen = Atomics.load(ctl, 3);
      const fb = Atomics.load(ctl, 0);
      const front = fb & 0xffff;
      const back = fb >>> 16;
      if (back <= front) return ran;
      if (back - 1 < Atomics.load(ctl, 2)) {
        // Not staged yet: sleep until the calling thread stages or claims a chunk (50 ms at most).
        Atomics.wait(ctl, 3, gen, 50);
        continue;
      }
      if (Atomics.compareExchange(ctl, 0, fb, front | ((back - 1) << 16)) !== fb) continue;
      c = back - 1;
    } else {
      c = Atomics.add(ctl, 0, 1);
      if (c >= jobs.length) return ran;
    }
    const j = jobs[c] as BatchJob;
    out[c] = (kernels[j.s] as Kernel)(j.x, j.x2, j.y, j.b, j.e, j.h, j.c, j.f);
    if (batch.fin !== undefined) Atomics.store(batch.fin, c, 1);
    Atomics.add(ctl, 1, 1);
    Atomics.notify(ctl, 1);
    ran++;
  }
}
