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

/**
 * Instances dropped by `releaseGpu()`, held a little longer. Dawn for Node (webgpu 0.6.2) crashes
 * (SIGSEGV, aborts in pthread code, or hangs) when an instance is garbage-collected before its event
 * processing has run after devices of it were destroyed: `device.destroy()`, dropping the instance
 * and a GC in the same task reproduce it every time; one more task in between, never. A test process
 * that called releaseDevices() died that way in about one full run in three. So a dropped instance
 * stays referenced for RETIRE_MS after its release; then the GC may take it.
 */
const retired = new Set<GPU>();
const RETIRE_MS = 50;

/** Drops the WebGPU entry point; the next `getGpu()` creates a new one. */
export function releaseGpu(): void {
  const old = instance;
  instance = undefined;
  loading = undefined;
  loadError = undefined;
  if (old) {
    retired.add(old);
    setTimeout(() => retired.delete(old), RETIRE_MS);
  }
}
