/**
 * Argument checking shared by every algorithm front. Errors name the argument and what was expected;
 * nothing here touches the caller's data.
 */
import {
  ArgumentError,
  coerce,
  DeviceArray,
  describe,
  elementTypeOf,
  type GpuFunction,
  type HostArray,
  isGpuFunction,
  type NumericType,
  toGpuFunction,
  UnsupportedTypeError,
} from '@webdpl/core';

/** An array argument: a host typed array or a DeviceArray. */
export type ArrayArg = HostArray | DeviceArray;

/** A checked array argument. */
export type CheckedArray =
  | {
      readonly kind: 'host';
      readonly array: HostArray;
      readonly type: NumericType;
      readonly length: number;
      /** The argument's name, for errors found later (a host array where a DeviceArray is needed). */
      readonly name?: string;
    }
  | {
      readonly kind: 'device';
      readonly array: DeviceArray;
      readonly type: NumericType;
      readonly length: number;
      /** The argument's name, for errors found later (a DeviceArray of another device). */
      readonly name?: string;
    };

/**
 * Whether `x` looks like an array argument (a typed array, a DeviceArray, or a plain array that
 * `checkArray` then rejects by name): how overloads told apart by an argument's kind decide.
 */
export function isArrayArg(x: unknown): boolean {
  return x instanceof DeviceArray || ArrayBuffer.isView(x) || Array.isArray(x);
}

/** Checks an array argument (Uint32Array, Int32Array, Float32Array or a live DeviceArray of u32/i32/f32). */
export function checkArray(x: unknown, argument: string): CheckedArray {
  if (x instanceof DeviceArray) {
    x.check(undefined, argument);
    if (x.type === 'f16') {
      throw new UnsupportedTypeError(
        `${argument}: algorithms run on u32, i32 and f32 arrays; f16 arrays are storage only`,
      );
    }
    return { kind: 'device', array: x, type: x.type as NumericType, length: x.length, name: argument };
  }
  if (x instanceof Uint32Array || x instanceof Int32Array || x instanceof Float32Array) {
    return { kind: 'host', array: x, type: elementTypeOf(x, argument), length: x.length, name: argument };
  }
  throw new ArgumentError(argument, 'a Uint32Array, Int32Array, Float32Array or DeviceArray', describe(x));
}

/** Checks an output array: same rules as inputs, plus at least `minLength` elements and, if given, `type`. */
export function checkOutput(x: unknown, argument: string, minLength: number, type?: NumericType): CheckedArray {
  const out = checkArray(x, argument);
  if (out.length < minLength) {
    throw new ArgumentError(argument, `at least ${minLength} elements`, `${out.length}`);
  }
  if (type !== undefined && out.type !== type) {
    throw new ArgumentError(argument, `an array of ${type} elements`, `${out.type} elements`);
  }
  return out;
}

/** Checks that two arrays have the same length. */
export function checkSameLength(a: CheckedArray, b: CheckedArray, nameA: string, nameB: string): void {
  if (a.length !== b.length) {
    throw new ArgumentError(nameB, `${a.length} elements (the length of ${nameA})`, `${b.length}`);
  }
}

/** Checks that an output does not alias an input where the algorithm forbids it. */
export function checkNoAlias(input: CheckedArray, output: CheckedArray, nameIn: string, nameOut: string): void {
  const a = input.array as { buffer: unknown; byteOffset: number; byteLength: number };
  const b = output.array as { buffer: unknown; byteOffset: number; byteLength: number };
  if (input.kind === 'device' && output.kind === 'device') {
    const x = input.array;
    const y = output.array;
    if (
      x.buffer === y.buffer &&
      x.byteOffset < y.byteOffset + y.byteLength &&
      y.byteOffset < x.byteOffset + x.byteLength
    ) {
      throw new ArgumentError(nameOut, `memory that does not overlap ${nameIn}`);
    }
    return;
  }
  if (input.kind === 'host' && output.kind === 'host' && a.buffer === b.buffer) {
    if (a.byteOffset < b.byteOffset + b.byteLength && b.byteOffset < a.byteOffset + a.byteLength) {
      throw new ArgumentError(nameOut, `memory that does not overlap ${nameIn}`);
    }
  }
}

/** Checks a numeric scalar argument (init values and the like). */
export function checkNumber(x: unknown, argument: string): number {
  if (typeof x !== 'number') throw new ArgumentError(argument, 'a number', describe(x));
  return x;
}

/** Normalizes a function argument: a GpuFunction, an arrow function, or a `{ js, wgsl }` pair. */
export function checkFunction(x: unknown, argument: string, arity: 1 | 2): GpuFunction {
  if (isGpuFunction(x)) {
    if (x.arity !== arity) throw new ArgumentError(argument, `a function of ${arity} argument(s)`, `one of ${x.arity}`);
    return x;
  }
  // The lambda parser rejects 3+ parameters with a LambdaError that cannot name the argument.
  if (typeof x === 'function' && x.length > 2) {
    throw new ArgumentError(argument, `a function of ${arity} parameter(s)`, `one of ${x.length}`);
  }
  return toGpuFunction(x, argument, arity);
}

/**
 * The number of parameters a function argument declares (GpuFunctions: their arity; `{ js, wgsl }`:
 * its `js`'s): how a unary function is told from an index lambda `(x, i) => ...`.
 */
export function paramCount(fn: unknown): number {
  if (isGpuFunction(fn)) return fn.arity;
  if (typeof fn === 'function') return fn.length;
  const js = (fn as { js?: unknown } | null)?.js;
  return typeof js === 'function' ? js.length : 1;
}

/** How an operator is named in messages: a lambda's source text, else its name. */
export function operatorText(fn: GpuFunction): string {
  const src = fn.source?.replace(/\s+/g, ' ').trim();
  if (!src) return `'${fn.name}'`;
  return src.length > 60 ? `${src.slice(0, 57)}...` : src;
}

/** Why a GPU reduction or scan with `op` cannot run for `type` (no identity), or undefined. */
export function identityReason(op: GpuFunction, type: NumericType): string | undefined {
  if (op.identity(type) !== undefined) return undefined;
  return (
    `operator ${operatorText(op)} has no identity for ${type}; GPU reductions and scans need one: ` +
    `pass lambda(fn, { identity: ... }) (e.g. -Infinity for a maximum, 0 for a sum)`
  );
}

/**
 * The start value of a reduction: `init` converted to `type`, or the operator's identity when `init`
 * is omitted (an ArgumentError naming `init` when there is none).
 */
export function startValue(op: GpuFunction, type: NumericType, init: unknown): number {
  if (init !== undefined) return coerce(type, checkNumber(init, 'init'));
  const id = op.identity(type);
  if (id === undefined) {
    throw new ArgumentError('init', `a start value: operator ${operatorText(op)} has no identity`, 'undefined');
  }
  return id;
}
