/**
 * The gather / scatter kernels without a stencil (16 elements per step, `PLAIN_UNROLL`) on seq,
 * against a reference, for every length 0..40 (each tail of the steps): a random permutation,
 * indices repeated within and across steps (scatter keeps the last write), u32 and i32 maps, u32
 * and f32 values, outputs larger than the map.
 */
import type { NumericType } from '@webdpl/core';
import { describe, expect, it } from 'vitest';
import { rng } from '../testing/matrix';
import { cpuGather, PLAIN_UNROLL } from './gather';

const seq = { kind: 'seq' } as const;

function arrayOf(type: NumericType, n: number, gen: (i: number) => number) {
  const a = type === 'u32' ? new Uint32Array(n) : type === 'i32' ? new Int32Array(n) : new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = gen(i);
  return a;
}

describe('gather / scatter kernels without a stencil, every length', () => {
  it(`lengths 0..40 around steps of ${PLAIN_UNROLL}`, async () => {
    expect(PLAIN_UNROLL).toBe(16);
    const r = rng(21);
    for (let n = 0; n <= 40; n++) {
      for (const [mapType, valueType] of [
        ['u32', 'u32'],
        ['i32', 'f32'],
      ] as const) {
        const size = n + 5;
        for (const spread of [size, 3]) {
          // spread 3: few distinct indices, so repeats within a step and across steps.
          const map = arrayOf(mapType, n, () => r() % spread);
          const input = arrayOf(valueType, size, () => (valueType === 'f32' ? (r() % 1000) / 8 : r()));
          const what = `n ${n} ${mapType}/${valueType} spread ${spread}`;
          const g = arrayOf(valueType, n, () => 7);
          expect(await cpuGather(seq, 'gather', map, input, g, size)).toBe(-1);
          expect(Array.from(g), what).toEqual(Array.from(map, (j) => input[j] as number));
          const src = input.subarray(0, n);
          const s = arrayOf(valueType, size, () => 7);
          const want = Array.from(s);
          for (let i = 0; i < n; i++) want[map[i] as number] = src[i] as number;
          expect(await cpuGather(seq, 'scatter', map, src, s, size)).toBe(-1);
          expect(Array.from(s), what).toEqual(want);
        }
      }
    }
  });
});
