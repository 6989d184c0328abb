import { DeviceArray, type HostArray } from '@webdpl/core';
import { execution, makeDevicePolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { greater } from '../sort/index';
import { expectSameArray } from '../testing/arrays';
import { isEngineVariant, itIf, parPool, place } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, rng, TINY_SORT_TUNING, testDevice } from '../testing/matrix';
import { smallBindings } from '../testing/small-bindings';
import { merge, mergeByKey } from './index';

const sizes = edgeSizes([64, 128 * 8], [123457]);
const matrix = [...policyMatrix(TINY_SORT_TUNING), { name: 'par pool', policy: parPool, gpu: false }];

type T3 = 'u32' | 'i32' | 'f32';
type Before = (x: number, y: number) => boolean;

/** TypedArray#sort's order: -0 before +0, NaN last. */
const less: Before = (x, y) =>
  x < y || (x === 0 && y === 0 && Object.is(x, -0) && !Object.is(y, -0)) || (!Number.isNaN(x) && Number.isNaN(y));

/** The stable merge: a's element unless b's goes strictly before it. Returns [keys, values]. */
function mergeRef(a: HostArray, b: HostArray, va: Uint32Array, vb: Uint32Array, before: Before) {
  const n = a.length + b.length;
  const k = new (a.constructor as new (n: number) => HostArray)(n);
  const v = new Uint32Array(n);
  let i = 0;
  let j = 0;
  for (let o = 0; o < n; o++) {
    if (j < b.length && (i >= a.length || before(b[j] as number, a[i] as number))) {
      k[o] = b[j] as number;
      v[o] = vb[j++] as number;
    } else {
      k[o] = a[i] as number;
      v[o] = va[i++] as number;
    }
  }
  return [k, v] as const;
}

function sorted(type: T3, n: number, seed: number, before: Before): HostArray {
  const d = makeData(type, n, seed % 2 ? 'small' : 'random', seed);
  return d.sort((x, y) => (before(x, y) ? -1 : before(y, x) ? 1 : 0));
}

/** Values that tell where an element came from: a's index, or 2^31 + b's index. */
function tags(n: number, from: number): Uint32Array {
  return Uint32Array.from({ length: n }, (_, i) => from + i);
}

describe.each(matrix)('merge and mergeByKey under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);
  const types: readonly T3[] = variant ? ['f32'] : ['u32', 'i32', 'f32'];
  for (const type of types) {
    it(`${type} at edge sizes: keys alone and with values (stable), one side empty`, async () => {
      const r = rng(9);
      for (const [k, na] of sizes.entries()) {
        const nb = k % 4 === 3 ? 0 : (r() % (na + 40)) + (k % 3);
        const a = sorted(type, na, k + 1, less);
        const b = sorted(type, nb, k + 1000, less);
        if (type === 'f32' && na > 2 && nb > 2) {
          a[0] = -0;
          b[0] = 0;
          a[na - 1] = Number.NaN;
          b[nb - 1] = Number.NaN;
          a.sort();
          b.sort();
        }
        const va = tags(na, 0);
        const vb = tags(nb, 2 ** 31);
        const [wk, wv] = mergeRef(a, b, va, vb, less);
        const out = new (a.constructor as new (n: number) => HostArray)(na + nb + 1).fill(7);
        if (k % 2) {
          await merge(policy, a, b, out);
        } else {
          const vo = new Uint32Array(na + nb);
          await mergeByKey(policy, a, b, va, vb, out, vo);
          expectSameArray(vo, wv, `values na=${na} nb=${nb}`);
        }
        expectSameArray(out.subarray(0, na + nb), wk, `keys na=${na} nb=${nb}`);
        expect(out[na + nb], 'past the end untouched').toBe(7);
      }
    });
  }

  itIf(!variant)('greater and a user comparator with many ties (stability), values of another type', async () => {
    const desc: Before = (x, y) =>
      x > y || (!Number.isNaN(x) && Number.isNaN(y)) || (x === 0 && y === 0 && Object.is(y, -0) && !Object.is(x, -0));
    const a = sorted('f32', 3000, 5, desc);
    const b = sorted('f32', 2000, 6, desc);
    const out = new Float32Array(5000);
    await merge(policy, a, b, out, greater);
    expectSameArray(out, mergeRef(a, b, tags(3000, 0), tags(2000, 0), desc)[0], 'greater');
    const low: Before = (x, y) => (x & 0xff) < (y & 0xff);
    const ka = sorted('u32', 1500, 7, low);
    const kb = sorted('u32', 2500, 8, low);
    const va = Float32Array.from(tags(1500, 0), (x) => x + 0.5);
    const vb = Float32Array.from(tags(2500, 100000), (x) => x + 0.5);
    const ko = new Uint32Array(4000);
    const vo = new Float32Array(4000);
    await mergeByKey(policy, ka, kb, va, vb, ko, vo, (x: number, y: number) => (x & 0xff) < (y & 0xff));
    const [wk, wv] = mergeRef(ka, kb, new Uint32Array(va.buffer), new Uint32Array(vb.buffer), low);
    expectSameArray(ko, wk, 'keys by the low byte');
    expectSameArray(new Uint32Array(vo.buffer), wv, 'values kept in order among ties');
    // Merging an array with itself.
    const s = sorted('i32', 700, 9, less);
    const twice = new Int32Array(1400);
    await merge(policy, s, s, twice);
    expectSameArray(twice, mergeRef(s, s, tags(700, 0), tags(700, 0), less)[0], 'with itself');
  });

  if (gpu && testDevice && !name.includes('no-subgroups')) {
    const device = testDevice;
    it('DeviceArray views at offsets, outputs in the inputs buffer, padding untouched', async () => {
      for (const [na, nb] of [
        [1, 0],
        [0, 3],
        [1, 1],
        [5, 64],
        [300, 257],
        [2000, 3001],
      ] as const) {
        const a = sorted('i32', na, na + 1, less);
        const b = sorted('i32', nb, nb + 2, less);
        const [wk, wv] = mergeRef(a, b, tags(na, 0), tags(nb, 5000), less);
        for (const off of [0, 1, 3]) {
          const pa = place(device, a, off);
          const pb = place(device, b, off + 1);
          const po = place(device, new Int32Array(na + nb), (off + 2) % 4);
          await merge(policy, pa.view, pb.view, po.view);
          expectSameArray(await po.read(), wk, `na=${na} nb=${nb} @${off}`);
          // Keys and output in one buffer: [a | out]; values host arrays.
          const both = place(device, Int32Array.from([...a, ...new Int32Array(na + nb)]), off);
          const vo = new Uint32Array(na + nb);
          await mergeByKey(
            policy,
            both.view.view(0, na),
            b,
            tags(na, 0),
            tags(nb, 5000),
            both.view.view(na, na + nb),
            vo,
          );
          expectSameArray((await both.read()).subarray(na), wk, `same buffer na=${na} nb=${nb}`);
          expectSameArray(vo, wv, `values na=${na} nb=${nb}`);
          for (const x of [pa, pb, po, both]) x.parent.destroy();
        }
      }
    });
  }
});

describe('merge beyond 65,535 workgroups', () => {
  if (testDevice) {
    const device = testDevice;
    it('tiny tiles: a 2-D grid of merge tiles (2^22 + 2 keys)', async () => {
      const policy = makeDevicePolicy(device, { fallback: 'error', tuning: TINY_SORT_TUNING });
      const a = sorted('u32', 2 ** 21 + 3, 77, less);
      const b = sorted('u32', 2 ** 21 - 1, 78, less);
      const out = new Uint32Array(a.length + b.length);
      await merge(policy, a, b, out);
      const want = new Uint32Array(out.length);
      want.set(a);
      want.set(b, a.length);
      expectSameArray(out, want.sort(), 'merged');
    });
  }
});

describe.skipIf(!testDevice)('merge beyond one storage binding (4 KiB bindings)', () => {
  it('windowed merges: keys alone and pairs, unaligned views, one side empty, a user comparator', async () => {
    const { device, largest } = await smallBindings(4096);
    try {
      const strict = makeDevicePolicy(device, { fallback: 'error' });
      // 1024 keys per binding: 2.3 + 1.7 bindings, ties across a and b, -0 / NaN at the ends.
      const a = sorted('f32', 2355, 5, less);
      const b = sorted('f32', 1741, 6, less);
      for (const x of [a, b]) {
        x[0] = -0;
        x[x.length - 1] = Number.NaN;
        x.sort();
      }
      const va = tags(a.length, 0);
      const vb = tags(b.length, 2 ** 31);
      const [wk, wv] = mergeRef(a, b, va, vb, less);
      const out = new Float32Array(a.length + b.length);
      const vo = new Uint32Array(out.length);
      await mergeByKey(strict, a, b, va, vb, out, vo);
      expectSameArray(out, wk, 'keys');
      expectSameArray(vo, wv, 'values');
      // DeviceArrays at unaligned offsets, the output in the same buffer as b.
      const n = a.length + b.length;
      const pa = DeviceArray.from(device, new Float32Array(a.length + 5));
      const da = pa.view(5, a.length);
      const both = DeviceArray.from(device, new Float32Array(b.length + n + 3));
      da.write(a as Float32Array);
      both.view(0, b.length).write(b as Float32Array);
      await merge(strict, da, both.view(0, b.length), both.view(b.length + 3, n));
      const got = await both.read();
      expectSameArray(got.subarray(b.length + 3), wk, 'device views');
      expectSameArray(got.subarray(0, b.length), b, 'b untouched');
      pa.destroy();
      both.destroy();
      // One side empty: a copy, in windows.
      const o2 = new Float32Array(b.length);
      await merge(strict, new Float32Array(0), b, o2);
      expectSameArray(o2, b, 'a empty');
      // A user comparator (descending by the low byte, many ties).
      const low = (x: number, y: number) => (x & 255) > (y & 255);
      const ua = sorted('u32', 3000, 7, low);
      const ub = sorted('u32', 1100, 8, low);
      const [uk] = mergeRef(ua, ub, tags(ua.length, 0), tags(ub.length, 0), low);
      const uo = new Uint32Array(ua.length + ub.length);
      await merge(strict, ua, ub, uo, low);
      expectSameArray(uo, uk, 'user comparator');
      expect(largest()).toBeLessThanOrEqual(4096);
    } finally {
      device.destroy();
    }
  }, 300_000);
});

describe('merge and mergeByKey: bad input', () => {
  const seq = execution.seq;
  it('names the argument and leaves the data untouched', async () => {
    const a = Uint32Array.from([1, 2, 3]);
    const b = Uint32Array.from([2, 4]);
    const out = new Uint32Array(5).fill(9);
    await expect(merge(seq, [1] as unknown as Uint32Array, b, out)).rejects.toThrow(/a: expected/);
    await expect(merge(seq, a, Int32Array.from([1]), out)).rejects.toThrow(/b: expected an array of u32/);
    await expect(merge(seq, a, b, new Uint32Array(4))).rejects.toThrow(/output: expected at least 5/);
    await expect(merge(seq, a, b, new Float32Array(5))).rejects.toThrow(/output: expected an array of u32/);
    await expect(merge(seq, a, b, out, (x: number, y: number) => x - y)).rejects.toThrow(/comp/);
    const all = new Uint32Array(8);
    await expect(merge(seq, all.subarray(0, 3), b, all.subarray(2))).rejects.toThrow(
      /output: expected memory that does not overlap a/,
    );
    const v = new Uint32Array(3);
    await expect(mergeByKey(seq, a, b, v, new Uint32Array(3), out, new Uint32Array(5))).rejects.toThrow(
      /valuesB: expected 2 elements/,
    );
    await expect(mergeByKey(seq, a, b, v, new Float32Array(2), out, new Uint32Array(5))).rejects.toThrow(
      /valuesB: expected an array of u32/,
    );
    await expect(mergeByKey(seq, a, b, v, new Uint32Array(2), out, out)).rejects.toThrow(
      /valuesOut: expected memory that does not overlap keysOut/,
    );
    await expect(merge(undefined as never, a, b, out)).rejects.toThrow(/policy/);
    // A plain JS comparator that throws midway: the merge stops, nothing reaches the outputs.
    const boom = (x: number, y: number) => {
      if (x === 4) throw new Error('boom');
      return x < y;
    };
    await expect(merge(seq, a, b, out, boom)).rejects.toThrow(/boom/);
    const vOut = new Uint32Array(5).fill(8);
    await expect(mergeByKey(seq, a, b, v, new Uint32Array(2), out, vOut, boom)).rejects.toThrow(/boom/);
    expect([...vOut]).toEqual([8, 8, 8, 8, 8]);
    expect([...out]).toEqual([9, 9, 9, 9, 9]);
    expect([...a, ...b]).toEqual([1, 2, 3, 2, 4]);
  });

  if (testDevice) {
    const device = testDevice;
    it('DeviceArrays need a device policy', async () => {
      const d = DeviceArray.from(device, Uint32Array.from([1, 3]));
      const o = new Uint32Array(4);
      await expect(merge(execution.par, d, d, o)).rejects.toThrow(/policy/);
      await merge(execution.auto, d, Uint32Array.from([2, 3]), o);
      expect([...o]).toEqual([1, 2, 3, 3]);
      d.destroy();
    });
  }
});
