/**
 * `zip(a, b, ...)`: 2 to 4 arrays of one length taken together, element by element (Thrust's
 * zip_iterator), accepted as the input and the output of transform and as the input of
 * transformReduce. Lambdas over a zip take one parameter per array, `(x, y, z) => ...`; a zip output
 * takes a tuple result `[a, b]`. Nothing is allocated or copied for the zip itself.
 */
import {
  ArgumentError,
  DeviceArray,
  describe,
  type GpuFunction,
  type HostArray,
  type NumericType,
  type TupleFunction,
  tupleFunction,
} from '@webdpl/core';
import { type ArrayArg, type CheckedArray, checkArray, checkNoAlias, checkSameLength } from './args';

/** Most arrays in one zip. */
export const ZIP_MAX = 4;

/** Arrays zipped together (see `zip`). */
export class Zip {
  readonly kind = 'zip';
  /** @internal use `zip(a, b, ...)` */
  constructor(
    readonly arrays: readonly ArrayArg[],
    readonly length: number,
  ) {}
}

/**
 * The arrays `a, b, ...` taken together element by element: input i of a lambda over the zip is
 * `(a[i], b[i], ...)`, one parameter per array. Host typed arrays and DeviceArrays (u32, i32, f32)
 * may be mixed; every array must have the first one's length.
 * @throws ArgumentError naming the array (`zip(...)[k]`) that is not an array or has another length
 */
export function zip(...arrays: ArrayArg[]): Zip {
  if (arrays.length < 2 || arrays.length > ZIP_MAX) {
    throw new ArgumentError('zip(...)', `2 to ${ZIP_MAX} arrays`, `${arrays.length}`);
  }
  const checked = arrays.map((a, k) => checkArray(a, `zip(...)[${k}]`));
  const first = checked[0] as CheckedArray;
  for (const [k, a] of checked.entries()) checkSameLength(first, a, 'zip(...)[0]', `zip(...)[${k}]`);
  return new Zip(arrays, first.length);
}

/**
 * A temporary of `a`'s kind and length, of `type` (default `a`'s): a DeviceArray on its device, or a
 * typed array. (The zip algorithms composed of public ones stage through these.)
 */
export function arrayLike(a: CheckedArray, type: NumericType = a.type): HostArray | DeviceArray {
  if (a.kind === 'device') return DeviceArray.create(a.array.device, type, a.length);
  return type === 'u32'
    ? new Uint32Array(a.length)
    : type === 'i32'
      ? new Int32Array(a.length)
      : new Float32Array(a.length);
}

/** Destroys the DeviceArray temporaries among `temps` (typed arrays are left to the GC). */
export function releaseLike(...temps: (HostArray | DeviceArray)[]): void {
  for (const t of temps) if (t instanceof DeviceArray) t.destroy();
}

/**
 * Checks arrays moved together, in order: each has the first one's length and shares no memory with
 * an earlier one (errors name them as given).
 */
export function checkTogether(named: readonly (readonly [CheckedArray, string])[]): void {
  const [first, firstName] = named[0] as readonly [CheckedArray, string];
  named.forEach(([a, name], k) => {
    checkSameLength(first, a, firstName, name);
    for (const [b, other] of named.slice(0, k)) checkNoAlias(b, a, other, name);
  });
}

/** `length` elements of `a` from `offset`: a DeviceArray view or a subarray. */
export function partOf(a: HostArray | DeviceArray, offset: number, length: number): HostArray | DeviceArray {
  return a instanceof DeviceArray ? a.view(offset, length) : a.subarray(offset, offset + length);
}

/** Whether `x` is a zip of arrays. */
export function isZip(x: unknown): x is Zip {
  return x instanceof Zip;
}

/**
 * The arrays of an array-or-zip argument, checked (a DeviceArray destroyed since `zip` was called
 * is named): `argument[k]` for a zip's arrays, `argument` for one array.
 */
export function checkArrays(x: unknown, argument: string): CheckedArray[] {
  if (!isZip(x)) return [checkArray(x, argument)];
  const arrays = x.arrays.map((a, k) => checkArray(a, `${argument}[${k}]`));
  const first = arrays[0] as CheckedArray;
  for (const [k, a] of arrays.entries()) checkSameLength(first, a, `${argument}[0]`, `${argument}[${k}]`);
  return arrays;
}

/** A function over zipped arguments with its result's elements as scalar functions (see core's tupleFunction). */
export interface ZipFunction {
  readonly tuple: TupleFunction;
  /** One scalar function per element of the result (one for a scalar result). */
  readonly parts: readonly GpuFunction[];
  /** Flattened argument types the parts take. */
  readonly argTypes: readonly NumericType[];
  /** Result types of the parts. */
  readonly resultTypes: readonly ('bool' | NumericType)[];
}

/**
 * The parameters of an element function over `inTypes` (the arrays of an array-or-zip argument): one
 * per array, then the element's index (u32) when the function takes one more (an index lambda).
 */
export function tupleParams(
  fn: unknown,
  inTypes: readonly NumericType[],
  zipped: boolean,
): { shape: number[]; argTypes: NumericType[]; indexed: boolean; what: string } {
  const declared = tupleFunction(fn, 'fn').params;
  const indexed = declared === inTypes.length + 1;
  const argTypes: NumericType[] = indexed ? [...inTypes, 'u32'] : [...inTypes];
  const what = `${zipped ? 'one per zipped array' : 'the element'}, or ${inTypes.length + 1} with the index last`;
  return { shape: argTypes.map(() => 0), argTypes, indexed, what };
}

/**
 * Checks a function over zipped arguments: `params` parameters shaped `shape` (0 a number, m a tuple
 * of m numbers, flattened into `argTypes`), and a result of `width` elements (0: a number).
 * @param what how the parameters are described in the arity error ("one per zipped array")
 * @throws ArgumentError naming `argument` when the parameter count or the result's width differs
 */
export function checkZipFunction(
  x: unknown,
  argument: string,
  shape: readonly number[],
  argTypes: readonly NumericType[],
  width: number,
  what: string,
): ZipFunction {
  const tuple = tupleFunction(x, argument);
  if (tuple.params !== shape.length) {
    throw new ArgumentError(argument, `a function of ${shape.length} parameter(s) (${what})`, `one of ${tuple.params}`);
  }
  if (tuple.width !== width) {
    throw new ArgumentError(
      argument,
      width === 0 ? 'a function returning a number' : `a function returning a tuple [..] of ${width} elements`,
      tuple.width === 0 ? 'one returning a number' : `one returning a tuple of ${tuple.width}`,
    );
  }
  const parts = tuple.components(shape);
  const resultTypes = parts.map((p) => {
    const r = p.resultType(argTypes);
    if (r !== 'bool' && r !== 'u32' && r !== 'i32' && r !== 'f32') {
      throw new ArgumentError(argument, 'a function returning numbers or bools', describe(r));
    }
    return r;
  });
  return { tuple, parts, argTypes, resultTypes };
}
