/**
 * Host time of a GPU call before its native submit (issue 12): per call on DeviceArrays at 2^10
 * (PROBE_LOG2), the JavaScript time from the call until Dawn's `queue.submit` is entered (the device's
 * GPUQueue.submit wrapped), and the whole call's time, for the raw-WebGPU floor and reduce /
 * inclusiveScan / transform / copyIf, interleaved call by call, medians of PROBE_CALLS (3000) calls
 * each (PROBE_ONLY: a comma-separated subset; PROBE_BATCH: calls of a variant in a row). inclusiveScan and transform are followed by
 * `queue.finish()` as in per-call.ts.
 * Bundle: ./node_modules/.bin/esbuild scripts/probe/per-call-host.ts --bundle --platform=node
 * --format=esm --outfile=.probe/per-call-host.mjs --external:webgpu; run: node .probe/per-call-host.mjs
 */

import { copyIf, inclusiveScan, reduce, transform } from '../../packages/algorithms/src/index';
import { rawFloor } from '../../packages/bench/src/per-call';
import {
  DeviceArray,
  type GpuDevice,
  gpuSelector,
  lambda,
  releaseDevices,
  selectDevice,
} from '../../packages/core/src/index';
import { makeDevicePolicy } from '../../packages/policies/src/index';

const TRANSFORM = lambda((x: number) => x * 3 + 1);
const IS_EVEN = lambda((x: number) => (x & 1) === 0);

async function main(): Promise<void> {
  const device = (await selectDevice(gpuSelector)) as GpuDevice;
  const n = 1 << Number(process.env.PROBE_LOG2 ?? 10);
  const calls = Number(process.env.PROBE_CALLS ?? 3000);
  const a = DeviceArray.from(
    device,
    Uint32Array.from({ length: n }, (_, i) => (i * 2654435761) & 1023),
  );
  const out = DeviceArray.create(device, 'u32', n);
  const policy = makeDevicePolicy(device, { fallback: 'error' });
  const floor = rawFloor(device, a);
  const q = device.queue;
  const gq = device.gpu.queue;
  const nativeSubmit = gq.submit.bind(gq);
  // Time of the first native submit of the current call (ms since its start); -1 before it.
  let start = 0;
  let firstSubmit = -1;
  gq.submit = (buffers: Iterable<GPUCommandBuffer>) => {
    if (firstSubmit < 0) firstSubmit = performance.now() - start;
    return nativeSubmit(buffers);
  };
  const variants: Record<string, () => Promise<unknown>> = {
    floor: () => floor.run(),
    reduce: () => reduce(policy, a),
    inclusiveScan: async () => {
      await inclusiveScan(policy, a, out);
      await q.finish();
    },
    transform: async () => {
      await transform(policy, a, out, TRANSFORM);
      await q.finish();
    },
    copyIf: () => copyIf(policy, a, out, IS_EVEN),
  };
  // PROBE_ONLY=transform,copyIf: those variants alone (for CPU profiles of one call).
  const only = process.env.PROBE_ONLY?.split(',');
  const names = Object.keys(variants).filter((v) => !only || only.includes(v));
  for (const f of Object.values(variants)) for (let k = 0; k < 50; k++) await f();
  const host: Record<string, number[]> = {};
  const total: Record<string, number[]> = {};
  // PROBE_BATCH=b: b calls of a variant in a row (per-call.ts times batches), else 1 (call by call).
  const batch = Math.max(1, Number(process.env.PROBE_BATCH ?? 1));
  for (let i = 0; i < calls; i += batch) {
    // Rotated each round: no variant always comes first.
    for (let k = 0; k < names.length * batch; k++) {
      const name = names[(Math.floor(k / batch) + i / batch) % names.length] as string;
      const f = variants[name] as () => Promise<unknown>;
      firstSubmit = -1;
      start = performance.now();
      await f();
      const t = performance.now() - start;
      (host[name] ??= []).push(firstSubmit * 1000);
      (total[name] ??= []).push(t * 1000);
    }
  }
  gq.submit = nativeSubmit;
  const med = (xs: number[]) => xs.slice().sort((x, y) => x - y)[Math.floor(xs.length / 2)] as number;
  const rows = names.map((name) => {
    const h = med(host[name] as number[]);
    const t = med(total[name] as number[]);
    return { name, host: h, total: t };
  });
  const f = (rows.find((r) => r.name === 'floor') ?? rows[0]) as { host: number; total: number };
  const mode = batch > 1 ? `in batches of ${batch}` : 'call by call';
  console.log(`per call at 2^${Math.log2(n)}, medians of ${calls} calls of each, interleaved ${mode} (us):`);
  console.log(
    `  ${'variant'.padEnd(14)}${'host'.padStart(8)}${'x floor'.padStart(9)}${'total'.padStart(9)}${'x floor'.padStart(9)}`,
  );
  for (const r of rows) {
    console.log(
      `  ${r.name.padEnd(14)}${r.host.toFixed(1).padStart(8)}${(r.host / f.host).toFixed(2).padStart(9)}${r.total.toFixed(1).padStart(9)}${(r.total / f.total).toFixed(2).padStart(9)}`,
    );
  }
  floor.destroy();
  a.destroy();
  out.destroy();
  releaseDevices();
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
