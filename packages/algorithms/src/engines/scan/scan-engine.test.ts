/**
 * Engine paths the policy matrix does not reach on its own: the look-back fallback taken at every
 * wait (maxSpins 0), tile ids from the workgroup index, wider look-back windows, reduce-then-scan, scalar tiles of odd item counts,
 * segments of a few default tiles, six-row tiles, and a grid of more than 65,535 tiles; scans by
 * key and reduceByKey on each.
 */
import { DeviceArray, type GpuDevice, lambda, lastNonZero, plus } from '@webdpl/core';
import { makeDevicePolicy, type Policy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { exclusiveScanByKey, inclusiveScanByKey, reduceByKey } from '../../by-key/index';
import { copyIf, stablePartition, unique } from '../../compaction/index';
import { exclusiveScan, inclusiveScan } from '../../scans/index';
import { countCreations } from '../../testing/gpu-counts';
import { makeData, rng, testDevice } from '../../testing/matrix';
import { expectSameArray, type Op, refScan, refSplit, uniqueKeep } from '../../testing/scan-reference';

const lnz: Op = (a, b) => (b !== 0 ? b : a);
const addU32: Op = (a, b) => (a + b) >>> 0;
const negative = lambda((x) => x < 0);
const odd = lambda((x) => (x & 1) !== 0);

const tiny = { workgroupSize: 32, itemsPerThread: 4 };
const variants: { name: string; tuning: Record<string, number | boolean> }[] = [
  { name: 'fallback at every wait, default tiles', tuning: { maxSpins: 0 } },
  { name: 'fallback at every wait, tiny tiles', tuning: { ...tiny, maxSpins: 0 } },
  {
    name: 'fallback at every wait, tiny tiles, 1 predecessor per lane',
    tuning: { ...tiny, maxSpins: 0, lookbackPerLane: 1 },
  },
  { name: 'tiny tiles, 3 predecessors per lane', tuning: { ...tiny, maxSpins: 3, lookbackPerLane: 3 } },
  { name: 'fallback at every wait, tiny tiles, no subgroups', tuning: { ...tiny, maxSpins: 0, subgroups: false } },
  // Hardware GPUs' default (tile ids from the workgroup index); lavapipe keeps the atomic counter.
  { name: 'tile ids from the workgroup index, default tiles', tuning: { atomicTileIds: false } },
  {
    name: 'tile ids from the workgroup index, fallback at every wait, tiny tiles',
    tuning: { ...tiny, atomicTileIds: false, maxSpins: 0 },
  },
  {
    name: 'tile ids from the workgroup index, tiny tiles, no subgroups',
    tuning: { ...tiny, atomicTileIds: false, maxSpins: 2, subgroups: false },
  },
  { name: 'reduce-then-scan', tuning: { reduceThenScan: true } },
  { name: 'reduce-then-scan, tiny segmented', tuning: { ...tiny, reduceThenScan: true, maxBindingBytes: 4096 } },
  { name: 'reduce-then-scan, tiny, no subgroups', tuning: { ...tiny, reduceThenScan: true, subgroups: false } },
  // The reduce pass taking the tiles last to first (reduceReverseFrom; in-place scans too).
  { name: 'reduce-then-scan, reduce pass reversed', tuning: { reduceThenScan: true, reduceReverseFrom: 0 } },
  {
    name: 'reduce-then-scan, reduce pass reversed, tiny segmented',
    tuning: { ...tiny, reduceThenScan: true, maxBindingBytes: 4096, reduceReverseFrom: 0 },
  },
  { name: 'scalar tiles of 64 x 3 items', tuning: { workgroupSize: 64, itemsPerThread: 3, maxSpins: 1 } },
  { name: 'segments of a few default tiles', tuning: { maxBindingBytes: 6144 * 4 + 300 } },
  {
    name: 'segments of a few default tiles, fallback at every wait',
    tuning: { maxBindingBytes: 2 * 6144 * 4 + 300, maxSpins: 0 },
  },
  {
    name: 'segments of a few default tiles, tile ids from the workgroup index',
    tuning: { maxBindingBytes: 2 * 6144 * 4 + 300, atomicTileIds: false },
  },
  { name: 'six rows per tile (24 items per thread)', tuning: { itemsPerThread: 24, maxSpins: 4 } },
  // Hardware defaults: 8 rows scanned together (compactions too), tile ids from the workgroup index.
  { name: 'eight rows per tile (32 items per thread)', tuning: { itemsPerThread: 32, atomicTileIds: false } },
  // Hardware defaults without subgroups (scans 512 x 16, compactions 1024 x 8).
  { name: 'no subgroups, 512 x 16', tuning: { subgroups: false, workgroupSize: 512, itemsPerThread: 16 } },
  { name: 'no subgroups, 1024 x 8', tuning: { subgroups: false, workgroupSize: 1024, itemsPerThread: 8 } },
];

/** Scan by key of u32 plus (exclusive from `init` when given) and the runs' keys and sums. */
function refByKey(keys: Uint32Array, vals: Uint32Array, init?: number) {
  const scan = new Uint32Array(keys.length);
  const runKeys: number[] = [];
  const sums: number[] = [];
  let acc = 0;
  for (let i = 0; i < keys.length; i++) {
    const head = i === 0 || keys[i] !== keys[i - 1];
    const v = vals[i] as number;
    if (head) {
      runKeys.push(keys[i] as number);
      sums.push(0);
      acc = init ?? 0;
    }
    if (init !== undefined) scan[i] = acc;
    acc = (acc + v) >>> 0;
    if (init === undefined) scan[i] = acc;
    sums[sums.length - 1] = ((sums[sums.length - 1] as number) + v) >>> 0;
  }
  return { scan, runKeys, sums };
}

function runsOf(n: number, seed: number): Uint32Array {
  const r = rng(seed);
  const out = makeData('u32', n, 'random', seed) as Uint32Array;
  for (let i = 1; i < n; i++) if (r() % 4 !== 0) out[i] = out[i - 1] as number;
  return out;
}

describe.skipIf(!testDevice)('scan engine paths', () => {
  const device = testDevice as GpuDevice;
  for (const v of variants) {
    it(v.name, async () => {
      const policy: Policy = makeDevicePolicy(device, { fallback: 'error', tuning: { scan: v.tuning } });
      for (const n of [1, 100, 4097, 33333, 200001]) {
        const du = makeData('u32', n, 'random').map((x) => (x % 5 === 0 ? x : 0));
        const out = new Uint32Array(n);
        await inclusiveScan(policy, du, out, lastNonZero);
        expectSameArray(out, refScan(du, lnz, undefined, false), `lnz n=${n}`);
        const df = makeData('f32', n, 'small');
        const of = new Float32Array(n);
        await exclusiveScan(policy, df, of, 0.5);
        expectSameArray(
          of,
          refScan(df, (a, b) => a + b, 0.5, true),
          `f32 n=${n}`,
        );
        const dr = makeData('f32', n, 'random');
        const [yes, no] = refSplit(dr, (x) => x < 0);
        const oc = new Float32Array(n);
        const count = await copyIf(policy, dr, oc, negative);
        expect(count).toBe(yes.length);
        expectSameArray(oc.subarray(0, count), yes, `copyIf n=${n}`);
        const dp = DeviceArray.from(device, dr as Float32Array);
        expect(await stablePartition(policy, dp, negative)).toBe(yes.length);
        expectSameArray(await dp.read(), [...yes, ...no], `stablePartition n=${n}`);
        dp.destroy();
        const dun = runsOf(n, n);
        const [u] = refSplit(dun, uniqueKeep(dun));
        expect(await unique(policy, dun)).toBe(u.length);
        expectSameArray(dun.subarray(0, u.length), u, `unique n=${n}`);
        // By key (pairs scanned in subgroup rows with subgroups; the keys' vec4 loads), runs of ~4.
        const keys = runsOf(n, n + 5);
        const kv = makeData('u32', n, 'random', n + 6) as Uint32Array;
        const sk = new Uint32Array(n);
        await inclusiveScanByKey(policy, keys, kv, sk);
        expectSameArray(sk, refByKey(keys, kv).scan, `inclusiveScanByKey n=${n}`);
        await exclusiveScanByKey(policy, keys, kv, sk, 5);
        expectSameArray(sk, refByKey(keys, kv, 5).scan, `exclusiveScanByKey n=${n}`);
        const want = refByKey(keys, kv);
        const ko = new Uint32Array(n);
        const vo = new Uint32Array(n);
        expect(await reduceByKey(policy, keys, kv, ko, vo)).toBe(want.runKeys.length);
        expectSameArray(ko.subarray(0, want.runKeys.length), want.runKeys, `reduceByKey keys n=${n}`);
        expectSameArray(vo.subarray(0, want.runKeys.length), want.sums, `reduceByKey sums n=${n}`);
        const di = DeviceArray.from(device, makeData('u32', n + 1, 'random') as Uint32Array);
        const src = (await di.read()).subarray(1);
        const view = di.view(1, n);
        await inclusiveScan(policy, view, view, plus, 3);
        expectSameArray(await view.read(), refScan(src, addU32, 3, false), `in place n=${n}`);
        di.destroy();
      }
    });
  }

  it('a cached plan serves only its own tuning: a policy differing in any field builds its own', async () => {
    const dev = device as GpuDevice;
    const n = 3000;
    const a = DeviceArray.from(dev, makeData('u32', n, 'random', 4) as Uint32Array);
    const o = DeviceArray.create(dev, 'u32', n);
    const bindGroups = async (policy: Policy) =>
      (await countCreations(dev, () => inclusiveScan(policy, a, o))).createBindGroup;
    try {
      const base = { workgroupSize: 32, itemsPerThread: 8 };
      const policyOf = (t: Record<string, number | boolean>) =>
        makeDevicePolicy(dev, { fallback: 'error', tuning: { scan: t } });
      const first = policyOf(base);
      await bindGroups(first);
      expect(await bindGroups(first), 'the same policy again').toBe(0);
      const extras: Record<string, number | boolean>[] = [{ maxSpins: 7 }, { reduceReverseFrom: 0 }, { rowItems: 8 }];
      for (const extra of extras) {
        expect(await bindGroups(policyOf({ ...base, ...extra })), JSON.stringify(extra)).toBeGreaterThan(0);
      }
    } finally {
      a.destroy();
      o.destroy();
    }
  });

  it('more than 65,535 tiles (a 2-D grid): 32-element tiles over 2,097,253 elements', async () => {
    for (const atomicTileIds of [true, false]) await bigGrid(atomicTileIds, atomicTileIds ? 1 : 2);
  });
  /** Tile ids from a ticket or from the 2-D grid's workgroup index; `seed` gives each its own data. */
  async function bigGrid(atomicTileIds: boolean, seed: number): Promise<void> {
    const policy = makeDevicePolicy(device, {
      fallback: 'error',
      tuning: { scan: { workgroupSize: 32, itemsPerThread: 1, atomicTileIds } },
    });
    const n = 65_536 * 32 + 101;
    const data = makeData('u32', n, 'random', seed);
    const out = new Uint32Array(n);
    await inclusiveScan(policy, data, out);
    let acc = 0;
    for (let i = 0; i < n; i++) {
      acc = (acc + (data[i] as number)) >>> 0;
      if (out[i] !== acc) expect.fail(`scan element ${i}`);
    }
    const kept = await copyIf(policy, data, out, odd);
    let j = 0;
    for (let i = 0; i < n; i++)
      if ((data[i] as number) & 1 && out[j++] !== data[i]) expect.fail(`copyIf element ${j - 1}`);
    expect(kept).toBe(j);
  }
});
