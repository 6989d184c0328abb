import { DeviceArray, type HostArray } from '@webdpl/core';
import { execution } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { forEach } from '../for-each/index';
import { expectSameArray } from '../testing/arrays';
import { isEngineVariant, itIf, parPool, place } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, TINY_MAP_TILES, testDevice } from '../testing/matrix';
import { transform } from './index';

const DEFAULT_TILES = [256 * 4 * 4, 256 * 8];
const sizes = edgeSizes([...TINY_MAP_TILES, ...DEFAULT_TILES], [123457]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

type T3 = 'u32' | 'i32' | 'f32';

/** x * 3 + 1 (ints, wrapping) or x * 2 + 1 (f32: the product is exact, so contraction cannot change it). */
const affine = {
  u32: { fn: (x: number) => x * 3 + 1, ref: (x: number) => (Math.imul(x, 3) + 1) >>> 0 },
  i32: { fn: (x: number) => x * 3 + 1, ref: (x: number) => (Math.imul(x, 3) + 1) | 0 },
  f32: { fn: (x: number) => x * 2 + 1, ref: (x: number) => Math.fround(x * 2 + 1) },
};

function sameKind(type: T3, n: number): HostArray {
  return type === 'u32' ? new Uint32Array(n) : type === 'i32' ? new Int32Array(n) : new Float32Array(n);
}

function mapRef(data: HostArray, f: (x: number) => number, out: HostArray): HostArray {
  for (let i = 0; i < data.length; i++) out[i] = f(data[i] as number);
  return out;
}

describe.each(matrix)('transform under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);
  for (const type of variant ? (['u32'] as const) : (['u32', 'i32', 'f32'] as const)) {
    it(`unary ${type} at edge sizes, random and constant data; forEach in place`, async () => {
      const { fn, ref } = affine[type];
      for (const n of sizes) {
        for (const kind of ['random', 'constant'] as const) {
          if (kind === 'constant' && n % 3 !== 0) continue;
          const data = makeData(type, n, kind);
          const copy = data.slice();
          const out = sameKind(type, n);
          await transform(policy, data, out, fn);
          expectSameArray(data, copy, 'input untouched');
          expectSameArray(out, mapRef(data, ref, sameKind(type, n)), `n=${n} ${kind}`);
          if (n % 5 === 0 && type === 'u32') {
            await forEach(policy, data, fn);
            expectSameArray(data, out, `forEach n=${n}`);
          }
        }
      }
    });
  }

  itIf(!variant)('binary transforms, a bool result, a type-changing result, in place, a longer output', async () => {
    for (const n of [1, 5, 64, 1000, 5003]) {
      const a = makeData('i32', n, 'random');
      const b = makeData('i32', n, 'random', 99);
      const out = new Int32Array(n + 3).fill(7);
      await transform(policy, a, b, out, (x: number, y: number) => x - y);
      expectSameArray(
        out.subarray(0, n),
        a.map((x, i) => (x - b[i]!) | 0),
        'a - b',
      );
      expect([...out.subarray(n)], 'past n untouched').toEqual([7, 7, 7]);

      const u = makeData('u32', n, 'random');
      const f = makeData('f32', n, 'random');
      const prod = new Float32Array(n);
      await transform(policy, u, f, prod, (x: number, y: number) => x * y);
      expectSameArray(
        prod,
        f.map((y, i) => Math.fround(u[i]!) * y),
        'u32 * f32',
      );

      const flags = new Int32Array(n);
      await transform(policy, u, flags, (x: number) => x > 2147483648);
      expectSameArray(
        flags,
        Int32Array.from(u, (x) => (x > 2147483648 ? 1 : 0)),
        'bool result',
      );

      const halves = new Float32Array(n);
      await transform(policy, u, halves, (x: number) => x * 0.5);
      expectSameArray(
        halves,
        Float32Array.from(u, (x) => Math.fround(x) * 0.5),
        'u32 * 0.5',
      );

      const want = a.map((x, i) => (x - b[i]!) | 0);
      await transform(policy, a, b, a, (x: number, y: number) => x - y);
      expectSameArray(a, want, 'in place on input1');
    }
  });

  if (gpu && testDevice) {
    const device = testDevice;
    it('DeviceArray views at offsets (unaligned paths), padding untouched, chained calls', async () => {
      for (const n of [1, 3, 4, 7, 64, 255, 256, 257, 1000, 4099]) {
        const data = makeData('u32', n, 'random');
        const want = mapRef(data, affine.u32.ref, new Uint32Array(n));
        for (const [inOff, outOff] of [
          [0, 0],
          [1, 0],
          [0, 1],
          [4, 8],
          [3, 3],
        ] as const) {
          const src = place(device, data, inOff);
          const dst = place(device, new Uint32Array(n), outOff);
          await transform(policy, src.view, dst.view, affine.u32.fn);
          expectSameArray(await dst.read(), want, `n=${n} in@${inOff} out@${outOff}`);
          expectSameArray(await src.read(), data, 'input untouched');
          // Chained: forEach on the device output, then a host output from a device input.
          await forEach(policy, dst.view, affine.u32.fn);
          const host = new Uint32Array(n);
          await transform(policy, dst.view, host, affine.u32.fn);
          expectSameArray(
            host,
            mapRef(mapRef(want, affine.u32.ref, new Uint32Array(n)), affine.u32.ref, new Uint32Array(n)),
            'chained',
          );
          src.parent.destroy();
          dst.parent.destroy();
        }
        // In place on a view, and an input elsewhere in the output's buffer.
        const both = place(device, Uint32Array.from([...data, ...data]), 1);
        await transform(policy, both.view.view(0, n), both.view.view(n, n), affine.u32.fn);
        const got = await both.read();
        expectSameArray(got.subarray(n), want, `same buffer n=${n}`);
        await forEach(policy, both.view.view(0, n), affine.u32.fn);
        expectSameArray((await both.read()).subarray(0, n), want, `in place n=${n}`);
        both.parent.destroy();
      }
    });
  }
});

describe('transform: bad input', () => {
  const seq = execution.seq;
  const inc = (x: number) => x + 1;
  it('names the argument and leaves the caller data untouched', async () => {
    const data = Uint32Array.from([1, 2, 3, 4]);
    const out = new Uint32Array(4).fill(9);
    await expect(transform(seq, [1, 2] as unknown as Uint32Array, out, inc)).rejects.toThrow(/input: expected/);
    await expect(transform(seq, data, new Uint32Array(3), inc)).rejects.toThrow(/output: expected at least 4 elements/);
    await expect(transform(seq, data, new Float32Array(4), inc)).rejects.toThrow(/output: expected an array of u32/);
    await expect(transform(seq, data, out, 42 as never)).rejects.toThrow(/fn/);
    await expect(transform(seq, data, new Uint32Array(3), out, (a: number, b: number) => a + b)).rejects.toThrow(
      /input2: expected 4 elements/,
    );
    const big = new Uint32Array(8);
    await expect(transform(seq, big.subarray(0, 4), big.subarray(2, 6), inc)).rejects.toThrow(/output: expected input/);
    await expect(transform({} as never, data, out, inc)).rejects.toThrow(/policy/);
    await expect(forEach(seq, data, (x: number) => x * 0.5)).rejects.toThrow(/fn: expected a function returning u32/);
    expect([...data]).toEqual([1, 2, 3, 4]);
    expect([...out]).toEqual([9, 9, 9, 9]);
  });

  if (testDevice) {
    const device = testDevice;
    it('DeviceArrays need a device policy', async () => {
      const d = DeviceArray.from(device, Uint32Array.from([1, 2, 3]));
      await expect(transform(seq, d, new Uint32Array(3), inc)).rejects.toThrow(/policy/);
      d.destroy();
    });
  }
});
