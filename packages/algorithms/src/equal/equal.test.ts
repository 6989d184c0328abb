import { DeviceArray } from '@webdpl/core';
import { execution } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { isEngineVariant, itIf, parPool, place } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, rng, TINY_TILE, testDevice } from '../testing/matrix';
import { equal, mismatch } from './index';

const sizes = edgeSizes([TINY_TILE, 4 * 256 * 4], [123457]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

type T3 = 'u32' | 'i32' | 'f32';

/** The reference: first i < min length with !pred(a[i], b[i]), else the min length. */
function mismatchRef(a: ArrayLike<number>, b: ArrayLike<number>, pred = (x: number, y: number) => x === y): number {
  const m = Math.min(a.length, b.length);
  for (let i = 0; i < m; i++) if (!pred(a[i] as number, b[i] as number)) return i;
  return m;
}

describe.each(matrix)('equal and mismatch under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);
  const types: readonly T3[] = variant ? ['f32'] : ['u32', 'i32', 'f32'];
  for (const type of types) {
    it(`${type} at edge sizes: no difference, a first difference anywhere, different lengths`, async () => {
      const r = rng(17);
      for (const [k, n] of sizes.entries()) {
        const a = makeData(type, n, k % 2 ? 'random' : 'small');
        const b = a.slice();
        const at = k % 3 === 0 || n === 0 ? -1 : r() % n;
        if (at >= 0) {
          b[at] = (b[at] as number) + 1;
          if (at + 5 < n) b[at + 5] = (b[at + 5] as number) + 1;
        }
        if (type === 'f32' && n > 2 && at !== 1) b[1] = (a[1] as number) === 0 ? 0 : (b[1] as number);
        const want = mismatchRef(a, b);
        expect(await mismatch(policy, a, b), `mismatch n=${n} at=${at}`).toBe(want);
        expect(await equal(policy, a, b), `equal n=${n} at=${at}`).toBe(want === n);
        if (k % 4 === 1) {
          // A longer b whose prefix matches: mismatch at the common length, not equal.
          const longer = new (b.constructor as new (n: number) => typeof b)(n + 3);
          longer.set(a);
          expect(await mismatch(policy, a, longer), `prefix n=${n}`).toBe(n);
          expect(await mismatch(policy, longer, a), `prefix swapped n=${n}`).toBe(n);
          expect(await equal(policy, a, longer), `lengths differ n=${n}`).toBe(false);
        }
      }
    });
  }

  itIf(!variant)('IEEE equality for f32 (-0 equals +0, NaN differs), user predicates, mixed types', async () => {
    const a = Float32Array.from([1, -0, 0, 2, Number.NaN, 5]);
    const b = Float32Array.from([1, 0, -0, 2, Number.NaN, 5]);
    expect(await mismatch(policy, a, b)).toBe(4);
    expect(await equal(policy, a, b)).toBe(false);
    expect(await equal(policy, a.subarray(0, 4), b.subarray(0, 4))).toBe(true);
    // "Neither before the other": NaN matches NaN (and everything), so no difference anywhere.
    const same = (x: number, y: number) => !(x < y || x > y);
    expect(await mismatch(policy, a, b, same)).toBe(6);
    expect(await equal(policy, a, b, same)).toBe(true);
    // A tolerance predicate and a numeric (truthy) one.
    const near = (x: number, y: number) => Math.abs(x - y) < 0.5;
    const c = Float32Array.from([1.25, 0.1, 0, 2.6, 7, 5]);
    expect(await mismatch(policy, a, c, near)).toBe(3);
    const ia = Int32Array.from([5, 6, 7, 8]);
    const ib = Int32Array.from([5, 6, 7, 9]);
    expect(await mismatch(policy, ia, ib, (x: number, y: number) => x - y)).toBe(0);
    // u32 against i32: values compared as numbers.
    const u = Uint32Array.from([1, 2, 2 ** 32 - 1]);
    expect(await mismatch(policy, u, Int32Array.from([1, 2, -1]))).toBe(2);
    expect(await equal(policy, u.subarray(0, 2), Int32Array.from([1, 2]))).toBe(true);
    // Empty ranges: equal, mismatch 0.
    expect(await equal(policy, new Uint32Array(0), new Uint32Array(0))).toBe(true);
    expect(await mismatch(policy, new Uint32Array(0), u)).toBe(0);
    expect(await equal(policy, new Uint32Array(0), u)).toBe(false);
  });

  if (gpu && testDevice && !name.includes('no-subgroups')) {
    const device = testDevice;
    it('DeviceArray views at offsets, against host arrays', async () => {
      for (const n of [1, 4, 5, 257, 3001]) {
        const a = makeData('i32', n, 'random');
        const b = a.slice();
        b[n - 1] = (b[n - 1] as number) ^ 1;
        for (const off of [0, 1, 2]) {
          const pa = place(device, a, off);
          const pb = place(device, b, (off + 1) % 3);
          expect(await mismatch(policy, pa.view, pb.view), `n=${n} @${off}`).toBe(n - 1);
          expect(await mismatch(policy, pa.view, a), `device vs host n=${n} @${off}`).toBe(n);
          expect(await equal(policy, pa.view, pb.view)).toBe(false);
          pa.parent.destroy();
          pb.parent.destroy();
        }
      }
    });
  }
});

describe('equal and mismatch: bad input', () => {
  const seq = execution.seq;
  it('names the argument and leaves the data untouched', async () => {
    const a = Uint32Array.from([1, 2, 3]);
    await expect(equal(seq, [1, 2] as unknown as Uint32Array, a)).rejects.toThrow(/a: expected/);
    await expect(mismatch(seq, a, new Float64Array(3) as never)).rejects.toThrow(/b: expected/);
    await expect(mismatch(seq, a, a, (x: number) => x > 1)).rejects.toThrow(/pred/);
    await expect(equal(seq, a, a, 'x == y' as never)).rejects.toThrow(/pred/);
    await expect(equal(undefined as never, a, a)).rejects.toThrow(/policy/);
    expect([...a]).toEqual([1, 2, 3]);
  });

  if (testDevice) {
    const device = testDevice;
    it('DeviceArrays need a device policy', async () => {
      const d = DeviceArray.from(device, Uint32Array.from([1, 2, 3]));
      await expect(mismatch(execution.par, d, d)).rejects.toThrow(/policy/);
      expect(await mismatch(execution.auto, d, Uint32Array.from([1, 2, 4]))).toBe(2);
      d.destroy();
    });
  }
});
