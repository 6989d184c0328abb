/**
 * The map engine's fast path for a call like the device's last one (its plan key taken without
 * being built): each call that differs from the one before it in one part of the key (an input's
 * or the output's buffer, offset or length, the function, the tuning, the constants, the write)
 * gets its own plan and the right answer.
 */
import { DeviceArray, dispatchCache, lambda } from '@webdpl/core';
import { makeDevicePolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { fill } from '../../fill/index';
import { iota } from '../../iota/index';
import { testDevice } from '../../testing/matrix';
import { transform } from '../../transform/index';

describe.skipIf(!testDevice)('map engine: a call like the last one', () => {
  const device = testDevice as NonNullable<typeof testDevice>;
  const policy = makeDevicePolicy(device, { fallback: 'error' });
  const tiny = makeDevicePolicy(device, {
    fallback: 'error',
    tuning: { map: { workgroupSize: 32, maxWorkgroups: 2 } },
  });
  const inc = lambda((x: number) => x + 1);
  const dbl = lambda((x: number) => x * 2);

  it('each part of the key that changes between two calls gives another plan', async () => {
    const N = 1024;
    const hostA = Uint32Array.from({ length: N }, (_, i) => i);
    const hostB = Uint32Array.from({ length: N }, (_, i) => 5000 + i);
    const a = DeviceArray.from(device, hostA);
    const b = DeviceArray.from(device, hostB);
    const out = DeviceArray.create(device, 'u32', N);
    const out2 = DeviceArray.create(device, 'u32', N);
    const cache = dispatchCache(device, 'map');
    cache.clear();
    const map = (h: Uint32Array, f: (x: number) => number) => Array.from(h, f);
    // [what, call, the array to read, its expected contents, plans in the cache after it]
    const steps: [string, () => Promise<void>, DeviceArray, number[], number][] = [
      ['first', () => transform(policy, a, out, inc), out, map(hostA, (x) => x + 1), 1],
      ['the same call', () => transform(policy, a, out, inc), out, map(hostA, (x) => x + 1), 1],
      ['input buffer', () => transform(policy, b, out, inc), out, map(hostB, (x) => x + 1), 2],
      ['output buffer', () => transform(policy, b, out2, inc), out2, map(hostB, (x) => x + 1), 3],
      [
        'input offset',
        () => transform(policy, b.view(1, N - 1), out2.view(0, N - 1), inc),
        out2,
        [...map(hostB.subarray(1), (x) => x + 1), (hostB[N - 1] as number) + 1],
        4,
      ],
      [
        'output offset',
        () => transform(policy, b.view(1, N - 1), out2.view(1, N - 1), inc),
        out2,
        [(hostB[1] as number) + 1, ...map(hostB.subarray(1), (x) => x + 1)],
        5,
      ],
      [
        'length',
        () => transform(policy, b.view(1, N - 2), out2.view(1, N - 2), inc),
        out2,
        [(hostB[1] as number) + 1, ...map(hostB.subarray(1, N - 1), (x) => x + 1), (hostB[N - 1] as number) + 1],
        6,
      ],
      ['back', () => transform(policy, a, out, inc), out, map(hostA, (x) => x + 1), 6],
      ['function', () => transform(policy, a, out, dbl), out, map(hostA, (x) => x * 2), 7],
      ['tuning', () => transform(tiny, a, out, dbl), out, map(hostA, (x) => x * 2), 8],
      ['constants', () => fill(policy, out, 7), out, map(hostA, () => 7), 9],
      ['constants only', () => fill(policy, out, 9), out, map(hostA, () => 9), 10],
      ['element only', () => iota(policy, out, 9), out, map(hostA, (x) => x + 9), 11],
    ];
    try {
      for (let round = 0; round < 2; round++) {
        for (const [what, call, read, expected, plans] of steps) {
          await call();
          expect(Array.from(await read.read()), `${what} (round ${round})`).toEqual(expected);
          // The second round finds every plan built.
          expect(cache.size, `${what} (round ${round})`).toBe(round === 0 ? plans : 11);
        }
      }
    } finally {
      for (const x of [a, b, out, out2]) x.destroy();
    }
  });
});
