/**
 * `counting(n)`: the lazy sequence 0, 1, ..., n - 1 of u32 (Thrust's counting_iterator), accepted as
 * the input of transform, transformReduce, reduce and copyIf (and the stencil copies), and as the
 * stencil of gatherIf, scatterIf and the stencil forms of copyIf/removeIf, so `iota` arrays are not
 * needed. Nothing is allocated for it: kernels use the element's index where they would load the
 * element (on the GPU, the compactions materialize it in a device temporary; see the README).
 */
import { ArgumentError, describe, type NumericType } from '@webdpl/core';
import { type CheckedArray, checkArray } from './args';

/** The sequence 0..length-1 of u32 (see `counting`). */
export class Counting {
  readonly kind = 'counting';
  readonly type = 'u32';
  /** @internal use `counting(n)` */
  constructor(readonly length: number) {}
}

/**
 * The lazy sequence 0, 1, ..., n - 1 of u32 elements, usable as an input of transform,
 * transformReduce, reduce and copyIf, and as a stencil (the predicate gets the index).
 * @param n a whole number in [0, 2^32)
 * @throws ArgumentError naming `n`
 */
export function counting(n: number): Counting {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 0xffffffff) {
    throw new ArgumentError('n', 'a whole number of elements in [0, 2^32)', describe(n));
  }
  return new Counting(n);
}

/** Whether `x` is a `counting(n)` sequence. */
export function isCounting(x: unknown): x is Counting {
  return x instanceof Counting;
}

/**
 * A stencil argument of the stencil forms (copyIf, removeIf, transformIf, gatherIf, scatterIf): an
 * array or `counting(n)` of `n` elements, the length of the array named `of`. Returns the checked
 * array (none for counting, whose elements are the indices) and the type the predicate takes.
 * @throws ArgumentError naming `stencil`
 */
export function checkStencilArg(
  x: unknown,
  n: number,
  of: string,
): { readonly array: CheckedArray | undefined; readonly counted: boolean; readonly type: NumericType } {
  const counted = isCounting(x);
  const array = counted ? undefined : checkArray(x, 'stencil');
  const length = counted ? (x as Counting).length : (array as CheckedArray).length;
  if (length !== n) throw new ArgumentError('stencil', `${n} elements (the length of ${of})`, `${length}`);
  return { array, counted, type: array ? array.type : 'u32' };
}
