/**
 * The transform-reduce engine's fast path for a call like the device's last one (its plan key
 * taken without being built): each call that differs from the one before it in one part of the
 * key (buffer, offset, length, tuning, operator, type, arity) gets its own plan and the right
 * answer, and a repeated call still does after its plan was evicted.
 */
import { DeviceArray, dispatchCache, lambda, maximum, plus } from '@webdpl/core';
import { makeDevicePolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { counting } from '../../common/counting';
import { innerProduct } from '../../inner-product/index';
import { reduce } from '../../reduce/index';
import { testDevice } from '../../testing/matrix';
import { transformReduce } from '../../transform-reduce/index';

describe.skipIf(!testDevice)('transform-reduce: a call like the last one', () => {
  const device = testDevice as NonNullable<typeof testDevice>;
  const policy = makeDevicePolicy(device, { fallback: 'error' });
  const tiny = makeDevicePolicy(device, {
    fallback: 'error',
    tuning: { reduce: { workgroupSize: 32, maxWorkgroups: 2 } },
  });
  const double = lambda((x: number) => x * 2);
  const triple = lambda((x: number) => x * 3);
  const sum = (a: ArrayLike<number>) => Array.from(a).reduce((x, y) => x + y, 0);

  it('each part of the key that changes between two calls gives another plan', async () => {
    const hostA = Uint32Array.from({ length: 4096 }, (_, i) => i % 7);
    const hostB = Uint32Array.from({ length: 4096 }, (_, i) => (i % 5) * 3);
    const a = DeviceArray.from(device, hostA);
    const b = DeviceArray.from(device, hostB);
    const f = DeviceArray.from(device, Float32Array.from(hostA));
    const cache = dispatchCache(device, 'transform-reduce');
    cache.clear();
    // Each step differs from the one before it in one part of the key only; `plans` is the number
    // of plans the cache holds after it (a plan reused wrongly would give a right answer where the
    // tuning alone differs, so the plans are counted too).
    const steps: [string, () => Promise<number>, number, number][] = [
      ['first', () => reduce(policy, a), sum(hostA), 1],
      ['the same call', () => reduce(policy, a), sum(hostA), 1],
      ['buffer', () => reduce(policy, b), sum(hostB), 2],
      ['offset and length', () => reduce(policy, a.view(1, 4000)), sum(hostA.subarray(1, 4001)), 3],
      ['offset', () => reduce(policy, a.view(2, 4000)), sum(hostA.subarray(2, 4002)), 4],
      ['length', () => reduce(policy, a.view(2, 3000)), sum(hostA.subarray(2, 3002)), 5],
      ['back to the whole array', () => reduce(policy, a), sum(hostA), 5],
      ['operator', () => reduce(policy, a, 0, maximum), 6, 6],
      ['init (not in the key)', () => reduce(policy, a, 5), sum(hostA) + 5, 6],
      ['tuning', () => reduce(tiny, a), sum(hostA), 7],
      ['tuning back', () => reduce(policy, a), sum(hostA), 7],
      ['type', () => reduce(policy, f), sum(hostA), 8],
      ['arity', () => innerProduct(policy, a, b, 0), sum(hostA.map((x, i) => x * (hostB[i] as number))), 9],
      ['one input again', () => reduce(policy, a, 0, plus), sum(hostA), 9],
      ['load', () => transformReduce(policy, a, 0, plus, double), 2 * sum(hostA), 10],
      ['load back', () => reduce(policy, a, 0, plus), sum(hostA), 10],
      ['transform', () => transformReduce(policy, a, 0, plus, double), 2 * sum(hostA), 10],
      ['load only', () => transformReduce(policy, a, 0, plus, triple), 3 * sum(hostA), 11],
      ['no arrays (n)', () => reduce(policy, counting(100)), 4950, 12],
      ['n only', () => reduce(policy, counting(200)), 19900, 13],
    ];
    try {
      for (let round = 0; round < 2; round++) {
        for (const [what, call, expected, plans] of steps) {
          expect(await call(), `${what} (round ${round})`).toBe(expected);
          // The second round finds every plan built.
          expect(cache.size, `${what} (round ${round})`).toBe(round === 0 ? plans : 13);
        }
      }
      // New contents of the same array: the same plan, the new answer.
      a.write(hostB);
      expect(await reduce(policy, a)).toBe(sum(hostB));
      expect(cache.size).toBe(13);
    } finally {
      a.destroy();
      b.destroy();
      f.destroy();
    }
  });

  it('a repeated call whose plan was evicted builds it again', async () => {
    const host = Uint32Array.from({ length: 1024 }, (_, i) => i & 15);
    const a = DeviceArray.from(device, host);
    const others: DeviceArray[] = [];
    try {
      expect(await reduce(policy, a)).toBe(sum(host));
      // More plans than the cache keeps (DISPATCH_CACHE_CAPACITY), none of them a's ...
      for (let k = 0; k < 140; k++) {
        const o = DeviceArray.from(device, Uint32Array.of(k, 1, 2, 3));
        others.push(o);
        expect(await reduce(policy, o)).toBe(k + 6);
      }
      // ... then a's call twice: the second like the last one, both with a's plan rebuilt.
      expect(await reduce(policy, a)).toBe(sum(host));
      expect(await reduce(policy, a)).toBe(sum(host));
      await device.queue.finish();
    } finally {
      a.destroy();
      for (const o of others) o.destroy();
    }
  });
});
