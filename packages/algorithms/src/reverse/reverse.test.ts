import { DeviceArray, type HostArray } from '@webdpl/core';
import { allocShared, execution, makeDevicePolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { expectSameArray } from '../testing/arrays';
import { isEngineVariant, itIf, parPool, place } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, rng, testDevice } from '../testing/matrix';
import { reverse, rotate } from './index';

/** Tiny reverse tuning: tiles of 64 elements, bindings of 4 KiB (segments of 896 elements). */
const TINY_REVERSE = { reverse: { workgroupSize: 32, itemsPerThread: 2, maxBindingBytes: 4096 } };
const sizes = edgeSizes([64, 256 * 4, 896], [123457]);
const matrix = [...policyMatrix(TINY_REVERSE), { name: 'par pool', policy: parPool, gpu: false }];

type T3 = 'u32' | 'i32' | 'f32';

function reverseRef(d: HostArray): HostArray {
  const out = d.slice();
  for (let i = 0; i < d.length; i++) out[i] = d[d.length - 1 - i] as number;
  return out;
}

function rotateRef(d: HostArray, m: number): HostArray {
  const out = d.slice();
  for (let i = 0; i < d.length; i++) out[i] = d[(i + m) % d.length] as number;
  return out;
}

describe.each(matrix)('reverse and rotate under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);
  const types: readonly T3[] = variant ? ['f32'] : ['u32', 'i32', 'f32'];
  for (const type of types) {
    it(`${type} at edge sizes: in place and into an output`, async () => {
      const r = rng(3);
      for (const [k, n] of sizes.entries()) {
        const d = makeData(type, n, 'random');
        if (type === 'f32' && n > 1) d[0] = -0;
        const orig = d.slice();
        // Shared-memory and plain outputs alike.
        const o =
          k % 2 ? allocShared(type, n + 2).fill(9) : new (d.constructor as new (n: number) => HostArray)(n + 2).fill(9);
        await reverse(policy, d, o);
        expectSameArray(o.subarray(0, n), reverseRef(orig), `reverse copy n=${n}`);
        expect([...o.subarray(n)], 'past n untouched').toEqual([9, 9]);
        expectSameArray(d, orig, `input kept n=${n}`);
        await reverse(policy, d);
        expectSameArray(d, reverseRef(orig), `reverse in place n=${n}`);
        const m = n === 0 ? 0 : k % 5 === 0 ? (k % 2) * n : r() % (n + 1);
        expect(await rotate(policy, orig, m, o), `rotate returns n - m, n=${n}`).toBe(n - m);
        expectSameArray(o.subarray(0, n), rotateRef(orig, m), `rotate copy n=${n} m=${m}`);
        const want = rotateRef(orig, m);
        await rotate(policy, orig, m);
        expectSameArray(orig, want, `rotate in place n=${n} m=${m}`);
      }
    });
  }

  if (gpu && testDevice && !name.includes('no-subgroups')) {
    const device = testDevice;
    it('DeviceArray views at offsets: in place, into another view of the same buffer, padding untouched', async () => {
      for (const n of [1, 2, 5, 63, 64, 65, 1000, 3001]) {
        const d = makeData('u32', n, 'random');
        for (const off of [0, 1, 3]) {
          const a = place(device, d, off);
          await reverse(policy, a.view);
          expectSameArray(await a.read(), reverseRef(d), `reverse in place n=${n} @${off}`);
          // Two disjoint views of one buffer: [a | b].
          const both = place(device, Uint32Array.from([...d, ...new Uint32Array(n)]), off);
          await reverse(policy, both.view.view(0, n), both.view.view(n, n));
          expectSameArray((await both.read()).subarray(n), reverseRef(d), `reverse within a buffer n=${n}`);
          const m = (n * 7) >> 4;
          await rotate(policy, both.view.view(0, n), m, both.view.view(n, n));
          expectSameArray((await both.read()).subarray(n), rotateRef(d, m), `rotate within a buffer n=${n}`);
          await rotate(policy, both.view.view(0, n), m);
          expectSameArray((await both.read()).subarray(0, n), rotateRef(d, m), `rotate in place n=${n}`);
          a.parent.destroy();
          both.parent.destroy();
        }
      }
    });
  }

  itIf(!variant)('rotate at 0 and n is a copy', async () => {
    const d = Int32Array.from([1, 2, 3, 4]);
    expect(await rotate(policy, d, 0)).toBe(4);
    expect(await rotate(policy, d, 4)).toBe(0);
    expectSameArray(d, Int32Array.from([1, 2, 3, 4]));
  });
});

describe('reverse and rotate: bad input', () => {
  const seq = execution.seq;
  it('names the argument and leaves the data untouched', async () => {
    const a = Uint32Array.from([1, 2, 3]);
    await expect(reverse(seq, [1, 2] as unknown as Uint32Array)).rejects.toThrow(/input: expected/);
    await expect(reverse(seq, a, new Uint32Array(2))).rejects.toThrow(/output: expected at least 3/);
    await expect(reverse(seq, a, new Float32Array(3))).rejects.toThrow(/output: expected an array of u32/);
    await expect(reverse(seq, a.subarray(0, 2), a.subarray(1))).rejects.toThrow(/output: expected/);
    await expect(rotate(seq, a, 4)).rejects.toThrow(/middle: expected an integer in \[0, 3\]/);
    await expect(rotate(seq, a, 1.5)).rejects.toThrow(/middle/);
    await expect(rotate(seq, a, -1)).rejects.toThrow(/middle/);
    await expect(rotate(undefined as never, a, 1)).rejects.toThrow(/policy/);
    expect([...a]).toEqual([1, 2, 3]);
  });

  if (testDevice) {
    const device = testDevice;
    it('DeviceArrays need a device policy', async () => {
      const d = DeviceArray.from(device, Uint32Array.from([1, 2, 3]));
      await expect(reverse(execution.par, d)).rejects.toThrow(/policy/);
      await reverse(execution.auto, d);
      expect([...(await d.read())]).toEqual([3, 2, 1]);
      d.destroy();
    });
  }
});

describe('reverse and rotate: tuning', () => {
  if (testDevice) {
    const device = testDevice;
    it('a misspelt override is an error naming it', async () => {
      const bad = makeDevicePolicy(device, { fallback: 'error', tuning: { rotate: { workgroupSise: 64 } } });
      await expect(rotate(bad, Uint32Array.from([1, 2, 3]), 1)).rejects.toThrow(/tuning\.rotate\.workgroupSise/);
      const bad2 = makeDevicePolicy(device, { fallback: 'error', tuning: { reverse: { itemsPerThread: 0 } } });
      await expect(reverse(bad2, Uint32Array.from([1, 2, 3]))).rejects.toThrow(/tuning\.reverse\.itemsPerThread/);
    });
  }
});
