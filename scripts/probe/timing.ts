/**
 * What the GPU-machine probes share: device time of a call on warm clocks (>= 0.5 s of GPU work
 * before each timed set, packages/bench/src/warm.ts) and a plain vec4 copy kernel, the bandwidth
 * ceiling the probes report beside their rows.
 */
import { GpuWarmth } from '../../packages/bench/src/warm';
import {
  type DeviceArray,
  fragment,
  type GpuDevice,
  getPipeline,
  gpuSelector,
  selectDevice,
} from '../../packages/core/src/index';
import { type DevicePolicy, type DevicePolicyOptions, makeDevicePolicy } from '../../packages/policies/src/index';

/** One JSON line per measurement. */
export const out = (o: object) => console.log(JSON.stringify(o));

/** Runs a probe's `main`; a failure is printed and ends the process with exit code 1. */
export function runProbe(main: () => Promise<void>): void {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}

/**
 * The probes' start: the GPU device with profiling on, a device policy that never falls back
 * (`options` added), and the first JSON line naming the device (`extra` fields added).
 */
export async function openProbe(
  options: DevicePolicyOptions = {},
  extra: object = {},
): Promise<{ device: GpuDevice; policy: DevicePolicy }> {
  const device = (await selectDevice(gpuSelector)) as GpuDevice;
  const policy = makeDevicePolicy(device, { ...options, fallback: 'error' });
  out({ device: device.info.name, sub: [device.info.subgroupMinSize, device.info.subgroupMaxSize], ...extra });
  device.queue.setProfiling(true);
  return { device, policy };
}

/** log2 sizes from PROBE_SIZES (comma-separated), else `fallback`. */
export function probeSizes(fallback: string): number[] {
  return (process.env.PROBE_SIZES ?? fallback).split(',').map(Number);
}

let warmth: GpuWarmth | undefined;

/** Device time (ms, median of `reps`) of `f`, timed on warm clocks; the queue must be profiling. */
export async function timeIt(device: GpuDevice, reps: number, f: () => Promise<unknown>): Promise<number> {
  await f();
  warmth ??= new GpuWarmth(device);
  await warmth.before();
  const ts: number[] = [];
  for (let r = 0; r < reps; r++) {
    device.queue.resetDeviceTime();
    await f();
    ts.push(device.queue.totalDeviceTimeNs);
  }
  warmth.after();
  ts.sort((a, b) => a - b);
  return (ts[Math.floor(ts.length / 2)] as number) / 1e6;
}

const COPY = fragment({
  name: 'probe_copy',
  code: `@group(0) @binding(0) var<storage, read> a: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> b: array<vec4<u32>>;
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  let n = arrayLength(&a);
  for (var i = g.x; i < n; i += nw.x * 256u) { b[i] = a[i]; }
}`,
});

/** Device time (ms) of the vec4 copy of `a` (length a multiple of 4) into `b`, 4096 workgroups. */
export async function timeCopy(device: GpuDevice, reps: number, a: DeviceArray, b: DeviceArray): Promise<number> {
  const pipeline = await getPipeline(device, COPY);
  const bytes = a.length * 4;
  return timeIt(device, reps, () =>
    device.queue.submit('copy', (rec) => {
      const p = rec.beginPass();
      p.setPipeline(pipeline);
      p.setBindGroup(
        0,
        device.gpu.createBindGroup({
          layout: pipeline.getBindGroupLayout(0),
          entries: [
            { binding: 0, resource: { buffer: a.buffer, offset: a.byteOffset, size: bytes } },
            { binding: 1, resource: { buffer: b.buffer, offset: b.byteOffset, size: bytes } },
          ],
        }),
      );
      p.dispatchWorkgroups(4096);
      p.end();
    }),
  );
}
