import { DeviceArray, type GpuDevice, lambda } from '@webdpl/core';
import { execution, makeDevicePolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { scanDefaults } from '../engines/scan/tuning';
import { edgeSizes, makeData, policyMatrix, rng, TINY_SCAN_TILE, testDevice } from '../testing/matrix';
import { expectSameArray, refSplit, sortedNumbers, uniqueKeep } from '../testing/scan-reference';
import { copyIf, partition, removeIf, stablePartition, unique } from './index';

/** The default tile of the device under test (the engine picks smaller tiles on software adapters). */
const DEFAULT_TILE = testDevice
  ? scanDefaults(testDevice, 'compaction').workgroupSize * scanDefaults(testDevice, 'compaction').itemsPerThread
  : 256 * 24;
const sizes = edgeSizes([TINY_SCAN_TILE, DEFAULT_TILE], [123457]);

type T = 'u32' | 'i32' | 'f32';
/**
 * One predicate per type, keeping about half of random data; data rewritten so that it keeps all or
 * none of it (one predicate keeps the number of kernels compiled, and the test time, down).
 */
const halfInt = lambda((x) => (x & 2) !== 0);
const halfFloat = lambda((x) => x < 0);
const half = (t: T) => (t === 'f32' ? halfFloat : halfInt);
const js = (f: typeof halfInt, t: T) => f.js([t]) as (x: number) => boolean;
type Keep = 'none' | 'half' | 'all';
function keeping<A extends Uint32Array | Int32Array | Float32Array>(data: A, t: T, keep: Keep): A {
  if (keep === 'half') return data;
  const out = data.slice() as A;
  for (let i = 0; i < out.length; i++) {
    const x = out[i] as number;
    if (t === 'f32') out[i] = keep === 'all' ? -Math.abs(x) - 0.5 : Math.abs(x);
    else out[i] = keep === 'all' ? x | 2 : x & ~2;
  }
  return out;
}

/** Data with runs of equal values (for unique), from a seed. */
function runs(type: T, n: number, seed: number): Uint32Array | Int32Array | Float32Array {
  const r = rng(seed);
  const out = makeData(type, n, 'random', seed);
  for (let i = 1; i < n; i++) if (r() % 3 !== 0) out[i] = out[i - 1] as number;
  return out;
}

describe.each(policyMatrix())('compaction under $name', ({ policy }) => {
  for (const type of ['u32', 'i32', 'f32'] as const) {
    it(`copyIf<${type}> keeping 0%, ~50% and 100% at edge sizes`, async () => {
      const pred = half(type);
      for (const n of sizes) {
        for (const keep of ['none', 'half', 'all'] as const) {
          const data = keeping(makeData(type, n, 'random'), type, keep);
          const copy = data.slice();
          const [want] = refSplit(data, js(pred, type));
          if (keep !== 'half') expect(want.length, keep).toBe(keep === 'all' ? n : 0);
          const out = data.slice().fill(7);
          const count = await copyIf(policy, data, out, pred);
          expect(count, `n=${n} ${keep}`).toBe(want.length);
          expectSameArray(out.subarray(0, count), want, `copyIf n=${n} ${keep}`);
          expectSameArray(out.subarray(count), new Array(n - count).fill(7), 'rest untouched');
          expectSameArray(data, copy, 'input untouched');
        }
      }
    });
  }

  it('removeIf, partition, stablePartition and unique at edge sizes', async () => {
    for (const type of ['u32', 'f32'] as const) {
      for (const n of sizes.filter((s, i) => i % 3 === 0 || s > 100_000)) {
        const data = makeData(type, n, 'random');
        const pred = half(type);
        const [yes, no] = refSplit(data, js(pred, type));
        const a = data.slice();
        const kept = await removeIf(policy, a, pred);
        expect(kept, `removeIf n=${n}`).toBe(no.length);
        expectSameArray(a.subarray(0, kept), no, `removeIf n=${n}`);
        const b = data.slice();
        expect(await stablePartition(policy, b, pred), `stablePartition n=${n}`).toBe(yes.length);
        expectSameArray(b, [...yes, ...no], `stablePartition n=${n}`);
        const c = data.slice();
        const split = await partition(policy, c, pred);
        expect(split, `partition n=${n}`).toBe(yes.length);
        const f = js(pred, type);
        for (let i = 0; i < n; i++) if (f(c[i] as number) !== i < split) expect.fail(`partition n=${n} at ${i}`);
        expectSameArray(sortedNumbers(c), sortedNumbers(data), `partition n=${n} is a permutation`);
        const d = runs(type, n, n + 3);
        const [u] = refSplit(d, uniqueKeep(d));
        const len = await unique(policy, d);
        expect(len, `unique n=${n}`).toBe(u.length);
        expectSameArray(d.subarray(0, len), u, `unique n=${n}`);
      }
    }
  });

  it('unique<f32> with NaN and signed zeros, unique<i32>, and partitions keeping none or all', async () => {
    const f = Float32Array.of(Number.NaN, Number.NaN, 0, -0, 0, 1, 1, Number.NaN, -0, 2, 2, 2);
    const len = await unique(policy, f);
    expectSameArray(f.subarray(0, len), [Number.NaN, Number.NaN, 0, 1, Number.NaN, -0, 2], 'NaN never equal, 0 === -0');
    for (const n of [1, 2, 200, 5000, 70001]) {
      const d = runs('i32', n, n);
      const [u] = refSplit(d, uniqueKeep(d));
      expect(await unique(policy, d)).toBe(u.length);
      expectSameArray(d.subarray(0, u.length), u, `unique i32 n=${n}`);
      const none = keeping(makeData('u32', n, 'random'), 'u32', 'none');
      const q = none.slice();
      expect(await stablePartition(policy, q, halfInt)).toBe(0);
      expectSameArray(q, none, 'nothing kept');
      const every = keeping(none, 'u32', 'all');
      const e = every.slice();
      expect(await stablePartition(policy, e, halfInt)).toBe(n);
      expectSameArray(e, every, 'everything kept');
      expect(await removeIf(policy, e, halfInt)).toBe(0);
    }
  });
});

/** unique with an equality: one run while neighbours share x >> 3 (ints) or floor(x) (floats). */
const sameBucket = lambda((a, b) => a >> 3 === b >> 3);
const sameFloor = lambda((a: number, b: number) => Math.floor(a) === Math.floor(b));

describe.each(policyMatrix())('unique with an equality under $name', ({ policy }) => {
  it('u32, i32 and f32 at edge sizes, random and run data; an asymmetric one compares (prev, x)', async () => {
    for (const n of sizes) {
      for (const t of ['u32', 'i32', 'f32'] as const) {
        const d = t === 'f32' ? Float32Array.from(runs('i32', n, n + 7), (x) => (x % 64) / 4) : runs(t, n, n + 5);
        if (t !== 'f32') for (let i = 0; i < n; i++) d[i] = (d[i] as number) % 64;
        const eq = t === 'f32' ? sameFloor : sameBucket;
        const f = eq.js([t, t]) as (a: number, b: number) => boolean;
        const [u] = refSplit(d, (x, i) => i === 0 || !f(d[i - 1] as number, x));
        const len = await unique(policy, d, eq);
        expect(len, `unique ${t} n=${n}`).toBe(u.length);
        expectSameArray(d.subarray(0, len), u, `unique ${t} n=${n}`);
      }
    }
    // (prev, x): keep x unless it is exactly one more than its predecessor.
    const d = Uint32Array.of(1, 2, 3, 3, 4, 9, 10, 2, 3);
    const len = await unique(policy, d, (a: number, b: number) => b === a + 1);
    expectSameArray(d.subarray(0, len), [1, 3, 9, 2], 'asymmetric');
  });
});

const gpuPolicies = policyMatrix().filter((p) => p.gpu && p.name !== 'auto');

describe.each(gpuPolicies)('compaction of DeviceArrays under $name', ({ policy }) => {
  const device = testDevice as GpuDevice;
  it('views with offset 1, outputs shorter than the input, chained calls, in-place algorithms', async () => {
    for (const n of [1, 7, 129, 4097, 30001]) {
      const host = makeData('f32', n + 1, 'random');
      const buf = DeviceArray.from(device, host as Float32Array);
      const data = host.subarray(1);
      const input = buf.view(1, n);
      const [yes, no] = refSplit(data, (x) => x < 0);
      // Output exactly as long as the count (shorter than the input), at offset 1 of its buffer.
      const outBuf = DeviceArray.create(device, 'f32', yes.length + 1);
      const out = outBuf.view(1, yes.length);
      expect(await copyIf(policy, input, out, halfFloat)).toBe(yes.length);
      expectSameArray(await out.read(), yes, `copyIf n=${n}`);
      // Chained: compact the compacted output into a host array with another predicate.
      const host2 = new Float32Array(yes.length);
      const c2 = await copyIf(
        policy,
        out,
        host2,
        lambda((x) => x < -0.5),
      );
      expectSameArray(
        host2.subarray(0, c2),
        yes.filter((x) => x < -0.5),
        'chained',
      );
      expectSameArray(await buf.read(), host, 'input untouched');
      // In place on the device.
      const aBuf = DeviceArray.from(device, host as Float32Array);
      const a = aBuf.view(1, n);
      expect(await stablePartition(policy, a, halfFloat)).toBe(yes.length);
      expectSameArray(await a.read(), [...yes, ...no], `stablePartition n=${n}`);
      const b = DeviceArray.from(device, host as Float32Array);
      const nb = await removeIf(policy, b.view(1, n), halfFloat);
      const rb = await b.read();
      expectSameArray(rb.subarray(1, 1 + nb), no, `removeIf n=${n}`);
      expect(rb[0]).toBe(host[0]);
      const c = DeviceArray.from(device, data.slice() as Float32Array);
      const split = await partition(policy, c, halfFloat);
      const rc = await c.read();
      expect(split).toBe(yes.length);
      expectSameArray(sortedNumbers(rc.subarray(0, split)), sortedNumbers(yes), 'partition kept');
      expectSameArray(sortedNumbers(rc.subarray(split)), sortedNumbers(no), 'partition rejected');
      const u = DeviceArray.from(device, runs('u32', n, 5) as Uint32Array);
      const uh = await u.read();
      const [uw] = refSplit(uh, uniqueKeep(uh));
      expect(await unique(policy, u)).toBe(uw.length);
      expectSameArray((await u.read()).subarray(0, uw.length), uw, `unique n=${n}`);
      for (const x of [buf, outBuf, aBuf, b, c, u]) x.destroy();
    }
  });
});

// The striped compaction's hardware tiles from 2^22 elements (512 x 48: ScanKind 'select'), forced
// on the device under test (the engine picks 256 x 8 on software adapters): the subgroup ranges,
// unrolled items, the second ballot at the write and unique's shuffled neighbours at tile, subgroup
// and item edges.
describe.skipIf(!testDevice)('striped compaction with 512 x 48 tiles', () => {
  const tile = 512 * 48;
  const policy = makeDevicePolicy(testDevice as GpuDevice, {
    fallback: 'error',
    tuning: { scan: { workgroupSize: 512, itemsPerThread: 48 } },
  });
  const sizes48 = [1, 47, tile - 1, tile, tile + 1, 2 * tile + 123];
  it('copyIf, partition and unique against references', async () => {
    for (const type of ['u32', 'f32'] as const) {
      for (const n of sizes48) {
        const data = makeData(type, n, 'random', n);
        const pred = half(type);
        const [yes, no] = refSplit(data, js(pred, type));
        const out = data.slice().fill(7);
        const count = await copyIf(policy, data, out, pred);
        expect(count, `copyIf n=${n}`).toBe(yes.length);
        expectSameArray(out.subarray(0, count), yes, `copyIf n=${n}`);
        const c = data.slice();
        expect(await stablePartition(policy, c, pred), `stablePartition n=${n}`).toBe(yes.length);
        expectSameArray(c, [...yes, ...no], `stablePartition n=${n}`);
        const d = runs(type, n, n + 5);
        const [u] = refSplit(d, uniqueKeep(d));
        const len = await unique(policy, d);
        expect(len, `unique n=${n}`).toBe(u.length);
        expectSameArray(d.subarray(0, len), u, `unique n=${n}`);
      }
    }
  });
});

describe('compaction at 2^24+1', () => {
  for (const { name, policy } of policyMatrix().filter((p) => p.name === 'device' || p.name === 'par')) {
    it(`copyIf<f32> ~50% under ${name}`, async () => {
      const n = 2 ** 24 + 1;
      const data = makeData('f32', n, 'random');
      const out = new Float32Array(n);
      const count = await copyIf(policy, data, out, halfFloat);
      let j = 0;
      for (let i = 0; i < n; i++) {
        const x = data[i] as number;
        if (x < 0 && out[j++] !== x) expect.fail(`element ${j - 1}`);
      }
      expect(count).toBe(j);
    });
  }
});

describe('compaction: bad input', () => {
  it('names the argument and leaves the caller data untouched', async () => {
    const seq = execution.seq;
    const x = Uint32Array.of(1, 2, 3, 4);
    const out = Uint32Array.of(9, 9);
    await expect(copyIf(seq, x, out, 'x' as never)).rejects.toThrow(/pred/);
    await expect(copyIf(seq, x, new Float32Array(4), halfInt)).rejects.toThrow(/output.*u32/);
    await expect(copyIf(seq, x, x.subarray(1), halfInt)).rejects.toThrow(/output.*overlap/);
    await expect(copyIf(seq, [1] as never, out, halfInt)).rejects.toThrow(/input/);
    await expect(copyIf(seq, Uint32Array.of(2, 3, 6, 7), out, halfInt)).rejects.toThrow(/output.*at least 4/);
    await expect(removeIf(seq, 5 as never, halfInt)).rejects.toThrow(/data/);
    await expect(unique(null, x)).rejects.toThrow(/policy/);
    await expect(partition(seq, x, undefined as never)).rejects.toThrow(/pred/);
    await expect(unique(seq, x, 3 as never)).rejects.toThrow(/eq/);
    await expect(unique(seq, x, (a: number) => a as never)).rejects.toThrow(/eq/);
    expect(Array.from(out)).toEqual([9, 9]);
    expect(Array.from(x)).toEqual([1, 2, 3, 4]);
    if (testDevice) {
      const policy = makeDevicePolicy(testDevice, { fallback: 'error' });
      const d = DeviceArray.from(testDevice, Uint32Array.of(2, 3, 6, 7));
      const short = DeviceArray.from(testDevice, Uint32Array.of(8, 8));
      await expect(copyIf(policy, d, short, halfInt)).rejects.toThrow(/output.*at least 4/);
      expect(Array.from(await short.read())).toEqual([8, 8]);
      await expect(copyIf(policy, d, new Uint32Array(2), halfInt)).rejects.toThrow(/output.*at least 4/);
      expect(Array.from(await d.read())).toEqual([2, 3, 6, 7]);
      d.destroy();
      short.destroy();
    }
  });
});
