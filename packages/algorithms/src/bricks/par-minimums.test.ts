/**
 * The measured par minimums of the catalogue under the default tuning (a par policy on a counted
 * pool, no parallelThreshold): below each family's minimum nothing reaches the pool, from it the
 * pool runs; plain (non-shared) inputs go to the pool only where their staging pays (reduceByKey,
 * histogram, the radix select from their plain minimums; never uniqueByKey, scans by key, merges,
 * set operations); the results equal seq's either way.
 */
import { allocShared, createPool, execution, makeHostPolicy } from '@webdpl/policies';
import { afterAll, describe, expect, it } from 'vitest';
import { inclusiveScanByKey, reduceByKey, uniqueByKey } from '../by-key/index';
import { copyIf } from '../compaction/index';
import { countIf } from '../count/index';
import { histogram } from '../histogram/index';
import { merge } from '../merge/index';
import { reduce } from '../reduce/index';
import { inclusiveScan } from '../scans/index';
import { nthElement } from '../select/index';
import { setUnion } from '../set-ops/index';
import { transform } from '../transform/index';
import { BY_KEY_PAR_MIN } from './by-key';
import { HISTOGRAM_PAR_MIN, HISTOGRAM_PLAIN_MIN } from './histogram';
import { MERGE_PAR_MIN } from './merge-path';
import { SELECT_PAR_MIN, SELECT_PLAIN_MIN } from './radix-select';
import { MEMORY_BOUND_PAR_MIN } from './staging';
import { countingPool, diff, rng } from './test-data';

const inner = createPool({ size: 2 });
afterAll(() => inner.close());
const counting = countingPool(inner);
const par = makeHostPolicy('par', { pool: counting.pool });
const seq = execution.seq;

function u32(n: number, shared: boolean, f: (i: number) => number): Uint32Array {
  const a = shared ? allocShared('u32', n) : new Uint32Array(n);
  for (let i = 0; i < n; i++) a[i] = f(i);
  return a;
}

/** Whether `run(par)` used the pool, after checking that its result equals `run(seq)`'s. */
async function usesPool(run: (p: typeof par) => Promise<ArrayLike<number>>): Promise<boolean> {
  const want = Array.from(await run(seq));
  counting.reset();
  const got = Array.from(await run(par));
  expect(diff(got, want)).toBe('');
  return counting.runs() > 0;
}

describe('par minimums under the default tuning', () => {
  it('by key: from BY_KEY_PAR_MIN; plain arrays only for reduceByKey', async () => {
    for (const [n, shared, reduceWants, othersWant] of [
      [BY_KEY_PAR_MIN - 1, true, false, false],
      [BY_KEY_PAR_MIN, true, true, true],
      [BY_KEY_PAR_MIN - 1, false, false, false],
      [BY_KEY_PAR_MIN, false, true, false],
    ] as const) {
      const k = u32(n, shared, (i) => i >>> 3);
      const v = u32(n, shared, (i) => i * 7);
      const at = `n=${n} ${shared ? 'shared' : 'plain'}`;
      const runs = async (p: typeof par, f: typeof reduceByKey | typeof uniqueByKey) => {
        const ko = u32(n, shared, () => 0);
        const vo = u32(n, shared, () => 0);
        const m = await (f === uniqueByKey ? uniqueByKey(p, k, v, ko, vo) : reduceByKey(p, k, v, ko, vo));
        return [...ko.subarray(0, m), ...vo.subarray(0, m)];
      };
      expect(await usesPool((p) => runs(p, reduceByKey)), `reduceByKey ${at}`).toBe(reduceWants);
      expect(await usesPool((p) => runs(p, uniqueByKey)), `uniqueByKey ${at}`).toBe(othersWant);
      expect(
        await usesPool((p) =>
          inclusiveScanByKey(
            p,
            k,
            v,
            u32(n, shared, () => 0),
          ),
        ),
        `inclusiveScanByKey ${at}`,
      ).toBe(othersWant);
    }
  });

  it('memory-bound steps (reduce, transform, countIf, copyIf, inclusiveScan): from MEMORY_BOUND_PAR_MIN on shared arrays; an explicit parallelThreshold decides instead', async () => {
    const low = makeHostPolicy('par', { pool: counting.pool, tuning: { '*': { parallelThreshold: 1 << 16 } } });
    for (const [n, p, want] of [
      [MEMORY_BOUND_PAR_MIN - 1, par, false],
      [MEMORY_BOUND_PAR_MIN, par, true],
      [MEMORY_BOUND_PAR_MIN - 1, low, true],
    ] as const) {
      const r = rng(n);
      const x = u32(n, true, () => r() & 0xffff);
      const out = u32(n, true, () => 0);
      const at = `n=${n}${p === low ? ' parallelThreshold 2^16' : ''}`;
      const calls: [string, (q: typeof par) => Promise<ArrayLike<number>>][] = [
        ['reduce', async (q) => [await reduce(q, x)]],
        [
          'transform',
          async (q) => {
            await transform(q, x, out, (v: number) => v + 1);
            return out.slice();
          },
        ],
        ['countIf', async (q) => [await countIf(q, x, (v: number) => (v & 1) === 0)]],
        ['copyIf', async (q) => out.slice(0, await copyIf(q, x, out, (v: number) => (v & 1) === 0))],
        [
          'inclusiveScan',
          async (q) => {
            await inclusiveScan(q, x, out);
            return out.slice();
          },
        ],
      ];
      for (const [name, run] of calls) {
        // usesPool compares with seq and counts the pool's runs under `par`; `low` is checked the same way.
        const want2 = Array.from(await run(seq));
        counting.reset();
        const got = Array.from(await run(p));
        expect(diff(got, want2), `${name} ${at}`).toBe('');
        expect(counting.runs() > 0, `${name} ${at}`).toBe(want);
      }
    }
  });

  it('histogram: from HISTOGRAM_PAR_MIN (shared) and HISTOGRAM_PLAIN_MIN (plain)', async () => {
    for (const [n, shared, want] of [
      [HISTOGRAM_PAR_MIN - 1, true, false],
      [HISTOGRAM_PAR_MIN, true, true],
      [HISTOGRAM_PLAIN_MIN - 1, false, false],
      [HISTOGRAM_PLAIN_MIN, false, true],
    ] as const) {
      const r = rng(n);
      const x = u32(n, shared, () => r());
      expect(await usesPool((p) => histogram(p, x, { bins: 1000, lo: 0, hi: 3e9 })), `n=${n}`).toBe(want);
    }
  });

  it('merge and setUnion: from MERGE_PAR_MIN; plain arrays never', async () => {
    for (const [n, shared, mergeWants, unionWants] of [
      [MERGE_PAR_MIN - 2, true, false, false],
      [MERGE_PAR_MIN, true, true, true],
      [MERGE_PAR_MIN - 2, false, false, false],
      [MERGE_PAR_MIN, false, false, false],
      [4 * MERGE_PAR_MIN, false, false, false],
    ] as const) {
      const a = u32(n / 2, shared, (i) => i * 2);
      const b = u32(n / 2, shared, (i) => i * 3);
      const at = `n=${n} ${shared ? 'shared' : 'plain'}`;
      expect(
        await usesPool(async (p) => {
          const o = u32(n, shared, () => 0);
          await merge(p, a, b, o);
          return o;
        }),
        `merge ${at}`,
      ).toBe(mergeWants);
      expect(
        await usesPool(async (p) => {
          const o = u32(n, shared, () => 0);
          return o.subarray(0, await setUnion(p, a, b, o));
        }),
        `setUnion ${at}`,
      ).toBe(unionWants);
    }
  });

  it('nthElement: from SELECT_PAR_MIN (shared) and SELECT_PLAIN_MIN (plain)', async () => {
    for (const [n, shared, want] of [
      [SELECT_PAR_MIN - 1, true, false],
      [SELECT_PAR_MIN, true, true],
      [SELECT_PLAIN_MIN - 1, false, false],
      [SELECT_PLAIN_MIN, false, true],
    ] as const) {
      const r = rng(n + 1);
      const src = u32(n, false, () => r() % 5000);
      const run = async (p: typeof par) => {
        const d = u32(n, shared, (i) => src[i] as number);
        await nthElement(p, d, n >>> 1);
        return d;
      };
      expect(await usesPool(run), `n=${n} ${shared ? 'shared' : 'plain'}`).toBe(want);
    }
  });
});
