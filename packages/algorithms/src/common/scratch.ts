/**
 * Scratch buffers reused across calls on the same device: one buffer per key, grown (to the next
 * power of two) when a call needs more. Safe to reuse between calls because a queue runs in order.
 */
import type { GpuDevice } from '@webdpl/core';

/** A scratch buffer and its size (GPUBuffer.size is a native getter call: read once, issue 12). */
interface Scratch {
  readonly buffer: GPUBuffer;
  readonly size: number;
}

const pools = new WeakMap<GpuDevice, Map<string, Scratch>>();

/** A storage buffer of at least `bytes` bytes for `key` on `device`. Contents are undefined. */
export function scratchBuffer(device: GpuDevice, key: string, bytes: number): GPUBuffer {
  let pool = pools.get(device);
  if (!pool) {
    pool = new Map();
    pools.set(device, pool);
  }
  const need = Math.max(256, bytes);
  let b = pool.get(key);
  if (!b || b.size < need) {
    if (b) device.queue.retire(b.buffer);
    const size = Math.min(2 ** Math.ceil(Math.log2(need)), Math.max(need, device.limits.maxBufferSize));
    const bytes16 = Math.ceil(size / 16) * 16;
    const buffer = device.gpu.createBuffer({
      size: bytes16,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
      label: `webdpl scratch ${key}`,
    });
    b = { buffer, size: bytes16 };
    pool.set(key, b);
  }
  return b.buffer;
}
