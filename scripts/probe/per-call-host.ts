/**
 * Host time of a GPU call before its native submit (issue 12): per call on DeviceArrays at 2^10
 * (PROBE_LOG2), the JavaScript time from the call until Dawn's `queue.submit` is entered (the device's
 * GPUQueue.submit wrapped), and the whole call's time, for the raw-WebGPU floor and reduce /
 * inclusiveScan / transform / copyIf, interleaved call by call, medians of PROBE_CALLS (3000) calls
 * each (PROBE_ONLY: a comma-separated subset; PROBE_BATCH: calls of a variant in a row). inclusiveScan and transform are followed by
 * `queue.finish()` as in per-call.ts. "tail": the JavaScript after the call's last wait on Dawn
 * settled (a mapAsync, or finish's onSubmittedWorkDone) until the call returned; host + tail is the
 * call's JavaScript around the GPU work (its ratio to the floor's is what a slower host multiplies).
 * "mean": the mean total per call, which counts the garbage collector's pauses (medians do not).
 * PROBE_DAWN_CALLS=1 prints the Dawn calls of one warm call of each variant instead (their
 * queue.finish() included: onSubmittedWorkDone).
 * Bundle: ./node_modules/.bin/esbuild scripts/probe/per-call-host.ts --bundle --platform=node
 * --format=esm --outfile=.probe/per-call-host.mjs --external:webgpu; run: node .probe/per-call-host.mjs
 */

import { copyIf, inclusiveScan, reduce, transform } from '../../packages/algorithms/src/index';
import { rawFloor } from '../../packages/bench/src/per-call';
import {
  DeviceArray,
  dawnCallsOf,
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
  const cleanup = () => {
    floor.destroy();
    a.destroy();
    out.destroy();
    releaseDevices();
  };
  if (process.env.PROBE_DAWN_CALLS) {
    await printDawnCalls(device, variants);
    cleanup();
    return;
  }
  const gq = device.gpu.queue;
  const nativeSubmit = gq.submit.bind(gq);
  // Time of the first native submit of the current call (ms since its start); -1 before it.
  let start = 0;
  let firstSubmit = -1;
  gq.submit = (buffers: Iterable<GPUCommandBuffer>) => {
    if (firstSubmit < 0) firstSubmit = performance.now() - start;
    return nativeSubmit(buffers);
  };
  // When the call's last wait on Dawn (a mapAsync, onSubmittedWorkDone) settled: what follows it
  // until the call returns is the JavaScript after the GPU work ("tail").
  let settled = 0;
  const scratch = device.gpu.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const bufferProto = Object.getPrototypeOf(scratch) as { mapAsync: (...a: unknown[]) => Promise<void> };
  scratch.destroy();
  const nativeMap = bufferProto.mapAsync;
  bufferProto.mapAsync = function (this: unknown, ...args: unknown[]) {
    return nativeMap.apply(this, args).then(() => {
      settled = performance.now();
    });
  };
  const nativeDone = gq.onSubmittedWorkDone.bind(gq);
  gq.onSubmittedWorkDone = () =>
    nativeDone().then(() => {
      settled = performance.now();
      return undefined;
    });
  await timeCalls(variants, calls, n);
  gq.submit = nativeSubmit;
  bufferProto.mapAsync = nativeMap;
  gq.onSubmittedWorkDone = nativeDone;
  cleanup();
  async function timeCalls(variants: Record<string, () => Promise<unknown>>, calls: number, n: number): Promise<void> {
    // PROBE_ONLY=transform,copyIf: those variants alone (for CPU profiles of one call).
    const only = process.env.PROBE_ONLY?.split(',');
    const names = Object.keys(variants).filter((v) => !only || only.includes(v));
    for (const f of Object.values(variants)) for (let k = 0; k < 50; k++) await f();
    const host: Record<string, number[]> = {};
    const total: Record<string, number[]> = {};
    const tail: Record<string, number[]> = {};
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
        const end = performance.now();
        const t = end - start;
        (host[name] ??= []).push(firstSubmit * 1000);
        (total[name] ??= []).push(t * 1000);
        (tail[name] ??= []).push((end - settled) * 1000);
      }
    }
    const med = (xs: number[]) => xs.slice().sort((x, y) => x - y)[Math.floor(xs.length / 2)] as number;
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    const rows = names.map((name) => {
      const h = med(host[name] as number[]);
      const t = med(total[name] as number[]);
      const tl = med(tail[name] as number[]);
      // The mean total counts the garbage collector's pauses, as per-call-interleaved.ts's means do.
      return { name, host: h, total: t, tail: tl, mean: mean(total[name] as number[]) };
    });
    const f = (rows.find((r) => r.name === 'floor') ?? rows[0]) as {
      host: number;
      total: number;
      tail: number;
      mean: number;
    };
    const mode = batch > 1 ? `in batches of ${batch}` : 'call by call';
    console.log(`per call at 2^${Math.log2(n)}, medians of ${calls} calls of each, interleaved ${mode} (us):`);
    console.log(
      `  ${'variant'.padEnd(14)}${'host'.padStart(8)}${'x floor'.padStart(9)}${'tail'.padStart(8)}${'host+tail'.padStart(10)}${'x floor'.padStart(9)}${'total'.padStart(9)}${'x floor'.padStart(9)}${'mean'.padStart(9)}${'x floor'.padStart(9)}`,
    );
    for (const r of rows) {
      const ht = r.host + r.tail;
      console.log(
        `  ${r.name.padEnd(14)}${r.host.toFixed(1).padStart(8)}${(r.host / f.host).toFixed(2).padStart(9)}${r.tail.toFixed(1).padStart(8)}${ht.toFixed(1).padStart(10)}${(ht / (f.host + f.tail)).toFixed(2).padStart(9)}${r.total.toFixed(1).padStart(9)}${(r.total / f.total).toFixed(2).padStart(9)}${r.mean.toFixed(1).padStart(9)}${(r.mean / f.mean).toFixed(2).padStart(9)}`,
      );
    }
  }
}

/** PROBE_DAWN_CALLS=1: the Dawn calls of one warm call of each variant, in order. */
async function printDawnCalls(device: GpuDevice, variants: Record<string, () => Promise<unknown>>): Promise<void> {
  console.log('Dawn calls of one warm call:');
  for (const [name, f] of Object.entries(variants)) {
    for (let k = 0; k < 3; k++) await f();
    const made = await dawnCallsOf(device, f);
    console.log(`  ${name} (${made.length}): ${made.join(', ')}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
