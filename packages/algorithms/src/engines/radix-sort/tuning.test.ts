/** The radix sort's defaults by device and size (no GPU needed: devices described by their limits and features). */
import type { GpuDevice } from '@webdpl/core';
import { describe, expect, it } from 'vitest';
import { radixSortTuningFor, SORT_LARGE, SORT_PAIRS_LARGE } from './tuning';

function fakeDevice(subgroupMin: number, subgroups = true, kind = 'gpu'): GpuDevice {
  return {
    info: { kind, subgroupMinSize: subgroupMin, subgroupMaxSize: subgroupMin },
    features: new Set(subgroups ? ['subgroups'] : []),
    limits: { maxComputeInvocationsPerWorkgroup: 1024, maxComputeWorkgroupSizeX: 1024 },
  } as unknown as GpuDevice;
}

const tile = (t: { workgroupSize: number; keysPerThread: number; scatterRounds: number }) => [
  t.workgroupSize,
  t.keysPerThread,
  t.scatterRounds,
];

describe('radixSortTuningFor', () => {
  it('32-wide subgroups: 36 keys in two rounds from SORT_LARGE keys, smaller tiles below; pairs 28 from SORT_PAIRS_LARGE', () => {
    const d = fakeDevice(32);
    expect(tile(radixSortTuningFor(d))).toEqual([256, 36, 2]);
    expect(tile(radixSortTuningFor(d, SORT_LARGE))).toEqual([256, 36, 2]);
    expect(tile(radixSortTuningFor(d, SORT_LARGE - 1))).toEqual([256, 32, 2]);
    expect(tile(radixSortTuningFor(d, 1 << 20))).toEqual([256, 32, 2]);
    expect(tile(radixSortTuningFor(d, (1 << 20) - 1))).toEqual([256, 16, 2]);
    expect(tile(radixSortTuningFor(d, 1 << 19))).toEqual([256, 16, 2]);
    expect(tile(radixSortTuningFor(d, (1 << 19) - 1))).toEqual([256, 8, 2]);
    // Pairs: 12 keys below 2^20, 16 below SORT_PAIRS_LARGE, 28 from it (and without a size).
    expect(tile(radixSortTuningFor(d, 256 * 24 + 1, true))).toEqual([256, 12, 2]);
    expect(tile(radixSortTuningFor(d, (1 << 20) - 1, true))).toEqual([256, 12, 2]);
    expect(tile(radixSortTuningFor(d, 1 << 20, true))).toEqual([256, 16, 2]);
    expect(tile(radixSortTuningFor(d, SORT_PAIRS_LARGE - 1, true))).toEqual([256, 16, 2]);
    expect(tile(radixSortTuningFor(d, SORT_PAIRS_LARGE, true))).toEqual([256, 28, 2]);
    expect(tile(radixSortTuningFor(d, undefined, true))).toEqual([256, 28, 2]);
    // At most one 24-key tile: one workgroup sorts it, as before.
    expect(tile(radixSortTuningFor(d, 256 * 24))).toEqual([256, 24, 2]);
    expect(tile(radixSortTuningFor(d, 100, true))).toEqual([256, 24, 2]);
  });

  it('the key mode compiled in on hardware GPUs, read from the uniform on software adapters', () => {
    for (const d of [fakeDevice(32), fakeDevice(8), fakeDevice(32, false)]) {
      expect(radixSortTuningFor(d).staticKeyMode).toBe(true);
    }
    for (const d of [fakeDevice(8, true, 'software-gpu'), fakeDevice(4, true, 'software-gpu')]) {
      expect(radixSortTuningFor(d).staticKeyMode).toBe(false);
    }
  });

  it('narrower subgroups or none: 15 keys in one round at every size', () => {
    for (const d of [fakeDevice(8), fakeDevice(16), fakeDevice(32, false)]) {
      for (const n of [100, 1 << 20, SORT_LARGE, SORT_PAIRS_LARGE]) {
        for (const pairs of [false, true]) expect(radixSortTuningFor(d, n, pairs).keysPerThread).toBe(15);
      }
    }
    expect(radixSortTuningFor(fakeDevice(8)).workgroupSize).toBe(128);
  });
});
