/**
 * User lambdas: a pure arrow function written once, run on the CPU as a JS function and on the GPU
 * as its WGSL translation, with the same results on both (see `lambda` for the exact semantics).
 * Also `toGpuFunction`, which normalizes every form of function an algorithm accepts.
 */
import { ArgumentError, describe, LambdaError, UnsupportedTypeError } from '../errors';
import { type GpuFunction, isGpuFunction, type ResultType } from '../operators';
import type { NumericType } from '../types';
import { coerce } from '../types';
import { fragment, mangle, type WgslFragment } from '../wgsl/fragment';
import { compileJs, jsFunctionSource } from './emit-js';
import { wgslFunction } from './emit-wgsl';
import { inferTypes } from './infer';
import { functionSource, type ParsedLambda, parameterNames, parseLambda } from './parse';

/** A function `lambda` accepts: one or two number parameters, a number or boolean result. */
export type LambdaFn = (...args: number[]) => number | boolean;

/** Options of `lambda`. */
export interface LambdaOptions {
  /**
   * Values of outside variables the body names, inlined as constants: numbers (an integer value acts
   * like an integer literal, any other like a float literal) or booleans.
   * @default {}
   */
  readonly captures?: Readonly<Record<string, number | boolean>>;
  /**
   * Identity element for reductions with this function; `identity(type)` returns it converted to
   * the element type (wrapping for integers, Math.fround for f32).
   * @default undefined (no identity)
   */
  readonly identity?: number;
  /**
   * Whether f(a, b) == f(b, a) for all a, b (lets reductions reorder operands).
   * @default false
   */
  readonly commutative?: boolean;
}

/** The explicit escape hatch: a JS function plus the body of its WGSL function. */
export interface ExplicitFunction {
  /** JS form; its parameter names are the WGSL function's parameter names. */
  readonly js: (...args: number[]) => number | boolean;
  /** WGSL function body (statements, ending in `return ...;`), using the JS parameter names. */
  readonly wgsl: string;
  /** Result type, or a function of the argument types. @default the first argument's type */
  readonly resultType?: ResultType | ((argTypes: readonly NumericType[]) => ResultType);
  /** Identity for reductions (converted to the element type). @default undefined */
  readonly identity?: number;
  /** Whether f(a, b) == f(b, a). @default false */
  readonly commutative?: boolean;
}

const SUPPORTED: readonly NumericType[] = ['u32', 'i32', 'f32'];

/**
 * Marks GpuFunctions whose JS form is fully defined by `name` and `jsSource` (lambdas: the name
 * hashes source, captures, identity and commutativity). The CPU bricks cache their generated kernels
 * by name for these (a registered symbol, so no import is needed to read it); functions without it
 * (the explicit `{ js, wgsl }` form, whose `js` may be a closure) are cached by object identity.
 */
export const JS_FROM_SOURCE: unique symbol = Symbol.for('webdpl.jsFromSource') as never;
const CACHE_LIMIT = 1024;

/** 64-bit FNV-1a style hash of `s` as 16 hex digits (two 32-bit lanes with different seeds). */
export function hashString(s: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x9747b28c;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    h2 ^= h2 >>> 15;
  }
  return (h1 >>> 0).toString(16).padStart(8, '0') + (h2 >>> 0).toString(16).padStart(8, '0');
}

function numberKey(v: number): string {
  return Object.is(v, -0) ? '-0' : String(v);
}

function capturesKey(captures: Readonly<Record<string, number | boolean>>): string {
  return Object.keys(captures)
    .sort()
    .map((k) => {
      const v = captures[k] as number | boolean;
      return `${k}=${typeof v === 'boolean' ? v : numberKey(v)}`;
    })
    .join(',');
}

/** Whether `f` returns without throwing (a function's `supports`: whether it translates for some types). */
export function succeeds(f: () => unknown): boolean {
  try {
    f();
    return true;
  } catch {
    return false;
  }
}

/** Bounded map: drops the oldest entry when full. */
function remember<V>(map: Map<string, V>, key: string, value: V): V {
  if (map.size >= CACHE_LIMIT) map.delete(map.keys().next().value as string);
  map.set(key, value);
  return value;
}

/** One translation of a lambda for one list of argument types. */
interface Translation {
  readonly resultType: ResultType;
  readonly jsSource: string;
  readonly wgsl: WgslFragment;
  js?: (...args: number[]) => number | boolean;
}

/** A parsed lambda shared by every `lambda()` call with the same source and captures. */
export interface LambdaCore {
  readonly parsed: ParsedLambda;
  /** Hash of source and captures: names the WGSL fragments. */
  readonly hash: string;
  readonly translations: Map<string, Translation>;
}

const cores = new Map<string, LambdaCore>();
let parses = 0;

/** How many lambda sources this thread has parsed (tests: a cached call parses nothing). */
export function lambdaParseCount(): number {
  return parses;
}

function coreFor(source: string, captures: Readonly<Record<string, number | boolean>>): LambdaCore {
  const key = `${source}\u0000${capturesKey(captures)}`;
  const hit = cores.get(key);
  if (hit) return hit;
  const parsed = parseLambda(source, captures);
  parses++;
  return remember(cores, key, { parsed, hash: hashString(key), translations: new Map() });
}

function checkCaptures(captures: unknown): Readonly<Record<string, number | boolean>> {
  if (captures === undefined) return {};
  if (typeof captures !== 'object' || captures === null || Array.isArray(captures)) {
    throw new ArgumentError('options.captures', 'an object of numbers and booleans', describe(captures));
  }
  const out: Record<string, number | boolean> = {};
  for (const [k, v] of Object.entries(captures)) {
    if (typeof v !== 'number' && typeof v !== 'boolean') {
      throw new LambdaError(
        `lambda: capture '${k}' must be a number or a boolean (inlined into the GPU code), got ${describe(v)}`,
      );
    }
    out[k] = v;
  }
  return Object.freeze(out);
}

/** Argument types for a function of `arity` parameters: missing entries repeat the first. */
/** Whether every type is one a lambda takes (a loop: this runs on every call's checks). */
function allSupported(types: readonly NumericType[]): boolean {
  for (let k = 0; k < types.length; k++) if (!SUPPORTED.includes(types[k] as NumericType)) return false;
  return true;
}

function resolveTypes(argTypes: readonly NumericType[], arity: number, what: string): readonly NumericType[] {
  // The common case without allocating: as many valid types as parameters.
  if (Array.isArray(argTypes) && argTypes.length === arity && allSupported(argTypes)) return argTypes;
  if (!Array.isArray(argTypes) || argTypes.length === 0) {
    throw new ArgumentError('argTypes', `a list of ${arity} element type(s)`, describe(argTypes));
  }
  const types = Array.from({ length: arity }, (_, i) => (argTypes[i] ?? argTypes[0]) as NumericType);
  for (const t of types) {
    if (!SUPPORTED.includes(t)) {
      throw new UnsupportedTypeError(`${what}: element type ${String(t)} is not supported (u32, i32 and f32 are)`);
    }
  }
  return types;
}

/** The translations' key of (checked) argument types. */
function typesKey(types: readonly NumericType[]): string {
  return types.length === 1 ? (types[0] as string) : types.length === 2 ? `${types[0]},${types[1]}` : types.join(',');
}

/**
 * The translation for `argTypes` when one was made and they need no resolving (one valid type per
 * parameter): no closure or array per check on the hot path (issue 12).
 */
function translated(core: LambdaCore, argTypes: readonly NumericType[], arity: number): Translation | undefined {
  if (!Array.isArray(argTypes) || argTypes.length !== arity || !allSupported(argTypes)) return undefined;
  return core.translations.get(typesKey(argTypes));
}

function translate(core: LambdaCore, types: readonly NumericType[]): Translation {
  const key = typesKey(types);
  let tr = core.translations.get(key);
  if (!tr) {
    const body = inferTypes(core.parsed, types);
    const arity = core.parsed.params.length;
    tr = {
      resultType: body.type,
      jsSource: jsFunctionSource(body, arity),
      wgsl: wgslFunction(mangle('lambda', core.hash, ...types), body, types),
    };
    core.translations.set(key, tr);
  }
  return tr;
}

/**
 * Turns a pure arrow function into a GpuFunction: the CPU runs a JS form and the GPU a WGSL
 * translation, with the same results (exceptions listed below).
 *
 * Accepted: `(x) => expr`, `(a, b) => expr`, and `function (x) { return expr; }` (one return). The
 * expression may use numeric and boolean literals, the parameters, `options.captures`, NaN, Infinity,
 * unary `- + ! ~`, binary `+ - * / % ** & | ^ << >> >>> == === != !== < <= > >=`, `&& || ?:`,
 * `Math.min/max/abs/sqrt/floor/ceil/round/trunc/exp/log/pow/sin/cos/tan/fround/sign` and
 * `Math.PI/E`. Anything else (free variables, statements, other calls, closures, `this`, `new`,
 * other member access, strings) throws a LambdaError naming the construct and its position in the
 * source. Native and bound functions throw too (their source cannot be read).
 *
 * Semantics (the JS form follows WGSL exactly; JS numbers hold the element type's values):
 * - Types come from the argument element types (u32, i32, f32). Integer arithmetic stays in the
 *   integer type and wraps: u32 modulo 2^32, i32 two's complement (`x * 2` on u32 2^31 gives 0).
 *   u32 combined with i32 runs in i32; comparisons of u32 with i32 compare values.
 * - Integer literals (and integer captures) take the other operand's type; a non-integer literal or
 *   an f32 value promotes the operation to f32 (`x * 0.5` on u32 is f32; 1.0 counts as the integer 1,
 *   since bundlers print it as 1: use Math.fround(x) to force f32). Constants on their own take the
 *   first argument's type.
 * - Integer division truncates toward zero. Division and remainder by zero follow WGSL on both
 *   sides: `x / 0 == x`, `x % 0 == 0`, and for i32 `MIN / -1 == MIN`, `MIN % -1 == 0`. Integer `**`
 *   wraps (by squaring); a negative i32 exponent gives the truncated value (1, -1 or 0).
 * - Bitwise operators convert f32 operands with JS ToInt32 (`x | 0` truncates and wraps) and keep the
 *   integer type: `>>` is arithmetic on i32 and logical on u32; `>>>` always gives u32. Shift counts
 *   use their low 5 bits, as in JS.
 * - Comparisons and `!` give bool (`x => x > 0.5` is a predicate with result type 'bool'); `&&`,
 *   `||` and `?:` give bool when both sides are bool, else a number picked as JS picks it. A bool used
 *   as a number is 0 or 1; a number used as a condition is false for 0, -0 and NaN.
 * - f32: the JS form rounds every intermediate with Math.fround; the WGSL form passes every f32
 *   result through a rounding barrier, so shader compilers cannot contract a * b + c into an fma or
 *   reassociate sums (lavapipe does both otherwise). + - * / and comparisons are then exact (IEEE;
 *   WGSL allows 2.5 ulp for division on other devices; division by zero gives JS's infinities and
 *   NaN). `%` is an exact fmod with the dividend's sign. NaN compares as in JS (every comparison but
 *   != is false), also on compilers that assume no NaN: comparisons, min/max, abs, sign and
 *   truthiness work on the bits. Math.min and Math.max propagate NaN and order -0 < +0. Subnormals
 *   are kept on lavapipe; WGSL lets other devices flush them to zero in arithmetic.
 * - Math.round is JS's (halves round up, Math.round(-0.5) is -0), computed exactly on the GPU, not
 *   with WGSL's round (half to even) nor floor(x + 0.5) (wrong at 0.49999997 and above 2^23).
 *   floor/ceil/round/trunc/abs/sign on integers keep the integer (abs of i32 MIN is MIN).
 * - sqrt, exp, log, pow, sin, cos, tan (arguments promote to f32; f32 `**` is pow) give JS's results
 *   for NaN, infinities, zeros, negative and tiny arguments; elsewhere the GPU value is the device's,
 *   within WGSL's accuracy, not bit-exact. Tests on lavapipe hold sqrt, log, sin, cos, tan to 1e-6
 *   relative (+1e-6 absolute; sin/cos/tan for |x| <= 100) and exp, pow to 1e-5 relative. Integer
 *   to f32 conversion rounds to nearest even.
 * - Constant subexpressions are evaluated once at translation with the JS form's semantics.
 *
 * @param fn the arrow function; it must not read outside variables except through captures
 * @param options captures, and the identity and commutativity used by reductions
 * @returns a GpuFunction whose `name` is a hash of the source, captures and options
 * @throws LambdaError for unsupported constructs, free variables, unreadable sources, bad captures
 */
export function lambda(fn: LambdaFn, options: LambdaOptions = {}): GpuFunction {
  if (typeof options !== 'object' || options === null) {
    throw new ArgumentError('options', 'an object { captures?, identity?, commutative? }', describe(options));
  }
  const source = functionSource(fn);
  const captures = checkCaptures(options.captures);
  const identity = options.identity;
  if (identity !== undefined && typeof identity !== 'number') {
    throw new ArgumentError('options.identity', 'a number', describe(identity));
  }
  const commutative = options.commutative ?? false;
  if (typeof commutative !== 'boolean') {
    throw new ArgumentError('options.commutative', 'a boolean', describe(commutative));
  }
  const core = coreFor(source, captures);
  const arity = core.parsed.params.length as 1 | 2;
  // Type errors do not depend on the argument types: report them now rather than at first use.
  translate(
    core,
    Array.from({ length: arity }, () => 'f32'),
  );
  const name = `lambda_${hashString(
    `${source}\u0000${capturesKey(captures)}\u0000${identity === undefined ? '' : numberKey(identity)}\u0000${commutative}`,
  )}`;
  return functionOfCore(core, name, { identity, commutative, captures });
}

/**
 * The GpuFunction of a parsed lambda (`lambda`, and each element of a tuple lambda's result, whose
 * core holds the flattened parameters): translated per list of argument types, cached in `core`.
 * `captures` marks a function that tuple lambdas may parse again from its source.
 */
export function functionOfCore(
  core: LambdaCore,
  name: string,
  o: { identity?: number; commutative: boolean; captures?: Readonly<Record<string, number | boolean>> },
): GpuFunction {
  const arity = core.parsed.params.length;
  const what = `lambda ${name}`;
  const get = (argTypes: readonly NumericType[]) =>
    translated(core, argTypes, arity) ?? translate(core, resolveTypes(argTypes, arity, what));
  const identity = o.identity;
  const f: GpuFunction & { [JS_FROM_SOURCE]: true } = {
    [JS_FROM_SOURCE]: true,
    kind: 'function',
    arity,
    name,
    builtin: false,
    commutative: o.commutative,
    supports: (argTypes) => translated(core, argTypes, arity) !== undefined || succeeds(() => get(argTypes)),
    resultType: (argTypes) => get(argTypes).resultType,
    identity: (type) => (identity === undefined ? undefined : coerce(type, identity)),
    js: (argTypes) => {
      const tr = get(argTypes);
      tr.js ??= compileJs(tr.jsSource);
      return tr.js;
    },
    jsSource: (argTypes) => get(argTypes).jsSource,
    wgsl: (argTypes) => get(argTypes).wgsl,
    subgroupOp: () => undefined,
    source: core.parsed.source,
    ...(o.captures ? { captures: o.captures } : {}),
  };
  return f;
}

const WGSL_RESERVED = new Set(
  (
    'alias break case const const_assert continue continuing default diagnostic discard else enable false fn for if ' +
    'let loop override requires return struct switch true var while bool f16 f32 i32 u32 array atomic ptr sampler ' +
    'texture_2d vec2 vec3 vec4 mat2x2 mat3x3 mat4x4 select bitcast'
  ).split(' '),
);

const RESULT_TYPES: readonly ResultType[] = ['u32', 'i32', 'f32', 'bool'];

function explicitFunction(x: ExplicitFunction, argument: string, arity: 1 | 2): GpuFunction {
  if (typeof x.wgsl !== 'string' || x.wgsl.trim() === '') {
    throw new ArgumentError(
      `${argument}.wgsl`,
      "the WGSL function body as a string, e.g. 'return a + b;'",
      describe(x.wgsl),
    );
  }
  const js = x.js;
  let source: string;
  let params: { names: readonly string[]; method: boolean };
  try {
    source = functionSource(js);
    params = parameterNames(source);
  } catch (e) {
    if (!(e instanceof LambdaError)) throw e;
    throw new ArgumentError(
      `${argument}.js`,
      'a JS function whose source can be read (its parameter names are the WGSL parameter names)',
      describe(js),
    );
  }
  if (params.names.length !== arity) {
    throw new ArgumentError(`${argument}.js`, `a function of ${arity} parameter(s)`, `one of ${params.names.length}`);
  }
  for (const n of params.names) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(n) || n.startsWith('__') || n === '_' || WGSL_RESERVED.has(n)) {
      throw new ArgumentError(`${argument}.js`, 'parameter names that are valid WGSL identifiers', `'${n}'`);
    }
  }
  const rt = x.resultType;
  if (rt !== undefined && typeof rt !== 'function' && !RESULT_TYPES.includes(rt)) {
    throw new ArgumentError(
      `${argument}.resultType`,
      "'u32', 'i32', 'f32', 'bool' or a function of the argument types",
      describe(rt),
    );
  }
  if (x.identity !== undefined && typeof x.identity !== 'number') {
    throw new ArgumentError(`${argument}.identity`, 'a number', describe(x.identity));
  }
  if (x.commutative !== undefined && typeof x.commutative !== 'boolean') {
    throw new ArgumentError(`${argument}.commutative`, 'a boolean', describe(x.commutative));
  }
  const identity = x.identity;
  const jsSource = params.method ? `function ${source}` : source;
  const name = `fn_${hashString(`${source}\u0000${x.wgsl}\u0000${String(rt)}\u0000${identity}\u0000${x.commutative}`)}`;
  const what = `function ${name}`;
  const resultType = (argTypes: readonly NumericType[]): ResultType => {
    const types = resolveTypes(argTypes, arity, what);
    const r = typeof rt === 'function' ? rt(types) : (rt ?? (types[0] as NumericType));
    if (!RESULT_TYPES.includes(r)) throw new ArgumentError(`${argument}.resultType`, 'a result type', describe(r));
    return r;
  };
  const fragments = new Map<string, WgslFragment>();
  return {
    kind: 'function',
    arity,
    name,
    builtin: false,
    commutative: x.commutative ?? false,
    supports: (argTypes) => succeeds(() => resultType(argTypes)),
    resultType,
    identity: (type) => (identity === undefined ? undefined : coerce(type, identity)),
    js: (argTypes) => {
      resolveTypes(argTypes, arity, what);
      return js;
    },
    jsSource: (argTypes) => {
      resolveTypes(argTypes, arity, what);
      return jsSource;
    },
    wgsl: (argTypes) => {
      const types = resolveTypes(argTypes, arity, what);
      const fname = mangle(name, ...types);
      let f = fragments.get(fname);
      if (!f) {
        const ps = params.names.map((p, i) => `${p}: ${types[i]}`).join(', ');
        f = fragment({ name: fname, code: `fn ${fname}(${ps}) -> ${resultType(types)} {\n${x.wgsl.trim()}\n}` });
        fragments.set(fname, f);
      }
      return f;
    },
    subgroupOp: () => undefined,
    source,
  };
}

/** toGpuFunction's lambdas by function object (a hit costs one WeakMap lookup). */
const byFunction = new WeakMap<object, GpuFunction>();
/** ... and by source text, for a new arrow function of a source seen before (an inline arrow). */
const bySource = new Map<string, GpuFunction>();

/** `lambda(fn)` without options, cached by function object, then by source text. */
function arrowFunction(fn: LambdaFn): GpuFunction {
  let f = byFunction.get(fn);
  if (f !== undefined) return f;
  const source = functionSource(fn);
  f = bySource.get(source);
  if (f === undefined) {
    f = lambda(fn);
    remember(bySource, source, f);
    // Only the first function object of a source is remembered by identity: an inline arrow is a
    // new object at every call, and a WeakMap entry per call costs more than the source lookup.
    byFunction.set(fn, f);
  }
  return f;
}

/** Explicit functions already normalized, by their `js` function; reused while every field matches. */
const explicitByJs = new WeakMap<object, { spec: ExplicitFunction; arity: 1 | 2; fn: GpuFunction }[]>();

/**
 * `explicitFunction`, cached by the identity of `x.js` (never by its source: closures with equal
 * sources differ) and the other fields' values, so a call passing the same `js` costs a lookup.
 */
function cachedExplicit(x: ExplicitFunction, argument: string, arity: 1 | 2): GpuFunction {
  const same = (a: ExplicitFunction) =>
    a.wgsl === x.wgsl &&
    a.resultType === x.resultType &&
    Object.is(a.identity, x.identity) &&
    a.commutative === x.commutative;
  let list = explicitByJs.get(x.js);
  const hit = list?.find((e) => e.arity === arity && same(e.spec));
  if (hit) return hit.fn;
  const fn = explicitFunction(x, argument, arity);
  if (!list) {
    list = [];
    explicitByJs.set(x.js, list);
  }
  if (list.length >= 8) list.shift();
  list.push({
    spec: { js: x.js, wgsl: x.wgsl, resultType: x.resultType, identity: x.identity, commutative: x.commutative },
    arity,
    fn,
  });
  return fn;
}

/**
 * Normalizes a function argument of an algorithm into a GpuFunction of `arity` parameters:
 * - a GpuFunction (a built-in operator such as `plus`, or from `lambda`) is checked and returned;
 * - a plain arrow function goes through `lambda` (no captures), cached by function object and then by
 *   source text: an inline arrow written at the call site costs a lookup, not a parse or a compile;
 * - `{ js, wgsl, resultType?, identity?, commutative? }` is the explicit escape hatch: `js` runs on
 *   the CPU as is, `wgsl` is the WGSL function body using the JS parameter names, e.g.
 *   `{ js: (a, b) => a + b, wgsl: 'return a + b;' }`; cached by the identity of `js` (and the other
 *   fields' values), never by its source.
 *
 * @param x what the caller passed
 * @param argument the argument's name, for error messages
 * @param arity 1 (transforms, predicates) or 2 (reductions, scans, comparators)
 * @throws ArgumentError naming `argument` when x is none of these or has the wrong arity
 */
export function toGpuFunction(x: unknown, argument: string, arity: 1 | 2): GpuFunction {
  const example = arity === 1 ? '(x) => x * 2' : '(a, b) => a + b';
  const expected = `a GpuFunction (e.g. plus), an arrow function such as ${example}, or { js, wgsl }`;
  if (isGpuFunction(x)) {
    if (x.arity !== arity) {
      throw new ArgumentError(argument, `a function of ${arity} argument(s)`, `${x.name}, of ${x.arity}`);
    }
    return x;
  }
  if (typeof x === 'function') {
    const f = arrowFunction(x as LambdaFn);
    if (f.arity !== arity) {
      throw new ArgumentError(argument, `a function of ${arity} parameter(s) such as ${example}`, `one of ${f.arity}`);
    }
    return f;
  }
  if (typeof x === 'object' && x !== null && typeof (x as ExplicitFunction).js === 'function' && 'wgsl' in x) {
    return cachedExplicit(x as ExplicitFunction, argument, arity);
  }
  throw new ArgumentError(argument, expected, describe(x));
}
