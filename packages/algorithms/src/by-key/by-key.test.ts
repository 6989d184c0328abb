import { DeviceArray, type HostArray, lambda, lastNonZero, maximum, multiplies } from '@webdpl/core';
import { execution, makeDevicePolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { refRuns } from '../testing/by-key-reference';
import { isEngineVariant, itIf, parPool, place } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, rng, TINY_SCAN_TILE, testDevice } from '../testing/matrix';
import { expectSameArray } from '../testing/scan-reference';
import { exclusiveScanByKey, inclusiveScanByKey, reduceByKey, uniqueByKey } from './index';

type T3 = 'u32' | 'i32' | 'f32';
type Op = (a: number, b: number) => number;
type Eq = (a: number, b: number) => boolean;

const sizes = edgeSizes([TINY_SCAN_TILE, 8 * 256], [40001]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

const sameKey: Eq = (a, b) => Object.is(a, b);
const u32Plus: Op = (a, b) => (a + b) >>> 0;
const i32Plus: Op = (a, b) => (a + b) | 0;
const f32Plus: Op = (a, b) => Math.fround(a + b);
const plusOf = (t: T3): Op => (t === 'u32' ? u32Plus : t === 'i32' ? i32Plus : f32Plus);
const lnz: Op = (a, b) => (b !== 0 ? b : a);

/** The reference scan by key: restarts at every element whose key differs from its predecessor's. */
function refScanByKey(keys: ArrayLike<number>, values: ArrayLike<number>, op: Op, eq: Eq, init?: number): number[] {
  const out: number[] = [];
  let acc = 0;
  for (let i = 0; i < keys.length; i++) {
    const head = i === 0 || !eq(keys[i - 1] as number, keys[i] as number);
    const v = values[i] as number;
    if (init === undefined) {
      acc = head ? v : op(acc, v);
      out.push(acc);
    } else {
      if (head) acc = init;
      out.push(acc);
      acc = op(acc, v);
    }
  }
  return out;
}

type RunKind = 'mixed' | 'singletons' | 'one' | 'by16' | 'long';

/** Keys of `type` in runs: random lengths 1..8 ('mixed'), all 1, one run, 16 each, or 1..300. */
function makeKeys(type: T3, n: number, kind: RunKind, seed: number): HostArray {
  const r = rng(seed);
  const out = type === 'u32' ? new Uint32Array(n) : type === 'i32' ? new Int32Array(n) : new Float32Array(n);
  let key = r() % 1000;
  let left = 0;
  for (let i = 0; i < n; i++) {
    if (kind === 'by16') {
      out[i] = i >> 4;
      continue;
    }
    if (left === 0) {
      // A new run: a different key (so neighbouring runs never merge).
      key = kind === 'one' ? 5 : key + 1 + (r() % 3);
      left = kind === 'singletons' ? 1 : kind === 'one' ? n : kind === 'long' ? 1 + (r() % 300) : 1 + (r() % 8);
    }
    out[i] = type === 'i32' ? key - 500 : type === 'f32' ? key / 4 : key;
    left--;
  }
  return out;
}

function like(a: HostArray, n = a.length): HostArray {
  return new (a.constructor as new (n: number) => HostArray)(n);
}

describe.each(matrix)('by-key under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);
  // Every pair of key and value types on the CPU; on the GPU (pipelines compile slowly on lavapipe)
  // each key type and each value type once, and one pair under the engine variants.
  const all: [T3, T3][] = [];
  for (const k of ['u32', 'i32', 'f32'] as const) for (const v of ['u32', 'i32', 'f32'] as const) all.push([k, v]);
  const pairs: [T3, T3][] = variant
    ? [['u32', 'i32']]
    : gpu
      ? [
          ['u32', 'u32'],
          ['i32', 'f32'],
          ['f32', 'i32'],
        ]
      : all;
  for (const [kt, vt] of pairs) {
    it(`scans, reduceByKey and uniqueByKey, ${kt} keys, ${vt} values, at edge sizes`, async () => {
      const kinds: readonly RunKind[] = ['mixed', 'singletons', 'one', 'by16', 'long'];
      for (const n of sizes) {
        const kind = kinds[n % kinds.length] as RunKind;
        const keys = makeKeys(kt, n, kind, n + 3);
        // Small values: f32 sums stay exact whatever the order of combination.
        const values = makeData(vt, n, 'small', n + 11);
        const kc = keys.slice();
        const vc = values.slice();
        const op = plusOf(vt);
        const out = like(values);
        expect(await inclusiveScanByKey(policy, keys, values, out)).toBe(out);
        expectSameArray(out, refScanByKey(keys, values, op, sameKey), `incl n=${n} ${kind}`);
        await exclusiveScanByKey(policy, keys, values, out, 3);
        expectSameArray(out, refScanByKey(keys, values, op, sameKey, 3), `excl n=${n} ${kind}`);
        const ko = like(keys);
        const vo = like(values);
        const want = refRuns(keys, values, op, sameKey);
        expect(await reduceByKey(policy, keys, values, ko, vo)).toBe(want.keys.length);
        expectSameArray(ko.subarray(0, want.keys.length), want.keys, `reduce keys n=${n} ${kind}`);
        expectSameArray(vo.subarray(0, want.keys.length), want.values, `reduce values n=${n} ${kind}`);
        const first = refRuns(keys, values, undefined, sameKey);
        expect(await uniqueByKey(policy, keys, values, ko, vo)).toBe(first.keys.length);
        expectSameArray(ko.subarray(0, first.keys.length), first.keys, `unique keys n=${n}`);
        expectSameArray(vo.subarray(0, first.keys.length), first.values, `unique values n=${n}`);
        expectSameArray(keys, kc, 'keys untouched');
        expectSameArray(values, vc, 'values untouched');
      }
    });
  }

  it('a non-commutative operator (lastNonZero), maximum, multiplies, and random large sizes', async () => {
    const r = rng(99);
    const ns = [1, 5, TINY_SCAN_TILE - 1, TINY_SCAN_TILE + 1, 3000, 70001, ...(variant ? [] : [1 + (r() % 300000)])];
    for (const n of ns) {
      const keys = makeKeys('u32', n, n % 2 ? 'long' : 'mixed', n);
      const vals = makeData('u32', n, 'random', n + 1).map((x) => (x % 5 === 0 ? x : 0));
      const out = new Uint32Array(n);
      await inclusiveScanByKey(policy, keys, vals, out, lastNonZero);
      expectSameArray(out, refScanByKey(keys, vals, lnz, sameKey), `lnz incl n=${n}`);
      await exclusiveScanByKey(policy, keys, vals, out, 7, lastNonZero);
      expectSameArray(out, refScanByKey(keys, vals, lnz, sameKey, 7), `lnz excl n=${n}`);
      const ko = new Uint32Array(n);
      const vo = new Uint32Array(n);
      const want = refRuns(keys, vals, lnz, sameKey);
      expect(await reduceByKey(policy, keys, vals, ko, vo, lastNonZero)).toBe(want.keys.length);
      expectSameArray(vo.subarray(0, want.keys.length), want.values, `lnz reduce n=${n}`);
      // maximum and multiplies: operator semantics, not engine code (skipped under the engine variants).
      if (variant) continue;
      const vi = makeData('i32', n, 'random', n + 2);
      const oi = new Int32Array(n);
      await inclusiveScanByKey(policy, keys, vi, oi, maximum);
      expectSameArray(oi, refScanByKey(keys, vi, Math.max, sameKey), `max n=${n}`);
      const vm = makeData('u32', n, 'small', n + 3);
      await exclusiveScanByKey(policy, keys, vm, out, 1, multiplies);
      expectSameArray(
        out,
        refScanByKey(keys, vm, (a, b) => Math.imul(a, b) >>> 0, sameKey, 1),
        `mul n=${n}`,
      );
    }
  });

  itIf(!variant)('host outputs of exactly the runs, one short (untouched), empty input', async () => {
    for (const n of [1, 16, 17, 5000, 70001]) {
      const keys = makeKeys('u32', n, n % 2 ? 'by16' : 'mixed', n + 9);
      const vals = makeData('i32', n, 'random', n + 10);
      for (const reduce of [true, false]) {
        const want = refRuns(keys, vals, reduce ? i32Plus : undefined, sameKey);
        const runs = want.keys.length;
        const call = (ko: HostArray, vo: HostArray) =>
          reduce ? reduceByKey(policy, keys, vals, ko, vo) : uniqueByKey(policy, keys, vals, ko, vo);
        const ko = new Uint32Array(runs);
        const vo = new Int32Array(runs);
        expect(await call(ko, vo)).toBe(runs);
        expectSameArray(ko, want.keys, `exact keys n=${n} reduce ${reduce}`);
        expectSameArray(vo, want.values, `exact values n=${n} reduce ${reduce}`);
        const ks = new Uint32Array(runs - 1).fill(7);
        const vs = new Int32Array(runs).fill(7);
        await expect(call(ks, vs)).rejects.toThrow(new RegExp(`keysOut.*at least ${runs}`));
        await expect(call(new Uint32Array(n), vs.subarray(1))).rejects.toThrow(
          new RegExp(`valuesOut.*at least ${runs}`),
        );
        expect(ks.every((x) => x === 7) && vs.every((x) => x === 7), `untouched n=${n}`).toBe(true);
      }
    }
    const none = new Uint32Array(0);
    const out = Uint32Array.of(7);
    expect(await reduceByKey(policy, none, none, out, out.slice())).toBe(0);
    expect(await uniqueByKey(policy, none, none, none, none)).toBe(0);
    expect(out[0]).toBe(7);
  });

  // Key semantics, not engine code: not under the engine variants (pipelines compile slowly on lavapipe).
  itIf(!variant)(
    '-0/+0 and NaN keys (Object.is), a user keyEq, float values within a tolerance, in place',
    async () => {
      const keys = Float32Array.of(0, -0, -0, 0, Number.NaN, Number.NaN, 1, 1, Number.NaN, -0, 0, 0);
      const vals = Float32Array.from(keys, (_, i) => i + 1);
      const out = new Float32Array(keys.length);
      await inclusiveScanByKey(policy, keys, vals, out);
      expectSameArray(out, [1, 2, 5, 4, 5, 11, 7, 15, 9, 10, 11, 23], '-0/NaN incl');
      const ko = new Float32Array(keys.length);
      const vo = new Float32Array(keys.length);
      expect(await reduceByKey(policy, keys, vals, ko, vo)).toBe(8);
      expectSameArray(ko.subarray(0, 8), [0, -0, 0, Number.NaN, 1, Number.NaN, -0, 0], '-0/NaN keys');
      expectSameArray(vo.subarray(0, 8), [1, 5, 4, 11, 15, 9, 10, 23], '-0/NaN sums');
      // The last run folding to -0 keeps its sign (nothing is folded in past the input's end).
      const zo = new Float32Array(3);
      expect(
        await reduceByKey(policy, Uint32Array.of(1, 2, 2), Float32Array.of(1, -0, -0), new Uint32Array(3), zo),
      ).toBe(2);
      expect(Object.is(zo[1], -0), `last run's fold ${zo[1]}`).toBe(true);
      // A user equality: keys in the same decade are equal (so runs merge across different keys).
      const decade = lambda((a: number, b: number) => Math.floor(a / 10) === Math.floor(b / 10));
      const deq: Eq = (a, b) => Math.floor(a / 10) === Math.floor(b / 10);
      for (const n of [1, 13, TINY_SCAN_TILE + 1, 20000]) {
        const k = makeKeys('u32', n, 'mixed', n + 5);
        const v = makeData('f32', n, 'random', n + 6);
        const o = new Float32Array(n);
        await inclusiveScanByKey(policy, k, v, o, undefined, decade);
        const want = refScanByKey(k, v, (a, b) => a + b, deq);
        for (let i = 0; i < n; i++) {
          if (!(Math.abs((o[i] as number) - (want[i] as number)) <= 1e-4))
            expect.fail(`decade n=${n} at ${i}: ${o[i]} vs ${want[i]}`);
        }
        const kk = new Uint32Array(n);
        const vv = new Float32Array(n);
        const runs = refRuns(k, v, undefined, deq);
        expect(await uniqueByKey(policy, k, v, kk, vv, decade)).toBe(runs.keys.length);
        expectSameArray(kk.subarray(0, runs.keys.length), runs.keys, `decade unique n=${n}`);
        // In place: output is values.
        const inPlace = makeData('i32', n, 'small', n + 7);
        const before = inPlace.slice();
        await exclusiveScanByKey(policy, k, inPlace, inPlace, -2);
        expectSameArray(inPlace, refScanByKey(k, before, i32Plus, sameKey, -2), `in place n=${n}`);
      }
    },
  );
});

const gpuPolicies = policyMatrix().filter((p) => p.gpu && p.name !== 'auto');

const deviceArrayPolicies = gpuPolicies.filter((p) => !isEngineVariant(p.name) || p.name === 'device tiny');

describe.each(deviceArrayPolicies)('by-key on DeviceArrays under $name', ({ policy }) => {
  it('views at offset 1, in place, short outputs', async () => {
    const device = testDevice as NonNullable<typeof testDevice>;
    for (const n of [1, 130, 5000]) {
      const keys = makeKeys('u32', n, 'mixed', n);
      const vals = makeData('u32', n, 'random', n + 1);
      const k = place(device, keys, 1);
      const v = place(device, vals, 1);
      const o = place(device, new Uint32Array(n), 1);
      await inclusiveScanByKey(policy, k.view, v.view, o.view);
      expectSameArray(await o.read(), refScanByKey(keys, vals, u32Plus, sameKey), `view n=${n}`);
      await inclusiveScanByKey(policy, k.view, v.view, v.view);
      expectSameArray(await v.read(), refScanByKey(keys, vals, u32Plus, sameKey), `in place n=${n}`);
      const want = refRuns(keys, vals, u32Plus, sameKey);
      const ko = place(device, new Uint32Array(want.keys.length), 1);
      const vo = place(device, new Uint32Array(want.keys.length), 1);
      v.view.write(vals);
      expect(await reduceByKey(policy, k.view, v.view, ko.view, vo.view)).toBe(want.keys.length);
      expectSameArray(await ko.read(), want.keys, `reduce keys n=${n}`);
      expectSameArray(await vo.read(), want.values, `reduce values n=${n}`);
      // Outputs of n elements in buffers of their own: the fused one-pass reduceByKey.
      const kb = DeviceArray.create(device, 'u32', n);
      const vb = DeviceArray.create(device, 'u32', n);
      expect(await reduceByKey(policy, k.view, v.view, kb, vb)).toBe(want.keys.length);
      expectSameArray((await kb.read()).subarray(0, want.keys.length), want.keys, `fused keys n=${n}`);
      expectSameArray((await vb.read()).subarray(0, want.keys.length), want.values, `fused values n=${n}`);
      kb.destroy();
      vb.destroy();
      // Outputs of exactly the runs: written through temporaries copied when the runs fit (uniqueByKey
      // too; a host output beside a DeviceArray one: only the DeviceArray is copied).
      const first = refRuns(keys, vals, undefined, sameKey);
      expect(await uniqueByKey(policy, k.view, v.view, ko.view, vo.view)).toBe(first.keys.length);
      expectSameArray(await ko.read(), first.keys, `unique keys n=${n}`);
      expectSameArray(await vo.read(), first.values, `unique values n=${n}`);
      const hk = new Uint32Array(want.keys.length);
      expect(await reduceByKey(policy, k.view, v.view, hk, vo.view)).toBe(want.keys.length);
      expectSameArray(hk, want.keys, `host keys n=${n}`);
      expectSameArray(await vo.read(), want.values, `device values beside host keys n=${n}`);
      if (want.keys.length > 1) {
        const short = DeviceArray.create(device, 'u32', want.keys.length - 1);
        const big = DeviceArray.create(device, 'u32', n);
        short.write(new Uint32Array(want.keys.length - 1).fill(7));
        big.write(new Uint32Array(n).fill(7));
        await expect(reduceByKey(policy, k.view, v.view, big, short)).rejects.toThrow(/valuesOut.*at least/);
        await expect(uniqueByKey(policy, k.view, v.view, short, big)).rejects.toThrow(/keysOut.*at least/);
        await expect(reduceByKey(policy, k.view, v.view, new Uint32Array(n), short)).rejects.toThrow(/valuesOut/);
        expect([...(await short.read())].every((x) => x === 7)).toBe(true);
        expect([...(await big.read())].every((x) => x === 7)).toBe(true);
        short.destroy();
        big.destroy();
      }
      // Aligned arrays (the vec4 path: keys loaded as vec4s) with outputs of exactly the runs.
      const ka = DeviceArray.from(device, keys as Uint32Array);
      const va = DeviceArray.from(device, vals as Uint32Array);
      const kr = DeviceArray.create(device, 'u32', want.keys.length);
      const vr = DeviceArray.create(device, 'u32', want.keys.length);
      expect(await reduceByKey(policy, ka, va, kr, vr)).toBe(want.keys.length);
      expectSameArray(await kr.read(), want.keys, `aligned keys n=${n}`);
      expectSameArray(await vr.read(), want.values, `aligned sums n=${n}`);
      for (const a of [ka, va, kr, vr]) a.destroy();
      for (const a of [k, v, o, ko, vo]) a.parent.destroy();
      // Keys, values and outputs as distinct views of one buffer (read from copies by the engine).
      const one = DeviceArray.create(device, 'u32', 5 * n);
      one.view(0, n).write(keys as Uint32Array);
      one.view(n, n).write(vals as Uint32Array);
      await inclusiveScanByKey(policy, one.view(0, n), one.view(n, n), one.view(2 * n, n));
      expectSameArray(await one.view(2 * n, n).read(), refScanByKey(keys, vals, u32Plus, sameKey), `one buffer n=${n}`);
      const m = await reduceByKey(policy, one.view(0, n), one.view(n, n), one.view(3 * n, n), one.view(4 * n, n));
      expect(m).toBe(want.keys.length);
      expectSameArray((await one.view(3 * n, n).read()).subarray(0, m), want.keys, `one buffer keys n=${n}`);
      expectSameArray((await one.view(4 * n, n).read()).subarray(0, m), want.values, `one buffer sums n=${n}`);
      one.destroy();
    }
  });
});

describe('by-key at 2^24+1', () => {
  const big = [...policyMatrix().filter((p) => p.name === 'device'), { name: 'par pool', policy: parPool, gpu: false }];
  for (const { name, policy } of big) {
    it(`inclusiveScanByKey and reduceByKey u32 plus, runs of 1..300, under ${name}`, async () => {
      const n = 2 ** 24 + 1;
      const keys = makeKeys('u32', n, 'long', 5);
      const vals = makeData('u32', n, 'random', 6);
      const out = new Uint32Array(n);
      await inclusiveScanByKey(policy, keys, vals, out);
      let acc = 0;
      for (let i = 0; i < n; i++) {
        acc = i === 0 || keys[i] !== keys[i - 1] ? (vals[i] as number) : (acc + (vals[i] as number)) >>> 0;
        if (out[i] !== acc) expect.fail(`element ${i}: ${out[i]} != ${acc}`);
      }
      const ko = new Uint32Array(n);
      const vo = new Uint32Array(n);
      const runs = await reduceByKey(policy, keys, vals, ko, vo);
      let r = -1;
      for (let i = 0; i < n; i++) {
        if (i === 0 || keys[i] !== keys[i - 1]) {
          r++;
          if (ko[r] !== keys[i]) expect.fail(`run ${r}: key ${ko[r]} != ${keys[i]}`);
        }
        // The run's last element holds its sum in the scan.
        if ((i === n - 1 || keys[i] !== keys[i + 1]) && vo[r] !== out[i])
          expect.fail(`run ${r}: ${vo[r]} != ${out[i]}`);
      }
      expect(runs).toBe(r + 1);
    });
  }
});

describe.skipIf(!testDevice)(
  "the by-key family with hardware GPUs' default tiles (scans by key 512 x 40, reduceByKey 256 x 16)",
  () => {
    // Software adapters default to smaller tiles (scanDefaults): the tiles of hardware GPUs are forced
    // here (scans by key 512 threads x 40 items, also in rows of 8; reduceByKey 256 x 16, also
    // 512 x 16, 256 x 32 and 256 x 8), across several tiles and a partial last tile, with runs long
    // and short (several heads in one thread's items).
    const tilings: { scans: Record<string, number>; runs: Record<string, number> }[] = [
      {
        scans: { workgroupSize: 512, itemsPerThread: 40 },
        runs: { workgroupSize: 256, itemsPerThread: 16 },
      },
      {
        scans: { workgroupSize: 512, itemsPerThread: 40 },
        runs: { workgroupSize: 512, itemsPerThread: 16 },
      },
      {
        scans: { workgroupSize: 512, itemsPerThread: 40, rowItems: 8 },
        runs: { workgroupSize: 256, itemsPerThread: 32 },
      },
      {
        scans: { workgroupSize: 256, itemsPerThread: 16, rowItems: 8 },
        runs: { workgroupSize: 256, itemsPerThread: 8 },
      },
    ];
    it.each(tilings)(
      'inclusive and exclusive scans and reduceByKey, u32 and i32, against the reference (%o)',
      async ({ scans, runs: rt }) => {
        const device = testDevice as NonNullable<typeof testDevice>;
        const policy = makeDevicePolicy(device, {
          fallback: 'error',
          tuning: { inclusiveScanByKey: scans, exclusiveScanByKey: scans, reduceByKey: rt },
        });
        for (const [n, kind] of [
          [20480, 'long'],
          [3 * 20480 + 5, 'long'],
          [2 * 20480 + 3, 'mixed'],
        ] as const) {
          for (const t of ['u32', 'i32'] as const) {
            const keys = makeKeys(t, n, kind, n + 1);
            const vals = makeData(t, n, 'random', n + 2);
            const inc = new (t === 'u32' ? Uint32Array : Int32Array)(n);
            await inclusiveScanByKey(policy, keys, vals, inc);
            expectSameArray(inc, refScanByKey(keys, vals, plusOf(t), sameKey), `inclusive ${t} n=${n}`);
            const exc = new (t === 'u32' ? Uint32Array : Int32Array)(n);
            await exclusiveScanByKey(policy, keys, vals, exc, 3);
            expectSameArray(exc, refScanByKey(keys, vals, plusOf(t), sameKey, 3), `exclusive ${t} n=${n}`);
            const want = refRuns(keys, vals, plusOf(t), sameKey);
            const ko = new (t === 'u32' ? Uint32Array : Int32Array)(n);
            const vo = new (t === 'u32' ? Uint32Array : Int32Array)(n);
            const runs = await reduceByKey(policy, keys, vals, ko, vo);
            expect(runs, `runs ${t} n=${n}`).toBe(want.keys.length);
            expectSameArray(ko.subarray(0, runs), want.keys, `reduceByKey keys ${t} n=${n}`);
            expectSameArray(vo.subarray(0, runs), want.values, `reduceByKey values ${t} n=${n}`);
          }
        }
      },
      300_000,
    );
  },
);

describe('by-key: bad input', () => {
  it('names the argument and leaves the caller data untouched', async () => {
    const seq = execution.seq;
    const k = Uint32Array.of(1, 1, 2);
    const v = Int32Array.of(1, 2, 3);
    const out = Int32Array.of(9, 9, 9);
    await expect(inclusiveScanByKey(seq, k, new Int32Array(2), out)).rejects.toThrow(/values.*3 elements/);
    await expect(inclusiveScanByKey(seq, [1, 2] as never, v, out)).rejects.toThrow(/keys/);
    await expect(inclusiveScanByKey(seq, k, v, new Uint32Array(3))).rejects.toThrow(/output.*i32/);
    await expect(inclusiveScanByKey(seq, k, v, new Int32Array(2))).rejects.toThrow(/output.*at least 3/);
    await expect(inclusiveScanByKey(seq, k, v, out, 3 as never)).rejects.toThrow(/op/);
    await expect(inclusiveScanByKey(seq, k, v, out, undefined, 'x' as never)).rejects.toThrow(/keyEq/);
    await expect(exclusiveScanByKey(seq, k, v, out, 'a' as never)).rejects.toThrow(/init/);
    await expect(inclusiveScanByKey(seq, k, v, k as never)).rejects.toThrow(/output/);
    await expect(inclusiveScanByKey({} as never, k, v, out)).rejects.toThrow(/policy/);
    const ko = Uint32Array.of(7);
    const vo = Int32Array.of(7, 7);
    await expect(reduceByKey(seq, k, v, ko, vo)).rejects.toThrow(/keysOut.*at least 2/);
    await expect(uniqueByKey(seq, k, v, Uint32Array.of(7, 7), Int32Array.of(7))).rejects.toThrow(
      /valuesOut.*at least 2/,
    );
    await expect(reduceByKey(seq, k, v, new Float32Array(3), vo)).rejects.toThrow(/keysOut.*u32/);
    await expect(reduceByKey(seq, k, v, ko, v)).rejects.toThrow(/valuesOut.*overlap/);
    expect(Array.from(out)).toEqual([9, 9, 9]);
    expect(Array.from(ko)).toEqual([7]);
    expect(Array.from(vo)).toEqual([7, 7]);
    expect(Array.from(k)).toEqual([1, 1, 2]);
    expect(Array.from(v)).toEqual([1, 2, 3]);
    if (testDevice) {
      const dev = makeDevicePolicy(testDevice, { fallback: 'error' });
      const ho = Uint32Array.of(7);
      const hv = Int32Array.of(7, 7, 7);
      await expect(reduceByKey(dev, k, v, ho, hv)).rejects.toThrow(/keysOut.*at least 2/);
      expect(Array.from(ho)).toEqual([7]);
      expect(Array.from(hv)).toEqual([7, 7, 7]);
      // An operator without identity cannot run on the GPU: an error under fallback 'error', the CPU under auto.
      const noId = (a: number, b: number) => a * 2 + b;
      await expect(inclusiveScanByKey(dev, k, v, out, noId)).rejects.toThrow(/identity/);
      expect(Array.from(out)).toEqual([9, 9, 9]);
      await inclusiveScanByKey(execution.auto, k, v, out, noId);
      expect(Array.from(out)).toEqual([1, 4, 3]);
    }
  });
});

describe.skipIf(!testDevice)('reduceByKey: runs crossing tiles (the fix-up of the tiles’ records)', () => {
  // The tiles take their run indices from the scanned tile counts; the folds of runs that cross
  // tiles come from the fix-up kernel over the tiles' records. Tiny tiles (128 elements) so runs of
  // every kind cross many tiles, more tiles than the fix-up's and the spine's workgroup (steps
  // chained by a carry), segments of a lowered binding limit (records across segments), subgroups
  // off (maxSpins: a field of the scan engine's tuning, accepted and unused by reduceByKey).
  const tiny = { workgroupSize: 32, itemsPerThread: 4 };
  const variants: Record<string, number | boolean>[] = [
    {},
    { maxSpins: 0 },
    { maxBindingBytes: 4096 },
    { maxBindingBytes: 4096, maxSpins: 0, subgroups: false },
    { subgroups: false },
  ];
  it.each(variants)('tiny tiles %o: plus, lastNonZero; u32 and f32 values; short outputs', async (v) => {
    const device = testDevice as NonNullable<typeof testDevice>;
    const policy = makeDevicePolicy(device, { fallback: 'error', tuning: { reduceByKey: { ...tiny, ...v } } });
    // 600001: more tiles (4688) than the fix-up folds per step (4 per thread, up to 1024 threads).
    const large = Object.keys(v).length === 0 ? [600001] : [];
    for (const n of [1, 127, 128, 129, 256 * 128 + 1, 40001, ...large]) {
      for (const kind of ['one', 'long', 'mixed', 'singletons'] as const) {
        const keys = makeKeys('u32', n, kind, n + 7);
        for (const vt of ['u32', 'f32'] as const) {
          const values = makeData(vt, n, 'small', n + 5);
          const want = refRuns(keys, values, plusOf(vt), sameKey);
          const ko = new Uint32Array(n);
          const vo = like(values);
          expect(await reduceByKey(policy, keys, values, ko, vo)).toBe(want.keys.length);
          expectSameArray(ko.subarray(0, want.keys.length), want.keys, `keys n=${n} ${kind} ${vt}`);
          expectSameArray(vo.subarray(0, want.keys.length), want.values, `values n=${n} ${kind} ${vt}`);
        }
        // A non-commutative operator: the fix-up folds in tile order.
        const lv = makeData('u32', n, 'random', n + 9).map((x) => (x % 3 === 0 ? x : 0));
        const lw = refRuns(keys, lv, lnz, sameKey);
        const lo = new Uint32Array(n);
        expect(await reduceByKey(policy, keys, lv, new Uint32Array(n), lo, lastNonZero)).toBe(lw.keys.length);
        expectSameArray(lo.subarray(0, lw.keys.length), lw.values, `lnz n=${n} ${kind}`);
        // Outputs one short of the runs on the device: an error, both untouched.
        if (lw.keys.length > 1) {
          const runs = lw.keys.length;
          const dk = DeviceArray.from(device, keys as Uint32Array);
          const dv = DeviceArray.from(device, lv);
          const dko = DeviceArray.from(device, new Uint32Array(runs - 1).fill(9));
          const dvo = DeviceArray.from(device, new Uint32Array(runs - 1).fill(9));
          await expect(reduceByKey(policy, dk, dv, dko, dvo, lastNonZero)).rejects.toThrow(/at least/);
          expect((await dvo.read()).every((x) => x === 9)).toBe(true);
          expect((await dko.read()).every((x) => x === 9)).toBe(true);
          for (const a of [dk, dv, dko, dvo]) a.destroy();
        }
      }
    }
  });
});
