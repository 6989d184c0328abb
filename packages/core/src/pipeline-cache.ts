/**
 * Compute pipelines cached per device, keyed by the linked WGSL source (which holds every parameter of
 * every fragment in its mangled names). Compilation errors become GpuValidationErrors naming the module.
 */
import type { GpuDevice } from './device';
import { GpuValidationError } from './errors';
import { link, type WgslFragment } from './wgsl/fragment';

const caches = new WeakMap<GpuDevice, Map<string, Promise<GPUComputePipeline>>>();

/**
 * The compute pipeline of `root` (entry point `main` unless given) on `device`, compiled once.
 * Workgroup memory is checked against the device limit at link time.
 */
export function getPipeline(device: GpuDevice, root: WgslFragment, entryPoint = 'main'): Promise<GPUComputePipeline> {
  let cache = caches.get(device);
  if (!cache) {
    cache = new Map();
    caches.set(device, cache);
  }
  // Fast path: a fragment's mangled name carries every parameter of it, so name + entry point find a
  // compiled pipeline without re-linking the module (linking costs tens of microseconds per call).
  const fast = `${entryPoint}\u0000${root.name}\u0000${root.code.length}`;
  const hit = cache.get(fast);
  if (hit) return hit;
  const mod = link(root, device.limits.maxComputeWorkgroupStorageSize);
  const key = `${entryPoint}\n${mod.code}`;
  let p = cache.get(key);
  if (!p) {
    p = compile(device, root.name, mod.code, entryPoint);
    cache.set(key, p);
    p.catch(() => {
      cache?.delete(key);
      cache?.delete(fast);
    });
  }
  cache.set(fast, p);
  return p;
}

async function compile(device: GpuDevice, name: string, code: string, entryPoint: string): Promise<GPUComputePipeline> {
  device.queue.checkAlive();
  const gpu = device.gpu;
  gpu.pushErrorScope('validation');
  const module = gpu.createShaderModule({ code, label: name });
  const pipeline = gpu.createComputePipeline({ layout: 'auto', compute: { module, entryPoint }, label: name });
  const err = await gpu.popErrorScope();
  if (err) {
    const info = await module.getCompilationInfo();
    const msgs = info.messages
      .filter((m) => m.type === 'error')
      .map((m) => `${m.lineNum}:${m.linePos} ${m.message}\n    ${code.split('\n')[m.lineNum - 1] ?? ''}`)
      .join('\n');
    throw new GpuValidationError(`WGSL module '${name}' failed to compile: ${err.message}${msgs ? `\n${msgs}` : ''}`);
  }
  return pipeline;
}

/** Number of pipelines compiled on `device` (for tests and diagnostics). */
export function pipelineCount(device: GpuDevice): number {
  let n = 0;
  for (const k of caches.get(device)?.keys() ?? []) if (!k.includes('\u0000')) n++;
  return n;
}
