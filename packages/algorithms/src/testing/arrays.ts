/**
 * Fast array assertions: vitest's toEqual walks typed arrays element by element through its generic
 * deep equality (seconds for 1e5 elements); these compare in a plain loop and report the first
 * mismatch through expect, so failures still read well.
 */
import { expect } from 'vitest';

/** Asserts `got` and `want` have the same length and elements (Object.is: NaN equals NaN, -0 differs from +0). */
export function expectSameArray(got: ArrayLike<number>, want: ArrayLike<number>, label = ''): void {
  expect(got.length, `${label} length`).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    if (!Object.is(got[i], want[i])) {
      expect(got[i], `${label} at index ${i} of ${want.length}`).toBe(want[i]);
    }
  }
}
