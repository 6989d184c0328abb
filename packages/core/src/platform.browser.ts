/**
 * Core's runtime in browsers (and any runtime that is not Node: Deno, web workers): WebGPU is
 * `navigator.gpu`; nothing here imports a Node module. Selected through the `#platform` import.
 */
import type { CorePlatform } from './platform-types';

type Nav = { gpu?: GPU; hardwareConcurrency?: number };

function nav(): Nav | undefined {
  return (globalThis as { navigator?: Nav }).navigator;
}

export const platform: CorePlatform = {
  runtime: 'browser',
  loadGpu: async () => {
    const gpu = nav()?.gpu;
    if (gpu) return { gpu };
    const secure = (globalThis as { isSecureContext?: boolean }).isSecureContext;
    return {
      gpu: null,
      reason:
        secure === false
          ? 'navigator.gpu is missing: WebGPU needs a secure context (https or http://localhost)'
          : 'this runtime has no WebGPU (navigator.gpu is missing)',
    };
  },
  hostCores: () => {
    const n = nav()?.hardwareConcurrency;
    return typeof n === 'number' && n > 0 ? n : 1;
  },
  arch: 'unknown',
  sharedMemory: () =>
    typeof SharedArrayBuffer !== 'undefined' &&
    (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true,
};
