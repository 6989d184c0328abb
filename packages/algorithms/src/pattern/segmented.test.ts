/**
 * isSorted and the searches beyond one storage binding on the GPU (issue 13): a tuning override
 * lowers the binding to 4 KiB (1,024 elements), so a few thousand elements run in segments: isSorted
 * in overlapping segments (an unsorted pair across a segment boundary is found), searches with the
 * queries in chunks and the sorted range in segments whose answers are combined. Checked against the
 * CPU on the same inputs.
 */
import { DeviceArray, type GpuDevice } from '@webdpl/core';
import { execution, makeDevicePolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { binarySearch, lowerBound, upperBound } from '../binary-search/index';
import { isSortedUntil } from '../is-sorted/index';
import { greater } from '../sort/index';
import { testDevice } from '../testing/matrix';

const TINY = { 'is-sorted': { maxBindingBytes: 4096 }, 'binary-search': { maxBindingBytes: 4096 } };

describe.skipIf(!testDevice)('GPU isSorted and searches beyond one binding', () => {
  const device = testDevice as GpuDevice;
  const policy = makeDevicePolicy(device, { fallback: 'error', tuning: TINY });

  it('isSortedUntil finds the first unsorted pair anywhere, segment boundaries included', async () => {
    const n = 5000;
    const sorted = Float32Array.from({ length: n }, (_, i) => i * 0.5 - 100);
    expect(await isSortedUntil(policy, sorted)).toBe(n);
    // Breaks inside a segment, at both sides of each boundary (segments of 896 + 1 here), and last.
    for (const at of [1, 17, 895, 896, 897, 1792, 2689, n - 1]) {
      const d = sorted.slice();
      d[at] = (d[at - 1] as number) - 1;
      expect(await isSortedUntil(policy, d), `break at ${at}`).toBe(await isSortedUntil(execution.seq, d));
      expect(await isSortedUntil(policy, d)).toBe(at);
    }
    // A DeviceArray view at an unaligned offset, descending order.
    const parent = DeviceArray.from(
      device,
      Uint32Array.from({ length: n + 3 }, (_, i) => n + 3 - i),
    );
    try {
      expect(await isSortedUntil(policy, parent.view(3, n), greater)).toBe(n);
    } finally {
      parent.destroy();
    }
  });

  it('lowerBound, upperBound and binarySearch over segments and query chunks match the CPU', async () => {
    let seed = 7;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed;
    };
    const n = 4500;
    // Duplicates across segment boundaries (runs of 7 equal values).
    const sorted = Uint32Array.from({ length: n }, (_, i) => Math.floor(i / 7) * 3);
    const queries = Uint32Array.from({ length: 2100 }, () => rnd() % ((n / 7) * 3 + 10));
    for (const [name, f] of [
      ['lowerBound', lowerBound],
      ['upperBound', upperBound],
      ['binarySearch', binarySearch],
    ] as const) {
      const got = await f(policy, sorted, queries);
      const want = await f(execution.seq, sorted, queries);
      expect(got, name).toEqual(want);
    }
    // Descending with `greater`, results into a longer DeviceArray (only the first m written).
    const desc = sorted.slice().reverse();
    const s = DeviceArray.from(device, desc);
    const q = DeviceArray.from(device, queries);
    const r = DeviceArray.from(device, new Uint32Array(queries.length + 5).fill(77));
    try {
      await lowerBound(policy, s, q, r, greater);
      const want = await lowerBound(execution.seq, desc, queries, greater);
      const all = await r.read();
      expect(all.subarray(0, queries.length)).toEqual(want);
      expect(Array.from(all.subarray(queries.length))).toEqual([77, 77, 77, 77, 77]);
    } finally {
      s.destroy();
      q.destroy();
      r.destroy();
    }
  });
});
