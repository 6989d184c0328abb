import { DeviceArray } from '@webdpl/core';
import { execution } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { expectSameArray } from '../testing/arrays';
import { isEngineVariant, parPool, place } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, TINY_TILE, testDevice } from '../testing/matrix';
import { maxElement, minElement, minmaxElement } from './index';

const sizes = edgeSizes([TINY_TILE, 4 * 256 * 4], [123457]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

type T3 = 'u32' | 'i32' | 'f32';

/** The reference order: numbers, -0 before +0, NaN after everything. */
function less(a: number, b: number): boolean {
  if (Number.isNaN(a)) return false;
  if (Number.isNaN(b)) return true;
  if (a === 0 && b === 0) return Object.is(a, -0) && Object.is(b, 0);
  return a < b;
}

function ref(d: ArrayLike<number>): { min: number; max: number } {
  let min = 0;
  let max = 0;
  for (let i = 1; i < d.length; i++) {
    if (less(d[i] as number, d[min] as number)) min = i;
    if (less(d[max] as number, d[i] as number)) max = i;
  }
  return { min, max };
}

function check(got: { index: number; value: number | undefined }, d: ArrayLike<number>, i: number, label: string) {
  expect(got.index, `${label} index`).toBe(i);
  expect(Object.is(got.value, d[i]), `${label} value ${got.value} vs ${d[i]}`).toBe(true);
}

/** Random data with repeats (so ties happen) and, for f32, -0, +0, infinities and NaN. */
function data(type: T3, n: number, seed: number, special: boolean): ArrayLike<number> & { slice(): unknown } {
  const d = makeData(type, n, seed % 3 === 0 ? 'small' : seed % 3 === 1 ? 'random' : 'constant', seed);
  if (type === 'f32' && special && n > 8) {
    d[(seed * 7) % n] = -0;
    d[(seed * 13) % n] = 0;
    d[(seed * 5) % n] = Number.POSITIVE_INFINITY;
    d[(seed * 11) % n] = Number.NEGATIVE_INFINITY;
    if (seed % 2) d[(seed * 3) % n] = Number.NaN;
  }
  return d;
}

describe.each(matrix)('minElement, maxElement, minmaxElement under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);
  const types: readonly T3[] = variant ? ['f32'] : ['u32', 'i32', 'f32'];
  for (const type of types) {
    it(`${type} at edge sizes, first occurrences, empty input`, async () => {
      for (const [k, n] of sizes.entries()) {
        const d = data(type, n, k, k % 2 === 0);
        const copy = d.slice();
        const want = ref(d);
        if (n === 0) {
          expect(await minElement(policy, d as Float32Array)).toEqual({ index: -1, value: undefined });
          expect(await minmaxElement(policy, d as Float32Array)).toEqual({
            min: { index: -1, value: undefined },
            max: { index: -1, value: undefined },
          });
          continue;
        }
        const mode = k % 3;
        if (mode === 0) check(await minElement(policy, d as Float32Array), d, want.min, `min n=${n}`);
        if (mode === 1) check(await maxElement(policy, d as Float32Array), d, want.max, `max n=${n}`);
        if (mode === 2 || n === 1 || n === 123457) {
          const mm = await minmaxElement(policy, d as Float32Array);
          check(mm.min, d, want.min, `minmax.min n=${n}`);
          check(mm.max, d, want.max, `minmax.max n=${n}`);
        }
        expectSameArray(d, copy as ArrayLike<number>, 'input untouched');
      }
    });
  }

  it('f32 order: -0 before +0, NaN greatest, ties to the first', async () => {
    const cases: [number[], number, number][] = [
      [[3, -0, 0, 2], 1, 0],
      [[0, -0, 0, -0], 1, 0],
      [[Number.NaN, 1, Number.NaN], 1, 0],
      [[Number.POSITIVE_INFINITY, Number.NaN, Number.NEGATIVE_INFINITY], 2, 1],
      [[Number.NaN], 0, 0],
      [[5, 5, 5], 0, 0],
    ];
    for (const [values, min, max] of cases) {
      const d = Float32Array.from(values);
      const mm = await minmaxElement(policy, d);
      check(mm.min, d, min, `min of ${values}`);
      check(mm.max, d, max, `max of ${values}`);
      if (!variant) {
        check(await minElement(policy, d), d, min, `minElement of ${values}`);
        check(await maxElement(policy, d), d, max, `maxElement of ${values}`);
      }
    }
  });

  if (gpu && testDevice && !name.includes('no-subgroups')) {
    const device = testDevice;
    it('DeviceArray views at offsets', async () => {
      for (const n of [1, 4, 5, 257, 3001]) {
        const d = makeData('f32', n, 'small');
        const want = ref(d);
        for (const off of [0, 1, 3]) {
          const pd = place(device, d, off);
          const mm = await minmaxElement(policy, pd.view);
          check(mm.min, d, want.min, `min n=${n} @${off}`);
          check(mm.max, d, want.max, `max n=${n} @${off}`);
          pd.parent.destroy();
        }
      }
    });
  }
});

describe('minElement: bad input', () => {
  it('names the argument', async () => {
    await expect(minElement(execution.seq, [1, 2] as unknown as Uint32Array)).rejects.toThrow(/input: expected/);
    await expect(maxElement(execution.seq, new Float64Array(2) as never)).rejects.toThrow(/input: expected/);
    await expect(minmaxElement('seq' as never, new Uint32Array(2))).rejects.toThrow(/policy/);
  });

  if (testDevice) {
    const device = testDevice;
    it('DeviceArrays need a device policy', async () => {
      const d = DeviceArray.from(device, Int32Array.from([4, -2, 9]));
      await expect(minElement(execution.seq, d)).rejects.toThrow(/policy/);
      expect(await minElement(execution.auto, d)).toEqual({ index: 1, value: -2 });
      d.destroy();
    });
  }
});
