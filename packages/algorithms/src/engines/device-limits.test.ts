/**
 * Tuning derived from device limits: every family on devices opened with lowered limits (WebGPU's
 * defaults, fewer threads, too little workgroup memory for any sort tile) and wider subgroup ranges
 * (4-wide as on SwiftShader, up to 128), checked against references; kernels that cannot fit are
 * UnsupportedOnDeviceErrors that device policies with fallback 'cpu' run on the CPU.
 */
import {
  DeviceArray,
  type GpuDevice,
  gpuSelector,
  type OpenOptions,
  openDevice,
  selectCandidate,
  UnsupportedOnDeviceError,
  WgslLinkError,
} from '@webdpl/core';
import { makeDevicePolicy } from '@webdpl/policies';
import { afterAll, describe, expect, it } from 'vitest';
import { copyIf, removeIf } from '../compaction';
import { gather } from '../gather';
import { histogram } from '../histogram';
import { merge, mergeByKey } from '../merge';
import { minElement } from '../min-element';
import { reduce } from '../reduce';
import { exclusiveScan, inclusiveScan } from '../scans';
import { topK } from '../select';
import { sort } from '../sort';
import { sortByKey } from '../sort-by-key';
import { rng, testDevice } from '../testing/matrix';
import { sortReference } from '../testing/sort-reference';
import { transform } from '../transform';
import { passParams } from './radix-sort/index';
import { radixTileFootprint } from './radix-sort/kernels';
import { radixSortTuningFor } from './radix-sort/tuning';

const opened: GpuDevice[] = [];

async function limitedDevice(options: OpenOptions): Promise<GpuDevice> {
  const d = (await openDevice(await selectCandidate(gpuSelector), options)) as GpuDevice;
  opened.push(d);
  return d;
}

afterAll(() => {
  for (const d of opened) d.destroy();
});

function keysOf(n: number, seed: number): Uint32Array {
  const r = rng(seed);
  return Uint32Array.from({ length: n }, () => r());
}

/** Runs the families on `device` with fallback 'error' (nothing may fall back) and checks them. */
async function everyFamily(device: GpuDevice): Promise<void> {
  const strict = makeDevicePolicy(device, { fallback: 'error' });
  const n = 3001;
  const data = keysOf(n, 7).map((x) => x % 1000);
  let sum = 0;
  for (const x of data) sum += x;
  expect(await reduce(strict, data)).toBe(sum);
  const inc = new Uint32Array(n);
  await inclusiveScan(strict, data, inc);
  const exc = new Uint32Array(n);
  await exclusiveScan(strict, data, exc, 0);
  let run = 0;
  for (let i = 0; i < n; i++) {
    expect(exc[i]).toBe(run);
    run += data[i] as number;
    expect(inc[i]).toBe(run);
  }
  const kept = new Uint32Array(n);
  const count = await copyIf(strict, data, kept, (x) => x < 500);
  const want = data.filter((x) => x < 500);
  expect(count).toBe(want.length);
  expect(Array.from(kept.subarray(0, count))).toEqual(Array.from(want));
  const doubled = new Uint32Array(n);
  await transform(strict, data, doubled, (x) => x * 2);
  expect(Array.from(doubled)).toEqual(Array.from(data, (x) => x * 2));
  const m = await minElement(strict, data);
  expect(m.index).toBe(data.indexOf(Math.min(...data)));
  // One tile (one workgroup) for keys alone, many tiles for pairs, and a user comparator (the
  // merge sort, block sort and merge passes): each kernel compiles once per device, which costs.
  const small = keysOf(700, 700);
  const k1 = small.slice();
  await sort(strict, k1);
  expect(Array.from(k1)).toEqual(Array.from(sortReference(small, false)));
  const big = keysOf(20_000, 20_000);
  const sorted = sortReference(big, false);
  const k2 = big.slice();
  const values = Uint32Array.from(big.keys());
  await sortByKey(strict, k2, values);
  expect(Array.from(k2)).toEqual(Array.from(sorted));
  for (let i = 0; i < big.length; i++) expect(big[values[i] as number]).toBe(k2[i]);
  const k3 = big.slice(0, 5000);
  await sort(strict, k3, (a: number, b: number) => a > b);
  expect(Array.from(k3)).toEqual(Array.from(sortReference(big.slice(0, 5000), false)).reverse());
  // Merge (its own tile: 512 threads x 7 keys, fitted to the threads and workgroup memory), with
  // values; histogram with sub-histograms; gather's masked vec4 writes.
  const a = sortReference(big.slice(0, 9000), false);
  const b = sortReference(big.slice(9000), false);
  const merged = new Uint32Array(big.length);
  await merge(strict, a, b, merged);
  expect(Array.from(merged)).toEqual(Array.from(sorted));
  const mk = new Uint32Array(big.length);
  const mv = new Uint32Array(big.length);
  await mergeByKey(
    strict,
    a,
    b,
    a.map((x) => x ^ 1),
    b.map((x) => x ^ 1),
    mk,
    mv,
  );
  expect(Array.from(mk)).toEqual(Array.from(sorted));
  expect(Array.from(mv)).toEqual(Array.from(sorted, (x) => (x ^ 1) >>> 0));
  const sub = makeDevicePolicy(device, { fallback: 'error', tuning: { histogram: { subHistograms: 4 } } });
  const counts = await histogram(sub, data, { bins: 1000, lo: 0, hi: 1000 });
  for (const [k, c] of counts.entries()) expect(c).toBe(data.filter((x) => x === k).length);
  const map = Uint32Array.from(data.keys(), (i) => (i * 7) % n);
  const g = new Uint32Array(n);
  await gather(strict, map, data, g);
  expect(Array.from(g)).toEqual(Array.from(map, (i) => data[i] as number));
}

describe.skipIf(!testDevice)('tuning from device limits', () => {
  it('sort fits 4-wide subgroups in 32 KiB of workgroup memory (SwiftShader: 34952 bytes failed)', async () => {
    const device = await limitedDevice({ subgroupSizes: { min: 4 } });
    expect(device.info.subgroupMinSize).toBe(4);
    expect(device.limits.maxComputeWorkgroupStorageSize).toBe(32768);
    // The device-class defaults alone (128 threads) overflow: the fit is what makes it run.
    const t = radixSortTuningFor(device);
    const params = passParams(
      {
        hasValues: false,
        workgroupSize: t.workgroupSize,
        keysPerThread: t.keysPerThread,
        subgroups: true,
        minSubgroupSize: 4,
        maxSubgroupSize: device.info.subgroupMaxSize,
      },
      t,
    );
    expect(radixTileFootprint(params)).toBeGreaterThan(32768);
    const strict = makeDevicePolicy(device, { fallback: 'error' });
    for (const n of [900, 50_000]) {
      const original = keysOf(n, n + 1);
      const keys = original.slice();
      const values = Uint32Array.from(keys.keys());
      await sortByKey(strict, keys, values);
      expect(Array.from(keys)).toEqual(Array.from(sortReference(original, false)));
      for (let i = 0; i < n; i++) expect(original[values[i] as number]).toBe(keys[i]);
    }
  }, 300_000);

  it("every family on WebGPU's default limits with subgroups of 4 to 128 lanes", async () => {
    const device = await limitedDevice({
      limits: {
        maxComputeWorkgroupStorageSize: 16384,
        maxComputeInvocationsPerWorkgroup: 256,
        maxComputeWorkgroupSizeX: 256,
      },
      subgroupSizes: { min: 4, max: 128 },
    });
    expect(device.limits.maxComputeWorkgroupStorageSize).toBe(16384);
    expect([device.info.subgroupMinSize, device.info.subgroupMaxSize]).toEqual([4, 128]);
    await everyFamily(device);
  }, 600_000);

  it('a kernel over the device limits falls back (fallback cpu) or throws UnsupportedOnDeviceError', async () => {
    // 2 KiB of workgroup memory: no radix-sort tile fits (the histogram alone needs 4 KiB).
    const device = await limitedDevice({ limits: { maxComputeWorkgroupStorageSize: 2048 } });
    const keys = keysOf(5000, 3);
    const want = sortReference(keys, false);
    const k = keys.slice();
    await sort(makeDevicePolicy(device), k);
    expect(Array.from(k)).toEqual(Array.from(want));
    const strict = makeDevicePolicy(device, { fallback: 'error' });
    const untouched = keys.slice();
    const failed = sort(strict, untouched);
    await expect(failed).rejects.toThrow(UnsupportedOnDeviceError);
    await expect(failed).rejects.toThrow(WgslLinkError);
    await expect(failed).rejects.toThrow(/bytes of workgroup memory; the device allows 2048/);
    expect(Array.from(untouched), 'caller data untouched').toEqual(Array.from(keys));
    // DeviceArrays never fall back: their data lives on that device.
    const d = DeviceArray.from(device, keys);
    try {
      await expect(sort(makeDevicePolicy(device), d)).rejects.toThrow(UnsupportedOnDeviceError);
      expect(Array.from(await d.read())).toEqual(Array.from(keys));
    } finally {
      d.destroy();
    }
  }, 300_000);

  it('128 threads per workgroup (compatibility mode): every kernel shrinks to fit', async () => {
    const device = await limitedDevice({
      limits: { maxComputeInvocationsPerWorkgroup: 128, maxComputeWorkgroupSizeX: 128 },
    });
    const strict = makeDevicePolicy(device, { fallback: 'error' });
    const data = keysOf(5000, 11).map((x) => x % 100);
    let sum = 0;
    for (const x of data) sum += x;
    expect(await reduce(strict, data)).toBe(sum);
    const inc = new Uint32Array(data.length);
    await inclusiveScan(strict, data, inc);
    expect(inc[data.length - 1]).toBe(sum);
    const out = new Uint32Array(data.length);
    await transform(strict, data, out, (x) => x + 1);
    expect(Array.from(out)).toEqual(Array.from(data, (x) => x + 1));
    const kept = new Uint32Array(data.length);
    const count = await copyIf(strict, data, kept, (x) => x < 50);
    expect(Array.from(kept.subarray(0, count))).toEqual(Array.from(data.filter((x) => x < 50)));
    // In place on a DeviceArray: the scan engine's copy-back (finish) kernel runs 128 threads there.
    const d = DeviceArray.from(device, data);
    try {
      const left = await removeIf(strict, d, (x: number) => x < 50);
      expect(Array.from((await d.read()).subarray(0, left))).toEqual(Array.from(data.filter((x) => x >= 50)));
    } finally {
      d.destroy();
    }
    // The radix sort's plan and copy kernels run 128 threads there (256 elsewhere).
    const keys = keysOf(5000, 12);
    const values = Uint32Array.from(keys.keys());
    const k = keys.slice();
    await sortByKey(strict, k, values);
    expect(Array.from(k)).toEqual(Array.from(sortReference(keys, false)));
    for (let i = 0; i < keys.length; i++) expect(keys[values[i] as number]).toBe(k[i]);
    // The radix select's kernels (256 threads by default) take the device's 128.
    const many = keysOf(20_000, 13);
    const top = new Uint32Array(40);
    await topK(strict, many, 40, top);
    expect(Array.from(top)).toEqual(Array.from(sortReference(many, false).subarray(0, 40)));
  }, 300_000);
});
