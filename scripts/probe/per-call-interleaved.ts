/**
 * Per call on resident data, every call interleaved with the raw-WebGPU floor (issue 12): in each
 * round (after the bench's warm-up, GpuWarmth) the variants are called one after another, rotating the order,
 * for about T ms per variant; prints per variant the mean microseconds per call (median over
 * rounds), the host time until its last native queue.submit returned, the submissions per call,
 * the native submit's own time, and with timestamps the device time of its passes.
 * Variants: floor (packages/bench/src/per-call.ts), reduce (API), engine (the transform-reduce
 * engine alone), scan / transform (API, then queue.finish()), copyIf (API), empty (an empty submit).
 * Env: W (comma-separated variants), L (log2 n, default 12), R (rounds, default 5), T (ms, default 150),
 * TUNING (the policy's tuning overrides as JSON, e.g. '{"inclusiveScan":{"itemsPerThread":16}}').
 * Bundle: node scripts/probe/build.mjs; run: R=7 node .probe/per-call-interleaved.mjs
 */

import { identityLoad, transformReduceDevice } from '../../packages/algorithms/src/engines/transform-reduce';
import { copyIf, inclusiveScan, reduce, transform } from '../../packages/algorithms/src/index';
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

const which = (process.env.W ?? 'floor,reduce,engine,scan,transform,copyIf,empty').split(',');
const device = (await selectDevice(gpuSelector)) as GpuDevice;
const n = 1 << Number(process.env.L ?? 12);
const a = DeviceArray.from(
  device,
  Uint32Array.from({ length: n }, (_, i) => i & 7),
);
const out = DeviceArray.create(device, 'u32', n);
const p = makeDevicePolicy(device, {
  fallback: 'error',
  ...(process.env.TUNING ? { tuning: JSON.parse(process.env.TUNING) } : {}),
});
const floor = rawFloor(device, a);
const f: Record<string, () => Promise<unknown>> = {
  floor: () => floor.run(),
  reduce: () => reduce(p, a),
  engine: () =>
    transformReduceDevice(device, {
      label: 'r',
      inputs: [a],
      load: identityLoad('u32'),
      combiner: combinerOf(plus, 'u32'),
      commutative: true,
    }),
  scan: async () => {
    await inclusiveScan(p, a, out);
    await device.queue.finish();
  },
  transform: async () => {
    await transform(p, a, out, (x: number) => x + 1);
    await device.queue.finish();
  },
  copyIf: () => copyIf(p, a, out, (x: number) => x > 3),
  empty: () => device.queue.submit('empty', () => {}),
};
const warmth = new GpuWarmth(device);
// Wrapped to time the native submit and note when the last one of a call returned.
const q = device.gpu.queue;
const os = q.submit.bind(q);
let subAt = 0;
let subs = 0;
let subDur = 0;
q.submit = (cb: Iterable<GPUCommandBuffer>) => {
  const s0 = performance.now();
  const r = os(cb);
  subAt = performance.now();
  subDur += subAt - s0;
  subs++;
  return r;
};
const tot: Record<string, number[]> = {};
const pre: Record<string, number[]> = {};
const nsub: Record<string, number> = {};
const T = Number(process.env.T ?? 150);
for (let round = 0; round < Number(process.env.R ?? 5); round++) {
  await warmth.before();
  for (const w of which) for (let i = 0; i < 20; i++) await f[w]();
  const acc: Record<string, number> = {};
  const accPre: Record<string, number> = {};
  const cnt: Record<string, number> = {};
  const t0 = performance.now();
  let r = 0;
  while (performance.now() - t0 < T * which.length) {
    for (let j = 0; j < which.length; j++) {
      const w = which[(j + r) % which.length];
      const s0 = subs;
      const a0 = performance.now();
      subAt = a0;
      await f[w]();
      const a1 = performance.now();
      acc[w] = (acc[w] ?? 0) + (a1 - a0);
      accPre[w] = (accPre[w] ?? 0) + (subAt - a0);
      cnt[w] = (cnt[w] ?? 0) + 1;
      nsub[w] = subs - s0;
    }
    r++;
  }
  for (const w of which) {
    (tot[w] ??= []).push((acc[w] / cnt[w]) * 1000);
    (pre[w] ??= []).push((accPre[w] / cnt[w]) * 1000);
  }
}
const med = (x: number[]) => [...x].sort((u, v) => u - v)[x.length >> 1];
console.log(
  `n=2^${Math.log2(n)} us/call total (host before last submit) [submits]: ` +
    which.map((w) => `${w} ${med(tot[w]).toFixed(1)} (${med(pre[w]).toFixed(1)}) [${nsub[w]}]`).join('  '),
);
const sd: string[] = [];
for (const w of which) {
  for (let i = 0; i < 20; i++) await f[w]();
  subDur = 0;
  const s0 = subs;
  const t0 = performance.now();
  while (performance.now() - t0 < 300) await f[w]();
  sd.push(`${w} ${((subDur / (subs - s0)) * 1000).toFixed(1)}`);
}
console.log(`native queue.submit us: ${sd.join('  ')}`);
if (device.features.has('timestamp-query')) {
  device.queue.setProfiling(true);
  const dt: string[] = [];
  for (const w of which) {
    if (w === 'floor' || w === 'empty') continue;
    for (let i = 0; i < 20; i++) await f[w]();
    let ns = 0;
    for (let i = 0; i < 100; i++) {
      await f[w]();
      ns += device.queue.lastDeviceTimeNs;
    }
    dt.push(`${w} ${(ns / 100 / 1000).toFixed(1)}`);
  }
  device.queue.setProfiling(false);
  console.log(`device time us (passes): ${dt.join('  ')}`);
}
floor.destroy();
a.destroy();
out.destroy();
releaseDevices();
