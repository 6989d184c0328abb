/**
 * Devices whose storage bindings hold a few KiB (OpenOptions.limits), for tests of the paths beyond
 * one binding at small sizes. The implementation still grants its own limit, so every bind group
 * is measured: `largest()` is the largest storage binding the device's bind groups used.
 */
import { type GpuDevice, gpuSelector, openDevice, selectCandidate } from '@webdpl/core';

export interface SmallBindings {
  readonly device: GpuDevice;
  /** Bytes of the largest storage (non-uniform) binding created so far. */
  largest(): number;
}

/** Opens a device of the test adapter whose maxStorageBufferBindingSize is `bytes`. */
export async function smallBindings(bytes: number): Promise<SmallBindings> {
  const device = (await openDevice(await selectCandidate(gpuSelector), {
    limits: { maxStorageBufferBindingSize: bytes },
  })) as GpuDevice;
  let largest = 0;
  const gpu = device.gpu;
  const create = gpu.createBindGroup.bind(gpu);
  gpu.createBindGroup = (desc: GPUBindGroupDescriptor) => {
    for (const e of desc.entries) {
      const r = e.resource as GPUBufferBinding;
      if (!r.buffer || r.buffer.usage & GPUBufferUsage.UNIFORM) continue;
      largest = Math.max(largest, r.size ?? r.buffer.size - (r.offset ?? 0));
    }
    return create(desc);
  };
  return { device, largest: () => largest };
}
