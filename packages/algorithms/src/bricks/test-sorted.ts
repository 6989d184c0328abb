/** Test support (never imported by the library): sorted keys for the merge and set-operation tests. */
import type { NumericType } from '@webdpl/core';
import { rng } from '../testing/matrix';
import type { KeyArray } from './sort/index';
import { alloc } from './test-data';

/** n sorted elements of `type` from `spread` distinct values (f32: with -0, +0 and NaN), in `comp`'s order. */
export function sortedData(type: NumericType, n: number, seed: number, spread: number, descending: boolean): KeyArray {
  const r = rng(seed);
  const a = alloc(type, n) as KeyArray;
  for (let i = 0; i < n; i++) {
    const v = r() % spread;
    if (type === 'f32') a[i] = v === 0 ? -0 : v === 1 ? 0 : v === 2 ? Number.NaN : (v - spread / 2) * 0.5;
    else a[i] = type === 'i32' ? v - (spread >> 1) : v;
  }
  a.sort();
  if (descending) {
    // greater: NaN stays last (TypedArray#sort's order reversed before the NaNs).
    let end = n;
    while (end > 0 && Number.isNaN(a[end - 1] as number)) end--;
    a.subarray(0, end).reverse();
  }
  return a;
}
