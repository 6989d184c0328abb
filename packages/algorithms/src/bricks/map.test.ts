import { createPool } from '@webdpl/policies';
import { afterAll, describe, expect, it } from 'vitest';
import { cpuFill } from './map';
import { alloc, diff, makeData, sharedCopy, TEST_SIZES, TYPES, testBackends } from './test-data';

const pool = createPool({ size: 2 });
afterAll(() => pool.close());

describe.each(testBackends(pool))('fill, iota and copy on $name', ({ backend }) => {
  for (const t of TYPES) {
    it(`${t}, plain and shared outputs`, async () => {
      for (const n of TEST_SIZES) {
        const x = makeData(t, n + 3, 'random');
        for (const shared of [false, true]) {
          const make = () => (shared ? sharedCopy(alloc(t, n + 3)) : alloc(t, n + 3));
          const y = make();
          await cpuFill(backend, 0, y, n, t === 'f32' ? 0.75 : 7, t);
          const fill = alloc(t, n + 3).fill(t === 'f32' ? 0.75 : 7, 0, n);
          expect(diff(y, fill), `fill n=${n}`).toBe('');
          const start = t === 'u32' ? 2 ** 32 - 5 : t === 'i32' ? 2 ** 31 - 5 : 0.5;
          await cpuFill(backend, 1, y, n, start, t);
          const iota = alloc(t, n + 3);
          for (let i = 0; i < n; i++) {
            iota[i] = t === 'u32' ? (start + i) >>> 0 : t === 'i32' ? (start + i) | 0 : start + Math.fround(i);
          }
          expect(diff(y, iota), `iota n=${n}`).toBe('');
          const z = make();
          await cpuFill(backend, 2, z, n, 0, t, shared ? sharedCopy(x) : x);
          const copy = alloc(t, n + 3);
          copy.set(x.subarray(0, n));
          expect(diff(z, copy), `copy n=${n}`).toBe('');
        }
      }
    });
  }
});
