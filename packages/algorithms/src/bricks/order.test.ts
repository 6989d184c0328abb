/**
 * The order bricks (cpuMinMaxIndex, cpuSearch, cpuIsSortedUntil) against reference loops: seq and
 * par (tiny chunks by the workers alone, small chunks, default), plain and shared arrays, f32 with
 * -0/+0/NaN/inf, comparators with and without a JS source, and with SharedArrayBuffer hidden.
 */
import type { HostArray, NumericType } from '@webdpl/core';
import { createPool, sharedMemoryAvailable } from '@webdpl/policies';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { SearchKind } from '../binary-search/kernels';
import { greater, less } from '../sort/comparators';
import { sortReference } from '../testing/sort-reference';
import { cpuIsSortedUntil } from './is-sorted';
import { cpuMinMaxIndex, type Want } from './min-element';
import { cpuSearch } from './search';
import type { Before, CpuComparator, KeyArray } from './sort';
import { alloc, diff, makeData, rng, sharedCopy, TEST_SIZES, TYPES, testBackends } from './test-data';

const pool = createPool({ size: 2 });
afterAll(() => pool.close());
afterEach(() => vi.unstubAllGlobals());

const SIZES = [...TEST_SIZES, (1 << 16) + 1, 2 ** 20 + 3];

/** Random data, or (f32) values drawn from -0, +0, NaN, +-inf and a few numbers. */
function data(t: NumericType, n: number, kind: 'random' | 'specials' | 'few', seed = 3): HostArray {
  if (kind === 'random') return makeData(t, n, 'random', seed);
  const r = rng(n * 13 + seed);
  const x = alloc(t, n);
  const specials = [0, -0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 2, -2];
  for (let i = 0; i < n; i++) {
    if (kind === 'few') x[i] = r() % 4;
    else x[i] = t === 'f32' ? (specials[r() % specials.length] as number) : r() % 3;
  }
  return x;
}

/** TypedArray#sort's order: -1/0/1 (NaN last, -0 before +0). */
function order(a: number, b: number): number {
  const an = Number.isNaN(a);
  const bn = Number.isNaN(b);
  if (an || bn) return an === bn ? 0 : an ? 1 : -1;
  if (a !== b) return a < b ? -1 : 1;
  if (a === 0 && Object.is(a, -0) !== Object.is(b, -0)) return Object.is(a, -0) ? -1 : 1;
  return 0;
}

function minMaxReference(x: HostArray): [number, number] {
  let mi = 0;
  let ma = 0;
  for (let i = 1; i < x.length; i++) {
    if (order(x[i] as number, x[mi] as number) < 0) mi = i;
    if (order(x[i] as number, x[ma] as number) > 0) ma = i;
  }
  return [mi, ma];
}

function comparator(t: NumericType, descending: boolean, withSource: boolean): CpuComparator {
  const c = descending ? greater : less;
  const before = c.js([t, t]) as Before;
  return withSource
    ? { kind: 'builtin', descending, before, source: c.jsSource([t, t]) }
    : { kind: 'function', before };
}

const all = [...testBackends(pool), ...testBackends(pool).map((b) => ({ ...b, name: `${b.name}, SAB hidden` }))];

describe.each(all)('order bricks on $name', ({ name, backend }) => {
  const hide = () => {
    if (name.endsWith('SAB hidden')) {
      vi.stubGlobal('SharedArrayBuffer', undefined);
      expect(sharedMemoryAvailable()).toBe(false);
    }
  };
  const sizes = name.endsWith('SAB hidden') ? [1, 2, 17, 4099, 2 ** 17 + 3] : SIZES;

  for (const t of TYPES) {
    it(`cpuMinMaxIndex: first least / greatest element, ${t}`, async () => {
      hide();
      for (const n of sizes)
        for (const kind of ['random', 'specials', 'few'] as const) {
          const input = data(t, n, kind);
          if (n === 0) continue;
          const [mi, ma] = minMaxReference(input);
          const x = n % 2 === 1 && !name.endsWith('SAB hidden') ? sharedCopy(input) : input;
          for (const want of [1, 2, 3] as Want[]) {
            const got = await cpuMinMaxIndex(backend, x, t, want);
            expect(got, `n=${n} ${kind} want=${want}`).toEqual([want & 1 ? mi : -1, want & 2 ? ma : -1]);
          }
        }
      if (t === 'f32') {
        // Zeros of both signs, infinities and NaN at chunk starts and ends.
        const cases: [number[], number, number][] = [
          [[0, -0, 0, -0], 1, 0],
          [[-0, 0, -0, 0], 0, 1],
          [[Number.NaN, 1, Number.NaN], 1, 0],
          [[Number.NaN, Number.NaN], 0, 0],
          [[Number.POSITIVE_INFINITY, Number.NaN, Number.POSITIVE_INFINITY], 0, 1],
          [[Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY], 0, 0],
        ];
        for (const [values, wmi, wma] of cases) {
          for (const pad of [0, 40_000]) {
            // The special values again after `pad` elements of 1 (so par chunks split them).
            const x = new Float32Array(values.length + pad).fill(1);
            x.set(values);
            const [mi, ma] = minMaxReference(x);
            if (pad === 0) expect([mi, ma]).toEqual([wmi, wma]);
            expect(await cpuMinMaxIndex(backend, x, 'f32', 3), `${values} pad ${pad}`).toEqual([mi, ma]);
          }
        }
      }
    });

    it(`cpuMinMaxIndex: each position of the four-element steps and the tail, ${t}`, async () => {
      hide();
      // One or two special values (a new least / greatest, NaN, zeros of both signs) at every pair of
      // positions of short inputs, so each lands in every lane of an unrolled step and in the tail.
      const specials =
        t === 'f32' ? [-3, 9, Number.NaN, 0, -0, Number.POSITIVE_INFINITY] : t === 'i32' ? [-3, 9] : [0, 9];
      for (let n = 1; n <= 13; n++)
        for (let p = 0; p < n; p++)
          for (let q = p; q < n; q++)
            for (const a of specials)
              for (const z of specials) {
                const x = alloc(t, n).fill(t === 'u32' ? 5 : 1);
                x[p] = a;
                if (q > p) x[q] = z;
                const [mi, ma] = minMaxReference(x);
                for (const want of [1, 2, 3] as Want[]) {
                  const got = await cpuMinMaxIndex(backend, x, t, want);
                  expect(got, `${Array.from(x)} want=${want}`).toEqual([want & 1 ? mi : -1, want & 2 ? ma : -1]);
                }
              }
      if (t === 'f32') {
        // A zero least / greatest element with the other zero sign later, past a long run (the
        // second, unrolled scan), at every lane.
        for (let pad = 60; pad < 68; pad++)
          for (const [first, later] of [
            [0, -0],
            [-0, 0],
          ]) {
            const x = new Float32Array(pad + 9).fill(first === 0 ? 0.5 : -0.5);
            x[3] = first as number;
            x[pad] = later as number;
            const [mi, ma] = minMaxReference(x);
            expect(await cpuMinMaxIndex(backend, x, t, first === 0 ? 1 : 2), `pad ${pad}`).toEqual(
              first === 0 ? [mi, -1] : [-1, ma],
            );
          }
      }
    });

    it(`cpuSearch: lower, upper and binary search, ${t}`, async () => {
      hide();
      for (const n of sizes.filter((s) => s < 5000))
        for (const m of n <= 257 ? [0, 1, 17, 2 ** 17 + 3] : [17, 3000])
          for (const descending of [false, true])
            for (const withSource of [true, false]) {
              const comp = comparator(t, descending, withSource);
              const sorted = sortReference(data(t, n, 'specials') as KeyArray, descending) as HostArray;
              const queries = data(t, m, t === 'f32' ? 'specials' : 'few', 9);
              for (const kind of ['lower', 'upper', 'binary'] as SearchKind[]) {
                const want = new Uint32Array(m);
                for (let q = 0; q < m; q++) {
                  const v = queries[q] as number;
                  let i = 0;
                  if (kind === 'upper') while (i < n && !comp.before(v, sorted[i] as number)) i++;
                  else while (i < n && comp.before(sorted[i] as number, v)) i++;
                  want[q] = kind === 'binary' ? (i < n && !comp.before(v, sorted[i] as number) ? 1 : 0) : i;
                }
                const result = new Uint32Array(m).fill(7);
                await cpuSearch(backend, kind, sorted, queries, result, comp);
                expect(diff(result, want), `n=${n} m=${m} ${kind} desc=${descending} source=${withSource}`).toBe('');
              }
            }
    });

    it(`cpuIsSortedUntil: the first element out of order, ${t}`, async () => {
      hide();
      if (t === 'f32') {
        // Numerically equal neighbours out of order: +0 then -0 (ascending), -0 then +0 (descending).
        for (const pad of [0, 300_000]) {
          const x = new Float32Array(pad + 4).fill(-5);
          x.set([-1, 0, -0, 1], pad);
          expect(await cpuIsSortedUntil(backend, x, comparator(t, false, true)), `+0, -0 pad ${pad}`).toBe(pad + 2);
          x.fill(5);
          x.set([1, -0, 0, -1], pad);
          expect(await cpuIsSortedUntil(backend, x, comparator(t, true, true)), `-0, +0 pad ${pad}`).toBe(pad + 2);
        }
      }
      for (const n of sizes)
        for (const [withSource, descending] of [
          [true, false],
          [false, false],
          [true, true],
        ] as const) {
          const comp = comparator(t, descending, withSource);
          const sorted = sortReference(data(t, n, 'specials') as KeyArray, descending) as HostArray;
          expect(await cpuIsSortedUntil(backend, sorted, comp), `n=${n} sorted`).toBe(n);
          const positions = [1, 2, n >> 1, n - 1, 16, 17, 32768, 65536].filter((p) => p >= 1 && p < n);
          for (const p of positions) {
            const x = sorted.slice();
            // Make x[p] go before x[p - 1] (and a later violation that must not win).
            x[p] = t === 'u32' ? 0 : t === 'i32' ? -(2 ** 31) : Number.NEGATIVE_INFINITY;
            x[p - 1] = t === 'f32' ? Number.NaN : t === 'u32' ? 0xffffffff : 2 ** 31 - 1;
            if (p + 5 < n) x[p + 5] = x[p] as number;
            let want = n;
            for (let i = 1; i < n; i++)
              if (comp.before(x[i] as number, x[i - 1] as number)) {
                want = i;
                break;
              }
            const arr = n % 2 === 1 && !name.endsWith('SAB hidden') ? sharedCopy(x) : x;
            expect(
              await cpuIsSortedUntil(backend, arr, comp),
              `n=${n} at ${p} source=${withSource} desc=${descending}`,
            ).toBe(want);
          }
        }
    });
  }
});
