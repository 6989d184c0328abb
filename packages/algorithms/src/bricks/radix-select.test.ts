/**
 * The radix select (radix-select.ts) against a simple reference: the k-th element of a sort, and the
 * stable partition around it (before, equal, after, each in input order), for u32, i32 and f32 with
 * -0, +0 and NaN under less and greater, at sizes around RADIX_SELECT_MIN and the chunk boundaries;
 * par (workers alone, with the calling thread, plain and shared data) gives seq's arrangement exactly;
 * nthElement, partialSort and topK through the brick; without SharedArrayBuffer nothing reaches the pool.
 */
import type { NumericType } from '@webdpl/core';
import { type CpuBackend, createPool } from '@webdpl/policies';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { checkComparator, cpuComparator } from '../sort/comparator-arg';
import { greater } from '../sort/comparators';
import { rng } from '../testing/matrix';
import { COMPACT_RATIO, cpuRadixSelect, RADIX_SELECT_MIN } from './radix-select';
import { cpuNthElement, cpuPartialSort, cpuTopK } from './select';
import type { KeyArray } from './sort/index';
import { alloc, countingPool, diff, sharedCopy, testBackends } from './test-data';

const inner = createPool({ size: 2 });
afterAll(() => inner.close());
const counting = countingPool(inner);
const seq: CpuBackend = { kind: 'seq' };
/** par with chunks of 1 (workers alone), of 16, and the default tuning. */
const pars = testBackends(counting.pool).filter((b) => b.backend.kind === 'par');
const M = RADIX_SELECT_MIN;
const SIZES = [1, 2, 3, 17, 1000, M - 1, M, M + 1, 2 * M + 7, 40001, 2 ** 17 + 3];

/** n elements of `type` from `spread` values (f32: with -0, +0 and NaN among them). */
function data(type: NumericType, n: number, seed: number, spread: number): KeyArray {
  const r = rng(seed);
  const a = alloc(type, n) as KeyArray;
  for (let i = 0; i < n; i++) {
    const v = spread === 0 ? r() : r() % spread;
    if (type === 'f32') a[i] = v % 7 === 0 ? -0 : v % 7 === 1 ? 0 : v % 11 === 2 ? Number.NaN : (v - 2 ** 31) / 1024;
    else a[i] = type === 'i32' ? v - 2 ** 31 : v;
  }
  return a;
}

/** The reference: the k-th of a sort by `before`, and the stable partition of `a` around it. */
function reference(a: KeyArray, k: number, before: (x: number, y: number) => boolean): KeyArray {
  const sorted = Array.from(a).sort((x, y) => (before(x, y) ? -1 : before(y, x) ? 1 : 0));
  const v = sorted[k] as number;
  const lt: number[] = [];
  const eq: number[] = [];
  const gt: number[] = [];
  for (const x of a) (before(x, v) ? lt : before(v, x) ? gt : eq).push(x);
  const out = a.slice() as KeyArray;
  out.set([...lt, ...eq, ...gt]);
  return out;
}

describe('radix select', () => {
  afterEach(() => vi.unstubAllGlobals());

  for (const type of ['u32', 'i32', 'f32'] as const) {
    for (const descending of [false, true]) {
      it(`${type} ${descending ? 'greater' : 'less'}: the stable partition around the k-th, par as seq`, async () => {
        const comp = cpuComparator(checkComparator(descending ? greater : undefined, 'comp'), type);
        for (const [s, n] of SIZES.entries()) {
          const spread = s % 3 === 0 ? 3 : s % 3 === 1 ? 0 : 1000;
          const a = data(type, n, s + 1, spread);
          for (const k of [0, n - 1, n >> 1, (s * 7919) % n]) {
            const want = reference(a, k, comp.before);
            const got = a.slice() as KeyArray;
            await cpuRadixSelect(seq, got, k, type, descending);
            expect(diff(got, want), `seq n=${n} k=${k} spread=${spread}`).toBe('');
            for (const { name, backend } of pars) {
              for (const shared of [false, true]) {
                const p = shared ? sharedCopy(a) : (a.slice() as KeyArray);
                await cpuRadixSelect(backend, p, k, type, descending);
                expect(diff(p, want), `${name} ${shared ? 'shared' : 'plain'} n=${n} k=${k}`).toBe('');
              }
            }
          }
        }
      });
    }
  }

  it('with a destination: the same arrangement written there, the data only read (plain and shared)', async () => {
    for (const type of ['u32', 'i32', 'f32'] as const) {
      for (const descending of [false, true]) {
        const comp = cpuComparator(checkComparator(descending ? greater : undefined, 'comp'), type);
        for (const [s, n] of [M, M + 1, 40001, 2 ** 17 + 3, 2 ** 18 + 5].entries()) {
          const spread = s % 2 === 0 ? 3 : 0;
          const a = data(type, n, s + 11, spread);
          for (const k of [0, n - 1, (s * 7919) % n]) {
            const want = reference(a, k, comp.before);
            for (const { name, backend } of [{ name: 'seq', backend: seq }, ...pars]) {
              for (const [sharedIn, sharedOut] of [
                [false, false],
                [true, true],
                [true, false],
                [false, true],
              ] as const) {
                const x = sharedIn ? sharedCopy(a) : (a.slice() as KeyArray);
                const dest = alloc(type, n) as KeyArray;
                const d = sharedOut ? sharedCopy(dest) : dest;
                await cpuRadixSelect(backend, x, k, type, descending, d);
                const at = `${type} ${descending} ${name} in ${sharedIn} out ${sharedOut} n=${n} k=${k}`;
                expect(diff(d, want), at).toBe('');
                expect(diff(x, a), `${at}: data untouched`).toBe('');
              }
            }
          }
        }
      }
    }
  });

  it('topK partitions shared or seq input straight into its copy: the k first sorted, the input untouched', async () => {
    for (const type of ['u32', 'f32'] as const) {
      for (const descending of [false, true]) {
        const comp = cpuComparator(checkComparator(descending ? greater : undefined, 'comp'), type);
        for (const [s, n] of [M, 40001, 2 ** 18 + 3].entries()) {
          const a = data(type, n, s + 21, s === 1 ? 7 : 0);
          const sorted = Array.from(a).sort((x, y) => (comp.before(x, y) ? -1 : comp.before(y, x) ? 1 : 0));
          for (const k of [1, 2, n >> 1, n - 1, n]) {
            for (const { name, backend } of [{ name: 'seq', backend: seq }, ...pars]) {
              for (const shared of [false, true]) {
                const input = shared ? sharedCopy(a) : (a.slice() as KeyArray);
                const out = alloc(type, k + 1) as KeyArray;
                out[k] = 5;
                await cpuTopK(backend, input, k, out, type, comp);
                const at = `${type} ${descending} ${name} ${shared} n=${n} k=${k}`;
                expect(diff(out.subarray(0, k), Float64Array.from(sorted.slice(0, k))), at).toBe('');
                expect(out[k], at).toBe(5);
                expect(diff(input, a), `${at}: input untouched`).toBe('');
              }
            }
          }
        }
      }
    }
  });

  it('copies the candidates of round 1 out (at most n / COMPACT_RATIO of them) and counts round 2 over them', async () => {
    // m keys share the top 11 bits 0x5a5 (the class of the k-th), the rest lie below or above it;
    // clustered at the front (later chunks have no candidates), at the back, or spread out; m at
    // the bound of the copy (n / COMPACT_RATIO), one past it, and few.
    const n = 8192;
    const bound = n / COMPACT_RATIO;
    const top = 0x5a5 << 21;
    for (const type of ['u32', 'i32'] as const) {
      for (const descending of [false, true]) {
        const comp = cpuComparator(checkComparator(descending ? greater : undefined, 'comp'), type);
        for (const m of [bound, bound + 1, 37, 1]) {
          for (const place of ['front', 'back', 'spread'] as const) {
            const r = rng(m * 31 + place.length);
            const isCand = (i: number) =>
              place === 'front'
                ? i < m
                : place === 'back'
                  ? i >= n - m
                  : i % Math.floor(n / m) === 0 && i / Math.floor(n / m) < m;
            const a = alloc(type, n) as KeyArray;
            for (let i = 0; i < n; i++) {
              // Candidates: a few distinct low parts (ties); others: another top digit.
              const u = isCand(i)
                ? (top | ((r() % 9) * 0x1234)) >>> 0
                : (((r() % 2 === 0 ? 0x100 : 0x700) << 21) | (r() & 0x1fffff)) >>> 0;
              a[i] = type === 'i32' ? u | 0 : u;
            }
            const lowSide = Array.from(a).filter(
              (v, i) => !isCand(i) && comp.before(v, a[isCand(0) ? 0 : n - 1] as number),
            ).length;
            for (const k of [lowSide, lowSide + (m >> 1), lowSide + m - 1]) {
              const want = reference(a, Math.min(k, n - 1), comp.before);
              for (const { name, backend } of [{ name: 'seq', backend: seq }, ...pars]) {
                for (const shared of [false, true]) {
                  const p = shared ? sharedCopy(a) : (a.slice() as KeyArray);
                  await cpuRadixSelect(backend, p, Math.min(k, n - 1), type, descending);
                  expect(diff(p, want), `${type} ${descending} ${name} ${shared} m=${m} ${place} k=${k}`).toBe('');
                }
              }
            }
          }
        }
      }
    }
  });

  it('nthElement, partialSort and topK take it for built-in orders from RADIX_SELECT_MIN', async () => {
    const comp = cpuComparator(checkComparator(undefined, 'comp'), 'f32');
    const a = data('f32', 3 * M + 5, 9, 500);
    const sorted = a.slice().sort();
    for (const { backend } of [{ backend: seq }, ...pars]) {
      const x = sharedCopy(a);
      await cpuNthElement(backend, x, 2 * M, 'f32', comp);
      expect(diff(x, reference(a, 2 * M, comp.before))).toBe('');
      const y = sharedCopy(a);
      await cpuPartialSort(backend, y, 1000, 'f32', comp);
      expect(diff(y.subarray(0, 1000), sorted.subarray(0, 1000))).toBe('');
      // topK copies its (plain) input, into shared scratch under par: the input stays as it was.
      const input = a.slice() as KeyArray;
      const out = new Float32Array(M + 1).fill(5);
      await cpuTopK(backend, input, M, out, 'f32', comp);
      expect(diff(out.subarray(0, M), sorted.subarray(0, M))).toBe('');
      expect(out[M]).toBe(5);
      expect(diff(input, a)).toBe('');
    }
  });

  it('without SharedArrayBuffer runs on the calling thread', async () => {
    const a = data('u32', 2 ** 17 + 3, 4, 0);
    const want = a.slice() as KeyArray;
    await cpuRadixSelect(seq, want, 5000, 'u32', false);
    vi.stubGlobal('SharedArrayBuffer', undefined);
    counting.reset();
    const got = a.slice() as KeyArray;
    await cpuRadixSelect(pars[1]?.backend as CpuBackend, got, 5000, 'u32', false);
    expect(diff(got, want)).toBe('');
    expect(counting.runs()).toBe(0);
  });
});
