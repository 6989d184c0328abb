import { ArgumentError, DeviceArray } from '@webdpl/core';
import { execution, makeHostPolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { greater, less } from '../sort';
import { policyMatrix, rng, testDevice } from '../testing/matrix';
import { binarySearch, lowerBound, upperBound } from '.';

const policies = [
  ...policyMatrix({ 'binary-search': { workgroupSize: 32 } }),
  {
    name: 'par (small threshold)',
    policy: makeHostPolicy('par', { tuning: { '*': { parallelThreshold: 100, minChunk: 16 } } }),
    gpu: false,
  },
];

function refSearch(sorted: ArrayLike<number>, q: number, before: (a: number, b: number) => boolean) {
  let lb = 0;
  while (lb < sorted.length && before(sorted[lb] as number, q)) lb++;
  let ub = lb;
  while (ub < sorted.length && !before(q, sorted[ub] as number)) ub++;
  return { lb, ub, found: lb < sorted.length && !before(q, sorted[lb] as number) ? 1 : 0 };
}

describe.each(policies)('lowerBound / upperBound / binarySearch on $name', ({ policy }) => {
  it('match a linear reference for every type and both orders', async () => {
    for (const type of ['u32', 'i32', 'f32'] as const) {
      for (const [n, m] of [
        [0, 5],
        [1, 3],
        [7, 0],
        [100, 333],
        [1000, 2000],
      ] as const) {
        const r = rng(n * 7 + m);
        const gen = () => (type === 'u32' ? r() % 50 : (r() % 50) - 25 + (type === 'f32' ? 0.5 : 0));
        const make = (len: number) => {
          const a =
            type === 'u32' ? new Uint32Array(len) : type === 'i32' ? new Int32Array(len) : new Float32Array(len);
          for (let i = 0; i < len; i++) a[i] = gen();
          return a;
        };
        const sorted = make(n).sort();
        const queries = make(m);
        if (type === 'f32' && m > 2) queries[1] = Number.NaN;
        for (const comp of [less, greater]) {
          const s = comp === less ? sorted : sorted.slice().reverse();
          if (comp === greater && type === 'f32') continue;
          const before = comp.js([type, type]) as (a: number, b: number) => boolean;
          const lb = await lowerBound(policy, s, queries, undefined, comp);
          const ub = await upperBound(policy, s, queries, new Uint32Array(m + 2), comp);
          const bs = await binarySearch(policy, s, queries, comp);
          for (let i = 0; i < m; i++) {
            const want = refSearch(s, queries[i] as number, before);
            const what = `${type} ${comp.name} n=${n} m=${m} q=${queries[i]}`;
            expect(lb[i], what).toBe(want.lb);
            expect(ub[i], what).toBe(want.ub);
            expect(bs[i], what).toBe(want.found);
          }
        }
      }
    }
  });
});

describe.each(policies.filter((p) => p.gpu))('searches with DeviceArrays on $name', ({ policy }) => {
  it('returns a DeviceArray for DeviceArray queries', async () => {
    if (!testDevice) return;
    const s = DeviceArray.from(
      testDevice,
      Uint32Array.from({ length: 100 }, (_, i) => 2 * i),
    );
    const q = DeviceArray.from(testDevice, Uint32Array.of(0, 1, 2, 199, 500));
    try {
      const r = await lowerBound(policy, s, q);
      expect(r).toBeInstanceOf(DeviceArray);
      expect(Array.from(await (r as DeviceArray<'u32'>).read())).toEqual([0, 1, 1, 100, 100]);
      (r as DeviceArray).destroy();
    } finally {
      s.destroy();
      q.destroy();
    }
  });
});

describe('search arguments', () => {
  it('names the bad argument', async () => {
    const s = Uint32Array.of(1, 2, 3);
    await expect(lowerBound(execution.seq, s, Int32Array.of(1))).rejects.toThrow(/queries/);
    await expect(lowerBound(execution.seq, s, Uint32Array.of(1, 2), new Uint32Array(1))).rejects.toThrow(/result/);
    await expect(lowerBound(execution.seq, s, Uint32Array.of(1), new Float32Array(1) as never)).rejects.toThrow(
      ArgumentError,
    );
    await expect(upperBound(execution.seq, [1] as never, s)).rejects.toThrow(/sorted/);
  });
});
