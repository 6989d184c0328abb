import { DeviceArray, type HostArray } from '@webdpl/core';
import { execution } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { expectSameArray } from '../testing/arrays';
import { isEngineVariant, itIf, parPool, place } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, TINY_MAP_TILES, testDevice } from '../testing/matrix';
import { replace, replaceIf } from './index';

const sizes = edgeSizes([...TINY_MAP_TILES, 256 * 4 * 4], [123457]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

type T3 = 'u32' | 'i32' | 'f32';

const PRED = {
  u32: (x: number) => (x & 3) === 1,
  i32: (x: number) => x < -2,
  f32: (x: number) => x > 0.5,
};
const NEW = { u32: 2 ** 32 - 7, i32: -123456, f32: -0.1 };

function replaceRef(d: HostArray, test: (x: number) => boolean | number, v: number): HostArray {
  const out = d.slice();
  out[0] = 0;
  for (let i = 0; i < d.length; i++) out[i] = test(d[i] as number) ? v : (d[i] as number);
  return out;
}

describe.each(matrix)('replace and replaceIf under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);
  const types: readonly T3[] = variant ? ['f32'] : ['u32', 'i32', 'f32'];
  for (const type of types) {
    it(`${type} at edge sizes: in place and into an output`, async () => {
      for (const [k, n] of sizes.entries()) {
        const d = makeData(type, n, k % 2 ? 'random' : 'small');
        const v = NEW[type];
        const want = replaceRef(d, PRED[type], type === 'f32' ? Math.fround(v) : v);
        const orig = d.slice();
        const out = new (d.constructor as new (n: number) => HostArray)(n + 2).fill(9);
        await replaceIf(policy, d, PRED[type], v, out);
        expectSameArray(out.subarray(0, n), want, `replaceIf copy n=${n}`);
        expect([...out.subarray(n)], 'past n untouched').toEqual([9, 9]);
        expectSameArray(d, orig, `input kept n=${n}`);
        await replaceIf(policy, d, PRED[type], v);
        expectSameArray(d, want, `replaceIf in place n=${n}`);
        // replace: the value at index 0 (small data repeats it), in place.
        const old = orig[0] ?? 3;
        const wantR = replaceRef(orig, (x) => x === old, 5);
        await replace(policy, orig, old, 5);
        expectSameArray(orig, wantR, `replace n=${n} old=${old}`);
      }
    });
  }

  itIf(!variant)('IEEE equality for replace (-0 equals +0, NaN nothing), conversions, truthiness', async () => {
    const f = Float32Array.from([0, -0, Number.NaN, 1, Number.NaN, -0]);
    const g = f.slice();
    await replace(policy, g, -0, 7);
    expectSameArray(g, Float32Array.from([7, 7, Number.NaN, 1, Number.NaN, 7]), 'zeros');
    const h = f.slice();
    await replace(policy, h, Number.NaN, 7);
    expectSameArray(h, f, 'NaN equals nothing');
    const out = new Float32Array(6);
    await replace(policy, f, 1, Number.NaN, out);
    expectSameArray(out, Float32Array.from([0, -0, Number.NaN, Number.NaN, Number.NaN, -0]), 'NaN as new value');
    // Values converted to the element type first.
    const u = Uint32Array.from([2 ** 32 - 1, 1, 2 ** 32 - 1]);
    await replace(policy, u, -1, 2 ** 32 + 3);
    expectSameArray(u, Uint32Array.from([3, 1, 3]), 'u32 wrap');
    // A numeric predicate: truthy when non-zero and not NaN.
    const t = Float32Array.from([0, 2, Number.NaN, -0, -1]);
    await replaceIf(policy, t, (x: number) => x, 9);
    expectSameArray(t, Float32Array.from([0, 9, Number.NaN, -0, 9]), 'truthiness');
  });

  if (gpu && testDevice && !name.includes('no-subgroups')) {
    const device = testDevice;
    it('DeviceArray views at offsets: in place and into another view, padding untouched', async () => {
      for (const n of [1, 4, 5, 257, 3001]) {
        const d = makeData('i32', n, 'small');
        const want = replaceRef(d, PRED.i32, 77);
        for (const off of [0, 1, 2]) {
          const a = place(device, d, off);
          const b = place(device, new Int32Array(n), (off + 1) % 3);
          await replaceIf(policy, a.view, PRED.i32, 77, b.view);
          expectSameArray(await b.read(), want, `copy n=${n} @${off}`);
          expectSameArray(await a.read(), d, `input kept n=${n} @${off}`);
          await replaceIf(policy, a.view, PRED.i32, 77);
          expectSameArray(await a.read(), want, `in place n=${n} @${off}`);
          a.parent.destroy();
          b.parent.destroy();
        }
      }
    });
  }
});

describe('replace and replaceIf: bad input', () => {
  const seq = execution.seq;
  it('names the argument and leaves the data untouched', async () => {
    const a = Uint32Array.from([1, 2, 3]);
    await expect(replaceIf(seq, [1, 2] as unknown as Uint32Array, PRED.u32, 0)).rejects.toThrow(/input: expected/);
    await expect(replaceIf(seq, a, PRED.u32, '0' as never)).rejects.toThrow(/newValue: expected a number/);
    await expect(replaceIf(seq, a, (x: number, y: number) => x < y, 0)).rejects.toThrow(/pred/);
    await expect(replace(seq, a, undefined as never, 1)).rejects.toThrow(/oldValue: expected a number/);
    await expect(replace(seq, a, 1, 0, new Uint32Array(2))).rejects.toThrow(/output: expected at least 3/);
    await expect(replace(seq, a, 1, 0, new Int32Array(3))).rejects.toThrow(/output: expected an array of u32/);
    await expect(replace(seq, a, 1, 0, a.subarray(1))).rejects.toThrow(/output: expected/);
    await expect(replaceIf(undefined as never, a, PRED.u32, 0)).rejects.toThrow(/policy/);
    expect([...a]).toEqual([1, 2, 3]);
  });

  if (testDevice) {
    const device = testDevice;
    it('DeviceArrays need a device policy', async () => {
      const d = DeviceArray.from(device, Uint32Array.from([1, 2, 5]));
      await expect(replace(execution.par, d, 1, 0)).rejects.toThrow(/policy/);
      await replaceIf(execution.auto, d, PRED.u32, 0);
      expect([...(await d.read())]).toEqual([0, 2, 0]);
      d.destroy();
    });
  }
});
