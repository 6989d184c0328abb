import { DeviceArray, type HostArray } from '@webdpl/core';
import { execution } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { isEngineVariant, itIf, parPool, place } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, TINY_TILE, testDevice } from '../testing/matrix';
import { count, countIf } from './index';

const sizes = edgeSizes([TINY_TILE, 4 * 256 * 4], [123457]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

type T3 = 'u32' | 'i32' | 'f32';

/** One predicate per type (one pipeline each); the data decides how many elements it keeps. */
const PRED = {
  u32: (x: number) => (x & 1) === 1,
  i32: (x: number) => (x & 1) === 1,
  f32: (x: number) => x > 0,
};
/** count's value per type. */
const VALUE = { u32: 3, i32: -3, f32: 0 };

/** Data kept by PRED: none, about half, all. */
function predData(type: T3, n: number, keep: 'none' | 'half' | 'all'): HostArray {
  const d = makeData(type, n, 'random');
  if (keep === 'half') return d;
  for (let i = 0; i < n; i++) {
    const x = d[i] as number;
    if (type === 'f32') d[i] = keep === 'all' ? Math.abs(x) + 1e-3 : -Math.abs(x);
    else d[i] = keep === 'all' ? x | 1 : x & ~1;
  }
  return d;
}

function countRef(d: ArrayLike<number>, f: (x: number) => boolean | number): number {
  let c = 0;
  for (let i = 0; i < d.length; i++) if (f(d[i] as number)) c++;
  return c;
}

describe.each(matrix)('count and countIf under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);
  const types: readonly T3[] = variant ? ['f32'] : ['u32', 'i32', 'f32'];
  for (const type of types) {
    it(`${type} at edge sizes; predicates keeping none, half, all`, async () => {
      for (const [k, n] of sizes.entries()) {
        const kind = (['random', 'constant', 'small'] as const)[k % 3] as 'random' | 'constant' | 'small';
        const d = makeData(type, n, kind);
        if (type === 'f32' && n > 2) {
          d[1] = -0;
          d[n - 1] = 0;
        }
        const v = VALUE[type];
        expect(await count(policy, d, v), `count n=${n} ${kind}`).toBe(countRef(d, (x) => x === v));
        const keep = (['none', 'half', 'all'] as const)[k % 3] as 'none' | 'half' | 'all';
        const p = predData(type, n, keep);
        const want = countRef(p, PRED[type]);
        if (keep === 'none') expect(want).toBe(0);
        if (keep === 'all') expect(want).toBe(n);
        expect(await countIf(policy, p, PRED[type]), `countIf n=${n} ${keep}`).toBe(want);
      }
    });
  }

  itIf(!variant)('numeric predicate results (truthy: non-zero and not NaN); count of NaN, wrapped values', async () => {
    for (const n of [1, 5, 300, 5001]) {
      const i = makeData('i32', n, 'random');
      expect(await countIf(policy, i, (x: number) => x & 4), `x & 4 n=${n}`).toBe(countRef(i, (x) => x & 4));
      const f = makeData('f32', n, 'small');
      for (let k = 0; k < n; k += 3) f[k] = k % 2 ? Number.NaN : -0;
      expect(await countIf(policy, f, (x: number) => x), `f32 truthiness n=${n}`).toBe(countRef(f, (x) => x));
      expect(await count(policy, f, Number.NaN), 'NaN equals nothing').toBe(0);
      expect(await count(policy, f, 0), `0 and -0 n=${n}`).toBe(countRef(f, (x) => x === 0));
    }
    const u = Uint32Array.from([3, 2 ** 32 - 3, 3]);
    expect(await count(policy, u, 3)).toBe(2);
    expect(await count(policy, Int32Array.from([-3, 3, -3]), 2 ** 32 - 3)).toBe(2);
    expect(await count(policy, new Uint32Array(0), 3)).toBe(0);
    expect(await countIf(policy, new Float32Array(0), PRED.f32)).toBe(0);
  });

  if (gpu && testDevice && !name.includes('no-subgroups')) {
    const device = testDevice;
    it('DeviceArray views at offsets', async () => {
      for (const n of [1, 4, 5, 257, 3001]) {
        const d = predData('f32', n, 'half');
        d[0] = 0;
        d[n - 1] = -0;
        for (const off of [0, 1, 2]) {
          const pd = place(device, d, off);
          expect(await count(policy, pd.view, 0), `count n=${n} @${off}`).toBe(countRef(d, (x) => x === 0));
          expect(await countIf(policy, pd.view, PRED.f32), `countIf n=${n} @${off}`).toBe(countRef(d, PRED.f32));
          pd.parent.destroy();
        }
      }
    });
  }
});

describe('count and countIf: bad input', () => {
  const seq = execution.seq;
  it('names the argument', async () => {
    const a = Uint32Array.from([1, 2, 3]);
    await expect(count(seq, [1, 2] as unknown as Uint32Array, 1)).rejects.toThrow(/input: expected/);
    await expect(count(seq, a, '1' as unknown as number)).rejects.toThrow(/value: expected a number/);
    await expect(countIf(seq, a, 'x > 1' as never)).rejects.toThrow(/pred/);
    await expect(countIf(seq, a, (x: number, y: number) => x > y)).rejects.toThrow(/pred/);
    await expect(count(undefined as never, a, 1)).rejects.toThrow(/policy/);
    expect([...a]).toEqual([1, 2, 3]);
  });

  if (testDevice) {
    const device = testDevice;
    it('DeviceArrays need a device policy', async () => {
      const d = DeviceArray.from(device, Uint32Array.from([1, 2, 3]));
      await expect(count(execution.par, d, 1)).rejects.toThrow(/policy/);
      expect(await count(execution.auto, d, 2)).toBe(1);
      d.destroy();
    });
  }
});
