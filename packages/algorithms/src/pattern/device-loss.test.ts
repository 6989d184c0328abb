/**
 * Device loss in the middle of a call: the device is destroyed from another task while calls are in
 * flight. A strict policy's calls reject with DeviceLostError and later calls do not hang; policies
 * that fall back finish on the CPU with the same answer; a new device can be selected afterwards.
 * Each test opens a device of its own (the shared test device stays alive).
 */
import { DeviceLostError, enumerateDevices, type GpuDevice, gpuSelector, openDevice, selectDevice } from '@webdpl/core';
import { execution, makeDevicePolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { reduce } from '../reduce/index';
import { inclusiveScan } from '../scans/index';
import { sort } from '../sort/index';
import { testDevice } from '../testing/matrix';

async function freshDevice(): Promise<GpuDevice> {
  const gpu = (await enumerateDevices()).find((c) => c.info.backend === 'webgpu');
  if (!gpu) throw new Error('no GPU candidate');
  return (await openDevice(gpu)) as GpuDevice;
}

const N = 1 << 18;

function keys(): Uint32Array {
  return Uint32Array.from({ length: N }, (_, i) => (i * 2654435761) >>> 0);
}

/** Starts `calls`, destroys the device once they are under way, and settles them all. */
async function destroyDuring<T>(device: GpuDevice, calls: () => Promise<T>[]): Promise<PromiseSettledResult<T>[]> {
  const running = calls();
  await new Promise((r) => setTimeout(r, 1));
  device.destroy();
  return Promise.allSettled(running);
}

describe.skipIf(!testDevice)('device loss during a call', () => {
  it('a strict policy rejects with DeviceLostError, and later calls reject at once', async () => {
    const device = await freshDevice();
    const policy = makeDevicePolicy(device, { fallback: 'error' });
    const data = keys();
    const copy = data.slice();
    const results = await destroyDuring(device, () => [sort(policy, data).then(() => 0), reduce(policy, copy)]);
    for (const r of results) {
      // A call may have finished before the loss; one that did not says why.
      if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(DeviceLostError);
    }
    expect(results.some((r) => r.status === 'rejected')).toBe(true);
    const t0 = performance.now();
    await expect(reduce(policy, Float32Array.from([1, 2]))).rejects.toThrow(DeviceLostError);
    await expect(inclusiveScan(policy, Uint32Array.from([1, 2]), new Uint32Array(2))).rejects.toThrow(DeviceLostError);
    expect(performance.now() - t0).toBeLessThan(5000);
  });

  it('a fallback policy finishes on the CPU with the same answer, then keeps running there', async () => {
    const device = await freshDevice();
    const policy = makeDevicePolicy(device);
    const data = keys();
    const want = data.slice().sort();
    const scanned = new Uint32Array(N);
    const [sorted, sum, scan] = await destroyDuring(device, () => [
      sort(policy, data).then(() => 0),
      reduce(policy, want),
      inclusiveScan(policy, want, scanned).then(() => 0),
    ]);
    expect(sorted?.status).toBe('fulfilled');
    expect(data).toEqual(want);
    expect(sum?.status === 'fulfilled' && sum.value).toBe(await reduce(execution.seq, want));
    expect(scan?.status).toBe('fulfilled');
    const ref = new Uint32Array(N);
    await inclusiveScan(execution.seq, want, ref);
    expect(scanned).toEqual(ref);
    expect(device.lost).toBe(true);
    // Later calls on the lost device's policy run on the CPU.
    expect(await reduce(policy, Uint32Array.from([1, 2, 3]))).toBe(6);
  });

  it('a new device can be selected after a loss', async () => {
    const device = await freshDevice();
    device.destroy();
    const next = (await selectDevice(gpuSelector)) as GpuDevice;
    expect(next.lost).toBe(false);
    expect(await reduce(makeDevicePolicy(next, { fallback: 'error' }), Uint32Array.from([4, 5]))).toBe(9);
  });
});
