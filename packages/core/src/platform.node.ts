/**
 * Core's runtime in Node: WebGPU from the `webgpu` package (Dawn, an optional peer dependency loaded
 * on first use), cores and architecture from `node:os`. Selected through the `#platform` import's
 * `node` condition; never part of a browser bundle.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import type { CorePlatform, GpuLoad } from './platform-types';

async function loadDawn(): Promise<GpuLoad> {
  // Mesa warns on every process when XDG_RUNTIME_DIR is unset; give it a private folder.
  if (!process.env.XDG_RUNTIME_DIR) process.env.XDG_RUNTIME_DIR = mkdtempSync(join(os.tmpdir(), 'webdpl-xdg-'));
  let mod: { create(options: string[]): GPU; globals: object };
  try {
    mod = (await import('webgpu')) as typeof mod;
  } catch (e) {
    return {
      gpu: null,
      reason: `the 'webgpu' package (Dawn for Node, an optional peer dependency: npm install webgpu) could not be loaded: ${(e as Error).message}`,
    };
  }
  // GPUBufferUsage, GPUMapMode... are needed as globals by code written for browsers.
  for (const [k, v] of Object.entries(mod.globals)) {
    if (!(k in globalThis)) (globalThis as Record<string, unknown>)[k] = v;
  }
  // Timestamp quantization guards browsers against timing attacks; in Node it only blurs device
  // times (to 65.5 us steps on NVIDIA), so it is off. WEBDPL_DAWN_FLAGS adds more Dawn options.
  const extra = (process.env.WEBDPL_DAWN_FLAGS ?? '').split(/\s+/).filter(Boolean);
  return { gpu: mod.create(['disable-dawn-features=timestamp_quantization', ...extra]) };
}

export const platform: CorePlatform = {
  runtime: 'node',
  loadGpu: loadDawn,
  hostCores: () =>
    Math.max(1, typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length),
  arch: process.arch,
  sharedMemory: () => typeof SharedArrayBuffer !== 'undefined',
};
