/**
 * The scan engine's open 'element' hook with streamed inputs beside the element (SCN's `st_s` and
 * `st1_s`, read at the element's index through each segment's window) and the element's index, at
 * the engine's level (no front passes two inputs yet): compactions and transform-scans, under the
 * engine's variants (tiles, subgroups, the look-back fallback at every wait, reduce-then-scan,
 * segments of a lowered binding limit), with inputs at unaligned offsets of their buffers. Then the
 * open 'scatter' write hook under the same variants: a store fragment of the fixed signature
 * `fn(at, x, s0, s1, i)` writing through `scn_store<k>` into 3 outputs (SCN's `out_s`, `out1_s`,
 * `out2_s`; outputs 1 and 2 at element offsets unlike output 0's, so their bases come from the
 * `obase` uniform), kept elements only and with the rejected ones (partition), a finish copy of one
 * more output, the binding counts the fallback decision rests on, and wrong outputs.
 */
import { combinerOf, DeviceArray, fragment, type GpuDevice, maximum, plus } from '@webdpl/core';
import { describe, expect, it } from 'vitest';
import { makeData, testDevice } from '../../testing/matrix';
import { expectSameArray } from '../../testing/scan-reference';
import { compactDevice, compactionFits, type ElementHook, type ScatterWrite, scanDevice } from './index';
import { genSignature, storageBindings, tileUse } from './kernels';

const tiny = { workgroupSize: 32, itemsPerThread: 4 };
const variants: { name: string; tuning: Record<string, number | boolean> }[] = [
  { name: 'default tiles', tuning: {} },
  { name: 'tiny tiles', tuning: tiny },
  { name: 'tiny tiles, no subgroups', tuning: { ...tiny, subgroups: false } },
  { name: 'fallback at every wait, tiny tiles', tuning: { ...tiny, maxSpins: 0 } },
  { name: 'fallback at every wait, tiny tiles, no subgroups', tuning: { ...tiny, maxSpins: 0, subgroups: false } },
  { name: 'fallback at every wait, default tiles', tuning: { maxSpins: 0 } },
  { name: 'reduce-then-scan, tiny tiles', tuning: { ...tiny, reduceThenScan: true } },
  { name: 'segments of tiny tiles (maxBindingBytes 4096)', tuning: { ...tiny, maxBindingBytes: 4096 } },
  {
    name: 'segments of tiny tiles, fallback at every wait, reduce-then-scan',
    tuning: { ...tiny, maxBindingBytes: 4096, maxSpins: 0, reduceThenScan: true },
  },
  { name: 'segments of a few default tiles', tuning: { maxBindingBytes: 6144 * 4 + 300, maxSpins: 0 } },
  { name: 'eight rows per tile (32 items per thread)', tuning: { itemsPerThread: 32 } },
  { name: 'scalar tiles of 64 x 3 items', tuning: { workgroupSize: 64, itemsPerThread: 3, maxSpins: 1 } },
];

// keep element i when x + s0[i] > s1[i] (u32, wrapping)
const keepFn = fragment({
  name: 'test_keep_sum',
  code: 'fn test_keep_sum(x: u32, s0: u32, s1: u32) -> bool { return x + s0 > s1; }',
});
const keep: ElementHook = { kind: 'element', fn: keepFn, inputs: ['u32', 'u32'] };
// x * s0 + (i & 15): one streamed input and the global index
const xsiFn = fragment({
  name: 'test_xsi',
  code: 'fn test_xsi(x: u32, s0: u32, i: u32) -> u32 { return x * s0 + (i & 15u); }',
});
const xsi: ElementHook = { kind: 'element', fn: xsiFn, inputs: ['u32'], index: true };
// s0 ^ s1 (f32 bits of s1), not the element: two inputs of different types
const s01Fn = fragment({
  name: 'test_s01',
  code: 'fn test_s01(s0: u32, s1: f32) -> u32 { return s0 ^ bitcast<u32>(s1); }',
});
const s01: ElementHook = { kind: 'element', fn: s01Fn, element: false, inputs: ['u32', 'f32'] };

/** An array of `n` elements at element offset `at` of a buffer of its own (unaligned windows). */
function deviceAt(device: GpuDevice, data: Uint32Array | Float32Array, at: number) {
  const whole =
    data instanceof Float32Array ? new Float32Array(at + data.length + 3) : new Uint32Array(at + data.length + 3);
  whole.set(data, at);
  const arr = DeviceArray.from(device, whole as Uint32Array);
  return { arr, view: arr.view(at, data.length) };
}

describe('genSignature (part of the plan cache key)', () => {
  it('names the element, each streamed input and the index, in order, so different hooks differ', () => {
    const sig = (h: Partial<ElementHook>) => genSignature({ kind: 'element', ...h } as ElementHook);
    expect(sig({})).toBe('x');
    expect(sig({ element: false })).toBe('');
    expect(sig({ index: true })).toBe('x_i');
    expect(sig({ element: false, index: true })).toBe('i');
    expect(sig({ inputs: ['u32'] })).toBe('x_u32');
    expect(sig({ inputs: ['f32', 'i32'], index: true })).toBe('x_f32_i32_i');
    expect(sig({ element: false, inputs: ['i32'] })).toBe('i32');
    expect(sig({ element: false, inputs: ['i32', 'u32'], index: true })).toBe('i32_u32_i');
    expect(genSignature({ kind: 'adjacent-different' })).toBe('');
  });
});

describe.skipIf(!testDevice)("scan engine: the 'element' hook over streamed inputs", () => {
  const device = testDevice as GpuDevice;
  for (const v of variants) {
    it(v.name, async () => {
      for (const n of [1, 100, 4097, 33333, 200001]) {
        const x = makeData('u32', n, 'random', n + 1) as Uint32Array;
        const s0 = makeData('u32', n, 'random', n + 2) as Uint32Array;
        const s1 = makeData('u32', n, 'random', n + 3) as Uint32Array;
        const f1 = makeData('f32', n, 'random', n + 4) as Float32Array;
        const dx = deviceAt(device, x, 0);
        const d0 = deviceAt(device, s0, 3);
        const d1 = deviceAt(device, s1, 5);
        const df = deviceAt(device, f1, 1);
        const out = DeviceArray.create(device, 'u32', n);
        try {
          // Compaction: x + s0 > s1.
          const kept: number[] = [];
          const rejected: number[] = [];
          for (let i = 0; i < n; i++) {
            if (((x[i] as number) + (s0[i] as number)) >>> 0 > (s1[i] as number)) kept.push(x[i] as number);
            else rejected.push(x[i] as number);
          }
          rejected.reverse();
          for (const [write, want] of [
            ['compact', kept],
            ['partition', [...kept, ...rejected]],
          ] as const) {
            const c = await compactDevice(device, {
              label: `test ${write}`,
              input: dx.view,
              output: out,
              keep,
              inputs: [d0.view, d1.view],
              write,
              readBack: true,
              tuning: v.tuning,
            });
            expect(c.count, `${write} count n=${n}`).toBe(kept.length);
            const got = new Uint32Array(c.bytes as ArrayBuffer);
            expectSameArray(write === 'compact' ? got.subarray(0, c.count) : got, want, `${write} n=${n}`);
          }

          // Inclusive transform-scan over x, s0 and the index.
          const want = new Uint32Array(n);
          let acc = 0;
          for (let i = 0; i < n; i++) {
            acc = (acc + Math.imul(x[i] as number, s0[i] as number) + (i & 15)) >>> 0;
            want[i] = acc;
          }
          const bytes = await scanDevice(device, {
            label: 'test scan',
            input: dx.view,
            output: out,
            gen: xsi,
            inputs: [d0.view],
            write: 'inclusive',
            combiner: combinerOf(plus, 'u32'),
            initBits: 0,
            readBack: true,
            tuning: v.tuning,
          });
          expectSameArray(new Uint32Array(bytes as ArrayBuffer), want, `inclusive x*s0+i n=${n}`);

          // Exclusive max-scan over two inputs, not the element, from 7.
          const f1Bits = new Uint32Array(f1.buffer, f1.byteOffset, n);
          let m = 7;
          for (let i = 0; i < n; i++) {
            want[i] = m;
            m = Math.max(m, ((s0[i] as number) ^ (f1Bits[i] as number)) >>> 0);
          }
          const eb = await scanDevice(device, {
            label: 'test scan 2',
            input: dx.view,
            output: out,
            gen: s01,
            inputs: [d0.view, df.view],
            write: 'exclusive',
            combiner: combinerOf(maximum, 'u32'),
            initBits: 7,
            readBack: true,
            tuning: v.tuning,
          });
          expectSameArray(new Uint32Array(eb as ArrayBuffer), want, `exclusive max s0^s1 n=${n}`);
        } finally {
          for (const a of [dx.arr, d0.arr, d1.arr, df.arr, out]) a.destroy();
        }
      }
    });
  }

  it("a streamed input in the output's buffer (read from a copy), and wrong input counts", async () => {
    const n = 5000;
    const x = makeData('u32', n, 'random', 11) as Uint32Array;
    const s0 = makeData('u32', n, 'random', 12) as Uint32Array;
    const whole = new Uint32Array(2 * n + 8);
    whole.set(s0, n + 8);
    const big = DeviceArray.from(device, whole);
    const dx = DeviceArray.from(device, x);
    try {
      const bytes = await scanDevice(device, {
        label: 'test aliased',
        input: dx,
        output: big.view(0, n),
        gen: xsi,
        inputs: [big.view(n + 8, n)],
        write: 'inclusive',
        combiner: combinerOf(plus, 'u32'),
        initBits: 0,
        readBack: true,
      });
      let acc = 0;
      const want = Array.from(x, (xi, i) => {
        acc = (acc + Math.imul(xi, s0[i] as number) + (i & 15)) >>> 0;
        return acc;
      });
      expectSameArray(new Uint32Array(bytes as ArrayBuffer), want, 'aliased');
      const out = DeviceArray.create(device, 'u32', n);
      await expect(
        compactDevice(device, {
          label: 'test one input',
          input: dx,
          output: out,
          keep,
          inputs: [dx],
          write: 'compact',
        }),
      ).rejects.toThrow(/2 streamed input/);
      const df = DeviceArray.from(device, new Float32Array(n));
      await expect(
        compactDevice(device, {
          label: 'test types',
          input: dx,
          output: out,
          keep,
          inputs: [dx, df],
          write: 'compact',
        }),
      ).rejects.toThrow(/types must be the hook's \(u32, u32\)/);
      df.destroy();
      out.destroy();
    } finally {
      big.destroy();
      dx.destroy();
    }
  });
});

// keep element i when (x + s0) % 3 != 0 or s1 > 0.75
const keepXsFn = fragment({
  name: 'test_keep_xs',
  code: 'fn test_keep_xs(x: u32, s0: u32, s1: f32) -> bool { return (x + s0) % 3u != 0u || s1 > 0.75; }',
});
const keepXs: ElementHook = { kind: 'element', fn: keepXsFn, inputs: ['u32', 'f32'] };
// three outputs: x, s0 ^ i, s1
const store3Fn = fragment({
  name: 'test_store3',
  code: 'fn test_store3(at: u32, x: u32, s0: u32, s1: f32, i: u32) { scn_store0(at, x); scn_store1(at, s0 ^ i); scn_store2(at, s1); }',
});
const store3: ScatterWrite = { kind: 'scatter', fn: store3Fn, outputs: ['u32', 'u32', 'f32'] };
// partition into two outputs: x and the index
const store2Fn = fragment({
  name: 'test_store2',
  code: 'fn test_store2(at: u32, x: u32, s0: u32, s1: f32, i: u32) { scn_store0(at, x); scn_store1(at, i); }',
});
const store2: ScatterWrite = { kind: 'scatter', fn: store2Fn, outputs: ['u32', 'u32'], rejected: true };

describe.skipIf(!testDevice)("scan engine: the 'scatter' write hook into several outputs", () => {
  const device = testDevice as GpuDevice;
  for (const v of variants) {
    it(v.name, async () => {
      for (const n of [1, 100, 4097, 33333]) {
        const x = makeData('u32', n, 'random', n + 1) as Uint32Array;
        const s0 = makeData('u32', n, 'random', n + 2) as Uint32Array;
        const s1 = makeData('f32', n, 'random', n + 3) as Float32Array;
        const dx = deviceAt(device, x, 0);
        const d0 = deviceAt(device, s0, 3);
        const d1 = deviceAt(device, s1, 1);
        const o0 = DeviceArray.create(device, 'u32', n);
        const o1 = deviceAt(device, new Uint32Array(n), 7);
        const o2 = deviceAt(device, new Float32Array(n), 70);
        try {
          const keptAt: number[] = [];
          const rejectedAt: number[] = [];
          for (let i = 0; i < n; i++) {
            if ((((x[i] as number) + (s0[i] as number)) % 2 ** 32) % 3 !== 0 || (s1[i] as number) > 0.75)
              keptAt.push(i);
            else rejectedAt.push(i);
          }
          const c = await compactDevice(device, {
            label: 'test scatter',
            input: dx.view,
            inputs: [d0.view, d1.view],
            output: o0,
            more: [
              { output: o1.view, readBack: true },
              { output: o2.view, readBack: true },
            ],
            keep: keepXs,
            write: store3,
            readBack: true,
            tuning: v.tuning,
          });
          expect(c.count, `count n=${n}`).toBe(keptAt.length);
          const got0 = new Uint32Array(c.bytes as ArrayBuffer).subarray(0, c.count);
          const got1 = new Uint32Array(c.moreBytes?.[0] as ArrayBuffer).subarray(0, c.count);
          const got2 = new Uint32Array(c.moreBytes?.[1] as ArrayBuffer).subarray(0, c.count);
          const bits1 = new Uint32Array(s1.buffer);
          expectSameArray(
            got0,
            Uint32Array.from(keptAt, (i) => x[i] as number),
            `out0 n=${n}`,
          );
          expectSameArray(
            got1,
            Uint32Array.from(keptAt, (i) => ((s0[i] as number) ^ i) >>> 0),
            `out1 n=${n}`,
          );
          expectSameArray(
            got2,
            Uint32Array.from(keptAt, (i) => bits1[i] as number),
            `out2 n=${n}`,
          );

          // Partition: kept first, the rejected from the end (reversed), x and the index.
          const order = [...keptAt, ...rejectedAt.reverse()];
          const p = await compactDevice(device, {
            label: 'test scatter partition',
            input: dx.view,
            inputs: [d0.view, d1.view],
            output: o0,
            more: [{ output: o1.view, readBack: true }],
            keep: keepXs,
            write: store2,
            readBack: true,
            tuning: v.tuning,
          });
          expect(p.count, `partition count n=${n}`).toBe(keptAt.length);
          expectSameArray(
            new Uint32Array(p.bytes as ArrayBuffer),
            Uint32Array.from(order, (i) => x[i] as number),
            `partition out0 n=${n}`,
          );
          expectSameArray(
            new Uint32Array(p.moreBytes?.[0] as ArrayBuffer),
            Uint32Array.from(order),
            `partition out1 n=${n}`,
          );
        } finally {
          for (const a of [dx.arr, d0.arr, d1.arr, o0, o1.arr, o2.arr]) a.destroy();
        }
      }
    }, 120_000);
  }

  it("a more output's finish copy (prefix into a shorter array); wrong outputs are errors", async () => {
    const n = 5000;
    const x = makeData('u32', n, 'random', 11) as Uint32Array;
    const s0 = makeData('u32', n, 'random', 12) as Uint32Array;
    const s1 = makeData('f32', n, 'random', 13) as Float32Array;
    const dx = DeviceArray.from(device, x);
    const d0 = DeviceArray.from(device, s0);
    const d1 = DeviceArray.from(device, s1);
    const o0 = DeviceArray.create(device, 'u32', n);
    const o1 = DeviceArray.create(device, 'u32', n);
    const o2 = DeviceArray.create(device, 'f32', n);
    const keptAt: number[] = [];
    for (let i = 0; i < n; i++) {
      if ((((x[i] as number) + (s0[i] as number)) % 2 ** 32) % 3 !== 0 || (s1[i] as number) > 0.75) keptAt.push(i);
    }
    const dst = DeviceArray.create(device, 'u32', keptAt.length);
    try {
      const base = { label: 'test scatter', input: dx, inputs: [d0, d1], output: o0, keep: keepXs, write: store3 };
      const c = await compactDevice(device, {
        ...base,
        more: [{ output: o1, finish: { dst, mode: 'prefix' } }, { output: o2 }],
      });
      expect(c.count).toBe(keptAt.length);
      expectSameArray(
        await dst.read(),
        Uint32Array.from(keptAt, (i) => ((s0[i] as number) ^ i) >>> 0),
        'finish copy',
      );
      await expect(compactDevice(device, { ...base, more: [{ output: o1 }] })).rejects.toThrow(/one output per type/);
      await expect(compactDevice(device, { ...base, more: [{ output: o2 }, { output: o1 }] })).rejects.toThrow(
        /one output per type/,
      );
    } finally {
      for (const a of [dx, d0, d1, o0, o1, o2, dst]) a.destroy();
    }
  });

  it('binding counts: 8 storage buffers for 2 streamed inputs and 3 outputs on the scalar path, 9 on vec4', () => {
    const use = (vec: boolean) => tileUse({ phase: 'chained', vec, inPlace: false, gen: keepXs, write: store3 });
    expect(storageBindings(use(false))).toBe(8);
    expect(storageBindings(use(true))).toBe(9);
    expect(storageBindings(tileUse({ phase: 'reduce', vec: true, inPlace: false, gen: keepXs, write: store3 }))).toBe(
      6,
    );
    expect(compactionFits(device, keepXs, store3)).toBe(device.limits.maxStorageBuffersPerShaderStage >= 8);
  });
});
