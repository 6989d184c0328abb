/**
 * What core needs from its runtime, implemented once per platform: `platform.node.ts` (Dawn through
 * the `webgpu` package, `node:os`) and `platform.browser.ts` (`navigator.gpu`, `navigator`). The
 * package's `imports` field maps `#platform` to one of them by export condition, so a browser bundle
 * never sees a Node module and the Node build never looks at `navigator.gpu`.
 */

/** The WebGPU entry point, or why there is none. */
export type GpuLoad =
  | { readonly gpu: GPU; readonly reason?: undefined }
  | { readonly gpu: null; readonly reason: string };

export interface CorePlatform {
  /** Which implementation this is. */
  readonly runtime: 'node' | 'browser';
  /** Creates (Node) or finds (browser) the WebGPU entry point. Called once until `releaseGpu()`. */
  loadGpu(): Promise<GpuLoad>;
  /** Logical cores of the host. */
  hostCores(): number;
  /** The host's CPU architecture, or 'unknown' where the runtime does not say. */
  readonly arch: string;
  /** Whether typed arrays over SharedArrayBuffer can be shared with workers (cross-origin isolation in browsers). */
  sharedMemory(): boolean;
}
