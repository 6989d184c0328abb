/**
 * `keyEqual`: the default key equality of the by-key family, equivalence in TypedArray#sort's
 * total order (the order `less`, sort, merge and the set operations use): integers compare equal as
 * values; for f32, -0 and +0 are different keys (sort puts -0 first) and every NaN is the same key
 * (sort puts them together, last), i.e. JS `Object.is`. A GpuFunction with the same semantics in JS
 * and WGSL (the WGSL form compares bits, so no compiler folds the NaN test away).
 */
import { fragment, type GpuFunction, type NumericType, UnsupportedTypeError } from '@webdpl/core';

const TYPES: readonly NumericType[] = ['u32', 'i32', 'f32'];

function jsSourceOf(t: NumericType): string {
  return t === 'f32' ? '(a, b) => (a === b ? a !== 0 || 1 / a === 1 / b : a !== a && b !== b)' : '(a, b) => a === b';
}

function check(argTypes: readonly NumericType[]): NumericType {
  const t = argTypes[0] as NumericType;
  if (!TYPES.includes(t)) throw new UnsupportedTypeError(`keyEqual is not defined for ${t}`);
  return t;
}

const compiled = new Map<NumericType, (a: number, b: number) => boolean>();

/** Key equality in TypedArray#sort's order: `Object.is` (-0 and +0 differ, NaNs are one key). */
export const keyEqual: GpuFunction = {
  kind: 'function',
  arity: 2,
  name: 'keyEqual',
  builtin: true,
  commutative: true,
  supports: (argTypes) => TYPES.includes(argTypes[0] as NumericType) && argTypes[0] === argTypes[1],
  resultType: () => 'bool',
  identity: () => undefined,
  jsSource: (argTypes) => jsSourceOf(check(argTypes)),
  js: (argTypes) => {
    const t = check(argTypes);
    let f = compiled.get(t);
    if (!f) {
      f = new Function(`return (${jsSourceOf(t)});`)() as (a: number, b: number) => boolean;
      compiled.set(t, f);
    }
    return f;
  },
  wgsl: (argTypes) => {
    const t = check(argTypes);
    const name = `wdpl_key_eq_${t}`;
    return fragment({
      name,
      code:
        t === 'f32'
          ? `fn ${name}(a: f32, b: f32) -> bool {
  let ua = bitcast<u32>(a);
  let ub = bitcast<u32>(b);
  return ua == ub || ((ua & 0x7fffffffu) > 0x7f800000u && (ub & 0x7fffffffu) > 0x7f800000u);
}`
          : `fn ${name}(a: ${t}, b: ${t}) -> bool { return a == b; }`,
    });
  },
  subgroupOp: () => undefined,
};
