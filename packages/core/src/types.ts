import { ArgumentError, describe } from './errors';

/** Element types of DeviceArray and of every algorithm. f16 only on devices with `shader-f16`. */
export type ElementType = 'u32' | 'i32' | 'f32' | 'f16';

/** Element types the GPU algorithms run on (f16 arrays are storage-only for now). */
export type NumericType = 'u32' | 'i32' | 'f32';

/** The host array of an element type. f16 uses Float16Array where the runtime has it, else Uint16Array bits. */
export type TypedArrayOf<T extends ElementType> = T extends 'u32'
  ? Uint32Array
  : T extends 'i32'
    ? Int32Array
    : T extends 'f32'
      ? Float32Array
      : Uint16Array;

/** Any host typed array webdpl accepts. */
export type HostArray = Uint32Array | Int32Array | Float32Array;

export const ELEMENT_TYPES: readonly ElementType[] = ['u32', 'i32', 'f32', 'f16'];

/** Bytes per element. */
export function byteSize(type: ElementType): number {
  return type === 'f16' ? 2 : 4;
}

/** The WGSL scalar type of an element type. */
export function wgslType(type: ElementType): string {
  return type;
}

export function isElementType(x: unknown): x is ElementType {
  return x === 'u32' || x === 'i32' || x === 'f32' || x === 'f16';
}

/** True for integer element types. */
export function isIntegerType(type: ElementType): boolean {
  return type === 'u32' || type === 'i32';
}

/**
 * The element type of a host typed array, or an ArgumentError naming `argument`.
 * Accepts Uint32Array, Int32Array and Float32Array.
 */
export function elementTypeOf(array: unknown, argument = 'array'): NumericType {
  if (array instanceof Uint32Array) return 'u32';
  if (array instanceof Int32Array) return 'i32';
  if (array instanceof Float32Array) return 'f32';
  throw new ArgumentError(argument, 'a Uint32Array, Int32Array or Float32Array', describe(array));
}

/** A new host array of `type` and `length` (f16: Uint16Array of bits). */
export function allocHost<T extends ElementType>(type: T, length: number, shared = false): TypedArrayOf<T> {
  const bytes = length * byteSize(type);
  const buf = shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes);
  switch (type) {
    case 'u32':
      return new Uint32Array(buf) as TypedArrayOf<T>;
    case 'i32':
      return new Int32Array(buf) as TypedArrayOf<T>;
    case 'f32':
      return new Float32Array(buf) as TypedArrayOf<T>;
    default:
      return new Uint16Array(buf) as TypedArrayOf<T>;
  }
}

/** Views `buffer` (bytes `byteOffset`..) as a host array of `type`. */
export function viewHost<T extends ElementType>(
  type: T,
  buffer: ArrayBufferLike,
  byteOffset: number,
  length: number,
): TypedArrayOf<T> {
  switch (type) {
    case 'u32':
      return new Uint32Array(buffer, byteOffset, length) as TypedArrayOf<T>;
    case 'i32':
      return new Int32Array(buffer, byteOffset, length) as TypedArrayOf<T>;
    case 'f32':
      return new Float32Array(buffer, byteOffset, length) as TypedArrayOf<T>;
    default:
      return new Uint16Array(buffer, byteOffset, length) as TypedArrayOf<T>;
  }
}

/** Converts a JS number to the value an element of `type` holds (wrap for integers, fround for f32). */
export function coerce(type: ElementType, x: number): number {
  switch (type) {
    case 'u32':
      return x >>> 0;
    case 'i32':
      return x | 0;
    case 'f32':
      return Math.fround(x);
    default:
      return x;
  }
}
