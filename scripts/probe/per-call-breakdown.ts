/**
 * Where a GPU call's host time goes (H100 diagnosis for issue 12): microseconds per call at 2^12 of
 * the raw-WebGPU floor, the transform-reduce engine called directly, the public reduce through the
 * pattern layer, and Queue.submit alone (an empty recording plus a 4-byte readback), interleaved,
 * on warm clocks. Bundle: node scripts/probe/build.mjs; run: node .probe/per-call-breakdown.mjs
 */

import { identityLoad, transformReduceDevice } from '../../packages/algorithms/src/engines/transform-reduce';
import { reduce } from '../../packages/algorithms/src/index';
import { rawFloor } from '../../packages/bench/src/per-call';
import { GpuWarmth } from '../../packages/bench/src/warm';
import {
  combinerOf,
  DeviceArray,
  type GpuDevice,
  gpuSelector,
  plus,
  releaseDevices,
  selectDevice,
} from '../../packages/core/src/index';
import { makeDevicePolicy } from '../../packages/policies/src/index';

async function main(): Promise<void> {
  const device = (await selectDevice(gpuSelector)) as GpuDevice;
  const n = 1 << Number(process.env.PROBE_LOG2 ?? 12);
  const a = DeviceArray.from(
    device,
    Uint32Array.from({ length: n }, (_, i) => i & 7),
  );
  const policy = makeDevicePolicy(device, { fallback: 'error' });
  const floor = rawFloor(device, a);
  const buf = device.gpu.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const variants: Record<string, () => Promise<unknown>> = {
    floor: () => floor.run(),
    engine: () =>
      transformReduceDevice(device, {
        label: 'r',
        inputs: [a],
        load: identityLoad('u32'),
        combiner: combinerOf(plus, 'u32'),
        commutative: true,
      }),
    api: () => reduce(policy, a),
    submitReadback: () =>
      device.queue.submit('rb', (rec) => {
        rec.readback(buf, 0, 4);
      }),
    submitEmpty: () => device.queue.submit('empty', () => {}),
    workDone: () => device.gpu.queue.onSubmittedWorkDone(),
  };
  const warmth = new GpuWarmth(device);
  const times: Record<string, number[]> = {};
  for (let round = 0; round < 7; round++) {
    await warmth.before();
    for (const [name, f] of Object.entries(variants)) {
      for (let k = 0; k < 20; k++) await f();
      const t0 = performance.now();
      let calls = 0;
      while (performance.now() - t0 < 60) {
        await f();
        calls++;
      }
      (times[name] ??= []).push(((performance.now() - t0) / calls) * 1000);
    }
    warmth.after();
  }
  const med = (xs: number[]) => xs.slice().sort((x, y) => x - y)[Math.floor(xs.length / 2)] as number;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(times)) out[k] = Math.round(med(v) * 10) / 10;
  console.log(JSON.stringify({ n, us: out }));
  warmth.destroy();
  floor.destroy();
  a.destroy();
  releaseDevices();
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
