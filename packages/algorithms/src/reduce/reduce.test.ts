import { bitAnd, bitOr, bitXor, lastNonZero, maximum, minimum, plus } from '@webdpl/core';
import { describe, expect, it } from 'vitest';
import { expectSameArray } from '../testing/assert';
import { edgeSizes, floatTolerance, makeData, policyMatrix, rng, TINY_TILE } from '../testing/matrix';
import { reduce } from './index';

const DEFAULT_TILE = 4 * 256 * 4;
const sizes = edgeSizes([TINY_TILE, DEFAULT_TILE, 32 * 2], [123457]);

function refReduce(data: ArrayLike<number>, init: number, f: (a: number, b: number) => number): number {
  let acc = init;
  for (let i = 0; i < data.length; i++) acc = f(acc, data[i] as number);
  return acc;
}

describe.each(policyMatrix())('reduce under $name', ({ policy }) => {
  for (const type of ['u32', 'i32', 'f32'] as const) {
    it(`plus<${type}> at edge sizes, random and constant data`, async () => {
      for (const n of sizes) {
        for (const kind of n < 5000 || n === 123457 ? (['random', 'constant'] as const) : (['random'] as const)) {
          const data = makeData(type, n, kind);
          const copy = data.slice();
          const got = await reduce(policy, data, 5);
          expectSameArray(data, copy, 'input untouched');
          if (type === 'f32') {
            let want = 5;
            let mag = 5;
            for (const x of data) {
              want += x;
              mag += Math.abs(x);
            }
            expect(Math.abs(got - want), `n=${n} ${kind}`).toBeLessThanOrEqual(floatTolerance(n, mag));
          } else {
            expect(got, `n=${n} ${kind}`).toBe(
              refReduce(data, 5, plus.js([type, type]) as (a: number, b: number) => number),
            );
          }
        }
      }
    });
  }

  it('bitwise and max/min over u32 and i32 (the GPU folds several workgroups with atomics where the identity is 0)', async () => {
    for (const n of [1, 33, TINY_TILE * 7 + 3, 5000, 70001]) {
      for (const type of ['u32', 'i32'] as const) {
        const data = makeData(type, n, 'random');
        // Sparse bits too, so or/and/xor results are not all-ones or zero at every size.
        const sparse = data.map((x, i) => (i % 97 === 0 ? x : x & 0x0f0f0001));
        for (const op of [bitOr, bitXor, bitAnd, maximum, minimum]) {
          const f = op.js([type, type]) as (a: number, b: number) => number;
          for (const d of [data, sparse]) {
            const init = op === bitAnd ? (type === 'u32' ? 0xfffffff7 : -9) : 3;
            expect(await reduce(policy, d, init, op), `${op.name}<${type}> n=${n}`).toBe(refReduce(d, init, f));
          }
        }
      }
    }
  });

  it('maximum<i32>, minimum<f32> with NaN and -0, and a non-commutative operator', async () => {
    for (const n of [1, 7, 100, TINY_TILE + 1, 5000, 70001]) {
      const di = makeData('i32', n, 'random');
      expect(await reduce(policy, di, undefined, maximum)).toBe(refReduce(di, -(2 ** 31), Math.max));
      const df = makeData('f32', n, 'random');
      expect(await reduce(policy, df, undefined, minimum)).toBe(Math.fround(refReduce(df, Infinity, Math.min)));
      const du = makeData('u32', n, 'random').map((x) => (x % 5 === 0 ? x : 0));
      expect(await reduce(policy, du, 0, lastNonZero), `lastNonZero n=${n}`).toBe(
        refReduce(du, 0, (a, b) => (b !== 0 ? b : a)),
      );
    }
    const special = Float32Array.from([3, -0, 0, 2]);
    expect(Object.is(await reduce(policy, special, undefined, minimum), -0)).toBe(true);
    special[2] = Number.NaN;
    expect(await reduce(policy, special, undefined, minimum)).toBeNaN();
    expect(await reduce(policy, special, undefined, maximum)).toBeNaN();
  });

  it('random sizes with fixed seeds', async () => {
    const r = rng(42);
    for (let k = 0; k < 4; k++) {
      const n = r() % 300_000;
      const data = makeData('u32', n, 'random', k);
      expect(await reduce(policy, data), `n=${n}`).toBe(refReduce(data, 0, (a, b) => (a + b) >>> 0));
    }
  });
});

describe.each(policyMatrix().filter((p) => p.name === 'device' || p.name === 'par'))(
  'reduce at 2^24+1 under $name',
  ({ policy }) => {
    it('plus<u32>', async () => {
      const n = 2 ** 24 + 1;
      const data = makeData('u32', n, 'random');
      expect(await reduce(policy, data)).toBe(refReduce(data, 0, (a, b) => (a + b) >>> 0));
    });
  },
);

describe('reduce: bad input', () => {
  it('names the argument', async () => {
    const { execution } = await import('@webdpl/policies');
    await expect(reduce(execution.seq, [1, 2, 3] as unknown as Uint32Array)).rejects.toThrow(
      /input: expected a Uint32Array/,
    );
    await expect(reduce({} as never, new Uint32Array(3))).rejects.toThrow(/policy: expected an execution policy/);
    await expect(reduce(execution.seq, new Uint32Array(3), 'x' as unknown as number)).rejects.toThrow(
      /init: expected a number/,
    );
    await expect(reduce(execution.seq, new Uint32Array(3), 0, 42 as never)).rejects.toThrow(/op/);
  });
});
