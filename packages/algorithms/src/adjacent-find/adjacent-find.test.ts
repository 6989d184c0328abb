import { DeviceArray } from '@webdpl/core';
import { execution } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { isEngineVariant, itIf, parPool, place } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, rng, TINY_TILE, testDevice } from '../testing/matrix';
import { adjacentFind } from './index';

const sizes = edgeSizes([TINY_TILE, 4 * 256 * 4], [123457]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

type T3 = 'u32' | 'i32' | 'f32';

function adjacentRef(d: ArrayLike<number>, pred = (x: number, y: number) => x === y): number {
  for (let i = 0; i + 1 < d.length; i++) if (pred(d[i] as number, d[i + 1] as number)) return i;
  return -1;
}

/** Strictly increasing data (no equal neighbours) with equal neighbours planted at `at` and later. */
function planted(type: T3, n: number, at: number): Uint32Array | Int32Array | Float32Array {
  const d = makeData(type, n, 'small');
  for (let i = 0; i < n; i++) d[i] = type === 'f32' ? i * 0.5 - 100 : type === 'i32' ? i - 1000 : i;
  if (at >= 0 && at + 1 < n) d[at + 1] = d[at] as number;
  if (at >= 0 && at + 9 < n) d[at + 9] = d[at + 8] as number;
  return d;
}

describe.each(matrix)('adjacentFind under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);
  const types: readonly T3[] = variant ? ['i32'] : ['u32', 'i32', 'f32'];
  for (const type of types) {
    it(`${type} at edge sizes: no pair, a first pair anywhere`, async () => {
      const r = rng(5);
      for (const [k, n] of sizes.entries()) {
        const at = k % 3 === 0 || n < 2 ? -1 : r() % (n - 1);
        const d = planted(type, n, at);
        expect(await adjacentFind(policy, d, undefined), `n=${n} at=${at}`).toBe(adjacentRef(d));
        if (k % 5 === 2) {
          // A user predicate: the first descent.
          const desc = (x: number, y: number) => y < x;
          const e = d.slice();
          if (n > 3) e[n - 2] = -1;
          expect(await adjacentFind(policy, e, desc), `descent n=${n}`).toBe(adjacentRef(e, desc));
        }
      }
    });
  }

  itIf(!variant)('IEEE equality (-0 and +0 match, NaN matches nothing), constant data, tiny inputs', async () => {
    expect(await adjacentFind(policy, Float32Array.from([Number.NaN, Number.NaN, 1, -0, 0]))).toBe(3);
    expect(await adjacentFind(policy, Float32Array.from([1, 2]))).toBe(-1);
    expect(await adjacentFind(policy, Uint32Array.from([7]))).toBe(-1);
    expect(await adjacentFind(policy, new Int32Array(0))).toBe(-1);
    expect(await adjacentFind(policy, new Int32Array(5000).fill(-3))).toBe(0);
  });

  if (gpu && testDevice && !name.includes('no-subgroups')) {
    const device = testDevice;
    it('DeviceArray views at offsets', async () => {
      for (const n of [2, 5, 257, 3001]) {
        const d = planted('u32', n, n - 2);
        for (const off of [0, 1, 2]) {
          const p = place(device, d, off);
          expect(await adjacentFind(policy, p.view), `n=${n} @${off}`).toBe(n - 2);
          p.parent.destroy();
        }
      }
    });
  }
});

describe('adjacentFind: bad input', () => {
  const seq = execution.seq;
  it('names the argument', async () => {
    const a = Uint32Array.from([1, 2, 2]);
    await expect(adjacentFind(seq, [1, 1] as unknown as Uint32Array)).rejects.toThrow(/input: expected/);
    await expect(adjacentFind(seq, a, (x: number) => x > 1)).rejects.toThrow(/pred/);
    await expect(adjacentFind(seq, a, 3 as never)).rejects.toThrow(/pred/);
    await expect(adjacentFind(null as never, a)).rejects.toThrow(/policy/);
    expect([...a]).toEqual([1, 2, 2]);
  });

  if (testDevice) {
    const device = testDevice;
    it('DeviceArrays need a device policy', async () => {
      const d = DeviceArray.from(device, Uint32Array.from([1, 2, 2]));
      await expect(adjacentFind(execution.seq, d)).rejects.toThrow(/policy/);
      expect(await adjacentFind(execution.auto, d)).toBe(1);
      d.destroy();
    });
  }
});
