import { DeviceArray } from '@webdpl/core';
import { execution } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { isEngineVariant, itIf, parPool, place } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, rng, TINY_TILE, testDevice } from '../testing/matrix';
import { isPartitioned } from './index';

const sizes = edgeSizes([TINY_TILE, 4 * 256 * 4], [123457]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

type T3 = 'u32' | 'i32' | 'f32';

const PRED = {
  u32: (x: number) => x % 3 === 0,
  i32: (x: number) => x < 0,
  f32: (x: number) => x > 0.25,
};

function partitionedRef(d: ArrayLike<number>, pred: (x: number) => boolean): boolean {
  let i = 0;
  while (i < d.length && pred(d[i] as number)) i++;
  for (; i < d.length; i++) if (pred(d[i] as number)) return false;
  return true;
}

/** `t` elements satisfying PRED then the rest failing it; with `breakAt` >= 0, one satisfying element moved there. */
function data(type: T3, n: number, t: number, breakAt: number): Uint32Array | Int32Array | Float32Array {
  const d = makeData(type, n, 'small');
  const yes = { u32: 3, i32: -4, f32: 0.5 }[type];
  const no = { u32: 4, i32: 4, f32: -0.5 }[type];
  for (let i = 0; i < n; i++)
    d[i] = i < t ? yes * (1 + (i % 5)) : no + (i % 7) * (type === 'u32' ? 3 : type === 'i32' ? 1 : -1);
  if (breakAt >= 0 && breakAt < n) d[breakAt] = yes;
  return d;
}

describe.each(matrix)('isPartitioned under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);
  const types: readonly T3[] = variant ? ['f32'] : ['u32', 'i32', 'f32'];
  for (const type of types) {
    it(`${type} at edge sizes: partitioned anywhere, one element out of place anywhere`, async () => {
      const r = rng(11);
      for (const [k, n] of sizes.entries()) {
        const t = n === 0 ? 0 : r() % (n + 1);
        // Out of place: a satisfying element after the boundary (none when the boundary is the end).
        const brk = k % 2 === 0 || t >= n - 1 ? -1 : t + 1 + (r() % (n - t - 1));
        const d = data(type, n, t, brk);
        const want = partitionedRef(d, PRED[type]);
        if (brk > t) expect(want).toBe(false);
        expect(await isPartitioned(policy, d, PRED[type]), `n=${n} t=${t} brk=${brk}`).toBe(want);
      }
    });
  }

  itIf(!variant)('numeric predicate results, all / none satisfying, tiny inputs', async () => {
    const f = Float32Array.from([3, 1, Number.NaN, 0, -0]);
    // NaN is falsy: [true, true, false, false, false].
    expect(await isPartitioned(policy, f, (x: number) => x)).toBe(true);
    expect(await isPartitioned(policy, Float32Array.from([0, 1]), (x: number) => x)).toBe(false);
    expect(await isPartitioned(policy, new Int32Array(1000).fill(-1), PRED.i32)).toBe(true);
    expect(await isPartitioned(policy, new Int32Array(1000).fill(1), PRED.i32)).toBe(true);
    expect(await isPartitioned(policy, Uint32Array.from([1]), PRED.u32)).toBe(true);
    expect(await isPartitioned(policy, new Uint32Array(0), PRED.u32)).toBe(true);
  });

  if (gpu && testDevice && !name.includes('no-subgroups')) {
    const device = testDevice;
    it('DeviceArray views at offsets', async () => {
      for (const n of [2, 5, 257, 3001]) {
        const good = data('i32', n, n >> 1, -1);
        const bad = data('i32', n, n >> 1, n - 1);
        if (n > 2) expect(partitionedRef(bad, PRED.i32)).toBe(false);
        for (const off of [0, 1]) {
          const p = place(device, good, off);
          const q = place(device, bad, off + 1);
          expect(await isPartitioned(policy, p.view, PRED.i32), `n=${n} @${off}`).toBe(true);
          expect(await isPartitioned(policy, q.view, PRED.i32), `bad n=${n} @${off}`).toBe(
            partitionedRef(bad, PRED.i32),
          );
          p.parent.destroy();
          q.parent.destroy();
        }
      }
    });
  }
});

describe('isPartitioned: bad input', () => {
  const seq = execution.seq;
  it('names the argument', async () => {
    const a = Uint32Array.from([3, 1, 2]);
    await expect(isPartitioned(seq, [1] as unknown as Uint32Array, PRED.u32)).rejects.toThrow(/input: expected/);
    await expect(isPartitioned(seq, a, undefined as never)).rejects.toThrow(/pred/);
    await expect(isPartitioned(seq, a, (x: number, y: number) => x < y)).rejects.toThrow(/pred/);
    await expect(isPartitioned(undefined as never, a, PRED.u32)).rejects.toThrow(/policy/);
    expect([...a]).toEqual([3, 1, 2]);
  });

  if (testDevice) {
    const device = testDevice;
    it('DeviceArrays need a device policy', async () => {
      const d = DeviceArray.from(device, Uint32Array.from([3, 1, 6]));
      await expect(isPartitioned(execution.par, d, PRED.u32)).rejects.toThrow(/policy/);
      expect(await isPartitioned(execution.auto, d, PRED.u32)).toBe(false);
      d.destroy();
    });
  }
});
