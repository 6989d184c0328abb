/** Keys and checks shared by the sort tests (sort.test.ts, segmented.test.ts). */
import { expect } from 'vitest';
import { rng } from './matrix';

export type SortTestKeys = Uint32Array | Int32Array | Float32Array;
export type SortTestType = 'u32' | 'i32' | 'f32';

/** f32 bit patterns: NaNs of both signs and a signalling payload, -0, +0, +-Inf, subnormals. */
const SPECIALS = [0x7fc00000, 0xffc00000, 0x7f800001, 0x80000000, 0, 0x7f800000, 0xff800000, 1, 0x80000001, 0x007fffff];

/** Random keys (f32: a quarter of them SPECIALS), or 'dups': the nine values -4..4. */
export function makeKeys(
  type: SortTestType,
  n: number,
  seed: number,
  kind: 'random' | 'dups' = 'random',
): SortTestKeys {
  const r = rng(seed);
  const out = type === 'u32' ? new Uint32Array(n) : type === 'i32' ? new Int32Array(n) : new Float32Array(n);
  const bits = new Uint32Array(out.buffer);
  for (let i = 0; i < n; i++) {
    if (kind === 'dups') out[i] = (r() % 9) - 4;
    else if (type === 'f32' && r() % 4 === 0) bits[i] = SPECIALS[r() % SPECIALS.length] as number;
    else if (type === 'f32') out[i] = (r() / 2 ** 31 - 1) * 1000;
    else bits[i] = r();
  }
  return out;
}

/** Stable order of indices under `before`. */
export function stableOrder(keys: ArrayLike<number>, before: (a: number, b: number) => boolean): number[] {
  return Array.from({ length: keys.length }, (_, i) => i).sort((i, j) => {
    const a = keys[i] as number;
    const b = keys[j] as number;
    return before(a, b) ? -1 : before(b, a) ? 1 : i - j;
  });
}

/** Throws at the first element that is not Object.is-equal (so -0 differs from +0). */
export function sameKeys(got: ArrayLike<number>, want: ArrayLike<number>, what: string): void {
  expect(got.length, what).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    if (!Object.is(got[i], want[i])) throw new Error(`${what}: at ${i}: got ${got[i]}, want ${want[i]}`);
  }
}
