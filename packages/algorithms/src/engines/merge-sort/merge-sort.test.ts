import { DeviceArray, type GpuDevice, type GpuFunction, gpuForTests, lambda } from '@webdpl/core';
import { describe, expect, it } from 'vitest';
import { setPhasePasses } from '../../common/gpu-io';
import { less } from '../../sort/comparators';
import { rng } from '../../testing/matrix';
import { mergeSortDevice } from '.';

const gpu = await gpuForTests();

/** Stable reference: indices ordered by `before`, ties by index. */
function stableOrder(keys: ArrayLike<number>, before: (a: number, b: number) => boolean): number[] {
  return Array.from({ length: keys.length }, (_, i) => i).sort((i, j) => {
    const a = keys[i] as number;
    const b = keys[j] as number;
    return before(a, b) ? -1 : before(b, a) ? 1 : i - j;
  });
}

async function check(
  device: GpuDevice,
  keys: Uint32Array | Int32Array | Float32Array,
  comp: GpuFunction,
  tuning: Record<string, number>,
  what: string,
) {
  const k = DeviceArray.from(device, keys);
  const v = DeviceArray.from(
    device,
    Uint32Array.from(keys, (_, i) => i),
  );
  try {
    await mergeSortDevice(device, k, v, { comparator: comp, tuning });
    const gotK = await k.read();
    const gotV = await v.read();
    const t = keys instanceof Uint32Array ? 'u32' : keys instanceof Int32Array ? 'i32' : 'f32';
    const before = comp.js([t, t]) as (a: number, b: number) => boolean;
    const want = stableOrder(keys, before);
    for (let i = 0; i < keys.length; i++) {
      if (gotV[i] !== want[i] || !Object.is(gotK[i], keys[want[i] as number])) {
        throw new Error(`${what}: at ${i}: got key ${gotK[i]} value ${gotV[i]}, want value ${want[i]}`);
      }
    }
  } finally {
    k.destroy();
    v.destroy();
  }
}

describe.skipIf(!gpu)('mergeSortDevice', () => {
  const device = gpu as GpuDevice;
  const byLow4 = lambda((a: number, b: number) => a % 16 < b % 16);
  const descending = lambda((a: number, b: number) => a > b);
  it('stable by a user comparator with many ties, tiny and default tiles', async () => {
    const tunings: Record<string, number>[] = [{ workgroupSize: 32, itemsPerThread: 2 }, {}];
    for (const tuning of tunings) {
      for (const n of [0, 1, 2, 3, 7, 16, 63, 64, 65, 200, 1023, 1024, 1025, 5000]) {
        const r = rng(n + 5);
        const keys = Uint32Array.from({ length: n }, () => r() % 1000);
        await check(device, keys, byLow4, tuning, `low4 n=${n}`);
      }
    }
  });
  it('i32 and f32 with the less comparator and a descending lambda, 3 and 4 merge passes', async () => {
    const tuning = { workgroupSize: 32, itemsPerThread: 4 };
    for (const n of [1000, 2049]) {
      const r = rng(n);
      const ints = Int32Array.from({ length: n }, () => (r() % 200) - 100);
      await check(device, ints, less, tuning, `i32 less n=${n}`);
      await check(device, ints, descending, tuning, `i32 desc n=${n}`);
      const floats = Float32Array.from({ length: n }, () => (r() % 64) / 8 - 4);
      floats[3] = Number.NaN;
      floats[5] = -0;
      await check(device, floats, less, tuning, `f32 less n=${n}`);
    }
  });
  it("each merge level in a compute pass of its own (setPhasePasses, the probes' diagnostics): the same order", async () => {
    setPhasePasses(true);
    try {
      for (const n of [1, 65, 1025, 5000]) {
        const r = rng(n + 9);
        const keys = Uint32Array.from({ length: n }, () => r() % 1000);
        await check(device, keys, byLow4, { workgroupSize: 32, itemsPerThread: 2 }, `phases n=${n}`);
      }
    } finally {
      setPhasePasses(false);
    }
  });
  it('2^17 keys with default tiles', async () => {
    const n = 1 << 17;
    const r = rng(3);
    await check(
      device,
      Uint32Array.from({ length: n }, () => r()),
      byLow4,
      {},
      'large',
    );
  });
  it('rejects mismatched lengths', async () => {
    const k = DeviceArray.from(device, new Uint32Array(4));
    const v = DeviceArray.from(device, new Uint32Array(3));
    await expect(mergeSortDevice(device, k, v, { comparator: less })).rejects.toThrow(/values/);
    k.destroy();
    v.destroy();
  });
});
