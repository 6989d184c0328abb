/**
 * Overlap of array arguments (host arrays over one ArrayBuffer, DeviceArrays over one GPU buffer),
 * for algorithms that allow an output to be exactly an input (in place) but not to overlap it
 * otherwise.
 */
import { ArgumentError } from '@webdpl/core';
import type { CheckedArray } from './args';

interface Range {
  readonly buffer: unknown;
  readonly start: number;
  readonly end: number;
}

function rangeOf(a: CheckedArray): Range {
  // Host arrays and DeviceArrays both expose buffer, byteOffset and byteLength.
  const x = a.array as { readonly buffer: unknown; readonly byteOffset: number; readonly byteLength: number };
  return { buffer: x.buffer, start: x.byteOffset, end: x.byteOffset + x.byteLength };
}

/** Whether two arguments share memory (non-empty ranges of the same buffer that intersect). */
export function overlaps(a: CheckedArray, b: CheckedArray): boolean {
  if (a.kind !== b.kind) return false;
  const x = rangeOf(a);
  const y = rangeOf(b);
  return x.buffer === y.buffer && x.start < y.end && y.start < x.end;
}

/** Whether two arguments start at the same element of the same memory. */
export function sameStart(a: CheckedArray, b: CheckedArray): boolean {
  if (a.kind !== b.kind) return false;
  const x = rangeOf(a);
  const y = rangeOf(b);
  return x.buffer === y.buffer && x.start === y.start;
}

/** Whether two arguments are the same elements: same memory, same start, same length. */
export function sameElements(a: CheckedArray, b: CheckedArray): boolean {
  return a.length === b.length && sameStart(a, b);
}

/** Throws unless `output` is exactly `input` (same start) or does not overlap it. */
export function checkInPlaceOrDisjoint(
  input: CheckedArray,
  output: CheckedArray,
  nameIn: string,
  nameOut: string,
): void {
  if (overlaps(input, output) && !sameStart(input, output)) {
    throw new ArgumentError(nameOut, `${nameIn} itself (in place) or memory that does not overlap ${nameIn}`);
  }
}
