/** The scan engine's defaults by kind of call and device (no GPU needed: devices described by their limits and features). */
import type { GpuDevice } from '@webdpl/core';
import { describe, expect, it } from 'vitest';
import { SCAN_LARGE, SELECT_LARGE, scanDefaults } from './tuning';

function fakeDevice(
  kind: 'gpu' | 'software-gpu',
  subgroups: boolean,
  maxThreads = 1024,
  subgroupMaxSize = 8,
): GpuDevice {
  return {
    info: { kind, subgroupMaxSize },
    features: new Set(subgroups ? ['subgroups'] : []),
    limits: { maxComputeInvocationsPerWorkgroup: maxThreads, maxComputeWorkgroupSizeX: maxThreads },
  } as unknown as GpuDevice;
}

const tile = (t: { workgroupSize: number; itemsPerThread: number }) => [t.workgroupSize, t.itemsPerThread];

describe('scanDefaults', () => {
  it('hardware GPUs with subgroups: scans 256 x 32, compaction 256 x 24, striped compaction 512 x 16 / 48, by key 512 x 40, reduceByKey 512 x 16', () => {
    const d = fakeDevice('gpu', true);
    expect(tile(scanDefaults(d, 'scan'))).toEqual([256, 32]);
    expect(tile(scanDefaults(d, 'scan', true, SCAN_LARGE - 1))).toEqual([256, 32]);
    expect(tile(scanDefaults(d, 'scan', true, SCAN_LARGE))).toEqual([256, 36]);
    expect(tile(scanDefaults(d, 'compaction', true, SCAN_LARGE))).toEqual([256, 24]);
    expect(tile(scanDefaults(d, 'compaction'))).toEqual([256, 24]);
    expect(tile(scanDefaults(d, 'select'))).toEqual([512, 16]);
    expect(tile(scanDefaults(d, 'select', true, SELECT_LARGE - 1))).toEqual([512, 16]);
    expect(tile(scanDefaults(d, 'select', true, SELECT_LARGE))).toEqual([512, 48]);
    expect(tile(scanDefaults(d, 'by-key'))).toEqual([512, 40]);
    expect(tile(scanDefaults(d, 'runs'))).toEqual([512, 16]);
    expect(tile(scanDefaults(d, 'runs', false))).toEqual([512, 16]);
    expect(scanDefaults(d, 'by-key').rowItems).toBe(4);
    // Reduce-then-scan's reduce pass last to first from 2^24 elements (software adapters never).
    expect(scanDefaults(d, 'scan').reduceReverseFrom).toBe(2 ** 24);
    expect(scanDefaults(fakeDevice('software-gpu', true), 'scan').reduceReverseFrom).toBe(Number.POSITIVE_INFINITY);
  });

  it('hardware GPUs without subgroups: one row per thread, scans 512 x 16, compaction 1024 x 8', () => {
    const d = fakeDevice('gpu', false);
    expect(tile(scanDefaults(d, 'scan'))).toEqual([512, 16]);
    expect(tile(scanDefaults(d, 'scan', true, SCAN_LARGE))).toEqual([512, 16]);
    expect(tile(scanDefaults(d, 'compaction'))).toEqual([1024, 8]);
    expect(tile(scanDefaults(d, 'select', true, SELECT_LARGE))).toEqual([1024, 8]);
    expect(tile(scanDefaults(d, 'by-key'))).toEqual([512, 40]);
    // Within the device's thread limit.
    expect(tile(scanDefaults(fakeDevice('gpu', false, 256), 'compaction'))).toEqual([256, 8]);
    expect(tile(scanDefaults(fakeDevice('gpu', false, 256), 'scan'))).toEqual([256, 16]);
    // A policy turning subgroups off on a device that has them gets the same tiles.
    expect(tile(scanDefaults(fakeDevice('gpu', true), 'scan', false))).toEqual([512, 16]);
    expect(tile(scanDefaults(fakeDevice('gpu', true), 'compaction', false))).toEqual([1024, 8]);
    expect(tile(scanDefaults(fakeDevice('gpu', true), 'select', false, SELECT_LARGE))).toEqual([1024, 8]);
  });

  it('software adapters: 64 x 32 and 64 spins, with or without subgroups; plain scans one subgroup x 1024 / its width', () => {
    for (const sg of [true, false]) {
      for (const kind of ['compaction', 'select', 'by-key', 'runs'] as const) {
        const t = scanDefaults(fakeDevice('software-gpu', sg), kind, true, SELECT_LARGE);
        expect(tile(t)).toEqual([64, 32]);
        expect(t.maxSpins).toBe(64);
      }
      const t = scanDefaults(fakeDevice('software-gpu', sg), 'scan', true, SCAN_LARGE);
      expect(tile(t)).toEqual([8, 128]);
      expect(t.maxSpins).toBe(64);
    }
    // An adapter with wider subgroups: one subgroup of threads, the same 1024-element tile.
    expect(tile(scanDefaults(fakeDevice('software-gpu', true, 1024, 32), 'scan'))).toEqual([32, 32]);
    expect(tile(scanDefaults(fakeDevice('software-gpu', true, 1024, 4), 'scan'))).toEqual([8, 128]);
  });
});
