import { DeviceArray, type HostArray } from '@webdpl/core';
import { allocShared, execution } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { copy } from '../copy/index';
import { iota } from '../iota/index';
import { expectSameArray } from '../testing/arrays';
import { isEngineVariant, parPool, place } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, TINY_MAP_TILES, testDevice } from '../testing/matrix';
import { fill } from './index';

const sizes = edgeSizes([...TINY_MAP_TILES, 256 * 4 * 4], [123457]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];
const TYPES = ['u32', 'i32', 'f32'] as const;

function alloc(type: (typeof TYPES)[number], n: number, shared = false): HostArray {
  if (shared) return allocShared(type, n);
  return type === 'u32' ? new Uint32Array(n) : type === 'i32' ? new Int32Array(n) : new Float32Array(n);
}

function iotaRef(type: (typeof TYPES)[number], n: number, start: number): HostArray {
  const out = alloc(type, n);
  for (let i = 0; i < n; i++) out[i] = type === 'f32' ? Math.fround(start) + Math.fround(i) : start + i;
  return out;
}

describe.each(matrix)('fill, iota, copy under $name', ({ name, policy, gpu }) => {
  for (const type of isEngineVariant(name) ? (['i32'] as const) : TYPES) {
    it(`${type} at edge sizes (shared and plain memory)`, async () => {
      const values = { u32: [7, -1, 2 ** 32 + 5], i32: [-7, 2 ** 31, 3], f32: [0.1, -0, Number.NaN] }[type];
      const starts = { u32: [0, 2 ** 32 - 3], i32: [-5, 2 ** 31 - 2], f32: [0.5, -100] }[type];
      for (const [k, n] of sizes.entries()) {
        const shared = k % 2 === 1;
        const data = alloc(type, n, shared);
        const v = values[k % values.length] as number;
        await fill(policy, data, v);
        const want = alloc(type, n).fill(v);
        expectSameArray(data, want, `fill n=${n} v=${v}`);
        const s = starts[k % starts.length] as number;
        await iota(policy, data, s);
        expectSameArray(data, iotaRef(type, n, s), `iota n=${n} start=${s}`);
        const src = makeData(type, n, 'random');
        const dst = alloc(type, n + 2, shared).fill(9);
        await copy(policy, src, dst);
        expectSameArray(dst.subarray(0, n), src, `copy n=${n}`);
        expect([...dst.subarray(n)], 'past n untouched').toEqual([9, 9]);
      }
      const d = alloc(type, 5);
      await iota(policy, d);
      expectSameArray(d, iotaRef(type, 5, 0), 'iota default start');
    });
  }

  if (gpu && testDevice) {
    const device = testDevice;
    it('DeviceArray views at offsets, padding untouched, chained device calls', async () => {
      for (const n of [1, 3, 4, 5, 255, 256, 257, 1000, 5003]) {
        for (const off of [0, 1, 2, 4]) {
          const a = place(device, new Int32Array(n), off);
          await fill(policy, a.view, -3);
          expectSameArray(await a.read(), new Int32Array(n).fill(-3), `fill n=${n} @${off}`);
          await iota(policy, a.view, 10);
          const want = iotaRef('i32', n, 10);
          expectSameArray(await a.read(), want, `iota n=${n} @${off}`);
          // device -> device (distinct buffers), device -> host, host -> device.
          const b = place(device, new Int32Array(n), (off + 1) % 4);
          await copy(policy, a.view, b.view);
          expectSameArray(await b.read(), want, `copy d2d n=${n} @${off}`);
          const host = new Int32Array(n);
          await copy(policy, b.view, host);
          expectSameArray(host, want, `copy d2h n=${n}`);
          const h = makeData('i32', n, 'random');
          await copy(policy, h, b.view);
          expectSameArray(await b.read(), h, `copy h2d n=${n}`);
          // Within one buffer: the identity kernel.
          const both = place(device, Int32Array.from([...want, ...new Int32Array(n)]), off);
          await copy(policy, both.view.view(0, n), both.view.view(n, n));
          expectSameArray((await both.read()).subarray(n), want, `copy within a buffer n=${n}`);
          for (const x of [a, b, both]) x.parent.destroy();
        }
      }
    });
  }
});

describe('fill of shared memory (a block filled, then doubled with copyWithin)', () => {
  it('views of allocShared arrays at sizes around the block, the elements around them untouched', async () => {
    for (const [name, policy] of [
      ['seq', execution.seq],
      ['par', execution.par],
    ] as const) {
      for (const n of [1, 255, 256, 257, 511, 512, 513, 1000, 4097, 65539]) {
        for (const type of TYPES) {
          const all = allocShared(type, n + 7);
          all.fill(5);
          const view = all.subarray(3, 3 + n);
          await fill(policy, view, 2);
          const want = alloc(type, n + 7).fill(5);
          want.fill(2, 3, 3 + n);
          expectSameArray(all, want, `${name} ${type} n=${n}`);
        }
      }
    }
  });
});

describe('fill, iota, copy: bad input', () => {
  const seq = execution.seq;
  it('names the argument and leaves the caller data untouched', async () => {
    const data = Uint32Array.from([1, 2, 3, 4]);
    await expect(fill(seq, [1, 2] as unknown as Uint32Array, 0)).rejects.toThrow(/data: expected/);
    await expect(fill(seq, data, 'x' as unknown as number)).rejects.toThrow(/value: expected a number/);
    await expect(iota(seq, data, null as unknown as number)).rejects.toThrow(/start: expected a number/);
    await expect(copy(seq, data, new Uint32Array(3))).rejects.toThrow(/output: expected at least 4 elements/);
    await expect(copy(seq, data, new Int32Array(4))).rejects.toThrow(/output: expected an array of u32/);
    await expect(copy(seq, data.subarray(0, 2), data.subarray(1, 3))).rejects.toThrow(/output: expected memory/);
    await expect(fill({} as never, data, 0)).rejects.toThrow(/policy/);
    expect([...data]).toEqual([1, 2, 3, 4]);
  });

  if (testDevice) {
    const device = testDevice;
    it('overlapping DeviceArray views are refused', async () => {
      const d = DeviceArray.from(device, Uint32Array.from([1, 2, 3, 4, 5]));
      await expect(copy(execution.auto, d.view(0, 3), d.view(1, 3))).rejects.toThrow(/output: expected memory/);
      expectSameArray(await d.read(), [1, 2, 3, 4, 5]);
      d.destroy();
    });
  }
});
