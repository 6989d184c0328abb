/**
 * Access to the WebGPU entry point: `navigator.gpu` in a browser, the `webgpu` package (Dawn) in Node
 * (`#platform` picks the implementation by export condition). The Dawn instance is created lazily and
 * dropped by `releaseGpu()` so Node programs exit by themselves.
 */
import { platform } from '#platform';

let instance: GPU | null | undefined;
let loading: Promise<GPU | null> | undefined;
let loadError: string | undefined;

/** The WebGPU entry point, or null when this runtime has none (the reason is in `gpuUnavailableReason()`). */
export function getGpu(): Promise<GPU | null> {
  if (instance !== undefined) return Promise.resolve(instance);
  loading ??= platform.loadGpu().then((r) => {
    instance = r.gpu;
    loadError = r.reason;
    return r.gpu;
  });
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
