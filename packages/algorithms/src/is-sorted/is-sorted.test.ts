import { ArgumentError, DeviceArray } from '@webdpl/core';
import { execution, makeHostPolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { greater } from '../sort';
import { policyMatrix, rng, testDevice } from '../testing/matrix';
import { isSorted, isSortedUntil } from '.';

const policies = [
  ...policyMatrix({ 'is-sorted': { workgroupSize: 32, itemsPerThread: 2 } }),
  {
    name: 'par (small threshold)',
    policy: makeHostPolicy('par', { tuning: { '*': { parallelThreshold: 100, minChunk: 16 } } }),
    gpu: false,
  },
];

describe.each(policies)('isSorted / isSortedUntil on $name', ({ policy }) => {
  it('finds the first element out of order at every position class', async () => {
    for (const n of [0, 1, 2, 3, 64, 65, 1000, 5000]) {
      const sorted = Float32Array.from({ length: n }, (_, i) => i - (n >> 1));
      if (n > 3) sorted[(n >> 1) - 1] = -0; // ... -2, -0, +0, 1 ...
      expect(await isSortedUntil(policy, sorted), `n=${n}`).toBe(n);
      expect(await isSorted(policy, sorted)).toBe(true);
      if (n < 2) continue;
      const r = rng(n);
      for (const at of [1, n - 1, 1 + (r() % (n - 1))]) {
        const d = sorted.slice();
        d[at] = -1e9;
        expect(await isSortedUntil(policy, d), `n=${n} at=${at}`).toBe(at);
      }
      const withNaN = sorted.slice();
      withNaN[n - 1] = Number.NaN;
      expect(await isSorted(policy, withNaN), `NaN last n=${n}`).toBe(true);
      withNaN[0] = Number.NaN;
      expect(await isSortedUntil(policy, withNaN), `NaN first n=${n}`).toBe(n === 2 ? 2 : 1);
      const desc = Int32Array.from({ length: n }, (_, i) => n - (i >> 1));
      expect(await isSorted(policy, desc, greater)).toBe(true);
      expect(await isSortedUntil(policy, desc)).toBe(Math.min(n, 2));
      expect(
        await isSorted(
          policy,
          Uint32Array.from({ length: n }, (_, i) => i % 10),
          (a, b) => a % 5 < b % 5,
        ),
      ).toBe(n <= 5);
    }
  });
  it('orders -0 before +0 (less) and +0 before -0 (greater)', async () => {
    expect(await isSortedUntil(policy, Float32Array.of(-1, 0, -0, 2))).toBe(2);
    expect(await isSortedUntil(policy, Float32Array.of(1, 0, -0, 2), greater)).toBe(3);
    expect(await isSortedUntil(policy, Float32Array.of(2, -0, 0, 1), greater)).toBe(2);
    expect(await isSorted(policy, Float32Array.of(2, 0, -0, -1, Number.NaN, Number.NaN), greater)).toBe(true);
  });
});

describe.each(policies.filter((p) => p.gpu))('isSortedUntil with DeviceArrays on $name', ({ policy }) => {
  it('works on DeviceArrays, views at odd offsets included', async () => {
    if (!testDevice) return;
    const d = DeviceArray.from(
      testDevice,
      Uint32Array.from({ length: 3000 }, (_, i) => i),
    );
    try {
      expect(await isSortedUntil(policy, d.view(3, 2000))).toBe(2000);
      d.write(Uint32Array.from({ length: 3000 }, (_, i) => (i === 1500 ? 0 : i)));
      expect(await isSortedUntil(policy, d.view(1, 2000))).toBe(1499);
    } finally {
      d.destroy();
    }
  });
});

describe('isSorted arguments', () => {
  it('names the bad argument', async () => {
    await expect(isSorted(execution.seq, [1, 2] as never)).rejects.toThrow(ArgumentError);
    await expect(isSorted(execution.seq, new Uint32Array(2), 'x' as never)).rejects.toThrow(/comp/);
  });
});
