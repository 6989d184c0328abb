/**
 * GPU sorts beyond one storage binding (segmented.ts): a device opened with 4 KiB (and 16 KiB)
 * bindings sorts up to 5.5 bindings of keys in segments and windowed merges, with fallback 'error'
 * (nothing may fall back to the CPU), against TypedArray#sort and stable index orders. Every bind
 * group is checked against the lowered limit (the implementation itself still grants more).
 */
import { DeviceArray, type GpuDevice, lambda, UnsupportedOnDeviceError } from '@webdpl/core';
import { makeDevicePolicy } from '@webdpl/policies';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zip } from '../common/zip';
import { sortByKey } from '../sort-by-key';
import { testDevice } from '../testing/matrix';
import { smallBindings as openSmallBindings, type SmallBindings } from '../testing/small-bindings';
import { makeKeys, sameKeys, stableOrder } from '../testing/sort-keys';
import { sortReference } from '../testing/sort-reference';
import { greater, less, sort } from '.';

const opened: GpuDevice[] = [];
afterAll(() => {
  for (const d of opened) d.destroy();
});

async function smallBindings(bytes: number): Promise<SmallBindings> {
  const s = await openSmallBindings(bytes);
  opened.push(s.device);
  expect(s.device.limits.maxStorageBufferBindingSize).toBe(bytes);
  return s;
}

/** Elements of one 4 KiB binding. */
const B = 1024;
/** 1 to 5.5 bindings: 1, 2, 3 and 6 segments of 960 keys (odd run counts in the merge levels). */
const SIZES = [1, B - 1, B, B + 1, 2 * B + 800, 5.5 * B];

describe.skipIf(!testDevice)('GPU sorts beyond one storage binding (4 KiB bindings)', () => {
  let device: GpuDevice;
  let largest: () => number;
  beforeAll(async () => {
    ({ device, largest } = await smallBindings(4096));
  }, 60_000);

  it('sort: u32, i32, f32 (NaN, -0, +-Inf), ascending and descending', async () => {
    const strict = makeDevicePolicy(device, { fallback: 'error' });
    for (const type of ['u32', 'i32', 'f32'] as const) {
      for (const n of SIZES) {
        const keys = makeKeys(type, n, n * 7 + type.length);
        const a = keys.slice();
        await sort(strict, a);
        sameKeys(a, sortReference(keys, false), `${type} n=${n}`);
        if (type === 'f32' || n === 5.5 * B) {
          const d = keys.slice();
          await sort(strict, d, greater);
          sameKeys(d, sortReference(keys, true), `${type} greater n=${n}`);
        }
      }
    }
  }, 600_000);

  it('sortByKey is stable (values = original indices), less and greater', async () => {
    const strict = makeDevicePolicy(device, { fallback: 'error' });
    for (const type of ['i32', 'f32'] as const) {
      for (const n of [B + 1, 5.5 * B]) {
        const keys = makeKeys(type, n, n + 5, 'dups');
        for (const comp of type === 'f32' ? [less, greater] : [less]) {
          const k = keys.slice();
          const v = Uint32Array.from(keys, (_, i) => i);
          await sortByKey(strict, k, v, comp);
          const want = stableOrder(keys, comp.js([type, type]) as (a: number, b: number) => boolean);
          sameKeys(v, want, `${type} ${comp.name} n=${n} values`);
          sameKeys(
            k,
            want.map((i) => keys[i] as number),
            `${type} ${comp.name} n=${n} keys`,
          );
        }
      }
    }
  }, 600_000);

  it('sortByKey with zip(...) values: each array follows the keys (host and DeviceArrays)', async () => {
    const strict = makeDevicePolicy(device, { fallback: 'error' });
    const n = 2 * B + 800;
    const keys = makeKeys('f32', n, 17, 'dups') as Float32Array;
    const want = stableOrder(keys, less.js(['f32', 'f32']) as (a: number, b: number) => boolean);
    const a = Uint32Array.from(keys, (_, i) => i);
    const b = Float32Array.from(keys, (_, i) => i / 2);
    const c = Int32Array.from(keys, (_, i) => -i);
    const k = keys.slice();
    await sortByKey(strict, k, zip(a, b, c));
    sameKeys(
      k,
      want.map((i) => keys[i] as number),
      'host keys',
    );
    sameKeys(a, want, 'host values[0]');
    sameKeys(
      b,
      want.map((i) => i / 2),
      'host values[1]',
    );
    sameKeys(
      c,
      want.map((i) => -i | 0),
      'host values[2]',
    );
    const dk = DeviceArray.from(device, keys);
    const da = DeviceArray.from(
      device,
      Uint32Array.from(keys, (_, i) => i),
    );
    const db = DeviceArray.from(
      device,
      Int32Array.from(keys, (_, i) => -i),
    );
    try {
      await sortByKey(strict, dk, zip(da, db), greater);
      const down = stableOrder(keys, greater.js(['f32', 'f32']) as (a: number, b: number) => boolean);
      sameKeys(
        await dk.read(),
        down.map((i) => keys[i] as number),
        'device keys',
      );
      sameKeys(await da.read(), down, 'device values[0]');
      sameKeys(
        await db.read(),
        down.map((i) => -i | 0),
        'device values[1]',
      );
    } finally {
      for (const d of [dk, da, db]) d.destroy();
    }
    expect(largest()).toBeLessThanOrEqual(4096);
  }, 600_000);

  it('user comparators (merge sort): many ties, stable, with and without values', async () => {
    const strict = makeDevicePolicy(device, { fallback: 'error' });
    const byLow3 = (a: number, b: number) => a % 8 < b % 8;
    for (const n of [B + 1, 2 * B + 800, 5.5 * B]) {
      const keys = makeKeys('u32', n, n + 1) as Uint32Array;
      const k = keys.slice();
      const v = Int32Array.from(keys, (_, i) => -i);
      await sortByKey(strict, k, v, byLow3);
      const want = stableOrder(keys, byLow3);
      sameKeys(
        v,
        want.map((i) => -i | 0),
        `lambda n=${n} values`,
      );
      const f = makeKeys('f32', n, n + 2, 'dups') as Float32Array;
      const g = f.slice();
      await sort(
        strict,
        g,
        lambda((a: number, b: number) => Math.abs(a) < Math.abs(b)),
      );
      sameKeys(
        g,
        stableOrder(f, (a, b) => Math.abs(a) < Math.abs(b)).map((i) => f[i] as number),
        `abs f32 n=${n}`,
      );
    }
  }, 600_000);

  it('DeviceArray views at unaligned offsets, the rest of the buffers untouched', async () => {
    const strict = makeDevicePolicy(device, { fallback: 'error' });
    const n = 3 * B + 500;
    const all = makeKeys('f32', n + 10, 99) as Float32Array;
    const vals = Uint32Array.from({ length: n + 7 }, (_, i) => i + 1000);
    const dk = DeviceArray.from(device, all);
    const dv = DeviceArray.from(device, vals);
    try {
      await sortByKey(strict, dk.view(3, n), dv.view(1, n));
      const keys = all.subarray(3, 3 + n);
      const order = stableOrder(keys, less.js(['f32', 'f32']) as (a: number, b: number) => boolean);
      const gotK = await dk.read();
      const gotV = await dv.read();
      sameKeys(gotK.subarray(0, 3), all.subarray(0, 3), 'keys before the view');
      sameKeys(gotK.subarray(3 + n), all.subarray(3 + n), 'keys after the view');
      sameKeys(
        gotK.subarray(3, 3 + n),
        order.map((i) => keys[i] as number),
        'keys',
      );
      sameKeys(
        gotV.subarray(1, 1 + n),
        order.map((i) => vals[1 + i] as number),
        'values',
      );
      sameKeys([gotV[0] as number, gotV[n + 1] as number], [1000, n + 1001], 'values around the view');
      // A user comparator on a view whose offset is aligned but whose length is not.
      const w = dk.view(64, 2 * B + 3);
      const before = (await dk.read()).slice(64, 64 + 2 * B + 3);
      await sort(
        strict,
        w,
        lambda((a: number, b: number) => a > b),
      );
      sameKeys(
        (await dk.read()).subarray(64, 64 + 2 * B + 3),
        stableOrder(before, (a, b) => a > b).map((i) => before[i] as number),
        'user comparator view',
      );
    } finally {
      dk.destroy();
      dv.destroy();
    }
  }, 600_000);

  it("a call recorded into the caller's encoder is an UnsupportedOnDeviceError beyond one binding", async () => {
    const keys = makeKeys('u32', B + 1, 4);
    const d = DeviceArray.from(device, keys);
    try {
      const encoder = device.gpu.createCommandEncoder();
      const recording = makeDevicePolicy(device, { encoder });
      await expect(sort(recording, d)).rejects.toThrow(UnsupportedOnDeviceError);
      await expect(sort(recording, d)).rejects.toThrow(/command encoder/);
      sameKeys(await d.read(), keys, 'untouched');
      // Within one binding, recording works as before.
      const small = d.view(0, B);
      await sort(recording, small);
      device.gpu.queue.submit([encoder.finish()]);
      sameKeys((await d.read()).subarray(0, B), sortReference(keys.subarray(0, B), false), 'recorded sort');
    } finally {
      d.destroy();
    }
  }, 600_000);

  it('no bind group of these calls exceeded the 4 KiB binding', () => {
    expect(largest()).toBeGreaterThan(2048);
    expect(largest()).toBeLessThanOrEqual(4096);
  });
});

describe.skipIf(!testDevice)('GPU sorts beyond one storage binding (16 KiB bindings)', () => {
  it('segments of several radix tiles, pairs and keys alone', async () => {
    const { device, largest } = await smallBindings(16384);
    const strict = makeDevicePolicy(device, { fallback: 'error' });
    const n = 3 * 4096 + 17;
    const keys = makeKeys('u32', n, 5);
    const a = keys.slice();
    await sort(strict, a);
    sameKeys(a, sortReference(keys, false), 'u32');
    const k = keys.map((x) => x % 50) as Uint32Array;
    const v = Uint32Array.from(k, (_, i) => i);
    const k2 = k.slice();
    await sortByKey(strict, k2, v);
    sameKeys(
      v,
      stableOrder(k, (x, y) => x < y),
      'values',
    );
    expect(largest()).toBeLessThanOrEqual(16384);
  }, 600_000);
});
