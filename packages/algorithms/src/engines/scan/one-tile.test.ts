/**
 * Calls of one chained tile clear nothing (issue 12): their kernel takes its tile from the
 * workgroup index and never looks back, so the tile counters and states left by earlier calls (a
 * multi-tile call leaves its counters at its tile count) do not matter. Sizes 1, tile - 1, tile,
 * tile + 1 and a few tiles, interleaved with multi-tile calls, for scans and compactions, subgroups
 * on and off; a one-tile call records no clearBuffer, a two-tile call one.
 */
import { DeviceArray, type GpuDevice, lambda } from '@webdpl/core';
import { makeDevicePolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { copyIf } from '../../compaction/index';
import { exclusiveScan, inclusiveScan } from '../../scans/index';
import { testDevice } from '../../testing/matrix';

/** clearBuffer calls recorded while `f` runs. */
async function clears(device: GpuDevice, f: () => Promise<unknown>): Promise<number> {
  const enc = device.gpu.createCommandEncoder();
  const proto = Object.getPrototypeOf(enc) as { clearBuffer: (...a: unknown[]) => void };
  enc.finish();
  const original = proto.clearBuffer;
  let n = 0;
  proto.clearBuffer = function (this: unknown, ...a: unknown[]) {
    n++;
    return original.apply(this, a);
  };
  try {
    await f();
  } finally {
    proto.clearBuffer = original;
  }
  return n;
}

describe.skipIf(!testDevice)('scan engine: one chained tile clears nothing', () => {
  const device = testDevice as GpuDevice;
  // Tiles of 32 x 4 = 128 elements.
  const TILE = 128;
  const even = lambda((x: number) => (x & 1) === 0);
  for (const subgroups of [true, false]) {
    const policy = makeDevicePolicy(device, {
      fallback: 'error',
      tuning: { scan: { workgroupSize: 32, itemsPerThread: 4, subgroups } },
    });
    it(`sizes around one tile after multi-tile calls, subgroups ${subgroups ? 'on' : 'off'}`, async () => {
      const big = 5 * TILE + 3;
      const host = Uint32Array.from({ length: big }, (_, i) => (i * 2654435761) % 1000);
      const a = DeviceArray.from(device, host);
      const out = DeviceArray.create(device, 'u32', big);
      const prefix = (h: Uint32Array, init = 0) => {
        const r: number[] = [];
        let s = init;
        for (const x of h) r.push((s = (s + x) >>> 0));
        return r;
      };
      try {
        for (const n of [1, TILE - 1, TILE, TILE + 1, 2 * TILE, big]) {
          const h = host.subarray(0, n);
          const x = a.view(0, n);
          const y = out.view(0, n);
          // A multi-tile call first: it leaves its segment's tile counter at its tile count.
          await inclusiveScan(policy, a, out);
          const c1 = await clears(device, () => inclusiveScan(policy, x, y));
          expect(Array.from(await y.read()), `inclusiveScan ${n}`).toEqual(prefix(h));
          expect(c1, `inclusiveScan ${n}: clears`).toBe(n <= TILE ? 0 : 1);
          await copyIf(policy, a, out, even);
          await exclusiveScan(policy, x, y, 5);
          expect(Array.from(await y.read()), `exclusiveScan ${n}`).toEqual([5, ...prefix(h, 5).slice(0, n - 1)]);
          await inclusiveScan(policy, a, out);
          let count = 0;
          const c2 = await clears(device, async () => {
            count = await copyIf(policy, x, y, even);
          });
          const kept = Array.from(h).filter((v) => v % 2 === 0);
          expect(count, `copyIf ${n}`).toBe(kept.length);
          expect(Array.from((await y.read()).subarray(0, count)), `copyIf ${n}`).toEqual(kept);
          expect(c2, `copyIf ${n}: clears`).toBe(n <= TILE ? 0 : 1);
        }
      } finally {
        a.destroy();
        out.destroy();
      }
    });
  }
});
