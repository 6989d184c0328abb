/**
 * The by-key bricks on the worker pool: par runs the pool (counted) with chunks of 16, so runs cross
 * chunk boundaries everywhere, and gives seq's results exactly (integers; a non-commutative operator).
 */
import { lastNonZero, plus } from '@webdpl/core';
import { type CpuBackend, createPool } from '@webdpl/policies';
import { afterAll, describe, expect, it } from 'vitest';
import { keyEqual } from '../by-key/key-equal';
import { rng } from '../testing/matrix';
import { type ByKeyFunctions, cpuRunsByKey, cpuScanByKey } from './by-key';
import { countingPool } from './test-data';

const inner = createPool({ size: 2 });
afterAll(() => inner.close());
const counting = countingPool(inner);
const par: CpuBackend = { kind: 'par', pool: counting.pool, tuning: { parallelThreshold: 0, minChunk: 16 } };
const seq: CpuBackend = { kind: 'seq' };

/** Keys in runs of 1..maxRun (0: one run over everything). */
function keysOf(n: number, maxRun: number, seed: number): Uint32Array {
  const r = rng(seed);
  const k = new Uint32Array(n);
  let key = 0;
  let left = 0;
  for (let i = 0; i < n; i++) {
    if (left === 0) {
      key++;
      left = maxRun === 0 ? n : 1 + (r() % maxRun);
    }
    k[i] = key;
    left--;
  }
  return k;
}

describe('by-key bricks on the pool', () => {
  for (const maxRun of [1, 5, 40, 0]) {
    it(`scans, reduce and unique match seq (runs of 1..${maxRun || 'n'})`, async () => {
      for (const n of [1, 15, 16, 17, 100, 1000, 20011]) {
        const keys = keysOf(n, maxRun, n);
        const r = rng(n + 1);
        const vals = Uint32Array.from({ length: n }, () => (r() % 3 === 0 ? r() : 0));
        for (const op of [plus, lastNonZero]) {
          const fns: ByKeyFunctions = { op, keyEq: keyEqual, keyType: 'u32', valueType: 'u32' };
          for (const exclusive of [false, true]) {
            const want = new Uint32Array(n);
            await cpuScanByKey(seq, keys, vals, want, fns, exclusive, 9);
            counting.reset();
            const got = new Uint32Array(n);
            await cpuScanByKey(par, keys, vals, got, fns, exclusive, 9);
            if (n >= 100) expect(counting.runs()).toBeGreaterThan(0);
            expect(Array.from(got)).toEqual(Array.from(want));
            const inPlace = vals.slice();
            await cpuScanByKey(par, keys, inPlace, inPlace, fns, exclusive, 9);
            expect(Array.from(inPlace)).toEqual(Array.from(want));
          }
          for (const reduce of [true, false]) {
            const ks = new Uint32Array(n);
            const vs = new Uint32Array(n);
            const m = await cpuRunsByKey(seq, keys, vals, () => ({ keys: ks, values: vs }), fns, reduce);
            const kp = new Uint32Array(n);
            const vp = new Uint32Array(n);
            counting.reset();
            expect(await cpuRunsByKey(par, keys, vals, () => ({ keys: kp, values: vp }), fns, reduce)).toBe(m);
            if (n >= 100) expect(counting.runs()).toBeGreaterThan(0);
            expect(Array.from(kp)).toEqual(Array.from(ks));
            expect(Array.from(vp)).toEqual(Array.from(vs));
          }
        }
      }
    });
  }
});
