import { coerce } from '@webdpl/core';
import { createPool } from '@webdpl/policies';
import { afterAll, describe, expect, it } from 'vitest';
import { cpuCount } from './count';
import { makeData, sharedCopy, TEST_SIZES, TYPES, testBackends } from './test-data';

const pool = createPool({ size: 2 });
afterAll(() => pool.close());

describe.each(testBackends(pool))('cpuCount on $name', ({ backend }) => {
  for (const t of TYPES) {
    it(`${t}: values present and absent, plain and shared`, async () => {
      for (const n of TEST_SIZES) {
        const x = makeData(t, n, 'sparse');
        for (const v of [0, coerce(t, 12345.5), n > 0 ? (x[n - 1] as number) : 1]) {
          let want = 0;
          for (let i = 0; i < n; i++) if (x[i] === v) want++;
          expect(await cpuCount(backend, x, v), `n=${n} v=${v}`).toBe(want);
          expect(await cpuCount(backend, sharedCopy(x), v), `shared n=${n} v=${v}`).toBe(want);
        }
      }
    });
  }

  it('f32: -0 equals +0, NaN equals nothing', async () => {
    const x = new Float32Array([0, -0, Number.NaN, 1, -0, Number.NaN]);
    expect(await cpuCount(backend, x, 0)).toBe(3);
    expect(await cpuCount(backend, x, -0)).toBe(3);
    expect(await cpuCount(backend, x, Number.NaN)).toBe(0);
  });
});
