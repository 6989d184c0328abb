/**
 * Bring your own device, buffers and command encoder: a device policy over the caller's GPUDevice,
 * DeviceArrays adopting the caller's GPUBuffers without a copy, and calls recorded into the
 * caller's encoder (no submit, no wait), on a real adapter.
 */
import { ArgumentError, DeviceArray, fromGPUDevice, type GpuDevice, getGpu } from '@webdpl/core';
import { makeDevicePolicy } from '@webdpl/policies';
import { afterAll, describe, expect, it } from 'vitest';
import { fill } from '../fill';
import { reduce } from '../reduce';
import { exclusiveScan, inclusiveScan } from '../scans';
import { sort } from '../sort';
import { rng, testDevice } from '../testing/matrix';
import { sortReference } from '../testing/sort-reference';
import { transform } from '../transform';

const USAGE = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

/** The caller's own device, as a renderer would create it (not through webdpl). */
async function callerDevice(): Promise<{ gpu: GPUDevice; info: GPUAdapterInfo }> {
  const instance = await getGpu();
  const adapter = await instance?.requestAdapter();
  if (!adapter) throw new Error('no adapter');
  const features = adapter.features.has('subgroups') ? (['subgroups'] as GPUFeatureName[]) : [];
  return { gpu: await adapter.requestDevice({ requiredFeatures: features }), info: adapter.info };
}

/** The bytes of `buffer`, read the caller's way (a copy into a mappable buffer). */
async function rawRead(gpu: GPUDevice, buffer: GPUBuffer): Promise<Uint32Array> {
  const staging = gpu.createBuffer({ size: buffer.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const enc = gpu.createCommandEncoder();
  enc.copyBufferToBuffer(buffer, 0, staging, 0, buffer.size);
  gpu.queue.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = new Uint32Array(staging.getMappedRange().slice(0));
  staging.destroy();
  return out;
}

function bufferWith(gpu: GPUDevice, words: Uint32Array<ArrayBuffer>, usage = USAGE): GPUBuffer {
  const b = gpu.createBuffer({ size: words.byteLength, usage });
  gpu.queue.writeBuffer(b, 0, words);
  return b;
}

const callers: GPUDevice[] = [];
afterAll(() => {
  for (const g of callers) g.destroy();
});

describe.skipIf(!testDevice)('bring your own device, buffers and encoder', () => {
  it("a device policy over the caller's GPUDevice, which webdpl never destroys", async () => {
    const { gpu, info } = await callerDevice();
    callers.push(gpu);
    const seen: string[] = [];
    gpu.onuncapturederror = (ev) => seen.push((ev as GPUUncapturedErrorEvent).error.message);
    const policy = makeDevicePolicy(gpu);
    const device = policy.device as GpuDevice;
    expect(device.owned).toBe(false);
    expect(device.gpu).toBe(gpu);
    expect(fromGPUDevice(gpu)).toBe(device); // one webdpl device per GPUDevice: caches are shared
    expect(fromGPUDevice(gpu, { adapterInfo: info })).toBe(device);
    const input = Float32Array.from({ length: 1000 }, (_, i) => i);
    const out = new Float32Array(1000);
    await transform(policy, input, out, (x) => x * 3);
    expect(out[999]).toBe(2997);
    expect(await reduce(policy, Uint32Array.from([1, 2, 3]))).toBe(6);
    // DeviceArrays over the caller's buffers, given the caller's GPUDevice.
    const buf = bufferWith(gpu, Uint32Array.from([3, 1, 2, 0]));
    const arr = DeviceArray.fromBuffer(gpu, buf, 'u32', 0, 3);
    expect(arr.device).toBe(device);
    await sort(policy, arr);
    expect(Array.from(await rawRead(gpu, buf))).toEqual([1, 2, 3, 0]);
    arr.destroy();
    // An error of the caller's own work is the caller's: its handler sees it, webdpl's calls do not throw it.
    const bad = gpu.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.STORAGE });
    bad.destroy();
    await new Promise((r) => setTimeout(r, 20));
    expect(seen.length).toBe(1);
    expect(await reduce(policy, Uint32Array.from([4, 5]))).toBe(9);
    // Letting go of it does not destroy the caller's device.
    device.destroy();
    expect(device.lost).toBe(true);
    const words = Uint32Array.from([7, 8, 9, 10]);
    expect(Array.from(await rawRead(gpu, bufferWith(gpu, words)))).toEqual([7, 8, 9, 10]);
    const again = fromGPUDevice(gpu);
    expect(again).not.toBe(device);
    expect(await reduce(makeDevicePolicy(gpu), Uint32Array.from([1, 1]))).toBe(2);
    expect(() => fromGPUDevice({} as GPUDevice)).toThrow(/^device: expected a GPUDevice/);
  }, 120_000);

  it("DeviceArray.fromBuffer adopts the caller's buffer without a copy, at an offset", async () => {
    const device = testDevice as GpuDevice;
    const gpu = device.gpu;
    const policy = makeDevicePolicy(device, { fallback: 'error' });
    for (const [before, n] of [
      [4, 7],
      [1, 5000],
      [64, 3001],
    ] as const) {
      // `before` guard words, then n elements ending exactly at the buffer's end.
      const r = rng(n);
      const words = Uint32Array.from({ length: before + n }, (_, i) => (i < before ? 0xdead0000 + i : r() % 1000));
      const buffer = bufferWith(gpu, words, USAGE | GPUBufferUsage.VERTEX);
      try {
        const a = DeviceArray.fromBuffer(device, buffer, 'u32', before * 4);
        expect(a.length).toBe(n);
        expect(a.buffer).toBe(buffer);
        expect(a.byteOffset).toBe(before * 4);
        const data = words.slice(before);
        expect(Array.from(await a.read())).toEqual(Array.from(data));
        expect(await reduce(policy, a)).toBe(data.reduce((s, x) => s + x, 0));
        const b = DeviceArray.create(device, 'u32', n);
        await inclusiveScan(policy, a, b);
        let run = 0;
        expect(Array.from(await b.read())).toEqual(Array.from(data, (x) => (run += x)));
        await transform(policy, a, a, (x) => x + 1); // in place, in the caller's buffer
        await sort(policy, a);
        const want = Array.from(
          sortReference(
            data.map((x) => x + 1),
            false,
          ),
        );
        expect(Array.from(await a.read())).toEqual(want);
        // The caller sees the result in its buffer, and the words before the array untouched.
        const raw = await rawRead(gpu, buffer);
        expect(Array.from(raw.subarray(0, before))).toEqual(Array.from(words.subarray(0, before)));
        expect(Array.from(raw.subarray(before))).toEqual(want);
        // destroy() lets go of the buffer without destroying it.
        a.destroy();
        b.destroy();
        expect(Array.from((await rawRead(gpu, buffer)).subarray(before))).toEqual(want);
      } finally {
        buffer.destroy();
      }
    }
    // A sub-range (length) of a buffer, as f32.
    const buffer = bufferWith(gpu, new Uint32Array(new Float32Array([1.5, 2.5, 3.5, 4.5]).buffer));
    const mid = DeviceArray.fromBuffer(device, buffer, 'f32', 4, 2);
    expect(Array.from(await mid.read())).toEqual([2.5, 3.5]);
    // Bad arguments name the argument and leave the buffer alone.
    const noSrc = gpu.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    expect(() => DeviceArray.fromBuffer(device, noSrc, 'u32')).toThrow(
      /^buffer: expected a GPUBuffer with usage STORAGE \| COPY_SRC \| COPY_DST, got a buffer without COPY_SRC/,
    );
    expect(() => DeviceArray.fromBuffer(device, {} as GPUBuffer, 'u32')).toThrow(/^buffer: expected a GPUBuffer/);
    expect(() => DeviceArray.fromBuffer(device, buffer, 'f64' as never)).toThrow(/^type: expected/);
    expect(() => DeviceArray.fromBuffer(device, buffer, 'u32', 2)).toThrow(/^byteOffset: expected a multiple of 4/);
    expect(() => DeviceArray.fromBuffer(device, buffer, 'u32', 20)).toThrow(/^byteOffset: expected/);
    expect(() => DeviceArray.fromBuffer(device, buffer, 'u32', 4, 4)).toThrow(
      /^length: expected an integer in \[0, 3\]/,
    );
    expect(() => DeviceArray.fromBuffer({} as GpuDevice, buffer, 'u32')).toThrow(ArgumentError);
    expect(Array.from(await mid.read())).toEqual([2.5, 3.5]);
    noSrc.destroy();
    buffer.destroy();
  }, 300_000);

  it("records calls into the caller's encoder: nothing runs until the caller submits", async () => {
    const device = testDevice as GpuDevice;
    const gpu = device.gpu;
    const n = 20_000;
    const r = rng(5);
    const data = Uint32Array.from({ length: n }, () => r() % 5000);
    const a = DeviceArray.create(device, 'u32', n);
    const b = DeviceArray.create(device, 'u32', n);
    const c = DeviceArray.create(device, 'u32', n);
    const e1 = DeviceArray.create(device, 'u32', 100);
    const e2 = DeviceArray.create(device, 'u32', 100);
    const ones = DeviceArray.create(device, 'u32', 100);
    const upload = bufferWith(gpu, data);
    try {
      for (let frame = 0; frame < 3; frame++) {
        const encoder = gpu.createCommandEncoder();
        // The caller's own command first: the recorded calls follow it in the encoder.
        encoder.copyBufferToBuffer(upload, 0, a.buffer, 0, n * 4);
        const policy = makeDevicePolicy(device, { encoder, fallback: 'error' });
        const add = frame;
        await transform(policy, a, b, (x) => x * 2);
        await fill(policy, ones, 1);
        await exclusiveScan(policy, ones, e1, 5 + add);
        await exclusiveScan(policy, ones, e2, 7);
        await inclusiveScan(policy, b, c);
        await sort(policy, b);
        // Nothing was submitted: the arrays still hold what the previous frame left.
        if (frame === 0) expect(Array.from(await c.read()).every((x) => x === 0)).toBe(true);
        // Calls needing host data or returning a result cannot be recorded; the encoder stays usable.
        await expect(reduce(policy, a)).rejects.toThrow(/^policy: expected a policy without an encoder for reduce/);
        await expect(transform(policy, data, b, (x) => x)).rejects.toThrow(/^input: expected a DeviceArray/);
        gpu.queue.submit([encoder.finish()]);
        const doubled = Array.from(data, (x) => x * 2);
        let run = 0;
        expect(Array.from(await c.read())).toEqual(doubled.map((x) => (run += x)));
        expect(Array.from(await b.read())).toEqual(Array.from(sortReference(Uint32Array.from(doubled), false)));
        expect(Array.from(await e1.read())).toEqual(Array.from({ length: 100 }, (_, i) => 5 + add + i));
        expect(Array.from(await e2.read())).toEqual(Array.from({ length: 100 }, (_, i) => 7 + i));
      }
      expect(() => makeDevicePolicy(device, { encoder: {} as GPUCommandEncoder })).toThrow(
        /^options\.encoder: expected a GPUCommandEncoder/,
      );
      // Direct calls on the device still work after recordings (nothing left pending).
      expect(await reduce(makeDevicePolicy(device), ones)).toBe(100);
    } finally {
      for (const x of [a, b, c, e1, e2, ones]) x.destroy();
      upload.destroy();
    }
  }, 300_000);
});
