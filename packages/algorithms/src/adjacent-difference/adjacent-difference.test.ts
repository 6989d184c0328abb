import { DeviceArray, type HostArray, maximum } from '@webdpl/core';
import { execution } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { expectSameArray } from '../testing/arrays';
import { isEngineVariant, itIf, parPool, place } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, TINY_MAP_TILES, testDevice } from '../testing/matrix';
import { adjacentDifference } from './index';

const sizes = edgeSizes([...TINY_MAP_TILES], [70001]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

function ref(data: HostArray, op: (a: number, b: number) => number): HostArray {
  const out = data.slice();
  for (let i = 1; i < data.length; i++) out[i] = op(data[i] as number, data[i - 1] as number);
  return out;
}

const SUB = {
  u32: (a: number, b: number) => (a - b) >>> 0,
  i32: (a: number, b: number) => (a - b) | 0,
  f32: (a: number, b: number) => Math.fround(a - b),
};

describe.each(matrix)('adjacentDifference under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);
  for (const type of variant ? (['u32'] as const) : (['u32', 'i32', 'f32'] as const)) {
    it(`minus<${type}> at edge sizes`, async () => {
      for (const n of sizes) {
        const data = makeData(type, n, n % 2 ? 'random' : 'small');
        const copy = data.slice();
        const out = data.slice().fill(7);
        await adjacentDifference(policy, data, out);
        expectSameArray(data, copy, 'input untouched');
        expectSameArray(out, ref(data, SUB[type]), `n=${n}`);
      }
    });
  }

  itIf(!variant)('a built-in operator, a lambda, a bool-valued lambda', async () => {
    for (const n of [1, 2, 9, 1000]) {
      const data = makeData('i32', n, 'random');
      const out = new Int32Array(n);
      await adjacentDifference(policy, data, out, maximum);
      expectSameArray(out, ref(data, Math.max), `maximum n=${n}`);
      await adjacentDifference(policy, data, out, (a: number, b: number) => a + b);
      expectSameArray(
        out,
        ref(data, (a, b) => (a + b) | 0),
        `a + b n=${n}`,
      );
      await adjacentDifference(policy, data, out, (a: number, b: number) => a < b);
      expectSameArray(
        out,
        ref(data, (a, b) => (a < b ? 1 : 0)),
        `a < b n=${n}`,
      );
    }
  });

  if (gpu && testDevice) {
    const device = testDevice;
    it('DeviceArray views at offsets, padding untouched, one buffer for both', async () => {
      for (const n of [1, 2, 5, 257, 3000]) {
        const data = makeData('u32', n, 'random');
        const want = ref(data, SUB.u32);
        for (const [inOff, outOff] of [
          [0, 0],
          [1, 4],
          [4, 1],
        ] as const) {
          const src = place(device, data, inOff);
          const dst = place(device, new Uint32Array(n), outOff);
          await adjacentDifference(policy, src.view, dst.view);
          expectSameArray(await dst.read(), want, `n=${n} in@${inOff} out@${outOff}`);
          const host = new Uint32Array(n);
          await adjacentDifference(policy, src.view, host);
          expectSameArray(host, want, `to host n=${n}`);
          src.parent.destroy();
          dst.parent.destroy();
        }
        const both = place(device, Uint32Array.from([...data, ...new Uint32Array(n)]), 1);
        await adjacentDifference(policy, both.view.view(0, n), both.view.view(n, n));
        expectSameArray((await both.read()).subarray(n), want, `one buffer n=${n}`);
        both.parent.destroy();
      }
    });
  }
});

describe('adjacentDifference: bad input', () => {
  const seq = execution.seq;
  it('names the argument and leaves the caller data untouched', async () => {
    const data = Int32Array.from([1, 2, 3, 4]);
    const out = new Int32Array(4).fill(9);
    await expect(adjacentDifference(seq, data, new Int32Array(3))).rejects.toThrow(/output: expected at least 4/);
    await expect(adjacentDifference(seq, data, new Uint32Array(4))).rejects.toThrow(/output: expected an array of i32/);
    await expect(adjacentDifference(seq, data, data)).rejects.toThrow(/output: expected memory/);
    await expect(adjacentDifference(seq, data, out, 3 as never)).rejects.toThrow(/op/);
    await expect(adjacentDifference(seq, data, out, (a: number, b: number) => a * 0.5 + b)).rejects.toThrow(
      /op: expected a function returning i32/,
    );
    expect([...data]).toEqual([1, 2, 3, 4]);
    expect([...out]).toEqual([9, 9, 9, 9]);
  });

  if (testDevice) {
    const device = testDevice;
    it('overlapping DeviceArray views are refused', async () => {
      const d = DeviceArray.from(device, Uint32Array.from([1, 2, 3, 4, 5]));
      await expect(adjacentDifference(execution.auto, d.view(0, 3), d.view(2, 3))).rejects.toThrow(/output/);
      d.destroy();
    });
  }
});
