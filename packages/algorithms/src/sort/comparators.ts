/**
 * The built-in comparators of the sorting family, `less` (the default) and `greater`, as GpuFunctions
 * (a JS form and a WGSL form with the same semantics on every backend).
 *
 * `less` is TypedArray#sort's order: numeric ascending, -0 before +0, NaN after everything (NaNs are
 * equivalent to each other). `greater` is its reverse for numbers (+0 before -0) and still puts NaN
 * last. The WGSL forms compare order-preserving integer key bits, so they are exact on devices that
 * flush subnormal floats.
 */
import { type GpuFunction, type NumericType, UnsupportedTypeError } from '@webdpl/core';
import { keyBitsFragment } from '../engines/radix-sort';

/** A built-in comparator: which order it is, for engines that special-case them (radix sort). */
export interface BuiltinComparator extends GpuFunction {
  readonly order: 'ascending' | 'descending';
}

const TYPES: readonly NumericType[] = ['u32', 'i32', 'f32'];

function jsSourceOf(order: 'ascending' | 'descending', t: NumericType): string {
  const op = order === 'ascending' ? '<' : '>';
  if (t !== 'f32') return `(a, b) => a ${op} b`;
  return `(a, b) => a ${op} b || (a === b && a === 0 && 1 / a ${op} 1 / b) || (a === a && b !== b)`;
}

function comparator(name: 'less' | 'greater', order: 'ascending' | 'descending'): BuiltinComparator {
  const compiled = new Map<NumericType, (a: number, b: number) => boolean>();
  const check = (argTypes: readonly NumericType[]): NumericType => {
    const t = argTypes[0] as NumericType;
    if (!TYPES.includes(t)) throw new UnsupportedTypeError(`comparator ${name} is not defined for ${t}`);
    return t;
  };
  return {
    kind: 'function',
    arity: 2,
    name,
    builtin: true,
    commutative: false,
    order,
    supports: (argTypes) => TYPES.includes(argTypes[0] as NumericType) && argTypes[0] === argTypes[1],
    resultType: () => 'bool',
    identity: () => undefined,
    jsSource: (argTypes) => jsSourceOf(order, check(argTypes)),
    js: (argTypes) => {
      const t = check(argTypes);
      let f = compiled.get(t);
      if (!f) {
        f = new Function(`return (${jsSourceOf(order, t)});`)() as (a: number, b: number) => boolean;
        compiled.set(t, f);
      }
      return f;
    },
    wgsl: (argTypes) => {
      const t = check(argTypes);
      const bits = keyBitsFragment(t, order === 'descending');
      const fname = `cmp_${name}_${t}`;
      const conv = t === 'u32' ? '' : 'bitcast<u32>';
      return {
        name: fname,
        code: `fn ${fname}(a: ${t}, b: ${t}) -> bool { return ${bits.name}(${conv}(a)) < ${bits.name}(${conv}(b)); }`,
        deps: [bits],
        enables: [],
        workgroupBytes: 0,
      };
    },
    subgroupOp: () => undefined,
  };
}

/** Ascending order (TypedArray#sort's): -0 before +0, NaN last. The default comparator. */
export const less: BuiltinComparator = comparator('less', 'ascending');

/** Descending order: +0 before -0, NaN still last. */
export const greater: BuiltinComparator = comparator('greater', 'descending');

/** The built-in comparator `fn` is, if it is one. */
export function builtinOrder(fn: GpuFunction): 'ascending' | 'descending' | undefined {
  return fn === less ? 'ascending' : fn === greater ? 'descending' : undefined;
}
