/**
 * Element functions of the map engine (`fn NAME([x0: T0, [x1: T1,]] i: u32, c: vec2<u32>) -> O`)
 * for the map-family algorithms.
 */
import { fragment, type GpuFunction, mangle, type NumericType, type WgslFragment } from '@webdpl/core';
import { memoFragment, valueFragment } from '../../common/predicates';

// Element functions are asked for on every call: each is built once per (function, types).

/** `fn(x0[, x1]) -> O`: a user function over the inputs (bool results stored as 1/0). */
export function functionElement(fn: GpuFunction, inTypes: readonly NumericType[], out: NumericType): WgslFragment {
  return memoFragment(fn, `elem|${out}|${inTypes.join(',')}`, () => buildFunctionElement(fn, inTypes, out));
}

function buildFunctionElement(fn: GpuFunction, inTypes: readonly NumericType[], out: NumericType): WgslFragment {
  const val = valueFragment(fn, inTypes, out);
  const name = mangle('elem_fn', val.name);
  const params = inTypes.map((t, k) => `x${k}: ${t}, `).join('');
  const args = inTypes.map((_, k) => `x${k}`).join(', ');
  return fragment({
    name,
    deps: [val],
    code: `fn ${name}(${params}i: u32, c: vec2<u32>) -> ${out} { return ${val.name}(${args}); }`,
  });
}

/**
 * `fn([x0,] i) -> O`: a user function whose last argument is the element's index as u32 (index
 * lambdas `(x, i) => ...` over one input, or `(i) => ...` over `counting(n)` with no input).
 */
export function indexFunctionElement(fn: GpuFunction, inTypes: readonly NumericType[], out: NumericType): WgslFragment {
  return memoFragment(fn, `ielem|${out}|${inTypes.join(',')}`, () => buildIndexElement(fn, inTypes, out));
}

function buildIndexElement(fn: GpuFunction, inTypes: readonly NumericType[], out: NumericType): WgslFragment {
  const val = valueFragment(fn, [...inTypes, 'u32'], out);
  const name = mangle('elem_ifn', val.name);
  const params = inTypes.map((t, k) => `x${k}: ${t}, `).join('');
  const args = [...inTypes.map((_, k) => `x${k}`), 'i'].join(', ');
  return fragment({
    name,
    deps: [val],
    code: `fn ${name}(${params}i: u32, c: vec2<u32>) -> ${out} { return ${val.name}(${args}); }`,
  });
}

/** `fn(x0) -> T`: the element itself (copy). */
export function identityElement(type: NumericType): WgslFragment {
  return byType('id', type, () => {
    const name = mangle('elem_id', type);
    return fragment({ name, code: `fn ${name}(x0: ${type}, i: u32, c: vec2<u32>) -> ${type} { return x0; }` });
  });
}

/** `fn() -> T`: the constant whose bits are c.x (fill). */
export function constantElement(type: NumericType): WgslFragment {
  return byType('const', type, () => {
    const name = mangle('elem_const', type);
    return fragment({ name, code: `fn ${name}(i: u32, c: vec2<u32>) -> ${type} { return bitcast<${type}>(c.x); }` });
  });
}

/** `fn() -> T`: start + i in the element type, start's bits in c.x (iota; u32/i32 wrap). */
export function iotaElement(type: NumericType): WgslFragment {
  return byType('iota', type, () => {
    const name = mangle('elem_iota', type);
    const body =
      type === 'u32'
        ? 'c.x + i'
        : type === 'i32'
          ? 'bitcast<i32>(c.x) + bitcast<i32>(i)'
          : 'bitcast<f32>(c.x) + f32(i)';
    return fragment({ name, code: `fn ${name}(i: u32, c: vec2<u32>) -> ${type} { return ${body}; }` });
  });
}

const typed = new Map<string, WgslFragment>();

/** The element function `kind` of `type`, built once. */
function byType(kind: string, type: NumericType, build: () => WgslFragment): WgslFragment {
  const key = `${kind}|${type}`;
  let f = typed.get(key);
  if (!f) {
    f = build();
    typed.set(key, f);
  }
  return f;
}

/** The bits of `value` as an element of `type` (for MapRequest.constants). */
export function bitsOf(type: NumericType, value: number): number {
  if (type === 'f32') return new Uint32Array(Float32Array.of(value).buffer)[0] as number;
  return value >>> 0;
}
