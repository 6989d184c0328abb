/**
 * Operators and functions with a JS form and a WGSL form. Built-in binary operators carry their
 * identity and whether they commute; user lambdas (see lambda.ts) produce the same shape.
 *
 * Float minimum/maximum follow Math.min/Math.max exactly on every device: NaN if either operand is
 * NaN, and -0 < +0. That makes them associative and commutative, so GPU trees and CPU loops agree.
 */
import { UnsupportedTypeError } from './errors';
import type { NumericType } from './types';
import { fragment, mangle, type WgslFragment } from './wgsl/fragment';

/** The WGSL type of a function's result: a numeric type or bool (predicates). */
export type ResultType = NumericType | 'bool';

/** Subgroup built-ins an operator maps to (subgroupAdd, subgroupInclusiveAdd, ...). */
export type SubgroupOp = 'Add' | 'Mul' | 'Min' | 'Max' | 'And' | 'Or' | 'Xor';

/**
 * A function usable by algorithms on every backend: unary (transform, predicate) or binary
 * (reduction and scan operators, binary transform, comparators).
 */
export interface GpuFunction {
  readonly kind: 'function';
  /**
   * Number of arguments: 1 or 2 (the components of a tuple lambda, see `tupleFunction`, take one
   * argument per flattened parameter: up to 8).
   */
  readonly arity: number;
  /** Stable identity: built-in name, or a hash of a lambda's source and captures. */
  readonly name: string;
  /** True for built-in operators. */
  readonly builtin: boolean;
  /** Binary operators: whether a op b == b op a. */
  readonly commutative: boolean;
  /** Whether the function supports these argument types (e.g. bitAnd has no f32 form). */
  supports(argTypes: readonly NumericType[]): boolean;
  /** The type of the result for these argument types. */
  resultType(argTypes: readonly NumericType[]): ResultType;
  /** The identity element for a reduction over `type`, if the operator has one. */
  identity(type: NumericType): number | undefined;
  /** JS form with exactly the WGSL form's semantics for these argument types. */
  js(argTypes: readonly NumericType[]): (...args: number[]) => number | boolean;
  /**
   * Source of a self-contained JS function expression with the same semantics as `js(argTypes)`,
   * for worker threads (which rebuild functions from source). No free variables but `Math`.
   */
  jsSource(argTypes: readonly NumericType[]): string;
  /** WGSL form: declares `fn <fragment.name>(a: T0[, b: T1]) -> R`. */
  wgsl(argTypes: readonly NumericType[]): WgslFragment;
  /** The matching subgroup built-in for `type`, if any (plus: Add...). */
  subgroupOp(type: NumericType): SubgroupOp | undefined;
  /** Lambdas: the JS source, rebuilt in worker threads. */
  readonly source?: string;
  /** Lambdas: values of outside variables, passed explicitly. */
  readonly captures?: Readonly<Record<string, number | boolean>>;
}

/** A binary operator T x T -> T. */
export type BinaryOp = GpuFunction & { readonly arity: 2 };

const INT: readonly NumericType[] = ['u32', 'i32'];
const ALL: readonly NumericType[] = ['u32', 'i32', 'f32'];

const FLT_MAX = 3.4028234663852886e38;
const f32Scratch = new Float32Array(1);
const f32ScratchBits = new Uint32Array(f32Scratch.buffer);

/** WGSL literal of `value` as `type`. */
export function wgslLiteral(type: NumericType, value: number): string {
  switch (type) {
    case 'u32':
      return `${value >>> 0}u`;
    case 'i32': {
      const v = value | 0;
      return v === -2147483648 ? 'i32(-2147483647 - 1)' : `${v}i`;
    }
    case 'f32': {
      // WGSL cannot write these as constants (const-evaluation rejects inf/NaN): build them at run
      // time through wdpl_f32_bits, which link() adds to any module that uses it.
      if (Number.isNaN(value)) return 'wdpl_f32_bits(0x7fc00000u)';
      if (value === Number.POSITIVE_INFINITY) return 'wdpl_f32_bits(0x7f800000u)';
      if (value === Number.NEGATIVE_INFINITY) return 'wdpl_f32_bits(0xff800000u)';
      if (Object.is(value, -0)) return 'wdpl_f32_bits(0x80000000u)';
      const f = Math.fround(value);
      const s = f.toPrecision(9);
      // Nine digits round-trip, but near the largest f32 they can overshoot it ('3.40282347e+38'),
      // which WGSL rejects: write those by their bits.
      if (Math.abs(Number(s)) > FLT_MAX) {
        f32Scratch[0] = f;
        return `wdpl_f32_bits(0x${(f32ScratchBits[0] as number).toString(16)}u)`;
      }
      return `${s.includes('e') || s.includes('.') ? s : `${s}.0`}f`;
    }
  }
}

interface BuiltinSpec {
  name: string;
  types: readonly NumericType[];
  commutative: boolean;
  identity: (t: NumericType) => number;
  /** JS source of the function for type t (self-contained; compiled once per type). */
  jsSource: (t: NumericType) => string;
  /** WGSL body returning the result from a and b of type T. */
  body: (t: NumericType) => string;
  subgroup?: (t: NumericType) => SubgroupOp | undefined;
}

function builtin(spec: BuiltinSpec): BinaryOp {
  const check = (argTypes: readonly NumericType[]) => {
    const t = argTypes[0] as NumericType;
    if (!spec.types.includes(t)) {
      throw new UnsupportedTypeError(
        `operator ${spec.name} is not defined for ${t} (supported: ${spec.types.join(', ')})`,
      );
    }
    return t;
  };
  const compiled = new Map<NumericType, (a: number, b: number) => number>();
  const wgslFns = new Map<NumericType, WgslFragment>();
  return {
    kind: 'function',
    arity: 2,
    name: spec.name,
    builtin: true,
    commutative: spec.commutative,
    supports: (argTypes) => spec.types.includes(argTypes[0] as NumericType),
    resultType: (argTypes) => check(argTypes),
    identity: (t) => (spec.types.includes(t) ? spec.identity(t) : undefined),
    jsSource: (argTypes) => spec.jsSource(check(argTypes)),
    js: (argTypes) => {
      const t = check(argTypes);
      let f = compiled.get(t);
      if (!f) {
        f = new Function(`return (${spec.jsSource(t)});`)() as (a: number, b: number) => number;
        compiled.set(t, f);
      }
      return f;
    },
    // Built once per type: calls on the hot path ask for it every time.
    wgsl: (argTypes) => {
      const t = check(argTypes);
      let f = wgslFns.get(t);
      if (!f) {
        const name = mangle('op', spec.name, t);
        f = fragment({ name, code: `fn ${name}(a: ${t}, b: ${t}) -> ${t} {\n${spec.body(t)}\n}` });
        wgslFns.set(t, f);
      }
      return f;
    },
    subgroupOp: (t) => (spec.subgroup && spec.types.includes(t) ? spec.subgroup(t) : undefined),
  };
}

/** Math.min on f32 in WGSL: NaN propagates, -0 < +0. */
const FLOAT_MIN_BODY = `  let ua = bitcast<u32>(a); let ub = bitcast<u32>(b);
  if ((ua & 0x7fffffffu) > 0x7f800000u) { return a; }
  if ((ub & 0x7fffffffu) > 0x7f800000u) { return b; }
  if (a == b) { return bitcast<f32>(ua | ub); }
  return select(a, b, b < a);`;
const FLOAT_MAX_BODY = `  let ua = bitcast<u32>(a); let ub = bitcast<u32>(b);
  if ((ua & 0x7fffffffu) > 0x7f800000u) { return a; }
  if ((ub & 0x7fffffffu) > 0x7f800000u) { return b; }
  if (a == b) { return bitcast<f32>(ua & ub); }
  return select(a, b, b > a);`;

export const plus: BinaryOp = builtin({
  name: 'plus',
  types: ALL,
  commutative: true,
  identity: () => 0,
  jsSource: (t) =>
    t === 'u32' ? '(a, b) => (a + b) >>> 0' : t === 'i32' ? '(a, b) => (a + b) | 0' : '(a, b) => Math.fround(a + b)',
  body: () => '  return a + b;',
  subgroup: () => 'Add',
});

export const multiplies: BinaryOp = builtin({
  name: 'multiplies',
  types: ALL,
  commutative: true,
  identity: () => 1,
  jsSource: (t) =>
    t === 'u32'
      ? '(a, b) => Math.imul(a, b) >>> 0'
      : t === 'i32'
        ? '(a, b) => Math.imul(a, b)'
        : '(a, b) => Math.fround(a * b)',
  body: () => '  return a * b;',
  subgroup: () => 'Mul',
});

export const minimum: BinaryOp = builtin({
  name: 'minimum',
  types: ALL,
  commutative: true,
  identity: (t) => (t === 'u32' ? 0xffffffff : t === 'i32' ? 0x7fffffff : Number.POSITIVE_INFINITY),
  jsSource: () => '(a, b) => Math.min(a, b)',
  body: (t) => (t === 'f32' ? FLOAT_MIN_BODY : '  return min(a, b);'),
  subgroup: (t) => (t === 'f32' ? undefined : 'Min'),
});

export const maximum: BinaryOp = builtin({
  name: 'maximum',
  types: ALL,
  commutative: true,
  identity: (t) => (t === 'u32' ? 0 : t === 'i32' ? -0x80000000 : Number.NEGATIVE_INFINITY),
  jsSource: () => '(a, b) => Math.max(a, b)',
  body: (t) => (t === 'f32' ? FLOAT_MAX_BODY : '  return max(a, b);'),
  subgroup: (t) => (t === 'f32' ? undefined : 'Max'),
});

export const bitAnd: BinaryOp = builtin({
  name: 'bitAnd',
  types: INT,
  commutative: true,
  identity: (t) => (t === 'u32' ? 0xffffffff : -1),
  jsSource: (t) => (t === 'u32' ? '(a, b) => (a & b) >>> 0' : '(a, b) => a & b'),
  body: () => '  return a & b;',
  subgroup: () => 'And',
});

export const bitOr: BinaryOp = builtin({
  name: 'bitOr',
  types: INT,
  commutative: true,
  identity: () => 0,
  jsSource: (t) => (t === 'u32' ? '(a, b) => (a | b) >>> 0' : '(a, b) => a | b'),
  body: () => '  return a | b;',
  subgroup: () => 'Or',
});

export const bitXor: BinaryOp = builtin({
  name: 'bitXor',
  types: INT,
  commutative: true,
  identity: () => 0,
  jsSource: (t) => (t === 'u32' ? '(a, b) => (a ^ b) >>> 0' : '(a, b) => a ^ b'),
  body: () => '  return a ^ b;',
  subgroup: () => 'Xor',
});

/** 1 when both operands are non-zero, else 0 (in the element type). */
export const logicalAnd: BinaryOp = builtin({
  name: 'logicalAnd',
  types: ALL,
  commutative: true,
  identity: () => 1,
  jsSource: () => '(a, b) => (a !== 0 && b !== 0 && a === a && b === b ? 1 : 0)',
  body: (t) =>
    t === 'f32'
      ? '  return select(0.0f, 1.0f, a != 0.0f && b != 0.0f && (bitcast<u32>(a) & 0x7fffffffu) <= 0x7f800000u && (bitcast<u32>(b) & 0x7fffffffu) <= 0x7f800000u);'
      : `  return select(${t}(0), ${t}(1), a != ${t}(0) && b != ${t}(0));`,
});

/** 1 when either operand is non-zero, else 0 (in the element type). */
export const logicalOr: BinaryOp = builtin({
  name: 'logicalOr',
  types: ALL,
  commutative: true,
  identity: () => 0,
  jsSource: () => '(a, b) => ((a !== 0 && a === a) || (b !== 0 && b === b) ? 1 : 0)',
  body: (t) =>
    t === 'f32'
      ? '  return select(0.0f, 1.0f, (a != 0.0f && (bitcast<u32>(a) & 0x7fffffffu) <= 0x7f800000u) || (b != 0.0f && (bitcast<u32>(b) & 0x7fffffffu) <= 0x7f800000u));'
      : `  return select(${t}(0), ${t}(1), a != ${t}(0) || b != ${t}(0));`,
});

/** Every built-in binary operator by name. */
export const BUILTIN_OPERATORS: Readonly<Record<string, BinaryOp>> = {
  plus,
  multiplies,
  minimum,
  maximum,
  bitAnd,
  bitOr,
  bitXor,
  logicalAnd,
  logicalOr,
};

/** True for a GpuFunction (built-in or lambda). */
export function isGpuFunction(x: unknown): x is GpuFunction {
  return typeof x === 'object' && x !== null && (x as GpuFunction).kind === 'function';
}
