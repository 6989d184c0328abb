import { DeviceArray, lambda, lastNonZero, maximum, multiplies, plus } from '@webdpl/core';
import { execution, makeDevicePolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { innerProduct } from '../inner-product/index';
import { expectSameArray } from '../testing/arrays';
import { isEngineVariant, itIf, parPool, place } from '../testing/device-data';
import { edgeSizes, floatTolerance, makeData, policyMatrix, rng, TINY_TILE, testDevice } from '../testing/matrix';
import { transformReduce } from './index';

const DEFAULT_TILE = 4 * 256 * 4;
const sizes = edgeSizes([TINY_TILE, DEFAULT_TILE, 32 * 2, 256 * 8], [123457]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

type T3 = 'u32' | 'i32' | 'f32';

const WRAP = {
  u32: (x: number) => x >>> 0,
  i32: (x: number) => x | 0,
  f32: (x: number) => Math.fround(x),
};

/** x * 3 + 1 (ints, wrapping) or x * 2 + 1 (f32: the product is exact, so contraction cannot change it). */
const affine = {
  u32: { fn: (x: number) => x * 3 + 1, ref: (x: number) => (Math.imul(x, 3) + 1) >>> 0 },
  i32: { fn: (x: number) => x * 3 + 1, ref: (x: number) => (Math.imul(x, 3) + 1) | 0 },
  f32: { fn: (x: number) => x * 2 + 1, ref: (x: number) => Math.fround(x * 2 + 1) },
};

/** Sum of t(x) in the type's arithmetic (ints exact; f32 in doubles, with the magnitude for the tolerance). */
function sumRef(type: T3, n: number, init: number, t: (i: number) => number): { sum: number; mag: number } {
  let sum = init;
  let mag = Math.abs(init);
  for (let i = 0; i < n; i++) {
    const v = t(i);
    sum = type === 'f32' ? sum + v : WRAP[type](sum + v);
    mag += Math.abs(v);
  }
  return { sum, mag };
}

function expectClose(type: T3, got: number, want: { sum: number; mag: number }, n: number, label: string): void {
  if (type === 'f32') expect(Math.abs(got - want.sum), label).toBeLessThanOrEqual(floatTolerance(n, want.mag));
  else expect(got, label).toBe(want.sum);
}

describe.each(matrix)('transformReduce and innerProduct under $name', ({ name, policy, gpu }) => {
  const reduced = isEngineVariant(name);
  for (const type of reduced ? (['f32'] as const) : (['u32', 'i32', 'f32'] as const)) {
    it(`${type}: unary and binary forms, innerProduct, at edge sizes`, async () => {
      const { fn, ref } = affine[type];
      for (const n of sizes) {
        const kind = n % 3 === 0 ? 'constant' : 'random';
        const a = makeData(type, n, kind);
        const b = makeData(type, n, 'small', n + 7);
        const copyA = a.slice();
        const got = await transformReduce(policy, a, 5, plus, fn);
        expectSameArray(a, copyA, 'input untouched');
        expectClose(
          type,
          got,
          sumRef(type, n, 5, (i) => ref(a[i] as number)),
          n,
          `unary n=${n} ${kind}`,
        );
        const dot = sumRef(type, n, 0, (i) =>
          type === 'f32' ? Math.fround(a[i]! * b[i]!) : WRAP[type](Math.imul(a[i]!, b[i]!)),
        );
        expectClose(type, await innerProduct(policy, a, b), dot, n, `innerProduct n=${n}`);
        if (n % 4 === 1) {
          // The binary form with the product: the same load as innerProduct's (one pipeline).
          expectClose(type, await transformReduce(policy, a, b, 0, plus, multiplies), dot, n, `binary n=${n}`);
        }
      }
    });
  }

  itIf(!reduced)('ordered (non-commutative) reduceOp, bool transform, other operators, NaN', async () => {
    for (const n of [1, 7, 64, 65, TINY_TILE + 1, 2049, 40001]) {
      const u = makeData('u32', n, 'random');
      const keep = lambda((x: number) => (x % 5 === 0 ? x : 0));
      let want = 0;
      for (const x of u) if (x % 5 === 0) want = x;
      expect(await transformReduce(policy, u, 0, lastNonZero, keep), `lastNonZero n=${n}`).toBe(want);
      let big = 0;
      for (const x of u) if (x > 2 ** 31) big++;
      expect(await transformReduce(policy, u, 0, plus, (x: number) => x > 2147483648), `bool n=${n}`).toBe(big);
      const f = makeData('f32', n, 'random');
      let absMax = Number.NEGATIVE_INFINITY;
      for (const x of f) absMax = Math.max(absMax, Math.abs(x));
      expect(await transformReduce(policy, f, Number.NEGATIVE_INFINITY, maximum, (x: number) => Math.abs(x))).toBe(
        absMax,
      );
      const i = makeData('i32', n, 'random');
      const ip = await innerProduct(policy, i, i, undefined, maximum, (x: number, y: number) => x ^ y);
      expect(ip, `innerProduct(maximum, xor) n=${n}`).toBe(0);
    }
    const special = Float32Array.from([3, -0, Number.NaN, 2]);
    const abs = (x: number) => Math.abs(x);
    expect(await transformReduce(policy, special, Number.NEGATIVE_INFINITY, maximum, abs)).toBeNaN();
    expect(await transformReduce(policy, new Float32Array(0), 2.5, plus, abs)).toBe(2.5);
  });

  if (gpu && testDevice && !name.includes('no-subgroups')) {
    const device = testDevice;
    it('DeviceArray views at offsets (aligned vec4 and unaligned paths)', async () => {
      for (const n of [1, 3, 4, 5, 129, 1000, 5003]) {
        // Small integers as f32: the sums are exact in any order.
        const a = makeData('f32', n, 'small');
        const b = makeData('f32', n, 'small', 3);
        const dot = sumRef('f32', n, 0, (i) => a[i]! * b[i]!).sum;
        for (const [oa, ob] of [
          [0, 0],
          [1, 0],
          [0, 3],
          [4, 8],
        ] as const) {
          const pa = place(device, a, oa);
          const pb = place(device, b, ob);
          expect(await innerProduct(policy, pa.view, pb.view), `n=${n} @${oa},${ob}`).toBe(dot);
          expect(await innerProduct(policy, pa.view, b), `mixed host/device n=${n}`).toBe(dot);
          pa.parent.destroy();
          pb.parent.destroy();
        }
      }
    });
  }
});

describe.each(policyMatrix().filter((p) => p.name === 'device'))(
  'transformReduce at 2^24+1 under $name',
  ({ policy }) => {
    it('i32 innerProduct', async () => {
      const n = 2 ** 24 + 1;
      const r = rng(5);
      const a = new Int32Array(n);
      for (let i = 0; i < n; i++) a[i] = (r() % 7) - 3;
      let want = 0;
      for (let i = 0; i < n; i++) want += a[i]! * a[i]!;
      expect(await innerProduct(policy, a, a)).toBe(want | 0);
    });
  },
);

describe('transformReduce: bad input', () => {
  const seq = execution.seq;
  const id = (x: number) => x;
  it('names the argument', async () => {
    const a = Uint32Array.from([1, 2, 3]);
    await expect(transformReduce(seq, [1, 2] as unknown as Uint32Array, 0, plus, id)).rejects.toThrow(
      /input: expected/,
    );
    await expect(transformReduce(seq, a, 'x' as unknown as number, plus, id)).rejects.toThrow(
      /init: expected a number/,
    );
    await expect(transformReduce(seq, a, 0, 7 as never, id)).rejects.toThrow(/reduceOp/);
    await expect(transformReduce(seq, a, 0, plus, null as never)).rejects.toThrow(/transformFn/);
    await expect(transformReduce(seq, a, new Uint32Array(2), 0, plus, multiplies)).rejects.toThrow(
      /input2: expected 3 elements/,
    );
    await expect(transformReduce(seq, a, new Float32Array(3), 0, plus, multiplies)).rejects.toThrow(
      /input2: expected u32 elements/,
    );
    await expect(innerProduct(seq, a, new Uint32Array(4))).rejects.toThrow(/b: expected 3 elements/);
    await expect(
      innerProduct(
        seq,
        a,
        a,
        undefined,
        lambda((x: number, y: number) => x + y),
      ),
    ).rejects.toThrow(/^init: expected a start value: operator .*has no identity/);
    await expect(transformReduce({} as never, a, 0, plus, id)).rejects.toThrow(/policy/);
    expect([...a]).toEqual([1, 2, 3]);
  });

  if (testDevice) {
    const device = testDevice;
    it('a reduceOp without identity cannot run on the GPU; DeviceArrays need a device policy', async () => {
      const strict = makeDevicePolicy(device, { fallback: 'error' });
      const noId = (x: number, y: number) => x + y;
      await expect(transformReduce(strict, new Uint32Array(3), 0, noId, id)).rejects.toThrow(/identity/);
      const d = DeviceArray.from(device, Uint32Array.from([1, 2, 3]));
      await expect(transformReduce(seq, d, 0, plus, id)).rejects.toThrow(/policy/);
      expect(await transformReduce(strict, d, 1, plus, id)).toBe(7);
      d.destroy();
    });
  }
});
