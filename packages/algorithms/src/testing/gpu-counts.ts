/** Counting what a GPU call creates (tests of plan reuse: a cached call creates nothing). */
import type { GpuDevice } from '@webdpl/core';

const CREATORS = [
  'createBuffer',
  'createBindGroup',
  'createComputePipeline',
  'createComputePipelineAsync',
  'createShaderModule',
  'createBindGroupLayout',
  'createPipelineLayout',
] as const;

/** Counts calls of the device's create* methods and queue.writeBuffer while `f` runs. */
export async function countCreations(device: GpuDevice, f: () => Promise<unknown>): Promise<Record<string, number>> {
  const gpu = device.gpu as unknown as Record<string, unknown>;
  const queue = device.gpu.queue as unknown as Record<string, unknown>;
  const counts: Record<string, number> = {};
  const wrap = (target: Record<string, unknown>, name: string) => {
    const original = target[name] as (...a: unknown[]) => unknown;
    counts[name] = 0;
    target[name] = (...args: unknown[]) => {
      counts[name] = (counts[name] ?? 0) + 1;
      return original.apply(target, args);
    };
    return () => {
      delete target[name];
    };
  };
  const restore = [...CREATORS.map((m) => wrap(gpu, m)), wrap(queue, 'writeBuffer')];
  try {
    await f();
  } finally {
    for (const r of restore) r();
  }
  return counts;
}
