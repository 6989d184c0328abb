/**
 * replaceIf(policy, input, pred, newValue, output?) and replace(policy, input, oldValue, newValue,
 * output?): every element for which `pred` is truthy (replace: that equals `oldValue`, IEEE
 * equality: -0 equals +0, NaN equals nothing) becomes `newValue`; the others are kept. Without an
 * output the input is changed in place (std::replace_if / std::replace); with one the input is left
 * as it is and the result written there (std::replace_copy_if / std::replace_copy). Values are
 * converted to the element type first (u32/i32 wrap, f32 rounding).
 *
 * Strategy: a map. CPU: the policies' transform engine with a generated `x => test(x) ? v : x`
 * (par: per-chunk loops on the pool). GPU: the map engine (vec4 where aligned, in place on the
 * device copy when there is no output); the values travel as uniform bits, so replace has one
 * pipeline per element type whatever the values.
 * Size tiers: n = 0 returns at once; otherwise see the map engine.
 */
import {
  coerce,
  fragment,
  type GpuFunction,
  type HostArray,
  lambda,
  mangle,
  type NumericType,
  type WgslFragment,
  wgslLiteral,
} from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuTransform } from '../bricks/transform';
import { type ArrayArg, type CheckedArray, checkArray, checkFunction, checkNumber, checkOutput } from '../common/args';
import { checkInPlaceOrDisjoint } from '../common/overlap';
import { predicateFragment, resultTypeOf } from '../common/predicates';
import { bitsOf } from '../engines/map/elements';
import { mapPattern } from '../engines/map/pattern';
import { dispatch, type Pattern } from '../pattern/dispatch';
import type { FunctionArg } from '../transform-reduce/index';

/** A number as JS source (keeps -0, NaN and the infinities). */
function jsLiteral(v: number): string {
  return Object.is(v, -0) ? '-0' : String(v);
}

/** Marks GpuFunctions whose JS form is fully defined by their name (see core's lambda.ts). */
const JS_FROM_SOURCE = Symbol.for('webdpl.jsFromSource');

/** Replacers by test function, then by `type|value bits` (at most REPLACERS_PER_TEST each). */
const replacers = new WeakMap<GpuFunction, Map<string, GpuFunction>>();
const REPLACERS_PER_TEST = 64;

/**
 * `x => test(x) ? value : x` (JS truthiness) for elements of `type`, as a GpuFunction with JS,
 * worker-source and WGSL forms, the value spliced in as a literal. Cached per (test, type, value),
 * so CPU kernels compiled for it are reused across calls.
 */
function replacer(test: GpuFunction, type: NumericType, value: number): GpuFunction {
  let byValue = replacers.get(test);
  if (!byValue) {
    byValue = new Map();
    replacers.set(test, byValue);
  }
  const key = `${type}|${bitsOf(type, value)}`;
  const f = byValue.get(key);
  if (f) return f;
  const lit = jsLiteral(value);
  const made: GpuFunction & { readonly [JS_FROM_SOURCE]: boolean } = {
    // The JS form follows from the name when the test's does (built-ins, lambdas): the CPU bricks
    // then cache kernels by name, also across replacer objects.
    [JS_FROM_SOURCE]: test.builtin || (test as unknown as Record<symbol, unknown>)[JS_FROM_SOURCE] === true,
    kind: 'function',
    arity: 1,
    name: `replace_${test.name}_${type}_${bitsOf(type, value)}`,
    builtin: false,
    commutative: false,
    supports: (t) => t[0] === type && test.supports(t),
    resultType: () => type,
    identity: () => undefined,
    js: (t) => {
      const p = test.js(t);
      return (x: number) => (p(x) ? value : x);
    },
    jsSource: (t) => `((p) => (x) => (p(x) ? ${lit} : x))(${test.jsSource(t)})`,
    wgsl: (t) => {
      const pf = predicateFragment(test, t);
      const name = mangle('replace', pf.name, type, bitsOf(type, value));
      return fragment({
        name,
        deps: [pf],
        code: `fn ${name}(x: ${type}) -> ${type} { return select(x, ${wgslLiteral(type, value)}, ${pf.name}(x)); }`,
      });
    },
    subgroupOp: () => undefined,
  };
  if (byValue.size >= REPLACERS_PER_TEST) byValue.delete(byValue.keys().next().value as string);
  byValue.set(key, made);
  return made;
}

/** `fn(x0: T, i, c) -> T`: c.y's bits where pred(x0), else x0 (replaceIf on the map engine). */
function replaceIfElement(pred: GpuFunction, type: NumericType): WgslFragment {
  const pf = predicateFragment(pred, [type]);
  const name = mangle('elem_replace_if', pf.name, type);
  return fragment({
    name,
    deps: [pf],
    code: `fn ${name}(x0: ${type}, i: u32, c: vec2<u32>) -> ${type} { return select(x0, bitcast<${type}>(c.y), ${pf.name}(x0)); }`,
  });
}

/**
 * `fn(x0: T, i, c) -> T`: c.y's bits where x0 equals the element whose bits are c.x, else x0.
 * Equal (IEEE, on the bits, so compilers that assume no NaN cannot fold it): integers the same
 * bits; f32 the same bits and not NaN, or both zeros.
 */
function replaceElement(type: NumericType): WgslFragment {
  const name = mangle('elem_replace', type);
  const test =
    type === 'f32' ? '(b == c.x && (b & 0x7fffffffu) <= 0x7f800000u) || ((b | c.x) & 0x7fffffffu) == 0u' : 'b == c.x';
  return fragment({
    name,
    code: `fn ${name}(x0: ${type}, i: u32, c: vec2<u32>) -> ${type} {
  let b = bitcast<u32>(x0);
  return select(x0, bitcast<${type}>(c.y), ${test});
}`,
  });
}

/**
 * A replace on the map engine: `elem` with `constants` on the GPU (`functions`: the user's test, when
 * it is one), `x => test(x) ? v : x` on the CPU; into `output` (checked) or in place.
 */
function replacePattern(
  algorithm: string,
  a: CheckedArray,
  output: ArrayArg | undefined,
  test: GpuFunction,
  v: number,
  elem: () => WgslFragment,
  constants: readonly [number, number],
): Pattern<void> {
  let out = a;
  if (output !== undefined) {
    out = checkOutput(output, 'output', a.length, a.type);
    checkInPlaceOrDisjoint(a, out, 'input', 'output');
  }
  return mapPattern({
    algorithm,
    n: a.length,
    inputs: [a],
    output: out,
    functions: algorithm === 'replaceIf' ? [{ fn: test, argTypes: [a.type] }] : undefined,
    elem,
    constants,
    cpu: ({ backend, inputs: [x], outputs: [y] }) =>
      cpuTransform(backend, x as HostArray, y as HostArray, replacer(test, a.type, v)),
  });
}

/**
 * Replaces the elements of `input` for which `pred` is truthy by `newValue`: in place, or into
 * `output` (the input then stays as it is).
 * @param pred a unary function of the element type
 * @param newValue converted to the element type
 * @param output at least input.length elements of the input's type; the input itself or not
 *   overlapping it. @default input (in place)
 * @throws ArgumentError naming `input`, `pred`, `newValue` or `output`
 */
export function replaceIf(
  policy: Policy,
  input: ArrayArg,
  pred: FunctionArg,
  newValue: number,
  output?: ArrayArg,
): Promise<void> {
  return dispatch(policy, () => {
    const a = checkArray(input, 'input');
    const t = a.type;
    const p = checkFunction(pred, 'pred', 1);
    resultTypeOf(p, [t], 'pred');
    const v = coerce(t, checkNumber(newValue, 'newValue'));
    return replacePattern('replaceIf', a, output, p, v, () => replaceIfElement(p, t), [0, bitsOf(t, v)]);
  });
}

/** `x === o` for a captured o: the test of replace on the CPU (the lambda layer caches it by value). */
function equalsValue(o: number): GpuFunction {
  return lambda((x: number) => x === o, { captures: { o } });
}

/**
 * Replaces the elements of `input` equal to `oldValue` (IEEE equality after conversion to the
 * element type: -0 equals +0, NaN equals nothing) by `newValue`: in place, or into `output`.
 * @param output as for replaceIf. @default input (in place)
 * @throws ArgumentError naming `input`, `oldValue`, `newValue` or `output`
 */
export function replace(
  policy: Policy,
  input: ArrayArg,
  oldValue: number,
  newValue: number,
  output?: ArrayArg,
): Promise<void> {
  return dispatch(policy, () => {
    const a = checkArray(input, 'input');
    const t = a.type;
    const o = coerce(t, checkNumber(oldValue, 'oldValue'));
    const v = coerce(t, checkNumber(newValue, 'newValue'));
    return replacePattern('replace', a, output, equalsValue(o), v, () => replaceElement(t), [
      bitsOf(t, o),
      bitsOf(t, v),
    ]);
  });
}
