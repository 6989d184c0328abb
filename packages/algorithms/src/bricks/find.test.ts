import { createPool } from '@webdpl/policies';
import { afterAll, describe, expect, it } from 'vitest';
import { cpuFindFirst } from './find';
import { alloc, makeData, TEST_SIZES, TYPES, testBackends } from './test-data';
import { equals, inlineFunction, mod7is3 } from './test-functions';

const pool = createPool({ size: 2 });
afterAll(() => pool.close());

const differs = inlineFunction({
  name: 'differs',
  arity: 2,
  source: () => '(a, b) => a !== b',
  resultType: () => 'bool',
});

describe.each(testBackends(pool))('cpuFindFirst on $name', ({ backend }) => {
  for (const t of TYPES) {
    it(`finds the first hit at every position class, ${t}`, async () => {
      const one = equals(1);
      for (const n of TEST_SIZES) {
        const positions = new Set([0, 1, n >> 1, n - 2, n - 1, 15, 16, 17, 128, 129].filter((p) => p >= 0 && p < n));
        const x = alloc(t, n);
        expect(await cpuFindFirst(backend, x, one), `n=${n} none`).toBe(-1);
        for (const p of positions) {
          x.fill(0);
          x[p] = 1;
          if (p + 3 < n) x[p + 3] = 1; // a later hit must not win
          if (n - 1 > p + 3) x[n - 1] = 1;
          expect(await cpuFindFirst(backend, x, one), `n=${n} at ${p}`).toBe(p);
        }
      }
    });

    it(`agrees with a reference loop on random data, ${t}`, async () => {
      for (const n of TEST_SIZES) {
        const x = makeData(t, n, 'random');
        let want = -1;
        for (let i = 0; i < n; i++) {
          if (Math.abs(Math.trunc(x[i] as number)) % 7 === 3) {
            want = i;
            break;
          }
        }
        expect(await cpuFindFirst(backend, x, mod7is3), `n=${n}`).toBe(want);
      }
    });
  }

  it('a binary predicate over two inputs (mismatch)', async () => {
    for (const n of [0, 1, 100, 2 ** 17 + 3]) {
      const a = makeData('i32', n, 'random');
      const b = a.slice();
      expect(await cpuFindFirst(backend, [a, b], differs)).toBe(-1);
      if (n > 0) {
        const p = Math.floor(n * 0.7);
        b[p] = (b[p] as number) ^ 1;
        expect(await cpuFindFirst(backend, [a, b], differs)).toBe(p);
      }
    }
  });
});

describe('cpuFindFirst arguments', () => {
  it('names the bad argument', async () => {
    const seq = { kind: 'seq' } as const;
    await expect(cpuFindFirst(seq, new Uint32Array(3), differs)).rejects.toThrow(/^pred:/);
    await expect(cpuFindFirst(seq, 'abc' as never, mod7is3)).rejects.toThrow(/^input:/);
  });
});
