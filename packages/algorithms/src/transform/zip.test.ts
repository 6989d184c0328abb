import { ArgumentError, DeviceArray, LambdaError, tupleLambda } from '@webdpl/core';
import { describe, expect, it } from 'vitest';
import { zip } from '../common/zip';
import { expectSameArray } from '../testing/arrays';
import { isEngineVariant, itIf, parPool, place } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, TINY_MAP_TILES, testDevice } from '../testing/matrix';
import { transform } from './index';

/** A capture of the tupleLambda test (given through options.captures, never read here). */
declare const k: number;

const DEFAULT_TILES = [256 * 4 * 4, 256 * 8];
const sizes = edgeSizes([...TINY_MAP_TILES, ...DEFAULT_TILES], [123457]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

/** x + y * z over (f32, u32, i32): y * z runs in i32 (wrapping), then f32. */
function mixedRef(x: Float32Array, y: Uint32Array, z: Int32Array): Float32Array {
  const out = new Float32Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = Math.fround(x[i]! + Math.fround(Math.imul(y[i]!, z[i]!)));
  return out;
}

describe.each(matrix)('transform over zip(...) under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);

  it('3 zipped inputs of mixed types to one output; 2 inputs and the index to a zip of 2 outputs', async () => {
    for (const n of variant ? sizes.filter((s) => s < 5000 || s % 7 === 0) : sizes) {
      const x = makeData('f32', n, 'random') as Float32Array;
      const y = makeData('u32', n, 'random', n + 3) as Uint32Array;
      const z = makeData('i32', n, n % 3 === 0 ? 'constant' : 'random', n + 5) as Int32Array;
      const out = new Float32Array(n);
      await transform(policy, zip(x, y, z), out, (a: number, b: number, c: number) => a + b * c);
      expectSameArray(out, mixedRef(x, y, z), `one output n=${n}`);
      const o1 = new Uint32Array(n + 2).fill(9);
      const o2 = new Float32Array(n + 1);
      await transform(policy, zip(x, y), zip(o1.subarray(0, n + 1), o2), (a: number, b: number, i: number) => [
        b + i,
        a * 2,
      ]);
      const r1 = new Uint32Array(n + 2).fill(9);
      for (let i = 0; i < n; i++) r1[i] = (y[i]! + i) >>> 0;
      expectSameArray(o1, r1, `zip output [0] n=${n}`);
      expectSameArray(
        o2.subarray(0, n),
        x.map((v) => v * 2),
        `zip output [1] n=${n}`,
      );
      expect(o2[n]).toBe(0);
    }
  });

  itIf(!variant)(
    'in place, one array to a zip of 4 (bool results as 1/0), 4 inputs, tupleLambda captures',
    async () => {
      for (const n of [1, 7, 64, 1001, 40003]) {
        const a = makeData('u32', n, 'random');
        const b = makeData('u32', n, 'random', 17);
        const a0 = a.slice();
        const b0 = b.slice();
        await transform(policy, zip(a, b), zip(b, a), (x: number, y: number) => [x + y, x - y]);
        expectSameArray(
          b,
          a0.map((v, i) => (v + b0[i]!) >>> 0),
          `in place [0] n=${n}`,
        );
        expectSameArray(
          a,
          a0.map((v, i) => (v - b0[i]!) >>> 0),
          `in place [1] n=${n}`,
        );
        const f = makeData('f32', n, 'random');
        const outs = [new Float32Array(n), new Int32Array(n), new Uint32Array(n), new Float32Array(n)] as const;
        await transform(policy, f, zip(...outs), (x: number) => [x * 4, x > 0, x < 0, -x]);
        expectSameArray(
          outs[0],
          f.map((v) => v * 4),
          `4 outputs [0] n=${n}`,
        );
        expectSameArray(
          outs[1],
          Int32Array.from(f, (v) => (v > 0 ? 1 : 0)),
          `4 outputs [1] n=${n}`,
        );
        expectSameArray(
          outs[2],
          Uint32Array.from(f, (v) => (v < 0 ? 1 : 0)),
          `4 outputs [2] n=${n}`,
        );
        expectSameArray(
          outs[3],
          f.map((v) => -v),
          `4 outputs [3] n=${n}`,
        );
        const i4 = makeData('i32', n, 'random', 3);
        const sum = new Int32Array(n);
        const scaled = tupleLambda((p: number, q: number, r: number, s: number) => p + q + r + s * k, {
          captures: { k: 3 },
        });
        await transform(policy, zip(i4, i4, i4, i4), sum, scaled);
        expectSameArray(
          sum,
          i4.map((v) => Math.imul(v, 6)),
          `4 inputs n=${n}`,
        );
      }
    },
  );

  itIf(gpu && !variant)('DeviceArrays (aligned and unaligned views), mixed with host arrays', async () => {
    const device = testDevice as NonNullable<typeof testDevice>;
    for (const n of [1, 5, 1000, 4099]) {
      for (const offset of [0, 1]) {
        const x = makeData('f32', n, 'random') as Float32Array;
        const y = makeData('u32', n, 'random', 8) as Uint32Array;
        const px = place(device, x, offset);
        const o1 = place(device, new Uint32Array(n), offset + 2);
        const o2 = DeviceArray.create(device, 'f32', n);
        await transform(policy, zip(px.view, y), zip(o1.view, o2), (a: number, b: number) => [b ^ 5, a + 1]);
        expectSameArray(
          await o1.read(),
          y.map((v) => (v ^ 5) >>> 0),
          `[0] n=${n} offset=${offset}`,
        );
        expectSameArray(
          (await o2.read()) as Float32Array,
          x.map((v) => v + 1),
          `[1] n=${n} offset=${offset}`,
        );
        const out = new Float32Array(n);
        await transform(policy, zip(px.view, o2), out, (a: number, b: number) => b - a);
        expectSameArray(
          out,
          x.map((v) => Math.fround(Math.fround(v + 1) - v)),
          `host out n=${n}`,
        );
        for (const a of [px.parent, o1.parent, o2]) a.destroy();
      }
    }
  });
});

describe('zip(...) argument errors', () => {
  const a = new Uint32Array(4);
  const f = new Float32Array(4);
  it('names the array of another length or kind, and the count', () => {
    expect(() => zip(a, new Uint32Array(3))).toThrow(ArgumentError);
    expect(() => zip(a, new Uint32Array(3))).toThrow(/zip\(\.\.\.\)\[1\].*4 elements/);
    expect(() => zip(a, f, new Float64Array(4) as never)).toThrow(/zip\(\.\.\.\)\[2\]/);
    expect(() => zip(a)).toThrow(/2 to 4 arrays/);
    expect(() => zip(a, a, a, a, a)).toThrow(/2 to 4 arrays/);
  });
  it('lambda arity, tuple width, output types and overlap, before any write', async () => {
    const o = new Uint32Array(4).fill(7);
    const o2 = new Float32Array(4).fill(7);
    const seq = matrix[0]?.policy as (typeof matrix)[number]['policy'];
    await expect(transform(seq, zip(a, f), o, (x: number) => x)).rejects.toThrow(/fn.*2 parameter/);
    await expect(transform(seq, zip(a, f), zip(o, o2), (x: number, y: number) => x + y)).rejects.toThrow(
      /tuple \[\.\.\] of 2 elements/,
    );
    await expect(transform(seq, zip(a, f), zip(o, o2), (x: number, y: number) => [x, y, x])).rejects.toThrow(
      /returning a tuple \[\.\.\] of 2.*tuple of 3/,
    );
    await expect(transform(seq, zip(a, f), o, (x: number, y: number) => [x, y])).rejects.toThrow(/returning a number/);
    await expect(transform(seq, zip(a, f), zip(o, o2), (x: number, y: number) => [y, x])).rejects.toThrow(
      /output\[0\].*f32/,
    );
    await expect(
      transform(seq, zip(a, f), zip(o.subarray(0, 3), o2.subarray(0, 3)), (x: number, y: number) => [x, y]),
    ).rejects.toThrow(/output\[0\].*at least 4/);
    await expect(transform(seq, zip(a, f), zip(o, o), (x: number, y: number) => [x, y > 0 ? x : 0])).rejects.toThrow(
      /output\[1\].*overlap/,
    );
    await expect(
      transform(seq, zip(a, f), o, (x: number, y: number) => (x as unknown as number[])[0]! + y),
    ).rejects.toThrow(LambdaError);
    expectSameArray(o, new Uint32Array(4).fill(7), 'untouched');
    expectSameArray(o2, new Float32Array(4).fill(7), 'untouched');
  });
});
