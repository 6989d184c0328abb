import {
  bitXor,
  coerce,
  type GpuFunction,
  lambda,
  maximum,
  minimum,
  multiplies,
  type NumericType,
  plus,
} from '@webdpl/core';
import { createPool } from '@webdpl/policies';
import { afterAll, describe, expect, it } from 'vitest';
import { cpuCountIf, cpuReduce, cpuTransformReduce } from './reduce';
import { makeData, sharedCopy, TEST_SIZES, TYPES, testBackends } from './test-data';
import { lastNonZero, mod7is3, times, times3plus1 } from './test-functions';

const pool = createPool({ size: 2 });
afterAll(() => pool.close());

/** Hand-written reference operators (not the operators' own JS forms). */
const REF: Record<string, (t: NumericType, a: number, b: number) => number> = {
  plus: (t, a, b) => (t === 'f32' ? Math.fround(a + b) : coerce(t, a + b)),
  minimum: (_t, a, b) => Math.min(a, b),
  maximum: (_t, a, b) => Math.max(a, b),
  bitXor: (t, a, b) => coerce(t, a ^ b),
  multiplies: (t, a, b) => (t === 'f32' ? Math.fround(a * b) : coerce(t, Math.imul(a, b))),
  lastNonZero: (_t, a, b) => (b !== 0 ? b : a),
};

function refFold(t: NumericType, name: string, init: number, values: ArrayLike<number>): number {
  const f = REF[name] as (t: NumericType, a: number, b: number) => number;
  let acc = coerce(t, init);
  for (let i = 0; i < values.length; i++) acc = f(t, acc, values[i] as number);
  return acc;
}

/**
 * Float tolerance of an f32 plus reduction (kernels.ts: summed in f64 and rounded once), against the
 * f64 reference `exactSum` (itself off the exact sum by at most n * 2^-53 * sum |x_i|):
 * |result - reference| <= 2^-24 * |reference| + 2 * (n + 1) * 2^-53 * (|init| + sum |x_i|).
 * The recursive f32 summation this replaced allowed (n + 1) * 2^-24 * sum |x_i|.
 */
function sumTolerance(init: number, values: ArrayLike<number>): number {
  let abs = Math.abs(init);
  for (let i = 0; i < values.length; i++) abs += Math.abs(values[i] as number);
  return 2 ** -24 * Math.abs(exactSum(init, values)) + 2 * (values.length + 1) * 2 ** -53 * abs;
}

function exactSum(init: number, values: ArrayLike<number>): number {
  let s = init;
  for (let i = 0; i < values.length; i++) s += values[i] as number;
  return s;
}

const OPS: { op: GpuFunction; types: readonly NumericType[] }[] = [
  { op: plus, types: TYPES },
  { op: minimum, types: TYPES },
  { op: maximum, types: TYPES },
  { op: bitXor, types: ['u32', 'i32'] },
  { op: multiplies, types: ['u32', 'i32'] },
  { op: lastNonZero, types: TYPES },
];

describe.each(testBackends(pool))('cpuReduce on $name', ({ name, backend }) => {
  for (const { op, types } of OPS) {
    for (const t of types) {
      it(`${op.name} ${t}`, async () => {
        for (const n of TEST_SIZES) {
          for (const kind of ['random', 'constant', 'sparse'] as const) {
            const x = makeData(t, n, kind);
            const init = t === 'f32' ? 0.5 : 5;
            const got = await cpuReduce(backend, x, init, op);
            const want = refFold(t, op.name, init, x);
            if (t === 'f32' && op.name === 'plus') {
              if (name === 'seq') {
                expect(got, `n=${n} ${kind}: seq sums in f64, rounds once`).toBe(Math.fround(exactSum(init, x)));
              }
              expect(Math.abs(got - exactSum(init, x)), `n=${n} ${kind}`).toBeLessThanOrEqual(sumTolerance(init, x));
              expect(got).toBe(Math.fround(got));
            } else {
              expect(got, `n=${n} ${kind}`).toBe(want);
            }
          }
        }
      });
    }
  }

  it('accepts shared arrays as they are', async () => {
    const x = sharedCopy(makeData('u32', 2 ** 17 + 3, 'random') as Uint32Array);
    expect(await cpuReduce(backend, x, 0, plus)).toBe(refFold('u32', 'plus', 0, x));
  });
});

describe.each(testBackends(pool))('cpuTransformReduce and cpuCountIf on $name', ({ backend }) => {
  for (const t of TYPES) {
    it(`unary transform then plus, ${t}`, async () => {
      for (const n of TEST_SIZES) {
        const x = makeData(t, n, 'random');
        const got = await cpuTransformReduce(backend, x, 1, plus, times3plus1);
        const mapped = Array.from(x, (v) => (t === 'f32' ? Math.fround(v * 3 + 1) : coerce(t, Math.imul(v, 3) + 1)));
        if (t === 'f32') {
          expect(Math.abs(got - exactSum(1, mapped)), `n=${n}`).toBeLessThanOrEqual(sumTolerance(1, mapped));
        } else expect(got, `n=${n}`).toBe(refFold(t, 'plus', 1, mapped));
      }
    });

    it(`binary transform (dot product), ${t}`, async () => {
      for (const n of [0, 1, 2, 7, 100, 257, 2 ** 17 + 3]) {
        const a = makeData(t, n, 'random', 3);
        const b = makeData(t, n, 'random', 4);
        const got = await cpuTransformReduce(backend, [a, b], 0, plus, times);
        const products = Array.from(a, (v, i) => REF.multiplies?.(t, v, b[i] as number) as number);
        if (t === 'f32') {
          expect(Math.abs(got - exactSum(0, products)), `n=${n}`).toBeLessThanOrEqual(sumTolerance(0, products));
        } else expect(got, `n=${n}`).toBe(refFold(t, 'plus', 0, products));
      }
    });

    it(`count_if with a bool predicate (as transform-reduce and cpuCountIf), ${t}`, async () => {
      for (const n of TEST_SIZES) {
        for (const kind of ['random', 'constant'] as const) {
          const x = makeData(t, n, kind);
          let want = 0;
          for (let i = 0; i < n; i++) if (Math.abs(Math.trunc(x[i] as number)) % 7 === 3) want++;
          expect(await cpuCountIf(backend, x, mod7is3), `n=${n}`).toBe(want);
          expect(await cpuTransformReduce(backend, x, 0, plus, mod7is3), `n=${n}`).toBe(want);
        }
      }
    });
  }

  it('f32 lambda operators fold full blocks as parts side by side: every element once, in order', async () => {
    // reduceChains: a full block of SUM_BLOCK (128) elements folds as 4 parts of 32 at once.
    const last = lambda((a: number, b: number) => (b !== 0 ? b : a));
    const add = lambda((a: number, b: number) => a + b);
    const twice = lambda((v: number) => v * 2);
    for (const n of [127, 128, 129, 160, 255, 256, 257, 1000, 2900]) {
      // One non-zero in most 32-element parts: a part folded out of order returns another one.
      const sparse = Float32Array.from({ length: n }, (_, i) => (i % 37 === 5 ? i + 1 : 0));
      expect(await cpuReduce(backend, sparse, 0, last), `n=${n}`).toBe(refFold('f32', 'lastNonZero', 0, sparse));
      expect(await cpuTransformReduce(backend, sparse, 0, last, twice), `n=${n}`).toBe(
        2 * refFold('f32', 'lastNonZero', 0, sparse),
      );
      // Integers below 2^24: exact in any order, so an element skipped or taken twice shows.
      const ints = Float32Array.from({ length: n }, (_, i) => i + 1);
      expect(await cpuReduce(backend, ints, 0, add), `n=${n}`).toBe((n * (n + 1)) / 2);
      expect(await cpuTransformReduce(backend, ints, 3, add, twice), `n=${n}`).toBe(n * (n + 1) + 3);
    }
  });

  it('without a transform it is a reduce; a non-commutative operator keeps its order', async () => {
    for (const n of TEST_SIZES) {
      const x = makeData('i32', n, 'sparse');
      expect(await cpuTransformReduce(backend, x, 9, lastNonZero), `n=${n}`).toBe(refFold('i32', 'lastNonZero', 9, x));
    }
  });
});

describe('reduce arguments', () => {
  const seq = { kind: 'seq' } as const;
  it('names the bad argument', async () => {
    const x = new Uint32Array(4);
    await expect(cpuReduce(seq, x, 'zero' as never, plus)).rejects.toThrow(/^init:/);
    await expect(cpuReduce(seq, x, 0, times3plus1)).rejects.toThrow(/^op:/);
    await expect(cpuReduce(seq, [1, 2] as never, 0, plus)).rejects.toThrow(/^input/);
    await expect(cpuTransformReduce(seq, x, 0, times3plus1, times3plus1)).rejects.toThrow(/^reduceOp:/);
    await expect(cpuTransformReduce(seq, x, 0, plus, plus)).rejects.toThrow(/^transformFn:/);
    await expect(cpuTransformReduce(seq, [x, x], 0, plus)).rejects.toThrow(/^transformFn:/);
    await expect(cpuCountIf(seq, x, plus)).rejects.toThrow(/^pred:/);
  });
});

describe('integer sums past 2^53 in f64', () => {
  // The integer plus adds in four f64 accumulators and wraps them once per 2^22 elements (2^20
  // each): long runs of the largest values must still wrap exactly (a missing wrap would lose bits
  // past 2^53).
  const n = 9 * (1 << 20) + 5;
  it.each(testBackends(pool))('u32 and i32 extremes over several 2^22 blocks on $name', async ({ backend }) => {
    const u = new Uint32Array(n).fill(0xffffffff);
    expect(await cpuReduce(backend, u, 7, plus)).toBe((7 - n + 2 ** 32 * 4) % 2 ** 32);
    const i = new Int32Array(n).fill(-(2 ** 31));
    // n is odd: n * -2^31 wraps to -2^31; plus 3.
    expect(await cpuReduce(backend, i, 3, plus)).toBe((-(2 ** 31) + 3) | 0);
    const mixed = Uint32Array.from({ length: n }, (_, k) => (k * 2654435761) >>> 0);
    let want = 0;
    for (const x of mixed) want = (want + x) >>> 0;
    expect(await cpuReduce(backend, mixed, 0, plus)).toBe(want);
  });
});
