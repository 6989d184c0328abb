import { DeviceArray, type HostArray } from '@webdpl/core';
import { execution } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { greater } from '../sort/index';
import { expectSameArray } from '../testing/arrays';
import { isEngineVariant, itIf, parPool, place } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, rng, TINY_SORT_TUNING, testDevice } from '../testing/matrix';
import { setDifference, setIntersection, setSymmetricDifference, setUnion } from './index';

const sizes = edgeSizes([64, 128 * 4], [40001]);
const matrix = [...policyMatrix(TINY_SORT_TUNING), { name: 'par pool', policy: parPool, gpu: false }];

type T3 = 'u32' | 'i32' | 'f32';
type Before = (x: number, y: number) => boolean;
type Op = 'union' | 'intersection' | 'difference' | 'symmetricDifference';

const FRONTS = {
  union: setUnion,
  intersection: setIntersection,
  difference: setDifference,
  symmetricDifference: setSymmetricDifference,
};
const OPS = Object.keys(FRONTS) as Op[];

const less: Before = (x, y) =>
  x < y || (x === 0 && y === 0 && Object.is(x, -0) && !Object.is(y, -0)) || (!Number.isNaN(x) && Number.isNaN(y));

/**
 * The reference, by multiplicities: for each class of equivalent elements (m in a, n in b), the
 * elements std names, a's first.
 */
function setRef(op: Op, a: HostArray, b: HostArray, before: Before): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    // The next class: the least of a[i], b[j].
    const v =
      j >= b.length || (i < a.length && !before(b[j] as number, a[i] as number)) ? (a[i] as number) : (b[j] as number);
    const eq = (x: number) => !before(x, v) && !before(v, x);
    const i0 = i;
    const j0 = j;
    while (i < a.length && eq(a[i] as number)) i++;
    while (j < b.length && eq(b[j] as number)) j++;
    const ca = Array.from(a.subarray(i0, i));
    const cb = Array.from(b.subarray(j0, j));
    const m = ca.length;
    const n = cb.length;
    if (op === 'union') out.push(...ca, ...cb.slice(m));
    else if (op === 'intersection') out.push(...ca.slice(0, Math.min(m, n)));
    else if (op === 'difference') out.push(...ca.slice(n));
    else out.push(...(m > n ? ca.slice(n) : cb.slice(m)));
  }
  return out;
}

function sorted(type: T3, n: number, seed: number, before: Before, spread: number): HostArray {
  const r = rng(seed);
  const d = makeData(type, n, 'small', seed);
  for (let i = 0; i < n; i++)
    d[i] = type === 'f32' ? (r() % spread) * 0.25 - 2 : (r() % spread) + (type === 'i32' ? -5 : 0);
  return d.sort((x, y) => (before(x, y) ? -1 : before(y, x) ? 1 : 0));
}

describe.each(matrix)('set operations under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);
  const types: readonly T3[] = variant ? ['i32'] : ['u32', 'i32', 'f32'];
  for (const type of types) {
    it(`${type} at edge sizes: all four operations, repeated elements, empty sides`, async () => {
      const r = rng(21);
      for (const [k, na] of sizes.entries()) {
        const nb = k % 5 === 4 ? 0 : r() % (na + 30);
        const spread = 1 + (k % 3 === 0 ? 3 : na);
        const a = sorted(type, na, k + 1, less, spread);
        const b = sorted(type, nb, k + 500, less, spread);
        const op = OPS[k % 4] as Op;
        const want = setRef(op, a, b, less);
        const out = new (a.constructor as new (n: number) => HostArray)(na + nb + 1).fill(7);
        const count = await FRONTS[op](policy, a, b, out);
        expect(count, `${op} count na=${na} nb=${nb}`).toBe(want.length);
        expectSameArray(out.subarray(0, count), want, `${op} na=${na} nb=${nb}`);
        expect(out[count], 'past the result untouched').toBe(7);
      }
    });
  }

  itIf(!variant)('f32 -0/+0 and NaN classes, greater, a user comparator, tight outputs', async () => {
    const a = Float32Array.from([-0, 0, 0, 1, Number.NaN, Number.NaN]);
    const b = Float32Array.from([0, 1, 1, Number.NaN]);
    for (const op of OPS) {
      const want = setRef(op, a, b, less);
      const out = new Float32Array(op === 'intersection' ? 4 : op === 'difference' ? 6 : 10);
      const count = await FRONTS[op](policy, a, b, out);
      expectSameArray(out.subarray(0, count), Float32Array.from(want), `${op} -0/NaN`);
    }
    const desc: Before = (x, y) => x > y;
    const da = Int32Array.from([9, 7, 7, 3, -1]);
    const db = Int32Array.from([8, 7, 3, 3, -2]);
    const out = new Int32Array(10);
    const n = await setUnion(policy, da, db, out, greater);
    expectSameArray(out.subarray(0, n), Int32Array.from(setRef('union', da, db, desc)), 'greater');
    // By the tens digit: 11 and 15 are equivalent; which of them is written shows std's choice.
    const tens: Before = (x, y) => Math.floor(x / 10) < Math.floor(y / 10);
    const ta = Uint32Array.from([11, 15, 17, 23, 40]);
    const tb = Uint32Array.from([12, 29, 28, 41, 44]);
    for (const op of OPS) {
      const o = new Uint32Array(10);
      const c = await FRONTS[op](policy, ta, tb, o, (x: number, y: number) => Math.floor(x / 10) < Math.floor(y / 10));
      expectSameArray(o.subarray(0, c), Uint32Array.from(setRef(op, ta, tb, tens)), `${op} by tens`);
    }
  });

  if (gpu && testDevice && !name.includes('no-subgroups')) {
    const device = testDevice;
    it('DeviceArray views at offsets, padding untouched', async () => {
      for (const [na, nb] of [
        [1, 0],
        [0, 4],
        [5, 64],
        [300, 257],
        [3001, 2000],
      ] as const) {
        const a = sorted('u32', na, na + 3, less, 50);
        const b = sorted('u32', nb, nb + 4, less, 50);
        for (const [q, op] of OPS.entries()) {
          const off = q % 3;
          const pa = place(device, a, off);
          const pb = place(device, b, off + 1);
          const po = place(device, new Uint32Array(na + nb), (off + 2) % 4);
          const count = await FRONTS[op](policy, pa.view, pb.view, po.view);
          const want = setRef(op, a, b, less);
          expect(count).toBe(want.length);
          expectSameArray((await po.read()).subarray(0, count), want, `${op} na=${na} nb=${nb} @${off}`);
          for (const x of [pa, pb, po]) x.parent.destroy();
        }
      }
    });
  }
});

describe('set operations: bad input', () => {
  const seq = execution.seq;
  it('names the argument and leaves the data untouched', async () => {
    const a = Uint32Array.from([1, 2, 3]);
    const b = Uint32Array.from([2, 4]);
    const out = new Uint32Array(5).fill(9);
    await expect(setUnion(seq, [1] as unknown as Uint32Array, b, out)).rejects.toThrow(/a: expected/);
    await expect(setUnion(seq, a, Float32Array.from([1]), out)).rejects.toThrow(/b: expected an array of u32/);
    await expect(setUnion(seq, a, b, new Uint32Array(4))).rejects.toThrow(/output: expected at least 5/);
    await expect(setIntersection(seq, a, b, new Uint32Array(1))).rejects.toThrow(/output: expected at least 2/);
    await expect(setDifference(seq, a, b, new Uint32Array(2))).rejects.toThrow(/output: expected at least 3/);
    await expect(setSymmetricDifference(seq, a, b, new Int32Array(5))).rejects.toThrow(
      /output: expected an array of u32/,
    );
    await expect(setUnion(seq, a, b, out, (x: number, y: number) => x - y)).rejects.toThrow(/comp/);
    const all = new Uint32Array(8);
    await expect(setUnion(seq, all.subarray(0, 3), b, all.subarray(2))).rejects.toThrow(
      /output: expected memory that does not overlap a/,
    );
    await expect(setUnion(undefined as never, a, b, out)).rejects.toThrow(/policy/);
    expect([...out]).toEqual([9, 9, 9, 9, 9]);
    expect([...a, ...b]).toEqual([1, 2, 3, 2, 4]);
  });

  if (testDevice) {
    const device = testDevice;
    it('DeviceArrays need a device policy', async () => {
      const d = DeviceArray.from(device, Uint32Array.from([1, 3]));
      const o = new Uint32Array(4);
      await expect(setUnion(execution.par, d, d, o)).rejects.toThrow(/policy/);
      expect(await setUnion(execution.auto, d, Uint32Array.from([2, 3]), o)).toBe(3);
      expect([...o.subarray(0, 3)]).toEqual([1, 2, 3]);
      d.destroy();
    });
  }
});
