/**
 * Predicates and per-element functions in WGSL: wrappers that turn a user function's result into a
 * bool (truthiness), into 1/0, or into a value of the element type, and the negation of a
 * predicate as a GpuFunction (JS and WGSL forms), for allOf.
 *
 * Truthiness follows JS on every backend: a bool is itself; a number is true when it is non-zero
 * and not NaN (so `x => x % 2` works as a predicate, and NaN is falsy as in `if (NaN)`).
 */
import {
  ArgumentError,
  fragment,
  type GpuFunction,
  mangle,
  type NumericType,
  type Readback,
  type ResultType,
  type WgslFragment,
} from '@webdpl/core';

/** `fn wdpl_truthy_f32(v: f32) -> bool`: non-zero and not NaN (JS truthiness of a number). */
export const truthyF32: WgslFragment = fragment({
  name: 'wdpl_truthy_f32',
  code: `fn wdpl_truthy_f32(v: f32) -> bool {
  // |bits| in [1, 0x7f800000]: non-zero, not NaN (comparisons with NaN may be folded by compilers).
  return ((bitcast<u32>(v) & 0x7fffffffu) - 1u) < 0x7f800000u;
}`,
});

/** A WGSL bool expression of the truthiness of `expr` of type `type`. */
export function truthyExpr(type: ResultType, expr: string): string {
  switch (type) {
    case 'bool':
      return expr;
    case 'u32':
      return `(${expr} != 0u)`;
    case 'i32':
      return `(${expr} != 0i)`;
    case 'f32':
      return `wdpl_truthy_f32(${expr})`;
  }
}

/** The result type of `fn` over `argTypes`, with a clear error when it is not a number or bool. */
export function resultTypeOf(fn: GpuFunction, argTypes: readonly NumericType[], argument: string): ResultType {
  const r = fn.resultType(argTypes);
  if (r !== 'bool' && r !== 'u32' && r !== 'i32' && r !== 'f32') {
    throw new ArgumentError(argument, 'a function returning a number or a bool', String(r));
  }
  return r;
}

/**
 * `fn NAME(x0: T0[, x1: T1]) -> bool`: the truthiness of `fn`'s result (predicates).
 */
export function predicateFragment(fn: GpuFunction, argTypes: readonly NumericType[], negate = false): WgslFragment {
  // One argument: a key from a table and a lookup before any closure (fronts ask on every call).
  const key =
    (argTypes.length === 1 ? (negate ? NOT_KEYS : PRED_KEYS)[argTypes[0] as string] : undefined) ??
    `${negate ? 'not' : 'pred'}|${argTypes.join(',')}`;
  return wrappers.get(fn)?.get(key) ?? memoFragment(fn, key, () => buildPredicate(fn, argTypes, negate));
}

const PRED_KEYS: Readonly<Partial<Record<string, string>>> = { u32: 'pred|u32', i32: 'pred|i32', f32: 'pred|f32' };
const NOT_KEYS: Readonly<Partial<Record<string, string>>> = { u32: 'not|u32', i32: 'not|i32', f32: 'not|f32' };

/**
 * Wrappers built once per (function, key): fronts ask for them on every call, and building one
 * assembles WGSL text (the hot path should not).
 */
const wrappers = new WeakMap<GpuFunction, Map<string, WgslFragment>>();

/** The fragment `build` makes for `fn`, built once per (fn, key). */
export function memoFragment(fn: GpuFunction, key: string, build: () => WgslFragment): WgslFragment {
  let byKey = wrappers.get(fn);
  const hit = byKey?.get(key);
  if (hit) return hit;
  const f = build();
  if (!byKey) {
    byKey = new Map();
    wrappers.set(fn, byKey);
  }
  byKey.set(key, f);
  return f;
}

function buildPredicate(fn: GpuFunction, argTypes: readonly NumericType[], negate: boolean): WgslFragment {
  const f = fn.wgsl(argTypes);
  const r = fn.resultType(argTypes);
  const name = mangle(negate ? 'pred_not' : 'pred', f.name);
  const params = argTypes.map((t, k) => `x${k}: ${t}`).join(', ');
  const call = `${f.name}(${argTypes.map((_, k) => `x${k}`).join(', ')})`;
  const test = truthyExpr(r, call);
  return fragment({
    name,
    deps: [f, r === 'f32' ? truthyF32 : undefined],
    code: `fn ${name}(${params}) -> bool { return ${negate ? `!${test}` : test}; }`,
  });
}

/**
 * `fn NAME(x0: T0[, x1: T1]) -> R`: `fn` with a bool result turned into `R`(1 or 0), a numeric
 * result passed through (its type must then be `R`).
 */
export function valueFragment(fn: GpuFunction, argTypes: readonly NumericType[], out: NumericType): WgslFragment {
  return memoFragment(fn, `val|${out}|${argTypes.join(',')}`, () => buildValue(fn, argTypes, out));
}

function buildValue(fn: GpuFunction, argTypes: readonly NumericType[], out: NumericType): WgslFragment {
  const f = fn.wgsl(argTypes);
  const r = fn.resultType(argTypes);
  const name = mangle('val', f.name, out);
  const params = argTypes.map((t, k) => `x${k}: ${t}`).join(', ');
  const call = `${f.name}(${argTypes.map((_, k) => `x${k}`).join(', ')})`;
  const body = r === 'bool' ? `select(${out}(0), ${out}(1), ${call})` : call;
  return fragment({ name, deps: [f], code: `fn ${name}(${params}) -> ${out} { return ${body}; }` });
}

/** The numeric type a result type is held in: bool results count as u32 (1 or 0). */
export function valueTypeOf(r: ResultType): NumericType {
  return r === 'bool' ? 'u32' : r;
}

const negations = new WeakMap<GpuFunction, GpuFunction>();

/**
 * The negation of a unary or binary predicate: `x => !pred(x)` (or `(a, b) => !pred(a, b)`) with JS
 * truthiness, as a GpuFunction with JS, worker-source and WGSL forms. One object per predicate
 * (cached), so CPU kernels compiled for it are reused across calls.
 */
export function negatePredicate(pred: GpuFunction): GpuFunction {
  let neg = negations.get(pred);
  if (neg) return neg;
  const binary = pred.arity === 2;
  neg = {
    kind: 'function',
    arity: pred.arity,
    name: `not_${pred.name}`,
    builtin: false,
    commutative: false,
    supports: (t) => pred.supports(t),
    resultType: () => 'bool',
    identity: () => undefined,
    js: (t) => {
      const f = pred.js(t);
      return binary ? (a: number, b: number) => !f(a, b) : (x: number) => !f(x);
    },
    jsSource: (t) =>
      binary ? `((f) => (a, b) => !f(a, b))(${pred.jsSource(t)})` : `((f) => (x) => !f(x))(${pred.jsSource(t)})`,
    wgsl: (t) => predicateFragment(pred, t, true),
    subgroupOp: () => undefined,
  };
  negations.set(pred, neg);
  return neg;
}

// f32 values from their bits through one shared word.
const F32 = new Float32Array(1);
const F32_BITS = new Uint32Array(F32.buffer);

/**
 * Decodes the 4-byte scalar of `type` at word `index` of a readback (little-endian, as read back),
 * from its bits: no array made per call (issue 12).
 */
export function decodeScalar(type: NumericType, rb: Readback, index = 0): number {
  const bits = rb.word(index);
  switch (type) {
    case 'u32':
      return bits >>> 0;
    case 'i32':
      return bits | 0;
    case 'f32':
      F32_BITS[0] = bits;
      return F32[0] as number;
  }
}

/**
 * Built-in operators take two arguments of one type: an error naming `argument` (the second input)
 * when a built-in is applied to inputs of different types.
 */
export function checkBuiltinArgTypes(fn: GpuFunction, argTypes: readonly NumericType[], argument: string): void {
  if (fn.builtin && argTypes.length === 2 && argTypes[0] !== argTypes[1]) {
    throw new ArgumentError(
      argument,
      `${argTypes[0]} elements (operator '${fn.name}' takes two arguments of one type)`,
      `${argTypes[1]} elements`,
    );
  }
}
