/**
 * The f32 accuracy bound of the CPU reductions and scans (kernels.ts, `summation`), at 2^24 against
 * an f64 reference, on seq and par: the built-in plus sums in f64 and rounds once ('wide'); other
 * f32 operators (lambdas) fold blockwise and pairwise ('blocked'). A sequential f32 accumulator was
 * 1% off at 2^20 and 15% off at 2^24 on `fill(0.1)`.
 */
import { type GpuFunction, lambda, plus } from '@webdpl/core';
import { type CpuBackend, createPool } from '@webdpl/policies';
import { afterAll, describe, expect, it } from 'vitest';
import { SUM_BLOCK } from './kernels';
import { cpuReduce, cpuTransformReduce } from './reduce';
import { cpuExclusiveScan, cpuInclusiveScan } from './scan';
import { makeData } from './test-data';

const pool = createPool({ size: 2 });
afterAll(() => pool.close());

const N = 2 ** 24;
const U = 2 ** -24;
const BACKENDS: { name: string; backend: CpuBackend }[] = [
  { name: 'seq', backend: { kind: 'seq' } },
  { name: 'par', backend: { kind: 'par', pool } },
];

/** The documented bound of 'wide' sums against an f64 reference sum `ref` of `n` terms. */
function wideBound(ref: number, abs: number, n: number): number {
  return U * Math.abs(ref) + 2 * (n + 1) * 2 ** -53 * abs;
}

/** The documented bound of 'blocked' sums: (SUM_BLOCK + 2 ceil(log2 n) + 8) 2^-24 sum |x|. */
function blockedBound(abs: number, n: number): number {
  return (SUM_BLOCK + 2 * Math.ceil(Math.log2(Math.max(2, n))) + 8) * U * abs;
}

function refSum(x: Float32Array): { sum: number; abs: number } {
  let sum = 0;
  let abs = 0;
  for (let i = 0; i < x.length; i++) {
    sum += x[i] as number;
    abs += Math.abs(x[i] as number);
  }
  return { sum, abs };
}

/** The first prefix of `y` outside `bound(|prefix|, sum |x| so far, i)`, or ''. */
function checkPrefixes(
  y: Float32Array,
  x: Float32Array,
  inclusive: boolean,
  bound: (ref: number, abs: number, i: number) => number,
): string {
  let ref = 0;
  let abs = 0;
  for (let i = 0; i < x.length; i++) {
    if (inclusive) {
      ref += x[i] as number;
      abs += Math.abs(x[i] as number);
    }
    if (!(Math.abs((y[i] as number) - ref) <= bound(ref, abs, i + 1))) return `at ${i}: got ${y[i]}, f64 ${ref}`;
    if (!inclusive) {
      ref += x[i] as number;
      abs += Math.abs(x[i] as number);
    }
  }
  return '';
}

/** A sum the bricks cannot recognize as the built-in plus: folded blockwise. */
const lambdaPlus: GpuFunction = lambda((a: number, b: number) => a + b);

const fills = new Float32Array(N).fill(0.1);
const random = makeData('f32', N, 'random', 5) as Float32Array;
const positive = Float32Array.from(random, Math.abs);

describe.each(BACKENDS)('f32 accuracy at 2^24 on $name', ({ backend }) => {
  it('reduce of fill(0.1) with plus is the f64 sum rounded once (sequential f32 was 15% off)', async () => {
    const { sum, abs } = refSum(fills);
    const got = await cpuReduce(backend, fills, 0, plus);
    expect(got).toBe(Math.fround(sum));
    expect(Math.abs(got - sum)).toBeLessThanOrEqual(wideBound(sum, abs, N));
    const got20 = await cpuReduce(backend, fills.subarray(0, 2 ** 20), 0, plus);
    expect(got20).toBe(Math.fround(104857.6));
  });

  it('reduce with plus on random and positive data keeps the wide bound', async () => {
    for (const x of [random, positive]) {
      const { sum, abs } = refSum(x);
      const got = await cpuReduce(backend, x, 0.5, plus);
      expect(Math.abs(got - (sum + 0.5))).toBeLessThanOrEqual(wideBound(sum + 0.5, abs + 0.5, N));
    }
  });

  it('reduce and transformReduce with a lambda operator keep the blocked bound', async () => {
    for (const x of [fills, random, positive]) {
      const { sum, abs } = refSum(x);
      const got = await cpuReduce(backend, x, 0, lambdaPlus);
      expect(Math.abs(got - sum)).toBeLessThanOrEqual(blockedBound(abs, N));
    }
    const { sum, abs } = refSum(fills);
    // Far tighter than the bound on constant data: the pairwise tree adds equal halves.
    expect(Math.abs((await cpuReduce(backend, fills, 0, lambdaPlus)) - sum) / sum).toBeLessThan(1e-6);
    const square = lambda((v: number) => v * v);
    let sq = 0;
    let sqAbs = 0;
    for (let i = 0; i < N; i++) {
      const v = Math.fround((random[i] as number) * (random[i] as number));
      sq += v;
      sqAbs += v;
    }
    const wide = await cpuTransformReduce(backend, random, 0, plus, square);
    expect(Math.abs(wide - sq)).toBeLessThanOrEqual(wideBound(sq, sqAbs, N));
    const blocked = await cpuTransformReduce(backend, random, 0, lambdaPlus, square);
    expect(Math.abs(blocked - sq)).toBeLessThanOrEqual(blockedBound(sqAbs, N));
    expect(abs).toBeGreaterThan(0);
  });

  it('scans: plus rounds the f64 prefix at each store; a lambda sum keeps the blocked bound', async () => {
    const y = new Float32Array(N);
    for (const inclusive of [true, false]) {
      const scan = inclusive ? cpuInclusiveScan : cpuExclusiveScan;
      await scan(backend, random, y, plus, inclusive ? undefined : 0);
      expect(
        checkPrefixes(y, random, inclusive, (ref, abs, n) => wideBound(ref, abs, n)),
        'plus',
      ).toBe('');
      await scan(backend, positive, y, lambdaPlus, inclusive ? undefined : 0);
      expect(
        checkPrefixes(y, positive, inclusive, (_ref, abs) => blockedBound(abs, N)),
        'lambda',
      ).toBe('');
    }
    await cpuInclusiveScan(backend, fills, y, plus);
    expect(y[N - 1]).toBe(Math.fround(refSum(fills).sum));
  });
});
