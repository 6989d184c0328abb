/**
 * Single-thread radix sort on the calling thread (the kernel of radix-kernel.ts: one counting read,
 * one MSD scatter into plain scratch memory, then LSD inside each bucket back into the caller's
 * arrays). Needs no SharedArrayBuffer. Stable; the caller's arrays are written only once the scratch
 * memory is in hand.
 */
import type { NumericType } from '@webdpl/core';
import { bitsView } from './key-bits';
import { DIGITS, HIST_WORDS, levelDigit, radixJob, radixKernel, radixSource } from './radix-kernel';
import { borrowU32, giveBack } from './scratch';

type Numeric4 = Uint32Array | Int32Array | Float32Array;

/** The bucket starts of the level digit `dg` from its counts (`count(d)`): 2049 words. */
export function bucketStarts(dg: number, count: (d: number) => number): Int32Array {
  const size = (DIGITS[dg] as readonly [number, number])[1] + 1;
  const st = new Int32Array(2049);
  let s = 0;
  for (let d = 0; d < 2048; d++) {
    st[d] = s;
    if (d < size) s += count(d);
  }
  st[2048] = s;
  return st;
}

/** Sorts `keys` stably by their order-preserving bits, permuting `values` (any 4-byte array) along. */
export function radixSortSeq(
  keys: Numeric4,
  values: Numeric4 | undefined,
  type: NumericType,
  descending: boolean,
): void {
  const n = keys.length;
  if (n < 2) return;
  const s = radixSource(type, descending, values !== undefined);
  const kernel = radixKernel(s);
  const k = bitsView(keys);
  const v = values ? bitsView(values) : undefined;
  const h = new Int32Array(HIST_WORDS);
  kernel(radixJob({ op: 0, s, k, b: 0, e: n, h, ho: 0, a: k }));
  const dg = levelDigit(n, (g, d) => h[g * 2048 + d] as number);
  if (dg < 0) return;
  const a = borrowU32(n, false);
  const va = v ? borrowU32(n, false) : undefined;
  try {
    const st = bucketStarts(dg, (d) => h[dg * 2048 + d] as number);
    kernel(radixJob({ op: 1, s, k, v, b: 0, e: n, h: st.slice(), ho: 0, dg, a, va }));
    kernel(radixJob({ op: 2, s, a, va, o: k, vo: v, st, lv: 2 - dg }));
  } finally {
    giveBack(a, va);
  }
}
