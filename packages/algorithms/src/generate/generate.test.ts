import { DeviceArray, type HostArray, lambda } from '@webdpl/core';
import { allocShared, execution } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { expectSameArray } from '../testing/arrays';
import { isEngineVariant, itIf, parPool, place } from '../testing/device-data';
import { edgeSizes, policyMatrix, TINY_MAP_TILES, testDevice } from '../testing/matrix';
import { generate } from './index';

const sizes = edgeSizes([...TINY_MAP_TILES, 256 * 4 * 4], [123457]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

type T3 = 'u32' | 'i32' | 'f32';

/** One generator per type (one pipeline each), and its reference over the index as a number. */
const GEN = {
  u32: (i: number) => i * 2654435761 + 7,
  i32: (i: number) => 5 - i * 3,
  f32: (i: number) => i * 0.25 - 3,
};
const REF = {
  u32: (i: number) => (Math.imul(i, 2654435761) + 7) >>> 0,
  i32: (i: number) => (5 - i * 3) | 0,
  f32: (i: number) => Math.fround(i * 0.25 - 3),
};

function alloc(type: T3, n: number, shared = false): HostArray {
  if (shared) return allocShared(type, n);
  return type === 'u32' ? new Uint32Array(n) : type === 'i32' ? new Int32Array(n) : new Float32Array(n);
}

describe.each(matrix)('generate under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);
  const types: readonly T3[] = variant ? ['u32'] : ['u32', 'i32', 'f32'];
  for (const type of types) {
    it(`${type} at edge sizes (shared and plain memory)`, async () => {
      for (const [k, n] of sizes.entries()) {
        const out = alloc(type, n, k % 2 === 1).fill(1);
        await generate(policy, out, GEN[type]);
        const want = alloc(type, n);
        for (let i = 0; i < n; i++) want[i] = REF[type](i);
        expectSameArray(out, want, `n=${n}`);
      }
    });
  }

  itIf(!variant)('bool results as 1/0, math, captures, the index as f32', async () => {
    const b = new Int32Array(10);
    await generate(policy, b, (i: number) => i % 3 === 0);
    expectSameArray(b, Int32Array.from([1, 0, 0, 1, 0, 0, 1, 0, 0, 1]), 'bool');
    const f = new Float32Array(64);
    await generate(policy, f, (i: number) => Math.floor(i / 4) * 0.5);
    expectSameArray(
      f,
      Float32Array.from({ length: 64 }, (_, i) => Math.floor(i / 4) * 0.5),
      'floor',
    );
    const k = 11;
    const u = new Uint32Array(20);
    await generate(
      policy,
      u,
      lambda((i: number) => (i * k) % 7, { captures: { k } }),
    );
    expectSameArray(
      u,
      Uint32Array.from({ length: 20 }, (_, i) => (i * k) % 7),
      'captures',
    );
    // The f32 index is exact below 2^24: a generator that returns it gives the index back.
    const g = new Float32Array(1000);
    await generate(policy, g, (i: number) => i);
    expectSameArray(
      g,
      Float32Array.from({ length: 1000 }, (_, i) => i),
      'identity',
    );
  });

  if (gpu && testDevice && !name.includes('no-subgroups')) {
    const device = testDevice;
    it('DeviceArray views at offsets, padding untouched', async () => {
      for (const n of [1, 3, 4, 5, 257, 3001]) {
        for (const off of [0, 1, 4]) {
          const a = place(device, new Int32Array(n), off);
          await generate(policy, a.view, GEN.i32);
          expectSameArray(
            await a.read(),
            Int32Array.from({ length: n }, (_, i) => REF.i32(i)),
            `n=${n} @${off}`,
          );
          a.parent.destroy();
        }
      }
    });
  }
});

describe('generate: bad input', () => {
  const seq = execution.seq;
  it('names the argument and leaves the output untouched', async () => {
    const a = Int32Array.from([1, 2, 3]);
    await expect(generate(seq, [1, 2] as unknown as Int32Array, GEN.i32)).rejects.toThrow(/output: expected/);
    await expect(generate(seq, a, (i: number) => i * 0.5)).rejects.toThrow(/gen: expected .*returning i32/);
    await expect(generate(seq, a, (i: number, j: number) => i + j)).rejects.toThrow(/gen/);
    await expect(generate(seq, a, undefined as never)).rejects.toThrow(/gen/);
    await expect(generate(undefined as never, a, GEN.i32)).rejects.toThrow(/policy/);
    expect([...a]).toEqual([1, 2, 3]);
  });

  if (testDevice) {
    const device = testDevice;
    it('DeviceArrays need a device policy', async () => {
      const d = DeviceArray.from(device, new Uint32Array(3));
      await expect(generate(execution.seq, d, GEN.u32)).rejects.toThrow(/policy/);
      await generate(execution.auto, d, (i: number) => i + 1);
      expect([...(await d.read())]).toEqual([1, 2, 3]);
      d.destroy();
    });
  }
});
