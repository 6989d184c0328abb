/** `minus`: a - b in the element type (u32/i32 wrap, f32 rounding); the default of adjacentDifference. */
import { fragment, type GpuFunction, mangle, type NumericType, UnsupportedTypeError } from '@webdpl/core';

const TYPES: readonly NumericType[] = ['u32', 'i32', 'f32'];

function typeOf(argTypes: readonly NumericType[]): NumericType {
  const t = argTypes[0] as NumericType;
  if (!TYPES.includes(t)) throw new UnsupportedTypeError(`operator minus is not defined for ${t}`);
  return t;
}

const SOURCES: Record<NumericType, string> = {
  u32: '(a, b) => (a - b) >>> 0',
  i32: '(a, b) => (a - b) | 0',
  f32: '(a, b) => Math.fround(a - b)',
};

const compiled = new Map<NumericType, (a: number, b: number) => number>();

/** a - b: not commutative, no identity (so not a reduction operator). */
export const minus: GpuFunction = {
  kind: 'function',
  arity: 2,
  name: 'minus',
  builtin: true,
  commutative: false,
  supports: (argTypes) => TYPES.includes(argTypes[0] as NumericType),
  resultType: (argTypes) => typeOf(argTypes),
  identity: () => undefined,
  js: (argTypes) => {
    const t = typeOf(argTypes);
    let f = compiled.get(t);
    if (!f) {
      f = new Function(`return (${SOURCES[t]});`)() as (a: number, b: number) => number;
      compiled.set(t, f);
    }
    return f;
  },
  jsSource: (argTypes) => SOURCES[typeOf(argTypes)],
  wgsl: (argTypes) => {
    const t = typeOf(argTypes);
    const name = mangle('op', 'minus', t);
    return fragment({ name, code: `fn ${name}(a: ${t}, b: ${t}) -> ${t} {\n  return a - b;\n}` });
  },
  subgroupOp: () => undefined,
};
