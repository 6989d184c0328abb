/**
 * Shared-memory helpers for the worker pool: typed arrays over a SharedArrayBuffer are shared with
 * workers by reference when posted; arrays over a plain ArrayBuffer would be copied (and writes made
 * in a worker lost), so the CPU engines move them into shared memory first.
 */
import { allocHost, type ElementType, type TypedArrayOf } from '@webdpl/core';

/** Typed arrays `toShared` accepts (every non-BigInt kind). */
export type ShareableArray =
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float32Array
  | Float64Array;

/** True when `array` is a view of a SharedArrayBuffer (works across realms). */
export function isShared(array: ArrayBufferView): boolean {
  return Object.prototype.toString.call(array.buffer) === '[object SharedArrayBuffer]';
}

/**
 * `array` itself when it already lives in shared memory, else a copy of it of the same type over a
 * new SharedArrayBuffer (same length; the copy starts at byte offset 0). Costs one allocation and a
 * memcpy of `array.byteLength` bytes (about 10 ms for 64 MiB on a desktop core) when it copies.
 * @throws Error when SharedArrayBuffer is unavailable (browsers without cross-origin isolation)
 */
export function toShared<T extends ShareableArray>(array: T): T {
  if (isShared(array)) return array;
  const Ctor = array.constructor as new (buffer: SharedArrayBuffer) => T;
  const copy = new Ctor(new SharedArrayBuffer(array.byteLength));
  (copy as unknown as { set(a: ArrayLike<number>): void }).set(array as unknown as ArrayLike<number>);
  return copy;
}

/**
 * A zero-filled array of `type` and `length` over a new SharedArrayBuffer (f16: Uint16Array bits).
 * Costs the allocation (the OS zero-fills pages lazily).
 */
export function allocShared<T extends ElementType>(type: T, length: number): TypedArrayOf<T> {
  return allocHost(type, length, true);
}
