/**
 * cpuCompact (copyIf / removeIf / partition / unique bricks) against reference loops: seq and par
 * (tiny chunks run by the workers alone, small chunks, default), plain arrays, arrays over
 * SharedArrayBuffer, in place and into a separate output, and with SharedArrayBuffer hidden.
 */
import type { GpuFunction, HostArray, NumericType } from '@webdpl/core';
import { type CpuBackend, createPool, sharedMemoryAvailable } from '@webdpl/policies';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { type CpuCompactMode, type CpuKeep, cpuCompact } from './compaction';
import { alloc, diff, makeData, rng, sharedCopy, TEST_SIZES, TYPES, testBackends } from './test-data';
import { inlineFunction, mod7is3 } from './test-functions';

const pool = createPool({ size: 2 });
afterAll(() => pool.close());
afterEach(() => vi.unstubAllGlobals());

const gtQuarter = inlineFunction({
  name: 'gtQuarter',
  arity: 1,
  source: () => '(x) => x > 0.25',
  resultType: () => 'bool',
});
/** A number as the predicate: kept when non-zero and not NaN (JS truthiness). */
const itself = inlineFunction({ name: 'itself', arity: 1, source: () => '(x) => x' });

/** f32 data with -0, +0, NaN, inf and runs of equal values (for unique), else makeData's. */
function data(t: NumericType, n: number, kind: 'random' | 'runs' | 'specials'): HostArray {
  if (kind === 'random') return makeData(t, n, 'random');
  const r = rng(n * 31 + 5);
  const x = alloc(t, n);
  const specials = [0, -0, Number.NaN, Number.POSITIVE_INFINITY, -1.5, 0.5];
  let v = 0;
  for (let i = 0; i < n; i++) {
    if (kind === 'runs') {
      if (r() % 3 === 0) v = r() % 4;
      x[i] = v;
    } else x[i] = t === 'f32' ? (specials[r() % specials.length] as number) : r() % 3;
  }
  return x;
}

function reference(x: HostArray, keep: CpuKeep, mode: CpuCompactMode): { out: number[]; count: number } {
  const f = keep.kind === 'predicate' ? (keep.fn.js([keep.type]) as (v: number) => unknown) : undefined;
  const kept: number[] = [];
  const rejected: number[] = [];
  for (let i = 0; i < x.length; i++) {
    const v = x[i] as number;
    if (f ? f(v) : i === 0 || v !== x[i - 1]) kept.push(v);
    else rejected.push(v);
  }
  return { out: mode === 'partition' ? [...kept, ...rejected] : kept, count: kept.length };
}

const SIZES = [...TEST_SIZES, 1 << 16, (1 << 16) + 1, 2 ** 20 + 3];

function keeps(t: NumericType): { name: string; keep: CpuKeep }[] {
  const pred = (fn: GpuFunction) => ({ kind: 'predicate', fn, type: t }) as const;
  return [
    { name: 'predicate', keep: pred(t === 'f32' ? gtQuarter : mod7is3) },
    { name: 'truthiness', keep: pred(itself) },
    { name: 'unique', keep: { kind: 'adjacent-different' } },
  ];
}

async function check(backend: CpuBackend, t: NumericType, n: number, shared: boolean): Promise<void> {
  for (const kind of ['random', 'runs', 'specials'] as const)
    for (const { name, keep } of keeps(t))
      for (const mode of ['compact', 'partition'] as const) {
        const input = data(t, n, kind);
        const want = reference(input, keep, mode);
        const label = `${t} n=${n} ${kind} ${name} ${mode}${shared ? ' shared' : ''}`;
        // Into a separate output: only [0, count) is written (partition: all n).
        const src = shared ? sharedCopy(input) : input.slice();
        const dst = alloc(t, n).fill(77);
        const count = await cpuCompact(backend, src, dst, keep, mode);
        expect(count, label).toBe(want.count);
        expect(diff(dst.subarray(0, want.out.length), want.out), label).toBe('');
        expect(diff(src, input), `${label}: input untouched`).toBe('');
        if (mode === 'compact' && n > count) expect(dst[count], `${label}: beyond count`).toBe(77);
        // In place.
        const x = shared ? sharedCopy(input) : input.slice();
        expect(await cpuCompact(backend, x, x, keep, mode), `${label} in place`).toBe(want.count);
        expect(diff(x.subarray(0, want.out.length), want.out), `${label} in place`).toBe('');
      }
}

describe.each(testBackends(pool))('cpuCompact on $name', ({ backend }) => {
  for (const t of TYPES) {
    it(`matches the reference loops, plain and shared arrays, ${t}`, async () => {
      for (const n of SIZES) await check(backend, t, n, n % 2 === 1);
      await check(backend, t, 2 ** 20 + 3, false);
    });
  }
});

describe('cpuCompact without SharedArrayBuffer', () => {
  for (const { name, backend } of testBackends(pool)) {
    it(`${name}: runs on the calling thread with plain memory`, async () => {
      vi.stubGlobal('SharedArrayBuffer', undefined);
      expect(sharedMemoryAvailable()).toBe(false);
      for (const t of TYPES) for (const n of [0, 1, 17, 4099, 2 ** 17 + 3]) await check(backend, t, n, false);
    });
  }
});
