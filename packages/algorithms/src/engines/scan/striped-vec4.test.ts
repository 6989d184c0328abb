/**
 * The striped compaction's vec4 variant (scan tuning `stripedVec4`, kernels.ts
 * `stripedCompactionVec4`): where it applies and what its kernels are named, the kernels with the
 * field off unchanged, then copyIf, removeIf, partition and stablePartition through the fronts
 * with it on, under tiny tiles (many tiles, partial tiles, several vec4 items per lane), the
 * look-back fallback at every wait, kept ratios 0%, ~6%, ~50%, 100%, u32 and f32 predicates, a
 * stencil, and views at aligned and unaligned offsets (the unaligned ones take the scalar loads).
 */
import { combinerOf, DeviceArray, fragment, type GpuDevice, lambda, plus } from '@webdpl/core';
import { makeDevicePolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { copyIf, partition, removeIf, stablePartition } from '../../compaction/index';
import { edgeSizes, makeData, testDevice } from '../../testing/matrix';
import { expectSameArray, refSplit } from '../../testing/scan-reference';
import { type TileKernelParams, tileKernel, tileKernelName } from './kernels';

const u32Half = lambda((x) => (x & 2) !== 0);
const u32Sparse = lambda((x) => (x & 15) === 0);
const f32Neg = lambda((x) => x < 0);

describe('stripedVec4: where it applies', () => {
  const fn = fragment({ name: 'test_half', code: 'fn test_half(x: u32) -> bool { return (x & 2u) != 0u; }' });
  const base: TileKernelParams = {
    phase: 'chained',
    inType: 'u32',
    combiner: combinerOf(plus, 'u32'),
    gen: { kind: 'element', fn },
    write: 'compact',
    vec: true,
    inPlace: false,
    workgroupSize: 64,
    itemsPerThread: 16,
    subgroups: true,
    minSubgroupSize: 8,
    maxSpins: 64,
    atomicTileIds: true,
    lookbackPerLane: 1,
  };
  it('names and builds the vec4 variant only for element compactions on the vec4 path with subgroups', () => {
    const on = { ...base, stripedVec4: true };
    expect(tileKernelName(on)).toContain('v4');
    expect(tileKernel(on).code).toContain('in_v[sgv + 3u * ids.sg_size]');
    expect(tileKernelName({ ...on, write: 'partition' })).toContain('v4');
    // The transposed form: its own name, vec4 loads and shuffles, and precedence over stripedVec4.
    const sh = { ...base, stripedShuffle: true };
    expect(tileKernelName(sh)).toContain('v4s');
    expect(tileKernelName({ ...sh, stripedVec4: true })).toContain('v4s');
    expect(tileKernel(sh).code).toContain('lv3 = in_v[sgv + 3u * ids.sg_size]');
    expect(tileKernel(sh).code).toContain('subgroupShuffle(a.w, ts3)');
    expect(tileKernelName({ ...sh, vec: false })).not.toContain('v4');
    for (const off of [
      { ...on, vec: false },
      { ...on, subgroups: false },
      { ...on, gen: { kind: 'adjacent-different' } as const },
      { ...on, write: 'inclusive' as const },
      { ...on, phase: 'downsweep' as const },
    ]) {
      expect(tileKernelName(off)).not.toContain('v4');
    }
  });
  it('leaves the kernels with the field off as they were', () => {
    for (const p of [base, { ...base, write: 'partition' as const }, { ...base, vec: false }]) {
      const off = tileKernel({ ...p, stripedVec4: false, stripedShuffle: false });
      const plain = tileKernel(p);
      expect(off.name).toBe(plain.name);
      expect(off.code).toBe(plain.code);
      expect(off.code).not.toContain('sgv');
    }
  });
});

describe.skipIf(!testDevice)('striped compaction with vec4 loads (stripedVec4) through the fronts', () => {
  const device = testDevice as GpuDevice;
  const tilings: { name: string; tuning: { workgroupSize: number; itemsPerThread: number; maxSpins?: number } }[] = [
    { name: '32 x 8', tuning: { workgroupSize: 32, itemsPerThread: 8 } },
    { name: '64 x 16', tuning: { workgroupSize: 64, itemsPerThread: 16 } },
    { name: '32 x 8, fallback at every wait', tuning: { workgroupSize: 32, itemsPerThread: 8, maxSpins: 0 } },
    { name: '64 x 16, fallback at every wait', tuning: { workgroupSize: 64, itemsPerThread: 16, maxSpins: 0 } },
    { name: '32 x 40 (two mask words)', tuning: { workgroupSize: 32, itemsPerThread: 40, maxSpins: 1 } },
  ];
  const forms = [
    ...tilings.map((t) => ({ ...t, field: 'stripedVec4' })),
    // The transposed form (stripedVec4Shuffle), on the tilings with fewest and most items.
    ...tilings.filter((_, q) => q >= 2).map((t) => ({ ...t, field: 'stripedVec4Shuffle' })),
  ];
  for (const { name: tiling, tuning, field } of forms) {
    const name = `${field}, ${tiling}`;
    const tile = tuning.workgroupSize * tuning.itemsPerThread;
    const policy = makeDevicePolicy(device, {
      fallback: 'error',
      tuning: { scan: { maxSpins: 64, ...tuning, [field]: true } },
    });
    const sizes = edgeSizes([tile, 2 * tile], [7 * tile + 5]).filter((n) => n > 0);
    it(`${name}: copyIf, removeIf, partition, stablePartition at edge sizes, u32 and f32`, async () => {
      for (const n of sizes) {
        for (const type of ['u32', 'f32'] as const) {
          const raw = makeData(type, n, 'random', n + 11);
          const cases =
            type === 'u32'
              ? [
                  { pred: u32Half, data: raw, ratio: '~50%' },
                  { pred: u32Sparse, data: raw, ratio: '~6%' },
                  { pred: u32Half, data: raw.map((x) => x | 2), ratio: '100%' },
                  { pred: u32Half, data: raw.map((x) => x & ~2), ratio: '0%' },
                ]
              : [
                  { pred: f32Neg, data: raw, ratio: '~50%' },
                  { pred: f32Neg, data: raw.map((x) => -Math.abs(x) - 0.5), ratio: '100%' },
                  { pred: f32Neg, data: raw.map((x) => Math.abs(x)), ratio: '0%' },
                ];
          for (const { pred, data, ratio } of cases) {
            const f = pred.js([type]) as (x: number) => boolean;
            const [yes, no] = refSplit(data, f);
            const at = `${type} n=${n} ${ratio}`;
            const out = data.slice().fill(7);
            expect(await copyIf(policy, data, out, pred), `copyIf ${at}`).toBe(yes.length);
            expectSameArray(out.subarray(0, yes.length), yes, `copyIf ${at}`);
            expectSameArray(out.subarray(yes.length), new Array(n - yes.length).fill(7), `copyIf rest ${at}`);
            const r = data.slice();
            expect(await removeIf(policy, r, pred), `removeIf ${at}`).toBe(no.length);
            expectSameArray(r.subarray(0, no.length), no, `removeIf ${at}`);
            const s = data.slice();
            expect(await stablePartition(policy, s, pred), `stablePartition ${at}`).toBe(yes.length);
            expectSameArray(s, [...yes, ...no], `stablePartition ${at}`);
            const p = data.slice();
            const split = await partition(policy, p, pred);
            expect(split, `partition ${at}`).toBe(yes.length);
            expect(p.subarray(0, split).every(f), `partition kept ${at}`).toBe(true);
            expect(p.subarray(split).some(f), `partition rejected ${at}`).toBe(false);
            const sorted = (a: ArrayLike<number>) => Float64Array.from(a).sort();
            expectSameArray(sorted(p), sorted(data), `partition is a permutation ${at}`);
          }
        }
      }
    });
  }

  it.each(['stripedVec4', 'stripedVec4Shuffle'])(
    '%s: views at element offsets 0..5 of their buffers (aligned: vec4 loads, else scalar) and a stencil',
    async (field) => {
      const policy = makeDevicePolicy(device, {
        fallback: 'error',
        tuning: { scan: { workgroupSize: 32, itemsPerThread: 8, maxSpins: 0, [field]: true } },
      });
      for (const n of [1, 5, 255, 256, 257, 3001]) {
        for (const offset of [0, 1, 2, 3, 4, 5]) {
          const host = makeData('u32', n + offset + 3, 'random', n * 7 + offset) as Uint32Array;
          const data = host.subarray(offset, offset + n);
          const buf = DeviceArray.from(device, host);
          const outBuf = DeviceArray.create(device, 'u32', n + 8);
          try {
            const [yes, no] = refSplit(data, (x) => (x & 2) !== 0);
            const at = `n=${n} offset=${offset}`;
            const input = buf.view(offset, n);
            const out = outBuf.view(offset, n);
            expect(await copyIf(policy, input, out, u32Half), `copyIf ${at}`).toBe(yes.length);
            expectSameArray((await out.read()).subarray(0, yes.length), yes, `copyIf ${at}`);
            // A stencil (a streamed input read per element) over the same view: keep input[i] where
            // stencil[i] & 2.
            const idx = Uint32Array.from({ length: n }, (_, i) => i);
            expect(await copyIf(policy, idx, input, new Uint32Array(n), u32Half), `stencil ${at}`).toBe(yes.length);
            const got = new Uint32Array(n);
            await copyIf(policy, idx, input, got, u32Half);
            expectSameArray(
              got.subarray(0, yes.length),
              Array.from(data.keys()).filter((i) => ((data[i] as number) & 2) !== 0),
              `stencil ${at}`,
            );
            expect(await stablePartition(policy, input, u32Half), `stablePartition ${at}`).toBe(yes.length);
            expectSameArray(await input.read(), [...yes, ...no], `stablePartition ${at}`);
          } finally {
            buf.destroy();
            outBuf.destroy();
          }
        }
      }
    },
  );
});
