import { DeviceArray, type HostArray } from '@webdpl/core';
import { execution } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { allOf, anyOf, noneOf } from '../any-of/index';
import { isEngineVariant, itIf, parPool, place } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, TINY_TILE, testDevice } from '../testing/matrix';
import { findIf } from './index';

const sizes = edgeSizes([TINY_TILE, 4 * 256 * 4], [123457]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

type T3 = 'u32' | 'i32' | 'f32';

/** One predicate per type (one pipeline each): x > 100 (f32: x > 0.5); the data decides the matches. */
const PRED = {
  u32: (x: number) => x > 100,
  i32: (x: number) => x > 100,
  f32: (x: number) => x > 0.5,
};

/** Data where PRED holds nowhere, at a few places (the first at `first`), or everywhere. */
function findData(type: T3, n: number, first: number | 'none' | 'all'): HostArray {
  const d = makeData(type, n, 'small');
  if (first === 'all') return d.map((x) => (type === 'f32' ? 0.75 + Math.abs(x) : 101 + Math.abs(x)));
  if (first === 'none') return d;
  for (const i of [first, first + 3, n - 1]) if (i < n) d[i] = type === 'f32' ? 2.5 : 1000;
  return d;
}

function findRef(d: ArrayLike<number>, f: (x: number) => boolean): number {
  for (let i = 0; i < d.length; i++) if (f(d[i] as number)) return i;
  return -1;
}

describe.each(matrix)('findIf, anyOf, allOf, noneOf under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);
  const types: readonly T3[] = variant ? ['i32'] : ['u32', 'i32', 'f32'];
  for (const type of types) {
    it(`${type} at edge sizes: no match, first match anywhere, all match`, async () => {
      for (const [k, n] of sizes.entries()) {
        const where = k % 4 === 0 ? 'none' : k % 4 === 1 ? 'all' : (k * 7919) % Math.max(n, 1);
        const d = findData(type, n, where);
        const want = findRef(d, PRED[type]);
        expect(await findIf(policy, d, PRED[type]), `n=${n} first=${where}`).toBe(want);
        if (k % 2 === 0) {
          expect(await anyOf(policy, d, PRED[type]), `anyOf n=${n}`).toBe(want >= 0);
          expect(await noneOf(policy, d, PRED[type]), `noneOf n=${n}`).toBe(want < 0);
        } else if (type !== 'i32') {
          const every = d.every((x) => PRED[type](x));
          expect(await allOf(policy, d, PRED[type]), `allOf n=${n} first=${where}`).toBe(every);
        }
      }
    });
  }

  itIf(!variant)('empty input, numeric predicate results, NaN', async () => {
    const e = new Uint32Array(0);
    expect(await findIf(policy, e, PRED.u32)).toBe(-1);
    expect(await anyOf(policy, e, PRED.u32)).toBe(false);
    expect(await allOf(policy, e, PRED.u32)).toBe(true);
    expect(await noneOf(policy, e, PRED.u32)).toBe(true);
    const f = Float32Array.from([0, -0, Number.NaN, 0, 2, 0]);
    // A number result is truthy when non-zero and not NaN.
    expect(await findIf(policy, f, (x: number) => x)).toBe(4);
    expect(await allOf(policy, f.subarray(2, 3), (x: number) => x)).toBe(false);
    expect(await allOf(policy, Float32Array.from([1, Number.POSITIVE_INFINITY, -2]), (x: number) => x)).toBe(true);
    expect(await allOf(policy, f, PRED.f32)).toBe(false);
    expect(await anyOf(policy, f, PRED.f32)).toBe(true);
  });

  if (gpu && testDevice && !name.includes('no-subgroups')) {
    const device = testDevice;
    it('DeviceArray views at offsets', async () => {
      for (const n of [1, 4, 5, 257, 3001]) {
        const d = findData('i32', n, n - 1);
        for (const off of [0, 1, 2]) {
          const pd = place(device, d, off);
          expect(await findIf(policy, pd.view, PRED.i32), `n=${n} @${off}`).toBe(n - 1);
          expect(await allOf(policy, pd.view, PRED.i32), `allOf n=${n} @${off}`).toBe(n === 1);
          pd.parent.destroy();
        }
      }
    });
  }
});

describe('findIf: bad input', () => {
  const seq = execution.seq;
  it('names the argument', async () => {
    const a = Uint32Array.from([1, 2, 3]);
    await expect(findIf(seq, [1, 2] as unknown as Uint32Array, PRED.u32)).rejects.toThrow(/input: expected/);
    await expect(findIf(seq, a, undefined as never)).rejects.toThrow(/pred/);
    await expect(anyOf(seq, a, 5 as never)).rejects.toThrow(/pred/);
    await expect(allOf(seq, a, { js: 1 } as never)).rejects.toThrow(/pred/);
    await expect(noneOf(null as never, a, PRED.u32)).rejects.toThrow(/policy/);
    expect([...a]).toEqual([1, 2, 3]);
  });

  if (testDevice) {
    const device = testDevice;
    it('DeviceArrays need a device policy', async () => {
      const d = DeviceArray.from(device, Uint32Array.from([1, 200, 3]));
      await expect(findIf(execution.seq, d, PRED.u32)).rejects.toThrow(/policy/);
      expect(await findIf(execution.auto, d, PRED.u32)).toBe(1);
      d.destroy();
    });
  }
});
