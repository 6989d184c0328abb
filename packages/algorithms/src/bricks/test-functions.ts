/**
 * Test support: GpuFunctions written inline (the lambda translator lives elsewhere), with a JS source
 * per element type, for the CPU engine tests. CPU-only: their WGSL form throws.
 */
import type { GpuFunction, NumericType, ResultType } from '@webdpl/core';

export interface InlineFunctionSpec {
  readonly name: string;
  readonly arity: 1 | 2;
  /** Self-contained JS function expression for the argument types. */
  readonly source: (argTypes: readonly NumericType[]) => string;
  /** @default the first argument type */
  readonly resultType?: (argTypes: readonly NumericType[]) => ResultType;
  /** @default false */
  readonly commutative?: boolean;
  /** @default none */
  readonly identity?: (t: NumericType) => number | undefined;
}

/** A CPU-only GpuFunction from JS sources. */
export function inlineFunction(spec: InlineFunctionSpec): GpuFunction {
  const compiled = new Map<string, (...args: number[]) => number | boolean>();
  return {
    kind: 'function',
    arity: spec.arity,
    name: spec.name,
    builtin: false,
    commutative: spec.commutative ?? false,
    supports: () => true,
    resultType: (argTypes) => (spec.resultType ? spec.resultType(argTypes) : (argTypes[0] as NumericType)),
    identity: (t) => spec.identity?.(t),
    js: (argTypes) => {
      const key = argTypes.join(',');
      let f = compiled.get(key);
      if (!f) {
        f = new Function(`return (${spec.source(argTypes)});`)() as (...args: number[]) => number | boolean;
        compiled.set(key, f);
      }
      return f;
    },
    jsSource: (argTypes) => spec.source(argTypes),
    wgsl: () => {
      throw new Error(`${spec.name}: CPU-only test function`);
    },
    subgroupOp: () => undefined,
  };
}

/** Wraps a JS expression result to the element semantics of `t`. */
function wrap(t: NumericType, expr: string): string {
  return t === 'u32' ? `((${expr}) >>> 0)` : t === 'i32' ? `((${expr}) | 0)` : `Math.fround(${expr})`;
}

/** "Last non-zero": `(a, b) => b !== 0 ? b : a`, identity 0. Associative, not commutative. */
export const lastNonZero: GpuFunction = inlineFunction({
  name: 'lastNonZero',
  arity: 2,
  source: () => '(a, b) => (b !== 0 ? b : a)',
  identity: () => 0,
});

/** x * 3 + 1 in the element type. */
export const times3plus1: GpuFunction = inlineFunction({
  name: 'times3plus1',
  arity: 1,
  source: ([t]) =>
    t === 'f32' ? `(x) => ${wrap('f32', 'x * 3 + 1')}` : `(x) => ${wrap(t as NumericType, 'Math.imul(x, 3) + 1')}`,
});

/** x % 7 === 3 (a predicate). */
export const mod7is3: GpuFunction = inlineFunction({
  name: 'mod7is3',
  arity: 1,
  source: () => '(x) => Math.abs(Math.trunc(x)) % 7 === 3',
  resultType: () => 'bool',
});

/** a * b in the element type (binary transform: dot products). */
export const times: GpuFunction = inlineFunction({
  name: 'times',
  arity: 2,
  source: ([t]) =>
    t === 'f32' ? `(a, b) => ${wrap('f32', 'a * b')}` : `(a, b) => ${wrap(t as NumericType, 'Math.imul(a, b)')}`,
  commutative: true,
});

/** A predicate true for one value: x === value. */
export function equals(value: number): GpuFunction {
  return inlineFunction({
    name: `equals${value}`,
    arity: 1,
    source: () => `(x) => x === ${value}`,
    resultType: () => 'bool',
  });
}
