/**
 * reduceByKey as reduce-then-scan (runs.ts, runs-kernels.ts): the count pass, the spine or the block
 * sums, the tile pass and the fix-up or the look-back (with its fallback) against the reference loop, at the edge sizes of DESIGN.md around each tile,
 * with runs of 1, 2, 16, longer than a tile and one run over many tiles, with subgroups on and off,
 * tiny tiles (many tiles at small n), scalar loads (items per thread not a multiple of 4, views at
 * odd offsets), segments of a lowered binding limit, an order-sensitive operator, f32 values,
 * a user keyEq, and short outputs (an ArgumentError, both untouched).
 */
import { DeviceArray, fragment, type GpuFunction, lambda, lastNonZero, mangle } from '@webdpl/core';
import { makeDevicePolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { setPhasePasses } from '../common/gpu-io';
import { refRuns } from '../testing/by-key-reference';
import { place } from '../testing/device-data';
import { countCreations } from '../testing/gpu-counts';
import { edgeSizes, floatTolerance, makeData, rng, testDevice } from '../testing/matrix';
import { expectSameArray } from '../testing/scan-reference';
import { reduceByKey } from './index';

type Op = (a: number, b: number) => number;

/**
 * x -> a * x + b (mod 2^16) packed as a << 16 | b, composed in input order: associative, not
 * commutative (any reordering of a fold changes it), identity 1 << 16.
 */
const affine: GpuFunction = {
  kind: 'function',
  arity: 2,
  name: 'affine16',
  builtin: false,
  commutative: false,
  supports: (t) => t[0] === 'u32',
  resultType: () => 'u32',
  identity: () => 0x10000,
  js: () => affineJs,
  jsSource: () =>
    '(p, q) => ((Math.imul(q >>> 16, p >>> 16) & 0xffff) * 65536 + ((Math.imul(q >>> 16, p & 0xffff) + (q & 0xffff)) & 0xffff))',
  wgsl: () => {
    const name = mangle('op_affine16', 'u32');
    return fragment({
      name,
      code: `fn ${name}(p: u32, q: u32) -> u32 {
  let a = ((q >> 16u) * (p >> 16u)) & 0xffffu;
  let b = ((q >> 16u) * (p & 0xffffu) + (q & 0xffffu)) & 0xffffu;
  return (a << 16u) | b;
}`,
    });
  },
  subgroupOp: () => undefined,
};
const affineJs: Op = (p, q) =>
  ((Math.imul(q >>> 16, p >>> 16) & 0xffff) * 65536 + ((Math.imul(q >>> 16, p & 0xffff) + (q & 0xffff)) & 0xffff)) >>>
  0;
const u32Plus: Op = (a, b) => (a + b) >>> 0;
const same = (a: number, b: number) => Object.is(a, b);

type RunKind = 'ones' | 'twos' | 'sixteens' | 'long' | 'equal' | 'spanning' | 'mixed';
const KINDS: readonly RunKind[] = ['ones', 'twos', 'sixteens', 'long', 'equal', 'spanning', 'mixed'];

/** u32 keys in runs: of 1, 2, 16, 1..600, one run, one run over the middle half, 1..8. */
function runKeys(n: number, kind: RunKind, seed: number): Uint32Array {
  const r = rng(seed);
  const out = new Uint32Array(n);
  let key = 7;
  let left = 0;
  for (let i = 0; i < n; i++) {
    if (kind === 'spanning') {
      out[i] = i >= n >> 2 && i < (3 * n) >> 2 ? 1 : i + 2;
      continue;
    }
    if (left === 0) {
      key += 1 + (r() % 3);
      left = { ones: 1, twos: 2, sixteens: 16, long: 1 + (r() % 600), equal: n, mixed: 1 + (r() % 8) }[kind];
    }
    out[i] = kind === 'equal' ? 5 : key;
    left--;
  }
  return out;
}

/** Values whose affine16 folds never collapse (a odd: every prefix matters). */
function affineValues(n: number, seed: number): Uint32Array {
  const r = rng(seed);
  return Uint32Array.from({ length: n }, () => ((r() | 1) & 0xffff) * 65536 + (r() & 0xffff));
}

const device = testDevice;
const TILE_VARIANTS: { name: string; tile: number; t: Record<string, number | boolean> }[] = [
  // Software adapters (lavapipe) default to 256 x 8 (scanDefaults).
  { name: 'default tiles', tile: 256 * 8, t: {} },
  { name: 'default tiles, no subgroups', tile: 256 * 8, t: { subgroups: false } },
  { name: 'tiny 32 x 4', tile: 128, t: { workgroupSize: 32, itemsPerThread: 4 } },
  { name: 'tiny 32 x 4, no subgroups', tile: 128, t: { workgroupSize: 32, itemsPerThread: 4, subgroups: false } },
  { name: 'tiny 16 x 3 (scalar loads)', tile: 48, t: { workgroupSize: 16, itemsPerThread: 3 } },
  {
    name: 'tiny 32 x 8, segments of 4 KiB',
    tile: 256,
    t: { workgroupSize: 32, itemsPerThread: 8, maxBindingBytes: 4096 },
  },
  { name: 'hardware tiles 256 x 16', tile: 4096, t: { workgroupSize: 256, itemsPerThread: 16 } },
  // The hardware GPUs' default (scanDefaults 'runs').
  { name: 'hardware tiles 512 x 16', tile: 8192, t: { workgroupSize: 512, itemsPerThread: 16 } },
  // The spine (one workgroup scanning the tile counts) instead of the count pass's block sums, and
  // the fix-up (one workgroup after the tiles) instead of the look-back.
  {
    name: 'tiny 32 x 4, spine and fix-up',
    tile: 128,
    t: { workgroupSize: 32, itemsPerThread: 4, blockSumsBelow: 0, lookbackBelow: 0 },
  },
  {
    name: 'tiny 32 x 4, spine and fix-up, no subgroups',
    tile: 128,
    t: { workgroupSize: 32, itemsPerThread: 4, blockSumsBelow: 0, lookbackBelow: 0, subgroups: false },
  },
  {
    name: 'tiny 32 x 4, block sums and fix-up',
    tile: 128,
    t: { workgroupSize: 32, itemsPerThread: 4, lookbackBelow: 0 },
  },
  {
    name: 'tiny 32 x 4, spine and look-back',
    tile: 128,
    t: { workgroupSize: 32, itemsPerThread: 4, blockSumsBelow: 0 },
  },
  // The size rules (RUNS_FORMS) inside the edge sizes: block sums below 600 elements, the look-back below 3000.
  {
    name: 'tiny 32 x 4, block sums below 600, look-back below 3000',
    tile: 128,
    t: { workgroupSize: 32, itemsPerThread: 4, blockSumsBelow: 600, lookbackBelow: 3000 },
  },
  // The count pass counting the tiles last to first (its size rule inside the edge sizes too).
  {
    name: 'tiny 32 x 8, count pass reversed',
    tile: 256,
    t: { workgroupSize: 32, itemsPerThread: 8, reduceReverseFrom: 0, lookbackBelow: 0 },
  },
  {
    name: 'tiny 16 x 3 (scalar loads), count pass reversed, no subgroups, segments of 4 KiB',
    tile: 48,
    t: { workgroupSize: 16, itemsPerThread: 3, reduceReverseFrom: 0, subgroups: false, maxBindingBytes: 4096 },
  },
  {
    name: 'tiny 32 x 8, count pass reversed from 1000 elements, segments of 4 KiB',
    tile: 256,
    t: { workgroupSize: 32, itemsPerThread: 8, reduceReverseFrom: 1000, maxBindingBytes: 4096 },
  },
  // The read-ahead past each tile (tiles write their last runs, the fix-up only when one could not):
  // with block sums and the spine, scalar loads, segments (a segment's edge blocks the read-ahead).
  {
    name: 'tiny 32 x 8, read-ahead with block sums',
    tile: 256,
    t: { workgroupSize: 32, itemsPerThread: 8, readAheadBelow: 2 ** 30, lookbackBelow: 0, blockSumsBelow: 2 ** 30 },
  },
  {
    name: 'tiny 32 x 8, read-ahead below 3000 elements (the size rule inside the edge sizes)',
    tile: 256,
    t: { workgroupSize: 32, itemsPerThread: 8, readAheadBelow: 3000, lookbackBelow: 0, blockSumsBelow: 2 ** 30 },
  },
  {
    name: 'tiny 16 x 3 (scalar loads), read-ahead with the spine, segments of 4 KiB',
    tile: 48,
    t: {
      workgroupSize: 16,
      itemsPerThread: 3,
      readAheadBelow: 2 ** 30,
      lookbackBelow: 0,
      blockSumsBelow: 0,
      maxBindingBytes: 4096,
    },
  },
  // The count fused into the tile pass's dispatch (lagCountFrom): workgroup i counts tile i and runs
  // the tile pass of tile i - countLag, waiting for the counts before it; with lags of 0 (every
  // tile waits on its neighbours' counts), 3, 5 and more than the tiles, and with no waiting at all
  // (maxSpins 0: an unpublished count is computed from the keys at once).
  {
    name: 'tiny 32 x 4, count fused, lag 3',
    tile: 128,
    t: { workgroupSize: 32, itemsPerThread: 4, lagCountFrom: 0, countLag: 3, lookbackBelow: 0 },
  },
  {
    name: 'tiny 32 x 4, count fused, lag 0, computed at once',
    tile: 128,
    t: { workgroupSize: 32, itemsPerThread: 4, lagCountFrom: 0, countLag: 0, maxSpins: 0, lookbackBelow: 0 },
  },
  {
    name: 'tiny 32 x 4, count fused, lag 256, no subgroups',
    tile: 128,
    t: { workgroupSize: 32, itemsPerThread: 4, lagCountFrom: 0, countLag: 256, subgroups: false, lookbackBelow: 0 },
  },
  {
    name: 'tiny 16 x 3 (scalar loads), count fused, lag 5, computed at once, segments of 4 KiB',
    tile: 48,
    t: {
      workgroupSize: 16,
      itemsPerThread: 3,
      lagCountFrom: 0,
      countLag: 5,
      maxSpins: 0,
      lookbackBelow: 0,
      maxBindingBytes: 4096,
    },
  },
  {
    name: 'tiny 32 x 8, count fused with the read-ahead, lag 2, from 1000 elements',
    tile: 256,
    t: {
      workgroupSize: 32,
      itemsPerThread: 8,
      lagCountFrom: 1000,
      countLag: 2,
      readAheadBelow: 2 ** 30,
      lookbackBelow: 0,
    },
  },
  {
    name: 'tiny 16 x 3 (scalar loads), count fused, every wait computed, segments of 4 KiB',
    tile: 48,
    t: {
      workgroupSize: 16,
      itemsPerThread: 3,
      lagCountFrom: 0,
      countLag: 4,
      forceFusedFallback: true,
      lookbackBelow: 0,
      maxBindingBytes: 4096,
    },
  },
  {
    name: 'tiny 32 x 4, count fused, every wait computed, no subgroups',
    tile: 128,
    t: {
      workgroupSize: 32,
      itemsPerThread: 4,
      lagCountFrom: 0,
      forceFusedFallback: true,
      subgroups: false,
      lookbackBelow: 0,
    },
  },
  {
    name: 'hardware tiles 512 x 16, count fused',
    tile: 8192,
    t: { workgroupSize: 512, itemsPerThread: 16, lagCountFrom: 0, lookbackBelow: 0 },
  },
  // A look-back that never waits: every predecessor not yet published is reduced from the input.
  {
    name: 'tiny 32 x 4, look-back fallback at once',
    tile: 128,
    t: { workgroupSize: 32, itemsPerThread: 4, maxSpins: 0 },
  },
  {
    name: 'tiny 16 x 3, look-back fallback at once, no subgroups, segments of 4 KiB',
    tile: 48,
    t: { workgroupSize: 16, itemsPerThread: 3, maxSpins: 0, subgroups: false, maxBindingBytes: 4096 },
  },
];

describe.skipIf(!device)('reduceByKey as reduce-then-scan', () => {
  const dev = device as NonNullable<typeof device>;
  const policyOf = (t: Record<string, number | boolean>) =>
    makeDevicePolicy(dev, { fallback: 'error', tuning: { reduceByKey: t } });

  it.each(TILE_VARIANTS)(
    '$name: edge sizes, runs of 1, 2, 16, long, all equal, one over many tiles; plus and an order-sensitive operator',
    async ({ tile, t }) => {
      const policy = policyOf(t);
      for (const n of edgeSizes([tile, 3 * tile], [40001])) {
        const kind = KINDS[n % KINDS.length] as RunKind;
        const keys = runKeys(n, kind, n + 1);
        const values = makeData('u32', n, 'random', n + 2) as Uint32Array;
        const want = refRuns(keys, values, u32Plus, same);
        const ko = new Uint32Array(n);
        const vo = new Uint32Array(n);
        expect(await reduceByKey(policy, keys, values, ko, vo), `runs n=${n} ${kind}`).toBe(want.keys.length);
        expectSameArray(ko.subarray(0, want.keys.length), want.keys, `keys n=${n} ${kind}`);
        expectSameArray(vo.subarray(0, want.keys.length), want.values, `sums n=${n} ${kind}`);
        // The fold in input order (affine maps composed; every reordering changes them).
        const av = affineValues(n, n + 3);
        const aw = refRuns(keys, av, affineJs, same);
        expect(await reduceByKey(policy, keys, av, ko, vo, affine)).toBe(aw.keys.length);
        expectSameArray(vo.subarray(0, aw.keys.length), aw.values, `affine n=${n} ${kind}`);
      }
      // Every run kind at a size of several tiles and a partial one.
      const n = 5 * tile + 7;
      for (const kind of KINDS) {
        const keys = runKeys(n, kind, 11);
        const av = affineValues(n, 12);
        const aw = refRuns(keys, av, affineJs, same);
        const ko = new Uint32Array(n);
        const vo = new Uint32Array(n);
        expect(await reduceByKey(policy, keys, av, ko, vo, affine)).toBe(aw.keys.length);
        expectSameArray(ko.subarray(0, aw.keys.length), aw.keys, `keys ${kind}`);
        expectSameArray(vo.subarray(0, aw.keys.length), aw.values, `affine ${kind}`);
      }
    },
    300_000,
  );

  it('more tiles than the spine and the fix-up take in one step (their carries), with and without subgroups; many block sums', async () => {
    // 48-element tiles: 8,193 and more tiles, above the 4,096 (1,024 threads x 4) per step.
    for (const t of [
      TILE_VARIANTS[4],
      { t: { workgroupSize: 16, itemsPerThread: 3, subgroups: false } },
      { t: { workgroupSize: 16, itemsPerThread: 3, blockSumsBelow: 0, lookbackBelow: 0 } },
      // Block sums and the look-back over 8,193+ tiles (their defaults stop at 2^18 elements here).
      { t: { workgroupSize: 16, itemsPerThread: 3, maxSpins: 0, blockSumsBelow: 2 ** 30, lookbackBelow: 2 ** 30 } },
      {
        t: { workgroupSize: 16, itemsPerThread: 3, subgroups: false, blockSumsBelow: 2 ** 30, lookbackBelow: 2 ** 30 },
      },
      // The fused count over 8,193+ tiles (blocks of 91+ tiles).
      { t: { workgroupSize: 16, itemsPerThread: 3, lagCountFrom: 0, countLag: 64, lookbackBelow: 0 } },
      { t: { workgroupSize: 16, itemsPerThread: 3, lagCountFrom: 0, countLag: 7, maxSpins: 0, lookbackBelow: 0 } },
    ]) {
      const policy = policyOf((t as { t: Record<string, number | boolean> }).t);
      for (const [n, kind] of [
        [48 * 8192 + 5, 'mixed'],
        [48 * 8200, 'long'],
        [48 * 9000 + 1, 'spanning'],
      ] as const) {
        const keys = runKeys(n, kind, n);
        const av = affineValues(n, n + 1);
        const aw = refRuns(keys, av, affineJs, same);
        const ko = new Uint32Array(n);
        const vo = new Uint32Array(n);
        expect(await reduceByKey(policy, keys, av, ko, vo, affine), `runs n=${n} ${kind}`).toBe(aw.keys.length);
        expectSameArray(ko.subarray(0, aw.keys.length), aw.keys, `keys n=${n} ${kind}`);
        expectSameArray(vo.subarray(0, aw.keys.length), aw.values, `affine n=${n} ${kind}`);
      }
    }
  });

  it('a cached plan serves only its own tuning: a policy differing in any field (reduceReverseFrom included) builds its own', async () => {
    const n = 3000;
    const keys = DeviceArray.from(dev, runKeys(n, 'mixed', 5));
    const values = DeviceArray.from(dev, affineValues(n, 6));
    const ko = DeviceArray.create(dev, 'u32', n);
    const vo = DeviceArray.create(dev, 'u32', n);
    const bindGroups = async (policy: ReturnType<typeof policyOf>) =>
      (await countCreations(dev, () => reduceByKey(policy, keys, values, ko, vo, affine))).createBindGroup;
    try {
      const base = { workgroupSize: 32, itemsPerThread: 8 };
      const a = policyOf(base);
      await bindGroups(a);
      expect(await bindGroups(a), 'the same policy again').toBe(0);
      const extras: Record<string, number | boolean>[] = [
        { reduceReverseFrom: 0 },
        { readAheadBelow: 2 ** 30 },
        { blockSumsBelow: 0 },
        { maxSpins: 7 },
      ];
      for (const extra of extras) {
        expect(await bindGroups(policyOf({ ...base, ...extra })), JSON.stringify(extra)).toBeGreaterThan(0);
      }
    } finally {
      for (const x of [keys, values, ko, vo]) x.destroy();
    }
  });

  it("phases in compute passes of their own (setPhasePasses, the probe's diagnostics): the same runs", async () => {
    const policy = policyOf({ workgroupSize: 32, itemsPerThread: 4 });
    setPhasePasses(true);
    try {
      for (const n of [5, 1000]) {
        const keys = runKeys(n, 'mixed', n);
        const av = affineValues(n, n + 1);
        const aw = refRuns(keys, av, affineJs, same);
        // DeviceArray outputs of exactly the runs in one buffer: temporaries and the copy phase too.
        const both = DeviceArray.create(dev, 'u32', 2 * aw.keys.length);
        const ko = both.view(0, aw.keys.length);
        const vo = both.view(aw.keys.length, aw.keys.length);
        expect(await reduceByKey(policy, DeviceArray.from(dev, keys), DeviceArray.from(dev, av), ko, vo, affine)).toBe(
          aw.keys.length,
        );
        expectSameArray(await ko.read(), aw.keys, `keys n=${n}`);
        expectSameArray(await vo.read(), aw.values, `affine n=${n}`);
      }
    } finally {
      setPhasePasses(false);
    }
  });

  it.each([TILE_VARIANTS[2], TILE_VARIANTS[3], TILE_VARIANTS[4]])(
    '$name: i32 and f32 keys and values, lastNonZero, a user keyEq, f32 sums within tolerance',
    async (v) => {
      const { t, tile } = v as (typeof TILE_VARIANTS)[number];
      const policy = policyOf(t);
      const decade = lambda((a: number, b: number) => Math.floor(a / 10) === Math.floor(b / 10));
      const deq = (a: number, b: number) => Math.floor(a / 10) === Math.floor(b / 10);
      for (const n of [1, tile - 1, tile + 1, 7 * tile + 3, 20000]) {
        const ku = runKeys(n, 'mixed', n);
        // i32 keys, f32 values: sums within the tolerance of n terms.
        const ki = Int32Array.from(ku, (k) => k - 1000);
        const vf = makeData('f32', n, 'random', n + 1) as Float32Array;
        const want = refRuns(ki, vf, (a, b) => a + b, same);
        const ko = new Int32Array(n);
        const vo = new Float32Array(n);
        expect(await reduceByKey(policy, ki, vf, ko, vo)).toBe(want.keys.length);
        expectSameArray(ko.subarray(0, want.keys.length), want.keys, `i32 keys n=${n}`);
        const tol = floatTolerance(n, 8);
        want.values.forEach((x, r) => {
          if (!(Math.abs((vo[r] as number) - x) <= tol)) expect.fail(`f32 run ${r} n=${n}: ${vo[r]} vs ${x}`);
        });
        // f32 keys (-0 and +0 differ, NaN is one key), i32 values, lastNonZero (order-sensitive).
        const kf = Float32Array.from(ku, (k, i) => (k % 5 === 0 ? (i % 2 ? -0 : 0) : k % 7 === 0 ? Number.NaN : k / 4));
        const vi = Int32Array.from(makeData('i32', n, 'random', n + 2), (x) => (x % 3 === 0 ? x : 0));
        const lw = refRuns(kf, vi, (a, b) => (b !== 0 ? b : a), same);
        const kfo = new Float32Array(n);
        const vio = new Int32Array(n);
        expect(await reduceByKey(policy, kf, vi, kfo, vio, lastNonZero)).toBe(lw.keys.length);
        expectSameArray(kfo.subarray(0, lw.keys.length), lw.keys, `f32 keys n=${n}`);
        expectSameArray(vio.subarray(0, lw.keys.length), lw.values, `lnz n=${n}`);
        // A user keyEq: keys of one decade are one run.
        const dw = refRuns(ku, vi, (a, b) => (a + b) | 0, deq);
        const duo = new Uint32Array(n);
        expect(await reduceByKey(policy, ku, vi, duo, vio, undefined, decade)).toBe(dw.keys.length);
        expectSameArray(duo.subarray(0, dw.keys.length), dw.keys, `decade keys n=${n}`);
        expectSameArray(vio.subarray(0, dw.keys.length), dw.values, `decade sums n=${n}`);
      }
    },
    300_000,
  );

  it.each([
    TILE_VARIANTS[0],
    TILE_VARIANTS[2],
    TILE_VARIANTS[3],
    TILE_VARIANTS[5],
    TILE_VARIANTS.find((v) => v.name === 'tiny 32 x 4, count fused, lag 3'),
  ])(
    '$name: short outputs (host and DeviceArray, one and many tiles) raise and stay untouched; views; exact outputs',
    async (v) => {
      const { t, tile } = v as (typeof TILE_VARIANTS)[number];
      const policy = policyOf(t);
      for (const n of [5, tile - 3, 4 * tile + 9]) {
        const keys = runKeys(n, 'mixed', n + 4);
        const vals = makeData('u32', n, 'random', n + 5) as Uint32Array;
        const want = refRuns(keys, vals, u32Plus, same);
        const runs = want.keys.length;
        // Host outputs one short: keysOut, then valuesOut.
        const ks = new Uint32Array(runs - 1).fill(7);
        const vs = new Uint32Array(runs).fill(7);
        await expect(reduceByKey(policy, keys, vals, ks, vs)).rejects.toThrow(new RegExp(`keysOut.*at least ${runs}`));
        await expect(reduceByKey(policy, keys, vals, new Uint32Array(n), vs.subarray(1))).rejects.toThrow(
          new RegExp(`valuesOut.*at least ${runs}`),
        );
        expect(ks.every((x) => x === 7) && vs.every((x) => x === 7), `host untouched n=${n}`).toBe(true);
        // DeviceArray outputs one short (written directly: the kernels write nothing): both untouched.
        const dk = DeviceArray.from(dev, keys);
        const dv = DeviceArray.from(dev, vals);
        const sk = DeviceArray.from(dev, new Uint32Array(runs - 1).fill(9));
        const sv = DeviceArray.from(dev, new Uint32Array(n).fill(9));
        await expect(reduceByKey(policy, dk, dv, sk, sv)).rejects.toThrow(/keysOut.*at least/);
        await expect(reduceByKey(policy, dk, dv, sv, sk)).rejects.toThrow(/valuesOut.*at least/);
        expect(
          (await sk.read()).every((x) => x === 9),
          `device keys untouched n=${n}`,
        ).toBe(true);
        expect(
          (await sv.read()).every((x) => x === 9),
          `device values untouched n=${n}`,
        ).toBe(true);
        // Exact outputs and outputs of n on the device (written directly).
        const ek = DeviceArray.create(dev, 'u32', runs);
        const ev = DeviceArray.create(dev, 'u32', runs);
        expect(await reduceByKey(policy, dk, dv, ek, ev)).toBe(runs);
        expectSameArray(await ek.read(), want.keys, `exact keys n=${n}`);
        expectSameArray(await ev.read(), want.values, `exact sums n=${n}`);
        expect(await reduceByKey(policy, dk, dv, sv, DeviceArray.create(dev, 'u32', n))).toBe(runs);
        expectSameArray((await sv.read()).subarray(0, runs), want.keys, `direct keys n=${n}`);
        // Views at odd offsets (scalar loads), outputs too.
        const pk = place(dev, keys, 1);
        const pv = place(dev, vals, 3);
        const pko = place(dev, new Uint32Array(runs), 1);
        const pvo = place(dev, new Uint32Array(runs), 2);
        expect(await reduceByKey(policy, pk.view, pv.view, pko.view, pvo.view)).toBe(runs);
        expectSameArray(await pko.read(), want.keys, `view keys n=${n}`);
        expectSameArray(await pvo.read(), want.values, `view sums n=${n}`);
        for (const a of [dk, dv, sk, sv, ek, ev, pk.parent, pv.parent, pko.parent, pvo.parent]) a.destroy();
      }
    },
    300_000,
  );
});
