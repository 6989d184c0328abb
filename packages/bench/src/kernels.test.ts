/**
 * The bench's own kernels (their bindings declared once with core's kernelInterface, issue 15):
 * the raw-WebGPU floor sums and makes exactly its minimal Dawn calls per run (it is the per-call
 * yardstick), the copy kernel copies, the fill kernel fills, the warm-up kernel runs.
 */
import { DeviceArray, dawnCallsOf, type GpuDevice, gpuForTests } from '@webdpl/core';
import { describe, expect, it } from 'vitest';
import { copyKernel } from './copy-kernel';
import { fillOnDevice } from './gpu-data';
import { rawFloor } from './per-call';
import { GpuWarmth } from './warm';

const gpu = await gpuForTests();

describe.skipIf(!gpu)('bench kernels', () => {
  const device = gpu as GpuDevice;

  it('the raw floor sums its input with one dispatch and a 4-byte readback, nothing else', async () => {
    for (const n of [4, 4096, 65536 + 4]) {
      const host = Uint32Array.from({ length: n }, (_, i) => (i * 2654435761) & 1023);
      const a = DeviceArray.from(device, host);
      const floor = rawFloor(device, a);
      try {
        const want = host.reduce((s, x) => (s + x) >>> 0, 0);
        expect(await floor.run()).toBe(want);
        const calls = await dawnCallsOf(device, async () => expect(await floor.run()).toBe(want));
        expect(calls).toEqual([
          'device.createCommandEncoder',
          'encoder.clearBuffer',
          'encoder.beginComputePass',
          'pass.setPipeline',
          'pass.setBindGroup',
          'pass.dispatchWorkgroups',
          'pass.end',
          'encoder.copyBufferToBuffer',
          'encoder.finish',
          'queue.submit',
          'buffer.mapAsync',
          'buffer.getMappedRange',
          'buffer.unmap',
        ]);
      } finally {
        floor.destroy();
        a.destroy();
      }
    }
  });

  it('the copy kernel copies; the fill kernel fills; the warm-up runs', async () => {
    const n = 1003;
    const host = Uint32Array.from({ length: n }, (_, i) => i * 7 + 1);
    const src = DeviceArray.from(device, host);
    const dst = DeviceArray.create(device, 'u32', n);
    const filled = DeviceArray.create(device, 'u32', n);
    const floats = DeviceArray.create(device, 'f32', n);
    try {
      await copyKernel(src, dst);
      expect(await dst.read()).toEqual(host);
      await fillOnDevice(device, filled, '(i * 3u + n) & 1023u');
      expect(await filled.read()).toEqual(Uint32Array.from({ length: n }, (_, i) => (i * 3 + n) & 1023));
      await fillOnDevice(device, floats, 'f32(i) * 0.5');
      expect(await floats.read()).toEqual(Float32Array.from({ length: n }, (_, i) => i * 0.5));
      const warmth = new GpuWarmth(device);
      const t0 = performance.now();
      await warmth.run(20);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(20);
    } finally {
      for (const x of [src, dst, filled, floats]) x.destroy();
    }
  });
});
