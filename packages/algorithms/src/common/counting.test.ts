import { lambda, maximum, plus } from '@webdpl/core';
import { execution } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { copyIf, removeIf } from '../compaction/index';
import { gatherIf, scatterIf } from '../gather/index';
import { reduce } from '../reduce/index';
import { expectSameArray } from '../testing/arrays';
import { isEngineVariant, parPool } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, randomSizes, TINY_SCAN_TILE, TINY_TILE } from '../testing/matrix';
import { transformReduce } from '../transform-reduce/index';
import { counting } from './counting';

const sizes = edgeSizes([TINY_TILE, TINY_SCAN_TILE, 256 * 16], [123457, ...randomSizes(2, 15)]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

/** Sum of 0..n-1 wrapped to u32 (exact in f64 for these n). */
const triangle = (n: number) => (n < 2 ? 0 : ((n * (n - 1)) / 2) % 2 ** 32);

describe.each(matrix)('counting(n) as an input under $name', ({ name, policy }) => {
  const variant = isEngineVariant(name);
  it('reduce and transformReduce over counting(n) at edge sizes', async () => {
    for (const n of sizes) {
      expect(await reduce(policy, counting(n)), `reduce n=${n}`).toBe(triangle(n));
      if (variant && n % 2 === 0 && n > 16) continue;
      expect(await reduce(policy, counting(n), 7, maximum), `max n=${n}`).toBe(Math.max(7, n - 1));
      // Sum of squares mod 2^32, and a count by predicate (a bool transform counts 1/0).
      let sq = 0;
      for (let i = 0; i < n; i++) sq = (sq + Math.imul(i, i)) >>> 0;
      expect(await transformReduce(policy, counting(n), 0, plus, (i: number) => i * i)).toBe(sq);
      const thirds = Math.ceil(n / 3);
      expect(await transformReduce(policy, counting(n), 0, plus, (i: number) => i % 3 === 0), `count n=${n}`).toBe(
        thirds,
      );
    }
  });

  it('copyIf over counting(n) (indices where a predicate holds), with a stencil, and removeIf', async () => {
    const every3 = lambda((i: number) => i % 3 === 0);
    for (const n of sizes) {
      if (variant && n % 2 === 0 && n > 16) continue;
      const out = new Uint32Array(n + 1).fill(9);
      const want = Array.from({ length: n }, (_, i) => i).filter((i) => i % 3 === 0);
      const k = await copyIf(policy, counting(n), out, every3);
      expect(k, `copyIf n=${n}`).toBe(want.length);
      expectSameArray(out.subarray(0, k), want, `copyIf n=${n}`);
      expectSameArray(out.subarray(k), new Array(n + 1 - k).fill(9), 'rest untouched');
      // Indices of the non-zero stencil elements (Thrust's "indices of non-zeros" idiom).
      const st = Int32Array.from({ length: n }, (_, i) => (i % 5 === 2 ? 0 : i - 7));
      const nz = Array.from({ length: n }, (_, i) => i).filter((i) => st[i] !== 0);
      const got = new Uint32Array(n);
      const c = await copyIf(policy, counting(n), st, got);
      expect(c).toBe(nz.length);
      expectSameArray(got.subarray(0, c), nz, `stencil n=${n}`);
      const zeros = Array.from({ length: n }, (_, i) => i).filter((i) => st[i] === 0);
      const c2 = await removeIf(policy, counting(n), st, got);
      expectSameArray(got.subarray(0, c2), zeros, `removeIf n=${n}`);
    }
  });
});

describe.each(matrix)('counting(n) as a stencil under $name', ({ name, policy }) => {
  const variant = isEngineVariant(name);
  it('copyIf / removeIf / gatherIf / scatterIf with counting(n) as the stencil (the predicate gets the index)', async () => {
    const every3 = lambda((i: number) => i % 3 === 0);
    for (const n of sizes) {
      if (variant && n % 2 === 0 && n > 16) continue;
      const data = makeData('f32', n, 'random', n + 3);
      const kept = new Float32Array(n).fill(7);
      const k = await copyIf(policy, data, counting(n), kept, every3);
      const want = Array.from(data).filter((_, i) => i % 3 === 0);
      expect(k, `copyIf n=${n}`).toBe(want.length);
      expectSameArray(kept.subarray(0, k), want, `copyIf n=${n}`);
      // Default predicate: the index's truthiness (all but element 0).
      const rest = new Float32Array(n);
      expect(await removeIf(policy, data, counting(n), rest)).toBe(Math.min(n, 1));
      expectSameArray(rest.subarray(0, Math.min(n, 1)), Array.from(data.subarray(0, 1)), `removeIf n=${n}`);
      // gatherIf with a reversing map where the index is even; scatterIf likewise.
      const map = Uint32Array.from({ length: n }, (_, i) => n - 1 - i);
      const g = new Float32Array(n).fill(7);
      await gatherIf(policy, map, counting(n), data, g, (i: number) => i % 2 === 0);
      expectSameArray(
        g,
        Float32Array.from({ length: n }, (_, i) => (i % 2 === 0 ? (data[n - 1 - i] as number) : 7)),
        `gatherIf n=${n}`,
      );
      const sc = new Float32Array(n).fill(7);
      await scatterIf(policy, data, map, counting(n), sc, (i: number) => i % 2 === 0);
      const wantSc = new Float32Array(n).fill(7);
      for (let i = 0; i < n; i += 2) wantSc[n - 1 - i] = data[i] as number;
      expectSameArray(sc, wantSc, `scatterIf n=${n}`);
    }
  });
});

describe('counting(n): bad input', () => {
  const seq = execution.seq;
  it('names the argument', async () => {
    const out = new Int32Array(4).fill(9);
    await expect(copyIf(seq, counting(4), out, (i: number) => i > 1)).rejects.toThrow(
      /output: expected an array of u32/,
    );
    await expect(copyIf(seq, counting(4), new Uint32Array(3), new Uint32Array(4))).rejects.toThrow(
      /stencil: expected 4 elements \(the length of input\)/,
    );
    await expect(reduce(seq, counting(4), 'x' as never)).rejects.toThrow(/init/);
    await expect(removeIf(seq, counting(4) as never, (i: number) => i > 1)).rejects.toThrow(/data: expected/);
    expect([...out]).toEqual([9, 9, 9, 9]);
    expect(await reduce(seq, counting(0), 5)).toBe(5);
    await expect(copyIf(seq, new Uint32Array(4), counting(3), new Uint32Array(4))).rejects.toThrow(
      /stencil: expected 4 elements \(the length of input\), got 3/,
    );
    await expect(
      gatherIf(seq, new Uint32Array(4), counting(5), new Uint32Array(4), new Uint32Array(4)),
    ).rejects.toThrow(/stencil: expected 4 elements \(the length of map\), got 5/);
  });
});
