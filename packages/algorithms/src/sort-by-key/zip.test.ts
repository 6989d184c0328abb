import { ArgumentError, DeviceArray } from '@webdpl/core';
import { describe, expect, it } from 'vitest';
import { zip } from '../common/zip';
import { sort } from '../sort';
import { greater, less } from '../sort/comparators';
import { stableSort } from '../stable-sort';
import { expectSameArray } from '../testing/arrays';
import { isEngineVariant, itIf, parPool } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, testDevice } from '../testing/matrix';
import { sameKeys } from '../testing/sort-keys';
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

type Keys = Uint32Array | Int32Array | Float32Array;

/** The stable lexicographic order of the tuples (keys[0][i], keys[1][i], ...), each key by `comp`. */
function lexOrder(keys: readonly Keys[], comp: typeof less | typeof greater): number[] {
  const before = keys.map((k) => comp.js([typeOf(k), typeOf(k)]) as (a: number, b: number) => boolean);
  return Array.from({ length: keys[0]!.length }, (_, i) => i).sort((i, j) => {
    for (const [k, key] of keys.entries()) {
      const a = key[i]!;
      const b = key[j]!;
      if (before[k]!(a, b)) return -1;
      if (before[k]!(b, a)) return 1;
    }
    return i - j;
  });
}

function typeOf(a: Keys): 'u32' | 'i32' | 'f32' {
  return a instanceof Uint32Array ? 'u32' : a instanceof Int32Array ? 'i32' : 'f32';
}

/** Keys with many ties: u32 in 0..3, f32 from -2..2 with -0, +0 and NaN, i32 random. */
function tupleKeys(n: number, seed: number): Keys[] {
  const k0 = makeData('u32', n, 'random', seed).map((v) => v & 3) as Uint32Array;
  const specials = [Number.NaN, -0, 0, -2, 2, 1.5];
  const k1 = Float32Array.from(makeData('u32', n, 'random', seed + 1), (v) => specials[v % specials.length]!);
  const k2 = makeData('i32', n, 'random', seed + 2) as Int32Array;
  return [k0, k1, k2];
}

describe.each(matrix)('lexicographic sorts over zipped keys under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);
  it('sort(zip(k0, k1, k2)) and stableSort, less and greater: every array permuted, stable', async () => {
    for (const n of variant ? sizes.filter((s) => s < 3000) : sizes) {
      for (const comp of [less, greater]) {
        const keys = tupleKeys(n, n + 3);
        const want = permuted(keys, lexOrder(keys, comp));
        await (comp === less
          ? sort(policy, zip(keys[0]!, keys[1]!, keys[2]!))
          : stableSort(policy, zip(keys[0]!, keys[1]!, keys[2]!), greater));
        keys.forEach((got, k) => {
          sameKeys(got, want[k]!, `${comp.name} key ${k} n=${n}`);
        });
      }
    }
  });

  it('sortByKey(zip(k0, k1), values and zip(values)): the values follow, stable', async () => {
    for (const n of variant ? sizes.filter((s) => s < 3000) : sizes) {
      const [k0, k1] = tupleKeys(n, n + 11) as [Uint32Array, Float32Array];
      const v0 = Uint32Array.from({ length: n }, (_, i) => i);
      const v1 = makeData('f32', n, 'random', 4) as Float32Array;
      const ord = lexOrder([k0, k1], less);
      const want = permuted<Keys>([k0, k1, v0, v1], ord);
      await sortByKey(policy, zip(k0, k1), zip(v0, v1));
      [k0, k1, v0, v1].forEach((got, k) => {
        sameKeys(got, want[k]!, `array ${k} n=${n}`);
      });
      // One value array, descending; on a GPU also as DeviceArrays.
      const [c0, c1] = tupleKeys(n, n + 12) as [Uint32Array, Float32Array];
      const w = Uint32Array.from({ length: n }, (_, i) => i);
      const down = permuted<Keys>([c0, c1, w], lexOrder([c0, c1], greater));
      if (gpu && n <= 5000) {
        const device = testDevice as NonNullable<typeof testDevice>;
        const ds = [c0, c1, w].map((a) => DeviceArray.from(device, a as Uint32Array));
        await sortByKey(policy, zip(ds[0]!, ds[1]!), ds[2]!, greater);
        for (const [k, d] of ds.entries()) {
          sameKeys(await d.read(), down[k]!, `device array ${k} n=${n}`);
          d.destroy();
        }
      }
      await sortByKey(policy, zip(c0, c1), w, greater);
      [c0, c1, w].forEach((got, k) => {
        sameKeys(got, down[k]!, `greater array ${k} n=${n}`);
      });
    }
  });
});

describe('lexicographic sorts over zipped keys: argument errors', () => {
  const seq = matrix[0]?.policy as (typeof matrix)[number]['policy'];
  it('comparator functions, lengths and overlaps are errors before anything moves', async () => {
    const a = Uint32Array.of(3, 1, 2);
    const b = Float32Array.of(1, 2, 3);
    await expect(sort(seq, zip(a, b), (x: number, y: number) => x < y)).rejects.toThrow(/^comp: .*less or greater/);
    await expect(sortByKey(seq, zip(a, b), a)).rejects.toThrow(/values.*overlap/);
    await expect(sortByKey(seq, zip(a, b), Uint32Array.of(1, 2))).rejects.toThrow(/^values/);
    await expect(sort(seq, zip(a, b), 'up' as never)).rejects.toThrow(/^comp/);
    expectSameArray(a, Uint32Array.of(3, 1, 2), 'a untouched');
    expectSameArray(b, Float32Array.of(1, 2, 3), 'b untouched');
  });
});
