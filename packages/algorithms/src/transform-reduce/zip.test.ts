import { ArgumentError, DeviceArray, plus } from '@webdpl/core';
import { describe, expect, it } from 'vitest';
import { zip } from '../common/zip';
import { isEngineVariant, itIf, parPool } from '../testing/device-data';
import { edgeSizes, floatTolerance, makeData, policyMatrix, TINY_TILE, testDevice } from '../testing/matrix';
import { transformReduce } from './index';

const DEFAULT_TILE = 256 * 4;
const sizes = edgeSizes([TINY_TILE, 32 * 2, DEFAULT_TILE, 256 * 8], [123457]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

/** The bounding box of points (x, y): [min x, max x, min y, max y] (exact in any order). */
function bboxRef(x: Float32Array, y: Float32Array): number[] {
  const b = [Infinity, -Infinity, Infinity, -Infinity];
  for (let i = 0; i < x.length; i++) {
    b[0] = Math.min(b[0]!, x[i]!);
    b[1] = Math.max(b[1]!, x[i]!);
    b[2] = Math.min(b[2]!, y[i]!);
    b[3] = Math.max(b[3]!, y[i]!);
  }
  return b;
}

const bboxOp = (a: number[], b: number[]) => [
  Math.min(a[0]!, b[0]!),
  Math.max(a[1]!, b[1]!),
  Math.min(a[2]!, b[2]!),
  Math.max(a[3]!, b[3]!),
];
const bboxInit = [Infinity, -Infinity, Infinity, -Infinity];

describe.each(matrix)('transformReduce over zip(...) and tuples under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);

  it('bounding box of zip(xs, ys); min, max and count of one u32 array; i32 dot product of 3 arrays', async () => {
    for (const n of variant ? sizes.filter((s) => s < 5000 || s % 7 === 0) : sizes) {
      const xs = makeData('f32', n, 'random') as Float32Array;
      const ys = makeData('f32', n, n % 3 === 0 ? 'constant' : 'random', n + 9) as Float32Array;
      const box = await transformReduce(policy, zip(xs, ys), bboxInit, bboxOp, (x: number, y: number) => [x, x, y, y]);
      expect(box, `bbox n=${n}`).toEqual(bboxRef(xs, ys));
      const u = makeData('u32', n, 'random', n + 4) as Uint32Array;
      let min = 0xffffffff;
      let max = 0;
      let odd = 5;
      for (const v of u) {
        min = Math.min(min, v);
        max = Math.max(max, v);
        odd += v & 1;
      }
      const mmc = await transformReduce(
        policy,
        u,
        [0xffffffff, 0, 5],
        (a: number[], b: number[]) => [Math.min(a[0]!, b[0]!), Math.max(a[1]!, b[1]!), a[2]! + b[2]!],
        (x: number) => [x, x, (x & 1) === 1],
      );
      expect(mmc, `min/max/count n=${n}`).toEqual([min, max, odd]);
      const a = makeData('i32', n, 'random', 3);
      const b = makeData('i32', n, 'small', 5);
      const c = makeData('i32', n, 'small', 6);
      let dot = 7;
      for (let i = 0; i < n; i++) dot = (dot + Math.imul(Math.imul(a[i]!, b[i]!), c[i]!)) | 0;
      const got = await transformReduce(policy, zip(a, b, c), 7, plus, (x: number, y: number, z: number) => x * y * z);
      expect(got, `dot of 3 n=${n}`).toBe(dot);
    }
  });

  it('a non-commutative tuple operator sees the elements in order (is-sorted as [first, last, sorted])', async () => {
    const op = (a: number[], b: number[]) => [a[0]!, b[1]!, a[2]! && b[2]! && a[1]! <= b[0]! ? 1 : 0];
    for (const n of [1, 2, 5, 17, 1000, 4097, 65537, 123457]) {
      const xs = new Uint32Array(n).map((_, i) => 3 * i + 1);
      const ys = makeData('f32', n, 'random', 3) as Float32Array;
      const got = await transformReduce(policy, zip(xs, ys), [0, 0, 1], op, (x: number, _y: number) => [x, x, 1]);
      // init [0, 0, 1] first: 0 <= x[0] keeps the flag.
      expect(got, `sorted n=${n}`).toEqual([0, 3 * n - 2, 1]);
      if (n > 1) {
        const k = (n * 7) >> 3;
        const swapped = xs.slice();
        [swapped[k - 1], swapped[k]] = [swapped[k]!, swapped[k - 1]!];
        const bad = await transformReduce(policy, zip(swapped, ys), [0, 0, 1], op, (x: number, _y: number) => [
          x,
          x,
          1,
        ]);
        expect(bad, `one swap n=${n}`).toEqual([0, swapped[n - 1], 0]);
      }
    }
  });

  itIf(!variant)('f32 sums, operators without identity, 1-tuples, index lambdas, 4 inputs', async () => {
    for (const n of [1, 2, 7, 64, 1001, 40003]) {
      const xs = makeData('f32', n, 'random') as Float32Array;
      const ys = makeData('f32', n, 'random', 11) as Float32Array;
      let sum = 0;
      let mag = 0;
      for (let i = 0; i < n; i++) {
        sum += xs[i]! * ys[i]!;
        mag += Math.abs(xs[i]! * ys[i]!);
      }
      const dot = await transformReduce(
        policy,
        zip(xs, ys),
        0,
        (a: number, b: number) => a + b,
        (x: number, y: number) => x * y,
      );
      expect(Math.abs(dot - sum), `f32 dot n=${n}`).toBeLessThanOrEqual(floatTolerance(n, mag));
      const one = await transformReduce(
        policy,
        zip(xs, ys),
        [0],
        (a: number[], b: number[]) => [a[0]! + b[0]!],
        (x: number, y: number) => [x * y],
      );
      expect(one.length).toBe(1);
      expect(Math.abs(one[0]! - sum), `1-tuple n=${n}`).toBeLessThanOrEqual(floatTolerance(n, mag));
      // Index lambda: the largest index where x > 0, and how many.
      let last = 0;
      let count = 0;
      xs.forEach((v, i) => {
        if (v > 0) {
          last = i;
          count++;
        }
      });
      const idx = await transformReduce(
        policy,
        xs,
        [0, 0],
        (a: number[], b: number[]) => [Math.max(a[0]!, b[0]!), a[1]! + b[1]!],
        (x: number, i: number) => [x > 0 ? i : 0, x > 0],
      );
      expect(idx, `index lambda n=${n}`).toEqual([last, count]);
      const u = makeData('u32', n, 'small', 2);
      let s4 = 0;
      for (let i = 0; i < n; i++) s4 = (s4 + u[i]! * 10) >>> 0;
      const four = await transformReduce(
        policy,
        zip(u, u, u, u),
        [0, 1],
        (a: number[], b: number[]) => [a[0]! + b[0]!, a[1]! * b[1]!],
        (p: number, q: number, r: number, s: number) => [p + 2 * q + 3 * r + 4 * s, 1],
      );
      expect(four, `4 inputs n=${n}`).toEqual([s4, 1]);
    }
  });

  itIf(gpu && !variant)('DeviceArrays (one at an unaligned offset) mixed with host arrays', async () => {
    const device = testDevice as NonNullable<typeof testDevice>;
    for (const n of [1, 5, 1000, 4099]) {
      const xs = makeData('f32', n, 'random') as Float32Array;
      const ys = makeData('f32', n, 'random', 12) as Float32Array;
      const big = DeviceArray.from(device, Float32Array.of(9, ...xs));
      const dy = DeviceArray.from(device, ys);
      const box = await transformReduce(policy, zip(big.view(1, n), dy), bboxInit, bboxOp, (x: number, y: number) => [
        x,
        x,
        y,
        y,
      ]);
      expect(box, `n=${n}`).toEqual(bboxRef(xs, ys));
      const box2 = await transformReduce(policy, zip(ys, big.view(1, n)), bboxInit, bboxOp, (x: number, y: number) => [
        y,
        y,
        x,
        x,
      ]);
      expect(box2, `host + device n=${n}`).toEqual(bboxRef(xs, ys));
      big.destroy();
      dy.destroy();
    }
  });

  it('n = 0 answers init (a copy of it for tuples)', async () => {
    const e = new Float32Array(0);
    const init = [1, 2];
    const got = await transformReduce(
      policy,
      zip(e, e),
      init,
      (a: number[], b: number[]) => [a[0]! + b[0]!, a[1]!],
      (x: number, y: number) => [x, y],
    );
    expect(got).toEqual([1, 2]);
    expect(got).not.toBe(init);
    expect(await transformReduce(policy, zip(e, e), 3, plus, (x: number, y: number) => x + y)).toBe(3);
  });
});

describe('transformReduce over zip(...): argument errors', () => {
  const seq = matrix[0]?.policy as (typeof matrix)[number]['policy'];
  const a = new Float32Array(4);
  const u = new Uint32Array(4);
  it('init, arities and tuple widths are ArgumentErrors naming the argument', async () => {
    const op2 = (p: number[], q: number[]) => [p[0]! + q[0]!, p[1]! + q[1]!];
    await expect(transformReduce(seq, zip(a, u), [0, 0, 0, 0, 0], op2, (x: number) => [x])).rejects.toThrow(/init/);
    await expect(transformReduce(seq, zip(a, u), ['x'] as never, op2, (x: number) => [x])).rejects.toThrow(
      ArgumentError,
    );
    await expect(transformReduce(seq, zip(a, u), [0, 0], op2, (x: number) => [x, x])).rejects.toThrow(
      /transformFn.*2 parameter/,
    );
    await expect(transformReduce(seq, zip(a, u), [0, 0], op2, (x: number, y: number) => [x, y, x])).rejects.toThrow(
      /transformFn.*tuple \[\.\.\] of 2.*tuple of 3/,
    );
    await expect(
      transformReduce(
        seq,
        zip(a, u),
        [0, 0],
        (p: number[]) => [p[0]!, p[1]!],
        (x: number, y: number) => [x, y],
      ),
    ).rejects.toThrow(/reduceOp.*2 parameter/);
    await expect(
      transformReduce(
        seq,
        zip(a, u),
        [0, 0],
        (p: number[], q: number[]) => [p[0]! + q[0]!],
        (x: number, y: number) => [x, y],
      ),
    ).rejects.toThrow(/reduceOp.*tuple \[\.\.\] of 2.*tuple of 1/);
    await expect(
      transformReduce(
        seq,
        zip(a, u),
        [0, 0],
        (p: number[], q: number[]) => [p[0]! + q[0]!, p[1]! * 0.5],
        (x: number, y: number) => [x, y],
      ),
    ).rejects.toThrow(/reduceOp.*result \[1\].*u32/);
    await expect(transformReduce(seq, zip(a, u), 0, plus, (x: number, y: number) => [x, y])).rejects.toThrow(
      /returning a number/,
    );
    await expect(transformReduce(seq, a, [0], plus, (x: number) => x * 2)).rejects.toThrow(
      /^init: expected a number \(transformFn returns a number, not a tuple\), got Array/,
    );
  });
});
