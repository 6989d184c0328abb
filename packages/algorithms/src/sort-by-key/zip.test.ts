import { ArgumentError, DeviceArray } from '@webdpl/core';
import { describe, expect, it } from 'vitest';
import { zip } from '../common/zip';
import { greater } from '../sort/comparators';
import { expectSameArray } from '../testing/arrays';
import { isEngineVariant, itIf, parPool } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, testDevice } from '../testing/matrix';
import { sortByKey } from './index';

const sizes = edgeSizes([], [123457]).filter((n) => n <= 20000 || n === 123457);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

/** The stable order of `keys` (ascending, or descending with `desc`). */
function order(keys: Uint32Array, desc = false): number[] {
  return Array.from(keys.keys()).sort((i, j) => (desc ? keys[j]! - keys[i]! : keys[i]! - keys[j]!) || i - j);
}

/** Each array's elements in the order `ord`. */
function permuted<T extends Uint32Array | Int32Array | Float32Array>(arrays: readonly T[], ord: number[]): T[] {
  return arrays.map(
    (a) =>
      ord
        .map((i) => a[i]!)
        .reduce((out, v, j) => {
          out[j] = v;
          return out;
        }, a.slice()) as T,
  );
}

describe.each(matrix)('sortByKey with zip(...) values under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);
  it('three value arrays of mixed types follow the keys (stable, repeated keys)', async () => {
    for (const n of variant ? sizes.filter((s) => s < 3000) : sizes) {
      const keys = makeData('u32', n, 'small').map((v) => v + 8) as Uint32Array;
      const arrays = [
        keys,
        makeData('u32', n, 'random', 5),
        makeData('f32', n, 'random', 6),
        makeData('i32', n, 'random', 7),
      ];
      const want = permuted(arrays, order(keys));
      await sortByKey(policy, keys, zip(arrays[1]!, arrays[2]!, arrays[3]!));
      arrays.forEach((got, k) => {
        expectSameArray(got, want[k]!, `array ${k} n=${n}`);
      });
    }
  });

  itIf(!variant)('a comparator (greater); DeviceArrays when on a GPU', async () => {
    for (const n of [1, 7, 1000, 4099]) {
      const keys = makeData('u32', n, 'small').map((v) => v + 8) as Uint32Array;
      const arrays = [keys, makeData('f32', n, 'random', 5), makeData('u32', n, 'random', 9)];
      const want = permuted(arrays, order(keys, true));
      if (gpu) {
        const device = testDevice as NonNullable<typeof testDevice>;
        const ds = arrays.map((a) => DeviceArray.from(device, a as Uint32Array));
        await sortByKey(policy, ds[0]!, zip(ds[1]!, ds[2]!), greater);
        for (const [k, d] of ds.entries()) {
          expectSameArray(await d.read(), want[k]!, `device array ${k} n=${n}`);
          d.destroy();
        }
      }
      await sortByKey(policy, keys, zip(arrays[1]!, arrays[2]!), greater);
      arrays.forEach((got, k) => {
        expectSameArray(got, want[k]!, `array ${k} n=${n}`);
      });
    }
  });
});

describe('sortByKey with zip(...) values: argument errors', () => {
  const seq = matrix[0]?.policy as (typeof matrix)[number]['policy'];
  it('lengths, overlap and comparators are errors before anything moves', async () => {
    const keys = Uint32Array.of(3, 1, 2);
    const a = Uint32Array.of(1, 2, 3);
    await expect(sortByKey(seq, keys, zip(a, a))).rejects.toThrow(/values\[1\].*overlap/);
    await expect(sortByKey(seq, keys, zip(keys, a))).rejects.toThrow(/values\[0\].*overlap/);
    await expect(sortByKey(seq, Uint32Array.of(1, 2), zip(a, a.slice()))).rejects.toThrow(ArgumentError);
    await expect(sortByKey(seq, keys, zip(a, a.slice()), 'up' as never)).rejects.toThrow(/comp/);
    expectSameArray(keys, Uint32Array.of(3, 1, 2), 'keys untouched');
    expectSameArray(a, Uint32Array.of(1, 2, 3), 'values untouched');
  });
});
