/**
 * Access to the WebGPU entry point: `navigator.gpu` in a browser, the `webgpu` package (Dawn) in Node.
 * The Dawn instance is created lazily and dropped by `releaseGpu()` so Node programs exit by themselves.
 */

let instance: GPU | null | undefined;
let loading: Promise<GPU | null> | undefined;
let loadError: string | undefined;

function isNode(): boolean {
  const p = (globalThis as { process?: { versions?: { node?: string } } }).process;
  return typeof p?.versions?.node === 'string';
}

async function prepareNodeEnvironment(): Promise<void> {
  // Mesa warns on every process when XDG_RUNTIME_DIR is unset; give it a private folder.
  if (!process.env.XDG_RUNTIME_DIR) {
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    process.env.XDG_RUNTIME_DIR = mkdtempSync(join(tmpdir(), 'webdpl-xdg-'));
  }
}

async function loadNodeGpu(): Promise<GPU | null> {
  await prepareNodeEnvironment();
  try {
    const mod = (await import('webgpu')) as { create(options: string[]): GPU; globals: object };
    // GPUBufferUsage, GPUMapMode... are needed as globals by code written for browsers.
    for (const [k, v] of Object.entries(mod.globals)) {
      if (!(k in globalThis)) (globalThis as Record<string, unknown>)[k] = v;
    }
    // Timestamp quantization guards browsers against timing attacks; in Node it only blurs device
    // times (to 65.5 us steps on NVIDIA), so it is off. WEBDPL_DAWN_FLAGS adds more Dawn options.
    const extra = (process.env.WEBDPL_DAWN_FLAGS ?? '').split(/\s+/).filter(Boolean);
    return mod.create(['disable-dawn-features=timestamp_quantization', ...extra]);
  } catch (e) {
    loadError = `the 'webgpu' package could not be loaded: ${(e as Error).message}`;
    return null;
  }
}

/** The WebGPU entry point, or null when this runtime has none (the reason is in `gpuUnavailableReason()`). */
export function getGpu(): Promise<GPU | null> {
  if (instance !== undefined) return Promise.resolve(instance);
  if (!loading) {
    const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator;
    loading = (
      nav?.gpu && !isNode() ? Promise.resolve(nav.gpu) : isNode() ? loadNodeGpu() : Promise.resolve(null)
    ).then((g) => {
      instance = g;
      if (!g && !loadError) loadError = 'this runtime has no WebGPU (navigator.gpu is missing)';
      return g;
    });
  }
  return loading;
}

/** Why no WebGPU entry point exists, when `getGpu()` returned null. */
export function gpuUnavailableReason(): string | undefined {
  return loadError;
}

/** Drops the WebGPU entry point; the next `getGpu()` creates a new one. */
export function releaseGpu(): void {
  instance = undefined;
  loading = undefined;
  loadError = undefined;
}
