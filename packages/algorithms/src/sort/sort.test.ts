import { ArgumentError, DeviceArray, lambda, UnsupportedOnDeviceError } from '@webdpl/core';
import { execution, makeDevicePolicy, makeHostPolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { sortByKey } from '../sort-by-key';
import { stableSort } from '../stable-sort';
import { policyMatrix, TINY_SORT_TUNING, testDevice } from '../testing/matrix';
import { makeKeys, sameKeys, stableOrder } from '../testing/sort-keys';
import { sortReference } from '../testing/sort-reference';
import { greater, less, sort } from '.';

const TINY_SORT = TINY_SORT_TUNING;

const policies = [
  ...policyMatrix(TINY_SORT),
  {
    name: 'par (small threshold)',
    policy: makeHostPolicy('par', { tuning: { '*': { parallelThreshold: 300, minChunk: 64 } } }),
    gpu: false,
  },
];

const SIZES = [0, 1, 2, 3, 5, 8, 13, 16, 63, 64, 65, 129, 1000, 5003];
/** GPU policies run fewer sizes: lavapipe is slow, and the engine tests cover the sizes in depth. */
const GPU_SIZES = [0, 1, 2, 5, 16, 65, 1000, 5003];

describe.each(policies)('sort family on $name', ({ policy, gpu: usesGpu }) => {
  it('sort: every type, ascending and descending, TypedArray#sort order', async () => {
    for (const type of ['u32', 'i32', 'f32'] as const) {
      for (const n of usesGpu ? GPU_SIZES : SIZES) {
        const keys = makeKeys(type, n, n * 3 + type.length);
        const a = keys.slice();
        await sort(policy, a);
        sameKeys(a, sortReference(keys, false), `${type} n=${n}`);
        const d = keys.slice();
        await sort(policy, d, greater);
        sameKeys(d, sortReference(keys, true), `${type} greater n=${n}`);
      }
    }
  });
  it('sortByKey and stableSort are stable (values = original indices)', async () => {
    for (const type of ['u32', 'i32', 'f32'] as const) {
      for (const n of usesGpu ? [1, 65, 5003] : [0, 1, 7, 64, 65, 300, 5003]) {
        const keys = makeKeys(type, n, n + 11, 'dups');
        for (const comp of [less, greater]) {
          const k = keys.slice();
          const v = Uint32Array.from(keys, (_, i) => i);
          await sortByKey(policy, k, v, comp);
          const want = stableOrder(keys, comp.js([type, type]) as (a: number, b: number) => boolean);
          sameKeys(v, want, `${type} ${comp.name} n=${n} values`);
          sameKeys(
            k,
            Array.from(want, (i) => keys[i] as number),
            `${type} ${comp.name} n=${n} keys`,
          );
        }
        const s = keys.slice();
        await stableSort(policy, s);
        sameKeys(s, sortReference(keys, false), `stableSort ${type} n=${n}`);
      }
    }
  });
  it('user comparators: a lambda (stable, many ties) and i32 values', async () => {
    const byLow3 = (a: number, b: number) => a % 8 < b % 8;
    for (const n of usesGpu ? [2, 65, 3000] : [0, 2, 33, 65, 700, 3000]) {
      const keys = makeKeys('u32', n, n + 1) as Uint32Array;
      const k = keys.slice();
      const v = Int32Array.from(keys, (_, i) => -i);
      await sortByKey(policy, k, v, byLow3);
      const want = stableOrder(keys, byLow3);
      sameKeys(
        v,
        Array.from(want, (i) => -i | 0),
        `lambda n=${n}`,
      );
      const f = makeKeys('f32', n, n + 2, 'dups') as Float32Array;
      const g = f.slice();
      await sort(
        policy,
        g,
        lambda((a: number, b: number) => Math.abs(a) < Math.abs(b)),
      );
      const wantF = stableOrder(f, (a, b) => Math.abs(a) < Math.abs(b));
      sameKeys(
        g,
        Array.from(wantF, (i) => f[i] as number),
        `abs f32 n=${n}`,
      );
    }
  });
});

describe.each(policies.filter((p) => p.gpu))('sort family with DeviceArrays on $name', ({ policy }) => {
  it('sorts DeviceArrays on the device', async () => {
    const device = testDevice;
    if (!device) return;
    const keys = makeKeys('f32', 4000, 5);
    const d = DeviceArray.from(device, keys as Float32Array);
    const vals = DeviceArray.from(
      device,
      Uint32Array.from(keys, (_, i) => i),
    );
    try {
      await sortByKey(policy, d, vals);
      sameKeys(await d.read(), sortReference(keys, false), 'device keys');
      const v = await vals.read();
      const want = stableOrder(keys, less.js(['f32', 'f32']) as (a: number, b: number) => boolean);
      sameKeys(v, want, 'device values');
    } finally {
      d.destroy();
      vals.destroy();
    }
  });
});

describe('sort family: arguments', () => {
  it('rejects bad arguments with ArgumentError naming them, leaving data untouched', async () => {
    const data = Uint32Array.of(3, 1, 2);
    await expect(sort(execution.seq, [3, 1, 2] as never)).rejects.toThrow(ArgumentError);
    await expect(sort(execution.seq, [3, 1, 2] as never)).rejects.toThrow(/data/);
    await expect(sort(execution.seq, data, 42 as never)).rejects.toThrow(/comp/);
    await expect(sort(execution.seq, data, ((a: number) => a > 0) as never)).rejects.toThrow(/comp/);
    await expect(sort(execution.seq, data, ((a: number, b: number) => a - b) as never)).rejects.toThrow(/three-way/);
    await expect(sortByKey(execution.seq, data, new Uint32Array(2))).rejects.toThrow(/values/);
    await expect(sortByKey(execution.seq, data, data)).rejects.toThrow(/values/);
    await expect(sortByKey(execution.seq, data, undefined as never)).rejects.toThrow(/values/);
    await expect(sort('fast' as never, data)).rejects.toThrow(/policy/);
    expect(Array.from(data)).toEqual([3, 1, 2]);
  });
  it('a comparator the lambda translator cannot take still sorts on the CPU', async () => {
    const table = [5, 3, 9, 1];
    const byTable = (a: number, b: number) => (table[a] as number) < (table[b] as number);
    const d = Uint32Array.of(0, 1, 2, 3);
    await sort(execution.seq, d, byTable);
    expect(Array.from(d)).toEqual([3, 1, 0, 2]);
    if (testDevice) {
      const strict = makeDevicePolicy(testDevice, { fallback: 'error' });
      await expect(sort(strict, Uint32Array.of(1, 0), byTable)).rejects.toThrow(UnsupportedOnDeviceError);
      const lenient = makeDevicePolicy(testDevice, { fallback: 'cpu', fallbackPolicy: execution.seq });
      const e = Uint32Array.of(2, 3, 0, 1);
      await sort(lenient, e, byTable);
      expect(Array.from(e)).toEqual([3, 1, 0, 2]);
    }
  });
});
