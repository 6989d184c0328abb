/**
 * The scan engine's open 'scan' write hook at the engine's level: a store fragment of the fixed
 * signature `fn(i, prefix, x, [s0, s1])` writing through `scn_store<k>` into 3 outputs (output 0
 * bound per binding segment, outputs 1 and 2 whole at element offsets unlike output 0's, so their
 * bases come from the `obase` uniform; padding around every array checked), inclusive and exclusive, over an 'element' hook with a
 * streamed input and the index and over a scan by key (the prefix is then the value); stores left
 * out for some elements leave the output as it was; `convertingWrite` (integer prefixes into f32);
 * a fragment's scan of an array onto itself reads a copy. Under the engine's variants (tiles,
 * subgroups on and off, the look-back fallback at every wait, reduce-then-scan, segments of a
 * lowered binding limit) at edge sizes.
 */
import { combinerOf, DeviceArray, fragment, type GpuDevice, plus } from '@webdpl/core';
import { describe, expect, it } from 'vitest';
import { place } from '../../testing/device-data';
import { makeData, TINY_SCAN_TILE, testDevice } from '../../testing/matrix';
import { expectSameArray } from '../../testing/scan-reference';
import { convertingWrite, type ElementHook, type ScanWrite, scanDevice, segmentedCombiner } from './index';
import { storageBindings, tileUse } from './kernels';

const tiny = { workgroupSize: 32, itemsPerThread: 4 };
const variants: { name: string; tuning: Record<string, number | boolean> }[] = [
  { name: 'default tiles', tuning: {} },
  { name: 'tiny tiles', tuning: tiny },
  { name: 'tiny tiles, no subgroups', tuning: { ...tiny, subgroups: false } },
  { name: 'fallback at every wait, tiny tiles', tuning: { ...tiny, maxSpins: 0 } },
  { name: 'fallback at every wait, tiny tiles, no subgroups', tuning: { ...tiny, maxSpins: 0, subgroups: false } },
  { name: 'reduce-then-scan, tiny tiles', tuning: { ...tiny, reduceThenScan: true } },
  { name: 'reduce-then-scan, tiny tiles, no subgroups', tuning: { ...tiny, reduceThenScan: true, subgroups: false } },
  {
    name: 'segments of tiny tiles, fallback at every wait, reduce-then-scan',
    tuning: { ...tiny, maxBindingBytes: 4096, maxSpins: 0, reduceThenScan: true },
  },
  { name: 'segments of tiny tiles (maxBindingBytes 4096)', tuning: { ...tiny, maxBindingBytes: 4096 } },
  { name: 'eight rows per tile (32 items per thread)', tuning: { itemsPerThread: 32 } },
  { name: 'scalar tiles of 64 x 3 items', tuning: { workgroupSize: 64, itemsPerThread: 3, maxSpins: 1 } },
];
const sizes = [1, 2, 100, TINY_SCAN_TILE - 1, TINY_SCAN_TILE, TINY_SCAN_TILE + 1, 4097, 33333];

// x * s0 + (i & 15): one streamed input and the global index
const xsiFn = fragment({
  name: 'test_sw_xsi',
  code: 'fn test_sw_xsi(x: u32, s0: u32, i: u32) -> u32 { return x * s0 + (i & 15u); }',
});
const xsi: ElementHook = { kind: 'element', fn: xsiFn, inputs: ['u32'], index: true };
// three outputs: the prefix, x ^ s0, and at even i only the prefix's low 16 bits as f32
const store3Fn = fragment({
  name: 'test_sw_store3',
  code: `fn test_sw_store3(i: u32, p: u32, x: u32, s0: u32) {
  scn_store0(i, p);
  scn_store1(i, x ^ s0);
  if ((i & 1u) == 0u) { scn_store2(i, f32(p & 0xffffu)); }
}`,
});
const store3 = (exclusive: boolean): ScanWrite => ({
  kind: 'scan',
  exclusive,
  fn: store3Fn,
  outputs: ['u32', 'u32', 'f32'],
});
// by key: the value prefix xor the element, into one output
const keyStoreFn = fragment({
  name: 'test_sw_key',
  code: 'fn test_sw_key(i: u32, p: u32, x: u32) { scn_store0(i, p ^ x); }',
});
const keqFn = fragment({ name: 'test_sw_keq', code: 'fn test_sw_keq(a: u32, b: u32) -> bool { return a == b; }' });
const U32 = combinerOf(plus, 'u32');

describe.skipIf(!testDevice)("scan engine: the 'scan' write hook", () => {
  const device = testDevice as GpuDevice;
  for (const v of variants) {
    it(v.name, async () => {
      for (const n of sizes) {
        const x = makeData('u32', n, 'random', n + 1) as Uint32Array;
        const s0 = makeData('u32', n, 'random', n + 2) as Uint32Array;
        const keys = Uint32Array.from({ length: n }, (_, i) => Math.floor(i / (1 + (i % 7))) % 5);
        const dx = place(device, x, 0);
        const d0 = place(device, s0, 3);
        const dk = place(device, keys, 1);
        const o0 = place(device, new Uint32Array(n), 2);
        const o1 = place(device, new Uint32Array(n), 7);
        const o2 = place(device, new Float32Array(n).fill(-1.5), 70);
        const o3 = DeviceArray.create(device, 'f32', n);
        try {
          for (const exclusive of [false, true]) {
            (o2.view as unknown as DeviceArray<'f32'>).write(new Float32Array(n).fill(-1.5));
            const pre = new Uint32Array(n);
            let acc = 5;
            for (let i = 0; i < n; i++) {
              const e = (Math.imul(x[i] as number, s0[i] as number) + (i & 15)) >>> 0;
              if (exclusive) pre[i] = acc;
              acc = (acc + e) >>> 0;
              if (!exclusive) pre[i] = acc;
            }
            const bytes = await scanDevice(device, {
              label: 'test scan write',
              input: dx.view,
              output: o0.view,
              gen: xsi,
              inputs: [d0.view],
              write: store3(exclusive),
              more: [
                { output: o1.view, readBack: true },
                { output: o2.view, readBack: true },
              ],
              combiner: U32,
              initBits: 5,
              readBack: true,
              tuning: v.tuning,
            });
            const label = `${exclusive ? 'exclusive' : 'inclusive'} n=${n}`;
            expectSameArray(new Uint32Array(bytes as ArrayBuffer), pre, `out0 ${label}`);
            expectSameArray(
              await o1.view.read(),
              x.map((xi, i) => (xi ^ (s0[i] as number)) >>> 0),
              `out1 ${label}`,
            );
            const want2 = Float32Array.from(pre, (p, i) => (i % 2 === 0 ? p & 0xffff : -1.5));
            expectSameArray(await o2.read(), want2, `out2 ${label}`);

            // By key: runs restart at each key change (the exclusive init 3 at heads).
            const want = new Uint32Array(n);
            let run = 0;
            for (let i = 0; i < n; i++) {
              const head = i === 0 || keys[i] !== keys[i - 1];
              if (exclusive) {
                const p = head ? 3 : run;
                run = head ? (3 + (x[i] as number)) >>> 0 : (run + (x[i] as number)) >>> 0;
                want[i] = (p ^ (x[i] as number)) >>> 0;
              } else {
                run = head ? (x[i] as number) : (run + (x[i] as number)) >>> 0;
                want[i] = (run ^ (x[i] as number)) >>> 0;
              }
            }
            if (!v.tuning.reduceThenScan) {
              const kb = await scanDevice(device, {
                label: 'test scan write by key',
                input: dx.view,
                output: o1.view,
                keys: dk.view,
                gen: { kind: 'by-key', keyType: 'u32', keyEq: keqFn, edge: 'head', scan: { op: U32.combine } },
                write: { kind: 'scan', exclusive, fn: keyStoreFn },
                combiner: segmentedCombiner(U32),
                initBits: 3,
                readBack: true,
                tuning: v.tuning,
              });
              expectSameArray(new Uint32Array(kb as ArrayBuffer), want, `by key ${label}`);
            }

            // Integer prefixes into an f32 output (the scans' front over f32 outputs).
            const fb = await scanDevice(device, {
              label: 'test converting write',
              input: dx.view,
              output: o3,
              gen: { kind: 'element' },
              write: convertingWrite(exclusive, 'u32', 'u32', 'f32'),
              combiner: U32,
              initBits: 0,
              readBack: true,
              tuning: v.tuning,
            });
            let a = 0;
            const wantF = Float32Array.from(x, (xi) => {
              const before = a;
              a = (a + xi) >>> 0;
              return exclusive ? before : a;
            });
            expectSameArray(new Float32Array(fb as ArrayBuffer), wantF, `f32 ${label}`);
          }
        } finally {
          for (const a of [dx.parent, d0.parent, dk.parent, o0.parent, o1.parent, o2.parent, o3]) a.destroy();
        }
      }
    }, 120_000);
  }

  it('a fragment scanning an array onto itself reads a copy; wrong outputs are errors; binding counts', async () => {
    const n = 3000;
    const x = makeData('u32', n, 'random', 5) as Uint32Array;
    const d = DeviceArray.from(device, x);
    const o1 = DeviceArray.create(device, 'u32', n);
    const o2 = DeviceArray.create(device, 'f32', n);
    try {
      await scanDevice(device, {
        label: 'test onto itself',
        input: d,
        output: d,
        gen: { kind: 'element' },
        write: { kind: 'scan', exclusive: false, fn: keyStoreFn },
        combiner: U32,
        initBits: 0,
        tuning: tiny,
      });
      let acc = 0;
      const want = x.map((xi) => {
        acc = (acc + xi) >>> 0;
        return (acc ^ xi) >>> 0;
      });
      expectSameArray(await d.read(), want, 'onto itself');
      const base = { label: 'test', input: o1, output: o1, gen: { kind: 'element' } as const, combiner: U32 };
      await expect(
        scanDevice(device, {
          ...base,
          output: DeviceArray.create(device, 'u32', n),
          initBits: 0,
          write: store3(false),
        }),
      ).rejects.toThrow(/one output per type/);
      await expect(
        scanDevice(device, {
          ...base,
          output: d,
          initBits: 0,
          write: store3(false),
          more: [{ output: o2 }, { output: o1 }],
        }),
      ).rejects.toThrow(/one output per type/);
    } finally {
      for (const a of [d, o1, o2]) a.destroy();
    }
    const use = (vec: boolean, phase: 'chained' | 'reduce' = 'chained') =>
      tileUse({ phase, vec, inPlace: false, gen: xsi, write: store3(false) });
    // in_v, in_s, state, ctrl, st_s, out_s (scalar: no out_v), out1_s, out2_s
    expect(storageBindings(use(true))).toBe(8);
    expect(use(true).out_v).toBeUndefined();
    expect(storageBindings(use(false))).toBe(7);
    // reduce: sums, ctrl, in_v, in_s, st_s
    expect(storageBindings(use(true, 'reduce'))).toBe(5);
  });
});
