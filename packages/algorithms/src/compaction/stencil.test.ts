import { type HostArray, lambda } from '@webdpl/core';
import { execution } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { scanDefaults } from '../engines/scan/tuning';
import { expectSameArray } from '../testing/arrays';
import { isEngineVariant, parPool, place } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, randomSizes, rng, TINY_SCAN_TILE, testDevice } from '../testing/matrix';
import { copyIf, removeIf } from './index';

const DEFAULT_TILE = testDevice
  ? scanDefaults(testDevice, 'compaction').workgroupSize * scanDefaults(testDevice, 'compaction').itemsPerThread
  : 256 * 24;
const sizes = edgeSizes([TINY_SCAN_TILE, DEFAULT_TILE], [123457, ...randomSizes(2, 15)]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

type T3 = 'u32' | 'i32' | 'f32';

/** A stencil of `type`: about a third zero, negative i32 values, NaN in f32 (falsy). */
function stencilOf(type: T3, n: number, seed: number, keep: 'none' | 'some' | 'all' = 'some'): HostArray {
  const r = rng(seed);
  const s = type === 'u32' ? new Uint32Array(n) : type === 'i32' ? new Int32Array(n) : new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const v = keep === 'none' ? 0 : keep === 'all' ? 1 + (r() % 3) : r() % 3;
    s[i] = type === 'f32' && v === 0 && i % 2 ? Number.NaN : type === 'i32' ? -v : v;
  }
  return s;
}

/** The elements of `data` whose stencil passes `pred` (or fails it, `negate`), in order. */
function ref(data: HostArray, st: HostArray, pred: (s: number) => unknown, negate: boolean): number[] {
  const out: number[] = [];
  for (let i = 0; i < data.length; i++) if (!!pred(st[i] as number) !== negate) out.push(data[i] as number);
  return out;
}

const truthy = (s: number) => s;
const below = lambda((s: number) => s < -1);

describe.each(matrix)('copyIf / removeIf with a stencil under $name', ({ name, policy }) => {
  const variant = isEngineVariant(name);
  const pairs: [T3, T3][] = variant
    ? [['u32', 'f32']]
    : [
        ['u32', 'f32'],
        ['i32', 'u32'],
        ['f32', 'i32'],
      ];
  for (const [type, st] of pairs) {
    it(`${type} data, ${st} stencil, at edge sizes: default predicate and a lambda; none, some, all kept`, async () => {
      for (const n of sizes) {
        const keeps = n % 7 === 3 ? (['none', 'some', 'all'] as const) : (['some'] as const);
        for (const keep of keeps) {
          const data = makeData(type, n, 'random', n + 1);
          const copy = data.slice();
          const s = stencilOf(st, n, n + 2, keep);
          const sCopy = s.slice();
          const out = data.slice().fill(7);
          const want = ref(data, s, truthy, false);
          const count = await copyIf(policy, data, s, out);
          expect(count, `copyIf n=${n} ${keep}`).toBe(want.length);
          expectSameArray(out.subarray(0, count), want, `copyIf n=${n} ${keep}`);
          expectSameArray(out.subarray(count), new Array(n - count).fill(7), 'rest untouched');
          expectSameArray(data, copy, 'input untouched');
          expectSameArray(s, sCopy, 'stencil untouched');

          const out2 = data.slice().fill(7);
          const pred = st === 'u32' ? lambda((v: number) => v > 1) : below;
          const jsPred = st === 'u32' ? (v: number) => v > 1 : (v: number) => v < -1;
          const want2 = ref(data, s, jsPred, true);
          const count2 = await removeIf(policy, data, s, out2, pred);
          expect(count2, `removeIf n=${n} ${keep}`).toBe(want2.length);
          expectSameArray(out2.subarray(0, count2), want2, `removeIf n=${n} ${keep}`);
          expectSameArray(data, copy, 'removeIf leaves its input');
        }
      }
    });
  }

  it('an output exactly as long as the count, and one too short (untouched)', async () => {
    for (const n of [5, 300, 5000]) {
      const data = makeData('u32', n, 'random');
      const s = stencilOf('u32', n, 3);
      const want = ref(data, s, truthy, false);
      const exact = new Uint32Array(want.length);
      expect(await copyIf(policy, data, s, exact)).toBe(want.length);
      expectSameArray(exact, want, `exact n=${n}`);
      const short = new Uint32Array(want.length - 1).fill(9);
      await expect(copyIf(policy, data, s, short)).rejects.toThrow(/output: expected at least/);
      expectSameArray(short, new Array(short.length).fill(9), 'too short: untouched');
    }
  });

  if (testDevice && name.startsWith('device')) {
    const device = testDevice;
    it('DeviceArray views at offsets, a stencil in the output buffer', async () => {
      for (const n of [1, 7, 129, 4097, 30001]) {
        const data = makeData('i32', n, 'random');
        const s = stencilOf('f32', n, n);
        const want = ref(data, s, truthy, false);
        const din = place(device, data, 1);
        const dst = place(device, s, 3);
        const dout = place(device, new Int32Array(n), 2);
        const count = await copyIf(policy, din.view, dst.view, dout.view);
        expect(count).toBe(want.length);
        expectSameArray((await dout.read()).subarray(0, count), want, `device n=${n}`);
        // Stencil and output in one buffer (the engine reads the stencil from a copy).
        const fdata = makeData('f32', n, 'random');
        const both = place(device, new Float32Array([...s, ...new Float32Array(n)]), 1);
        const k = await removeIf(policy, fdata, both.view.view(0, n), both.view.view(n, n));
        const wantRemoved = ref(fdata, s, truthy, true);
        expect(k).toBe(wantRemoved.length);
        const got = await both.read();
        expectSameArray(got.subarray(n, n + k), wantRemoved, `same buffer n=${n}`);
        expectSameArray(got.subarray(0, n), s, `stencil untouched n=${n}`);
        for (const p of [din, dst, dout, both]) p.parent.destroy();
      }
    });
  }
});

describe('copyIf / removeIf with a stencil: bad input', () => {
  const seq = execution.seq;
  it('names the argument and leaves the caller data untouched', async () => {
    const data = Uint32Array.from([1, 2, 3, 4]);
    const s = Uint32Array.from([1, 0, 1, 0]);
    const out = new Uint32Array(4).fill(9);
    await expect(copyIf(seq, data, new Uint32Array(3), out)).rejects.toThrow(/stencil: expected 4 elements/);
    await expect(copyIf(seq, data, s, new Int32Array(4))).rejects.toThrow(/output: expected an array of u32/);
    await expect(copyIf(seq, data, s, s)).rejects.toThrow(/output: expected memory that does not overlap stencil/);
    await expect(copyIf(seq, data, s, out, 3 as never)).rejects.toThrow(/pred/);
    await expect(removeIf(seq, data, [1, 0] as unknown as Uint32Array, out)).rejects.toThrow(/stencil: expected/);
    await expect(copyIf(seq, data, out, undefined as never)).rejects.toThrow(/pred/);
    expect([...data]).toEqual([1, 2, 3, 4]);
    expect([...out]).toEqual([9, 9, 9, 9]);
    // The old forms still work.
    expect(await copyIf(seq, data, out, (x: number) => x > 2)).toBe(2);
    expect([...out.subarray(0, 2)]).toEqual([3, 4]);
    expect(await removeIf(seq, data, (x: number) => x > 2)).toBe(2);
    expect([...data.subarray(0, 2)]).toEqual([1, 2]);
  });
});
