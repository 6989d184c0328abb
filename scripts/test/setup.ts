/**
 * Vitest setup for every package: typed arrays compare by bytes. vitest's default deep equality walks
 * them element by element through generic machinery (seconds per million elements, which made the
 * size matrix of DESIGN.md take minutes); equal bytes mean equal arrays, and on a mismatch the
 * default comparison runs to produce its usual diff.
 */
import { expect } from 'vitest';

function isTyped(x: unknown): x is ArrayBufferView & ArrayLike<number> {
  return ArrayBuffer.isView(x) && !(x instanceof DataView);
}

expect.addEqualityTesters([
  function typedArraysByBytes(a: unknown, b: unknown): boolean | undefined {
    if (!isTyped(a) || !isTyped(b)) return undefined;
    if (a.constructor !== b.constructor || a.length !== b.length) return undefined;
    const x = Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    const y = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    return Buffer.compare(x, y) === 0 ? true : undefined;
  },
]);
