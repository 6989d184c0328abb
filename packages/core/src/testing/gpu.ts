/**
 * Test support: the GPU device tests run on. With an adapter present (lavapipe in CI, a real GPU when
 * there is one) GPU suites run for real. Without one they are skipped with a one-line reason, unless
 * WEBDPL_REQUIRE_GPU=1, which turns "no adapter" into a failure (CI sets it).
 */
import type { GpuDevice } from '../device';
import { noGpuReason } from '../device';
import type { DeviceArray } from '../device-array';
import { gpuSelector, selectDevice } from '../selectors';

let cached: Promise<GpuDevice | undefined> | undefined;
let warned = false;

/** True when WEBDPL_REQUIRE_GPU asks for GPU tests to fail rather than skip without an adapter. */
export function gpuRequired(): boolean {
  const v = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.WEBDPL_REQUIRE_GPU;
  return v === '1' || v === 'true';
}

/** The GPU device for tests, or undefined (with a printed reason) when there is none and none is required. */
export function gpuForTests(): Promise<GpuDevice | undefined> {
  cached ??= (async () => {
    const reason = await noGpuReason();
    if (reason) {
      if (gpuRequired())
        throw new Error(`WEBDPL_REQUIRE_GPU=1 but no GPU adapter was found: ${reason}. Run 'pnpm setup:gpu'.`);
      if (!warned) {
        warned = true;
        console.warn(
          `[webdpl] GPU tests skipped: no GPU adapter (${reason}). Run 'pnpm setup:gpu' to install lavapipe.`,
        );
      }
      return undefined;
    }
    return (await selectDevice(gpuSelector)) as GpuDevice;
  })();
  return cached;
}

/**
 * Runs one compute pass of `pipeline` over `workgroups` workgroups with `arrays` bound at bindings
 * 0, 1, ... in order (kernel tests of building blocks).
 */
export async function dispatchOnce(
  device: GpuDevice,
  pipeline: GPUComputePipeline,
  arrays: readonly DeviceArray[],
  workgroups: number,
): Promise<void> {
  await device.queue.submit('kernel test', (rec) => {
    const pass = rec.beginPass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(
      0,
      device.gpu.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: arrays.map((x, binding) => ({ binding, resource: { buffer: x.buffer } })),
      }),
    );
    pass.dispatchWorkgroups(workgroups);
    pass.end();
  });
}
