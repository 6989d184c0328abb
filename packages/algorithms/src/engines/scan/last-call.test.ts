/**
 * The scan engine's fast path for a call like one of the device's last few (its derivations and
 * plan key taken without being built, issue 12): each call that differs from the one before it in
 * one part (input or output buffer, offset, length, type, write, init, operator, tuning, predicate,
 * stencil, finish copy) gets its own plan and the right answer; interleaved calls of several shapes
 * keep theirs; a repeated call still answers after its plan was evicted and after a kept call's
 * arrays were destroyed.
 */
import { DeviceArray, dispatchCache, lambda, maximum } from '@webdpl/core';
import { makeDevicePolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { copyIf } from '../../compaction/index';
import { exclusiveScan, inclusiveScan } from '../../scans/index';
import { testDevice } from '../../testing/matrix';

describe.skipIf(!testDevice)('scan engine: a call like a recent one', () => {
  const device = testDevice as NonNullable<typeof testDevice>;
  const policy = makeDevicePolicy(device, { fallback: 'error' });
  const tiny = makeDevicePolicy(device, {
    fallback: 'error',
    tuning: { scan: { workgroupSize: 32, itemsPerThread: 4 } },
  });
  const even = lambda((x: number) => (x & 1) === 0);
  const odd = lambda((x: number) => (x & 1) === 1);
  const n = 4096;
  const hostA = Uint32Array.from({ length: n }, (_, i) => (i * 7) % 13);
  const hostB = Uint32Array.from({ length: n }, (_, i) => (i % 5) * 3);
  const scanOf = (h: ArrayLike<number>, init = 0, op = (x: number, y: number) => x + y) => {
    const out: number[] = [];
    let acc = init;
    for (let i = 0; i < h.length; i++) out.push((acc = op(acc, h[i] as number) >>> 0));
    return out;
  };
  const exclusiveOf = (h: ArrayLike<number>, init: number, op = (x: number, y: number) => x + y) => [
    init,
    ...scanOf(h, init, op).slice(0, h.length - 1),
  ];
  const kept = (h: ArrayLike<number>, p: (x: number, i: number) => boolean) => Array.from(h).filter(p);

  it('each part that changes between two calls gives another plan; a repeated call its own', async () => {
    const a = DeviceArray.from(device, hostA);
    const b = DeviceArray.from(device, hostB);
    const s = DeviceArray.from(device, hostB);
    const o = DeviceArray.create(device, 'u32', n);
    const o2 = DeviceArray.create(device, 'u32', n);
    const short = DeviceArray.create(device, 'u32', n / 2 + 512);
    const f = DeviceArray.from(device, Float32Array.from(hostA));
    const fo = DeviceArray.create(device, 'f32', n);
    const cache = dispatchCache(device, 'scan');
    cache.clear();
    const read = async (d: DeviceArray, len = n) => Array.from((await d.read()).subarray(0, len));
    const after = async (call: Promise<unknown>, d: DeviceArray, len = n) => {
      await call;
      return read(d, len);
    };
    // Each step differs from the one before it in one part only; `plans` is the number of plans
    // the cache holds after it (a plan reused for another tuning gives the right answer, so the
    // plans are counted too).
    const steps: [string, () => Promise<unknown>, number[], number][] = [
      ['first', async () => after(inclusiveScan(policy, a, o), o), scanOf(hostA), 1],
      ['the same call', async () => after(inclusiveScan(policy, a, o), o), scanOf(hostA), 1],
      ['input buffer', async () => after(inclusiveScan(policy, b, o), o), scanOf(hostB), 2],
      ['output buffer', async () => after(inclusiveScan(policy, b, o2), o2), scanOf(hostB), 3],
      ['write', async () => after(exclusiveScan(policy, b, o2, 0), o2), exclusiveOf(hostB, 0), 4],
      ['init', async () => after(exclusiveScan(policy, b, o2, 7), o2), exclusiveOf(hostB, 7), 5],
      ['operator', async () => after(exclusiveScan(policy, b, o2, 7, maximum), o2), exclusiveOf(hostB, 7, Math.max), 6],
      ['tuning', async () => after(exclusiveScan(tiny, b, o2, 7, maximum), o2), exclusiveOf(hostB, 7, Math.max), 7],
      [
        'offset and length',
        async () => after(inclusiveScan(policy, b.view(4, 2000), o2.view(0, 2000)), o2, 2000),
        scanOf(hostB.subarray(4, 2004)),
        8,
      ],
      [
        'offset',
        async () => after(inclusiveScan(policy, b.view(8, 2000), o2.view(0, 2000)), o2, 2000),
        scanOf(hostB.subarray(8, 2008)),
        9,
      ],
      [
        'length',
        async () => after(inclusiveScan(policy, b.view(8, 1000), o2.view(0, 1000)), o2, 1000),
        scanOf(hostB.subarray(8, 1008)),
        10,
      ],
      ['type', async () => after(inclusiveScan(policy, f, fo), fo), scanOf(hostA), 11],
      ['copyIf', async () => read(o, await copyIf(policy, a, o, even)), kept(hostA, (x) => x % 2 === 0), 12],
      ['predicate', async () => read(o, await copyIf(policy, a, o, odd)), kept(hostA, (x) => x % 2 === 1), 13],
      [
        'a stencil',
        async () => read(o, await copyIf(policy, a, s, o, odd)),
        kept(hostA, (_: number, i: number) => (hostB[i] as number) % 2 === 1),
        14,
      ],
      [
        'another stencil',
        async () => read(o, await copyIf(policy, a, b, o, odd)),
        kept(hostA, (_: number, i: number) => (hostB[i] as number) % 2 === 1),
        15,
      ],
      // An output shorter than n: through a temporary and the finish copy (capped at its length).
      [
        'finish copy',
        async () => read(short, await copyIf(policy, a, short, odd)),
        kept(hostA, (x) => x % 2 === 1),
        16,
      ],
      ['no finish copy', async () => read(o, await copyIf(policy, a, o, odd)), kept(hostA, (x) => x % 2 === 1), 16],
    ];
    try {
      for (let round = 0; round < 2; round++) {
        for (const [what, call, expected, plans] of steps) {
          expect(await call(), `${what} (round ${round})`).toEqual(expected);
          // The second round finds every plan built.
          expect(cache.size, `${what} (round ${round})`).toBe(round === 0 ? plans : 16);
        }
      }
      // Interleaved calls of two shapes, each like a kept one: their plans, the new contents.
      a.write(hostB);
      for (let k = 0; k < 3; k++) {
        await inclusiveScan(policy, a, o);
        expect(await read(o)).toEqual(scanOf(hostB));
        expect(await read(o, await copyIf(policy, a, o, odd))).toEqual(kept(hostB, (x) => x % 2 === 1));
      }
      expect(cache.size).toBe(16);
    } finally {
      for (const x of [a, b, s, o, o2, short, f, fo]) x.destroy();
    }
  });

  it('a kept call whose arrays were destroyed; a repeated call whose plan was evicted', async () => {
    const host = Uint32Array.from({ length: 1024 }, (_, i) => i & 15);
    const gone = DeviceArray.from(device, host);
    const out = DeviceArray.create(device, 'u32', 1024);
    await inclusiveScan(policy, gone, out);
    gone.destroy();
    // The kept call names a destroyed array: the next calls compare against it without touching it.
    const a = DeviceArray.from(device, host);
    const others: DeviceArray[] = [];
    try {
      await inclusiveScan(policy, a, out);
      expect(Array.from(await out.read())).toEqual(scanOf(host));
      await expect(inclusiveScan(policy, gone, out)).rejects.toThrow(/destroyed/);
      // More plans than the cache keeps (DISPATCH_CACHE_CAPACITY), none of them a's ...
      for (let k = 0; k < 140; k++) {
        const x = DeviceArray.from(device, Uint32Array.of(k, 1, 2, 3));
        const y = DeviceArray.create(device, 'u32', 4);
        others.push(x, y);
        await inclusiveScan(policy, x, y);
        expect(Array.from(await y.read())).toEqual(scanOf([k, 1, 2, 3]));
      }
      // ... then a's call twice: the second like a kept one, both with a's plan rebuilt.
      for (let k = 0; k < 2; k++) {
        await inclusiveScan(policy, a, out);
        expect(Array.from(await out.read())).toEqual(scanOf(host));
      }
    } finally {
      a.destroy();
      out.destroy();
      for (const x of others) x.destroy();
    }
  });
});
