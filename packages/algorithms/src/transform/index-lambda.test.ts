import { DeviceArray, type HostArray, lambda, plus } from '@webdpl/core';
import { allocShared, execution } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { counting } from '../common/counting';
import { forEach } from '../for-each/index';
import { expectSameArray } from '../testing/arrays';
import { isEngineVariant, itIf, parPool, place } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, randomSizes, TINY_MAP_TILES, testDevice } from '../testing/matrix';
import { transformReduce } from '../transform-reduce/index';
import { transform } from './index';

const DEFAULT_TILES = [256 * 4 * 4, 256 * 8];
const sizes = edgeSizes([...TINY_MAP_TILES, ...DEFAULT_TILES], [123457, ...randomSizes(2, 15)]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

type T3 = 'u32' | 'i32' | 'f32';

/** A lambda capture (passed in `captures`, never read from this scope). */
declare const k: number;

function alloc(type: T3, n: number): HostArray {
  return type === 'u32' ? new Uint32Array(n) : type === 'i32' ? new Int32Array(n) : new Float32Array(n);
}

/** (x, i) => ... per input type, with a reference in the output's arithmetic (u32 index). */
const indexed = {
  u32: { fn: (x: number, i: number) => x ^ (i * 7), ref: (x: number, i: number) => (x ^ Math.imul(i, 7)) >>> 0 },
  // i32 with a u32 index: the index converted to i32 first.
  i32: { fn: (x: number, i: number) => x - (i | 0) * 3, ref: (x: number, i: number) => (x - Math.imul(i, 3)) | 0 },
  // f32: x * 2 + i (exact products, one rounding at each step as in f32).
  f32: {
    fn: (x: number, i: number) => x * 2 + i,
    ref: (x: number, i: number) => Math.fround(Math.fround(x * 2) + Math.fround(i)),
  },
};

describe.each(matrix)('index lambdas and counting(n) in transform under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);
  for (const type of variant ? (['u32'] as const) : (['u32', 'i32', 'f32'] as const)) {
    it(`(x, i) => ... over ${type} at edge sizes`, async () => {
      const { fn, ref } = indexed[type];
      for (const n of sizes) {
        const data = makeData(type, n, 'random');
        const copy = data.slice();
        const out = alloc(type, n + 2).fill(9);
        await transform(policy, data, out, fn);
        const want = alloc(type, n + 2).fill(9);
        for (let i = 0; i < n; i++) want[i] = ref(data[i] as number, i);
        expectSameArray(out, want, `n=${n}`);
        expectSameArray(data, copy, 'input untouched');
      }
    });
  }

  it('transform of counting(n): i => ..., a bool result, f32 results; in place with (x, i)', async () => {
    for (const n of sizes) {
      if (variant && n % 2 === 1 && n > 16) continue;
      const sq = new Uint32Array(n + 1).fill(5);
      await transform(policy, counting(n), sq, (i: number) => i * i + 1);
      const want = new Uint32Array(n + 1).fill(5);
      for (let i = 0; i < n; i++) want[i] = (Math.imul(i, i) + 1) >>> 0;
      expectSameArray(sq, want, `i * i + 1, n=${n}`);
      if (variant) continue;
      const odd = new Int32Array(n);
      await transform(policy, counting(n), odd, (i: number) => i % 3 === 1);
      expectSameArray(
        odd,
        Int32Array.from({ length: n }, (_, i) => (i % 3 === 1 ? 1 : 0)),
        `bool n=${n}`,
      );
      const half = new Float32Array(n);
      await transform(policy, counting(n), half, (i: number) => i * 0.5);
      expectSameArray(
        half,
        Float32Array.from({ length: n }, (_, i) => Math.fround(i) * 0.5),
        `f32 n=${n}`,
      );
      const data = makeData('u32', n, 'random');
      const want2 = data.map((x, i) => (x + i) >>> 0);
      await transform(policy, data, data, (x: number, i: number) => x + i);
      expectSameArray(data, want2, `in place n=${n}`);
      await forEach(policy, data, (x: number, i: number) => x ^ i);
      expectSameArray(
        data,
        want2.map((x, i) => (x ^ i) >>> 0),
        `forEach n=${n}`,
      );
    }
  });

  it('transformReduce with (x, i) => ... at edge sizes (a bool result counts)', async () => {
    for (const n of sizes) {
      if (variant && n % 2 === 1 && n > 16) continue;
      const data = makeData('u32', n, 'random');
      let want = 0;
      let fixed = 0;
      for (let i = 0; i < n; i++) {
        want = (want + ((data[i] as number) ^ Math.imul(i, 7))) >>> 0;
        if ((data[i] as number) % 8 === i % 8) fixed++;
      }
      expect(await transformReduce(policy, data, 0, plus, indexed.u32.fn), `sum n=${n}`).toBe(want);
      expect(
        await transformReduce(policy, data, 0, plus, (x: number, i: number) => x % 8 === i % 8),
        `count n=${n}`,
      ).toBe(fixed);
    }
  });

  itIf(!variant)('a lambda with captures and the index; shared arrays', async () => {
    const f = lambda((x: number, i: number) => x * k + i, { captures: { k: 3 } });
    for (const n of [1, 100, 5000]) {
      const src = gpu ? new Int32Array(n) : allocShared('i32', n);
      src.set(makeData('i32', n, 'small'));
      const out = gpu ? new Int32Array(n) : allocShared('i32', n);
      await transform(policy, src, out, f);
      expectSameArray(
        out,
        Int32Array.from(src, (x, i) => (Math.imul(x, 3) + i) | 0),
        `captures n=${n}`,
      );
    }
  });

  if (gpu && testDevice) {
    const device = testDevice;
    it('DeviceArray views at offsets: the index counts from the view start', async () => {
      for (const n of [1, 5, 257, 4099]) {
        const data = makeData('u32', n, 'random');
        for (const off of [0, 1, 3]) {
          const src = place(device, data, off);
          const dst = place(device, new Uint32Array(n), off + 1);
          await transform(policy, src.view, dst.view, indexed.u32.fn);
          expectSameArray(
            await dst.read(),
            data.map((x, i) => indexed.u32.ref(x, i)),
            `n=${n} @${off}`,
          );
          await transform(policy, counting(n), dst.view, (i: number) => i + 10);
          expectSameArray(
            await dst.read(),
            Uint32Array.from({ length: n }, (_, i) => i + 10),
            `counting n=${n} @${off}`,
          );
          src.parent.destroy();
          dst.parent.destroy();
        }
      }
    });
  }
});

describe('index lambdas: bad input', () => {
  const seq = execution.seq;
  it('names the argument', async () => {
    const out = new Uint32Array(4).fill(9);
    expect(() => counting(-1)).toThrow(/n: expected a whole number/);
    expect(() => counting(1.5)).toThrow(/n: expected a whole number/);
    await expect(transform(seq, counting(5), out, (i: number) => i)).rejects.toThrow(/output: expected at least 5/);
    await expect(transform(seq, counting(4), out, (a: number, b: number) => a + b)).rejects.toThrow(
      /fn: expected a function of 1/,
    );
    await expect(transform(seq, counting(4), new Float32Array(4), (i: number) => i)).rejects.toThrow(
      /output: expected an array of u32/,
    );
    await expect(
      transform(seq, Uint32Array.of(1, 2, 3, 4), new Float32Array(4), (x: number, i: number) => x + i),
    ).rejects.toThrow(/output: expected an array of u32/);
    expect([...out]).toEqual([9, 9, 9, 9]);
    await transform(seq, counting(0), out, (i: number) => i);
    expect([...out]).toEqual([9, 9, 9, 9]);
  });

  if (testDevice) {
    const device = testDevice;
    it('DeviceArray outputs of counting need a device policy', async () => {
      const d = DeviceArray.create(device, 'u32', 3);
      await expect(transform(seq, counting(3), d, (i: number) => i)).rejects.toThrow(/policy/);
      d.destroy();
    });
  }
});
