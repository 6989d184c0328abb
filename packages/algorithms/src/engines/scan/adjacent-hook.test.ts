/**
 * The scan engine's open 'adjacent' generate hook at the engine's level: an equality fragment of the
 * fixed signature `fn(prev, x) -> bool` over each element and its predecessor (unique with an
 * equality: compaction and partition, u32 and f32, on the striped layout with subgroups and the rows
 * layout without, the look-back fallback's `scn_gen_at` at every wait, reduce-then-scan, and binding
 * segments whose input windows start one element early), and the same hook over a key stream
 * (`keys`: the 'by-key' form's heads and tails, a 'scatter' fragment given each element's key, and
 * a scan by key), at edge sizes.
 */
import { combinerOf, DeviceArray, fragment, type GpuDevice, plus } from '@webdpl/core';
import { describe, expect, it } from 'vitest';
import { makeData, TINY_SCAN_TILE, testDevice } from '../../testing/matrix';
import { expectSameArray } from '../../testing/scan-reference';
import { type AdjacentHook, compactDevice, scanDevice, segmentedCombiner } from './index';
import { tileKernel, tileKernelName } from './kernels';

const tiny = { workgroupSize: 32, itemsPerThread: 4 };
const variants: { name: string; tuning: Record<string, number | boolean> }[] = [
  { name: 'default tiles', tuning: {} },
  { name: 'default tiles, no subgroups', tuning: { subgroups: false } },
  { name: 'tiny tiles', tuning: tiny },
  { name: 'tiny tiles, no subgroups', tuning: { ...tiny, subgroups: false } },
  { name: 'fallback at every wait, tiny tiles', tuning: { ...tiny, maxSpins: 0 } },
  { name: 'fallback at every wait, tiny tiles, no subgroups', tuning: { ...tiny, maxSpins: 0, subgroups: false } },
  { name: 'reduce-then-scan, tiny tiles', tuning: { ...tiny, reduceThenScan: true } },
  { name: 'segments of tiny tiles (maxBindingBytes 4096)', tuning: { ...tiny, maxBindingBytes: 4096 } },
  {
    name: 'segments of tiny tiles, no subgroups, fallback at every wait',
    tuning: { ...tiny, maxBindingBytes: 4096, maxSpins: 0, subgroups: false },
  },
  { name: 'scalar tiles of 64 x 3 items', tuning: { workgroupSize: 64, itemsPerThread: 3, maxSpins: 1 } },
];
const sizes = [1, 2, 3, 17, TINY_SCAN_TILE - 1, TINY_SCAN_TILE, TINY_SCAN_TILE + 1, 1025, 4097, 33333];

// u32: one run while the elements stay in one bucket of 4 (x / 4 equal)
const bucketEq = fragment({
  name: 'test_adj_bucket',
  code: 'fn test_adj_bucket(a: u32, b: u32) -> bool { return a / 4u == b / 4u; }',
});
// f32: one run while the element does not grow by 0.25 or more over its predecessor
const closeEq = fragment({
  name: 'test_adj_close',
  code: 'fn test_adj_close(a: f32, b: f32) -> bool { return b - a < 0.25; }',
});
// over keys: the element, and the key xor the index into a second output
const keyStore = fragment({
  name: 'test_adj_kstore',
  code: 'fn test_adj_kstore(at: u32, x: u32, k: u32, i: u32) { scn_store0(at, x); scn_store1(at, k ^ i); }',
});
const keyEq = fragment({ name: 'test_adj_keq', code: 'fn test_adj_keq(a: u32, b: u32) -> bool { return a == b; }' });
const U32 = combinerOf(plus, 'u32');

/** Data with runs: each element repeats its predecessor's bucket about half the time. */
function runsOf(n: number, seed: number): Uint32Array {
  const r = makeData('u32', n, 'random', seed) as Uint32Array;
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const prev = i > 0 ? (out[i - 1] as number) : 40;
    out[i] = (r[i] as number) % 2 === 0 ? (prev & ~3) + ((r[i] as number) % 4) : ((r[i] as number) >>> 8) % 64;
  }
  return out;
}

/** Which elements start a run: i == 0 or !eq(x[i - 1], x[i]). */
function heads(x: ArrayLike<number>, eq: (a: number, b: number) => boolean): boolean[] {
  return Array.from({ length: x.length }, (_, i) => i === 0 || !eq(x[i - 1] as number, x[i] as number));
}

describe.skipIf(!testDevice)("scan engine: the 'adjacent' hook", () => {
  const device = testDevice as GpuDevice;
  for (const v of variants) {
    it(v.name, async () => {
      for (const n of sizes) {
        const xu = runsOf(n, n + 1);
        const xf = Float32Array.from(runsOf(n, n + 2), (a) => a / 8);
        const du = DeviceArray.from(device, xu);
        const df = DeviceArray.from(device, xf);
        const ou = DeviceArray.create(device, 'u32', n);
        const of = DeviceArray.create(device, 'f32', n);
        try {
          const cases = [
            ['u32', du, ou, xu, { kind: 'adjacent', fn: bucketEq }, (a: number, b: number) => a >>> 2 === b >>> 2],
            ['f32', df, of, xf, { kind: 'adjacent', fn: closeEq }, (a: number, b: number) => Math.fround(b - a) < 0.25],
          ] as const;
          for (const [t, input, output, x, keep, eq] of cases) {
            const h = heads(x, eq);
            const kept = Array.from(x).filter((_, i) => h[i]);
            const rejected = Array.from(x)
              .filter((_, i) => !h[i])
              .reverse();
            for (const write of ['compact', 'partition'] as const) {
              const r = await compactDevice(device, {
                label: 'test adjacent',
                input,
                output,
                keep,
                write,
                readBack: true,
                tuning: v.tuning,
              });
              const label = `${t} ${write} n=${n}`;
              expect(r.count, `count ${label}`).toBe(kept.length);
              const got =
                t === 'u32' ? new Uint32Array(r.bytes as ArrayBuffer) : new Float32Array(r.bytes as ArrayBuffer);
              if (write === 'compact') expectSameArray(got.subarray(0, r.count), kept, label);
              else expectSameArray(got, [...kept, ...rejected], label);
            }
          }

          // Over a key stream: heads and tails of runs of keys (the 'by-key' form), and a scan by key.
          if (!v.tuning.reduceThenScan) {
            const keys = Uint32Array.from(xu, (a) => a >>> 2);
            const dk = DeviceArray.from(device, keys);
            try {
              for (const edge of ['head', 'tail'] as const) {
                const keep: AdjacentHook = { kind: 'adjacent', fn: keyEq, keys: { type: 'u32', edge } };
                const r = await compactDevice(device, {
                  label: 'test adjacent keys',
                  input: du,
                  keys: dk,
                  output: ou,
                  keep,
                  write: 'compact',
                  readBack: true,
                  tuning: v.tuning,
                });
                const want = Array.from(xu).filter((_, i) =>
                  edge === 'head' ? i === 0 || keys[i] !== keys[i - 1] : i === n - 1 || keys[i] !== keys[i + 1],
                );
                expectSameArray(new Uint32Array(r.bytes as ArrayBuffer).subarray(0, r.count), want, `${edge}s n=${n}`);
              }
              // A scatter fragment over keys (the key is its s0): heads first, the others from the end.
              const o1 = DeviceArray.create(device, 'u32', n);
              try {
                const r = await compactDevice(device, {
                  label: 'test adjacent keys scatter',
                  input: du,
                  keys: dk,
                  output: ou,
                  more: [{ output: o1, readBack: true }],
                  keep: { kind: 'adjacent', fn: keyEq, keys: { type: 'u32' } },
                  write: { kind: 'scatter', fn: keyStore, outputs: ['u32', 'u32'], rejected: true },
                  readBack: true,
                  tuning: v.tuning,
                });
                const at = Array.from({ length: n }, (_, i) => i);
                const hd = at.filter((i) => i === 0 || keys[i] !== keys[i - 1]);
                const order = [...hd, ...at.filter((i) => !hd.includes(i)).reverse()];
                expect(r.count, `scatter over keys count n=${n}`).toBe(hd.length);
                expectSameArray(
                  new Uint32Array(r.bytes as ArrayBuffer),
                  order.map((i) => xu[i] as number),
                  `scatter over keys out0 n=${n}`,
                );
                expectSameArray(
                  new Uint32Array(r.moreBytes?.[0] as ArrayBuffer),
                  order.map((i) => ((keys[i] as number) ^ i) >>> 0),
                  `scatter over keys out1 n=${n}`,
                );
              } finally {
                o1.destroy();
              }
              const bytes = await scanDevice(device, {
                label: 'test adjacent scan by key',
                input: du,
                keys: dk,
                output: ou,
                gen: { kind: 'adjacent', fn: keyEq, keys: { type: 'u32', scan: { op: U32.combine } } },
                write: 'inclusive',
                combiner: segmentedCombiner(U32),
                initBits: 0,
                readBack: true,
                tuning: v.tuning,
              });
              let run = 0;
              const want = Array.from(xu, (a, i) => {
                run = i === 0 || keys[i] !== keys[i - 1] ? a : (run + a) >>> 0;
                return run;
              });
              expectSameArray(new Uint32Array(bytes as ArrayBuffer), want, `scan by key n=${n}`);
            } finally {
              dk.destroy();
            }
          }
        } finally {
          for (const a of [du, df, ou, of]) a.destroy();
        }
      }
    }, 120_000);
  }

  it("the built-in forms' kernels are the open hooks'; an equality names its kernel; keys need fn", () => {
    const base = {
      phase: 'chained',
      inType: 'u32',
      combiner: U32,
      write: 'compact',
      vec: false,
      inPlace: false,
      workgroupSize: 32,
      itemsPerThread: 4,
      subgroups: false,
      minSubgroupSize: 8,
      maxSpins: 8,
      atomicTileIds: true,
      lookbackPerLane: 1,
    } as const;
    const name = (gen: Parameters<typeof tileKernelName>[0]['gen']) => tileKernelName({ ...base, gen });
    expect(name({ kind: 'adjacent' })).toBe(name({ kind: 'adjacent-different' }));
    expect(name({ kind: 'adjacent', fn: bucketEq })).not.toBe(name({ kind: 'adjacent' }));
    expect(name({ kind: 'adjacent', fn: keyEq, keys: { type: 'u32' } })).toBe(
      name({ kind: 'by-key', keyType: 'u32', keyEq, edge: 'head' }),
    );
    expect(() => name({ kind: 'adjacent', keys: { type: 'u32' } })).toThrow(/needs fn/);
    const byKey = { kind: 'by-key', keyType: 'u32', keyEq, edge: 'head' } as const;
    expect(tileKernelName({ ...base, gen: byKey, write: { kind: 'scatter', keysOut: true } })).toBe(
      tileKernelName({ ...base, gen: byKey, write: 'by-key-firsts' }),
    );
    expect(() =>
      tileKernel({ ...base, gen: byKey, write: { kind: 'scatter', keysOut: true, rejected: true } }),
    ).toThrow(/no rejected/);
  });
});
