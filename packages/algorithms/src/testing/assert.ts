/**
 * Fast array assertions. vitest's toEqual walks typed arrays element by element through its generic
 * equality machinery (seconds per million elements); these compare bytes and report the first
 * difference.
 */
import { expect } from 'vitest';

type Numeric = ArrayLike<number> & { buffer: ArrayBufferLike; byteOffset: number; byteLength: number };

/** Index of the first element where a and b differ (bitwise), or -1 when identical. */
export function firstDifference(a: Numeric, b: Numeric): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  if (Buffer.compare(x, y) === 0) return -1;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i]) && a[i] !== b[i]) return i;
  return -1;
}

/** Asserts that two typed arrays hold the same elements (NaN equals NaN). */
export function expectSameArray(got: Numeric, want: Numeric, label = ''): void {
  const i = firstDifference(got, want);
  if (i !== -1) {
    expect.fail(
      `${label} arrays differ at index ${i} of ${want.length}: got ${got[i]}, want ${want[i]} (lengths ${got.length}/${want.length})`,
    );
  }
}
