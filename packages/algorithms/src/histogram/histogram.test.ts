import { DeviceArray, type HostArray } from '@webdpl/core';
import { execution, makeDevicePolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { expectSameArray } from '../testing/arrays';
import { isEngineVariant, itIf, parPool, place } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, testDevice } from '../testing/matrix';
import { type HistogramBins, histogram } from './index';

/** Tiny histogram tuning: tiles of 64 elements, 3 workgroups, bindings of 4 KiB, global atomics only. */
const TINY_HISTOGRAM = {
  histogram: { workgroupSize: 32, itemsPerThread: 2, maxWorkgroups: 3, maxBindingBytes: 4096, privateBins: 0 },
};
const sizes = edgeSizes([64, 256 * 8, 896], [123457]);
const matrix = [...policyMatrix(TINY_HISTOGRAM), { name: 'par pool', policy: parPool, gpu: false }];

type T3 = 'u32' | 'i32' | 'f32';

/** The reference: real edges in double precision, bin = last edge <= x, x below the last edge. */
function histogramRef(d: ArrayLike<number>, bins: HistogramBins): Uint32Array {
  const edges =
    'boundaries' in bins
      ? Array.from(bins.boundaries)
      : Array.from({ length: bins.bins + 1 }, (_, k) =>
          k === bins.bins ? bins.hi : bins.lo + ((bins.hi - bins.lo) * k) / bins.bins,
        );
  const out = new Uint32Array(edges.length - 1);
  for (let i = 0; i < d.length; i++) {
    const x = d[i] as number;
    if (!(x >= (edges[0] as number)) || !(x < (edges[edges.length - 1] as number))) continue;
    let k = edges.length - 2;
    while ((edges[k] as number) > x) k--;
    out[k] = (out[k] as number) + 1;
  }
  return out;
}

/** Bins per type: even bins over part of the data's range, sorted boundaries with a repeat. */
const EVEN: Record<T3, HistogramBins> = {
  u32: { bins: 256, lo: 2 ** 28, hi: 2 ** 32 - 2 ** 28 },
  i32: { bins: 100, lo: -(2 ** 30), hi: 2 ** 31 - 7 },
  f32: { bins: 256, lo: -0.75, hi: 0.9 },
};
const EDGES: Record<T3, HistogramBins> = {
  u32: { boundaries: [5, 2 ** 20, 2 ** 30, 2 ** 30, 3e9, 4e9] },
  i32: { boundaries: [-(2 ** 31), -5e8, 0, 1, 1e9] },
  f32: { boundaries: [-0.5, -0.25, 0, 0, 1e-3, 0.5, 0.99] },
};

describe.each(matrix)('histogram under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);
  const types: readonly T3[] = variant ? ['i32'] : ['u32', 'i32', 'f32'];
  for (const type of types) {
    it(`${type} at edge sizes: even bins and boundaries, random and constant data`, async () => {
      for (const [k, n] of sizes.entries()) {
        const d = makeData(type, n, k % 3 === 2 ? 'constant' : 'random');
        if (k % 3 === 2) d.fill(type === 'f32' ? 0.5 : 2 ** 29 + 7);
        const bins = k % 2 ? EDGES[type] : EVEN[type];
        const want = histogramRef(d, bins);
        expectSameArray(await histogram(policy, d, bins), want, `n=${n} ${'bins' in bins ? 'even' : 'boundaries'}`);
      }
    });
  }

  itIf(!variant)('exact at the edges: integer and f32 edges, NaN, infinities, ranges beyond the type', async () => {
    // u32 over its whole range in 256 bins: values either side of every edge k * 2^24.
    const u = new Uint32Array(512);
    for (let k = 0; k < 256; k++) {
      u[2 * k] = k * 2 ** 24;
      u[2 * k + 1] = k * 2 ** 24 - 1;
    }
    const full = { bins: 256, lo: 0, hi: 2 ** 32 };
    expectSameArray(await histogram(policy, u, full), histogramRef(u, full), 'u32 full range');
    // Every type's even bins at values either side of every edge (the arithmetic estimate of the
    // bin is off by one there, one way or the other, and the edge check must correct it).
    for (const type of ['u32', 'i32', 'f32'] as const) {
      const b = EVEN[type] as { bins: number; lo: number; hi: number };
      const near: number[] = [];
      for (let k = 0; k <= b.bins; k++) {
        const e = b.lo + ((b.hi - b.lo) * k) / b.bins;
        if (type === 'f32') {
          const f = Math.fround(e);
          for (const d of [-2, -1, 0, 1, 2]) near.push(f + d * 2 ** (Math.floor(Math.log2(Math.abs(f) || 1)) - 23));
        } else for (const d of [-1, 0, 1]) near.push(Math.ceil(e) + d);
      }
      const data =
        type === 'u32' ? Uint32Array.from(near) : type === 'i32' ? Int32Array.from(near) : Float32Array.from(near);
      expectSameArray(await histogram(policy, data, b), histogramRef(data, b), `${type} either side of the edges`);
    }
    // Fractional boundaries of integers; boundaries beyond the type's range (open last bin).
    const small = Uint32Array.from({ length: 20 }, (_, i) => i);
    expectSameArray(await histogram(policy, small, { boundaries: [0.5, 2.5, 10] }), Uint32Array.from([2, 7]));
    const big = Uint32Array.from([0, 5, 2 ** 31, 2 ** 32 - 1]);
    expectSameArray(await histogram(policy, big, { boundaries: [1, 2 ** 31, 2 ** 33] }), Uint32Array.from([1, 2]));
    expectSameArray(await histogram(policy, big, { boundaries: [2 ** 32, 2 ** 33] }), Uint32Array.from([0]));
    const ints = Int32Array.from([-(2 ** 31), -1, 0, 2 ** 31 - 1]);
    const wide = { boundaries: [-1e10, 0, 1e10, 2e10] };
    expectSameArray(await histogram(policy, ints, wide), Uint32Array.from([2, 2, 0]), 'i32 open');
    // f32: NaN never counts; -0 equals +0; infinities as boundaries; edges between f32 values.
    const f = Float32Array.from([Number.NaN, -0, 0, Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY, 0.1, 1]);
    const inf = { boundaries: [Number.NEGATIVE_INFINITY, 0, 0.1, Number.POSITIVE_INFINITY] };
    expectSameArray(await histogram(policy, f, inf), Uint32Array.from([1, 2, 2]), 'f32 infinities');
    expectSameArray(await histogram(policy, f, inf), histogramRef(f, inf), 'f32 infinities reference');
    const tenths = Float32Array.from({ length: 2001 }, (_, i) => i / 1000 - 1);
    const even = { bins: 10, lo: -1, hi: 1 };
    expectSameArray(await histogram(policy, tenths, even), histogramRef(tenths, even), 'f32 tenths');
    // One bin, empty input, bins beyond the data.
    expectSameArray(await histogram(policy, new Int32Array(0), { bins: 3, lo: 0, hi: 3 }), new Uint32Array(3));
    expectSameArray(await histogram(policy, Int32Array.from([1, 2]), { bins: 1, lo: 0, hi: 2 }), Uint32Array.from([1]));
  });

  itIf(!variant)(
    'exact integer bins (shift and divide): values at and beyond lo and hi, nothing past the bins',
    async () => {
      const cases: ['u32' | 'i32', HistogramBins][] = [
        ['u32', { bins: 16, lo: 1000, hi: 1000 + 16 * 64 }],
        ['u32', { bins: 10, lo: 1000, hi: 1000 + 10 * 3 }],
        ['u32', { bins: 4, lo: 2 ** 32 - 2 ** 30, hi: 2 ** 32 }],
        ['u32', { bins: 3, lo: 0, hi: 2 ** 32 - 1 }],
        ['i32', { bins: 16, lo: -512, hi: 512 }],
        ['i32', { bins: 7, lo: -700, hi: 0 }],
        ['i32', { bins: 4, lo: -(2 ** 31), hi: 2 ** 31 }],
        ['i32', { bins: 2, lo: 2 ** 30, hi: 2 ** 31 }],
      ];
      for (const [type, bins] of cases) {
        const b = bins as { bins: number; lo: number; hi: number };
        const [min, max] = type === 'u32' ? [0, 2 ** 32 - 1] : [-(2 ** 31), 2 ** 31 - 1];
        const near = [min, max, min + 1, max - 1, 0, (b.lo + b.hi) / 2];
        for (const e of [b.lo, b.hi]) for (const d of [-2, -1, 0, 1, 2]) near.push(e + d);
        const vals = near.filter((v) => v >= min && v <= max).map(Math.floor);
        const data = type === 'u32' ? Uint32Array.from(vals) : Int32Array.from(vals);
        const out = new Uint32Array(b.bins + 3).fill(7);
        await histogram(policy, data, bins, out);
        const what = `${type} ${JSON.stringify(bins)}`;
        expectSameArray(out.subarray(0, b.bins), histogramRef(data, bins), what);
        expect([...out.subarray(b.bins)], `${what}: past the bins untouched`).toEqual([7, 7, 7]);
      }
    },
  );

  itIf(!variant)('many bins (beyond privatization), into a longer output', async () => {
    const d = makeData('f32', 40000, 'random');
    const bins = { bins: 5000, lo: -1, hi: 1 };
    const out = new Uint32Array(5002).fill(7);
    await histogram(policy, d, bins, out);
    expectSameArray(out.subarray(0, 5000), histogramRef(d, bins), 'counts');
    expect([...out.subarray(5000)], 'past the bins untouched').toEqual([7, 7]);
  });

  if (gpu && testDevice && !name.includes('no-subgroups')) {
    const device = testDevice;
    it('DeviceArray input and output views at offsets, padding untouched', async () => {
      const bins = { bins: 16, lo: -8, hi: 8 };
      for (const n of [1, 5, 257, 3001]) {
        const d = makeData('i32', n, 'small');
        for (const off of [0, 1, 3]) {
          const a = place(device, d, off);
          const c = place(device, new Uint32Array(16).fill(3), off + 1);
          await histogram(policy, a.view, bins, c.view);
          expectSameArray(await c.read(), histogramRef(d, bins), `n=${n} @${off}`);
          // Counts in the input's own buffer, after the input (u32 data shifted into [0, 16)).
          const u = Uint32Array.from(d, (x) => x + 8);
          const ubins = { bins: 16, lo: 0, hi: 16 };
          const both = place(device, Uint32Array.from([...u, ...new Uint32Array(16)]), off);
          await histogram(policy, both.view.view(0, n), ubins, both.view.view(n, 16));
          expectSameArray((await both.read()).subarray(n), histogramRef(u, ubins), 'same buffer');
          for (const x of [a, c, both]) x.parent.destroy();
        }
      }
    });
  }
});

describe('histogram kernel variants on the GPU', () => {
  if (!testDevice) return;
  const device = testDevice;
  const variants: Record<string, number | boolean>[] = [
    { subgroups: true },
    { subgroups: true, workgroupSize: 32, itemsPerThread: 6, maxWorkgroups: 3, subHistograms: 3 },
    { vectorize: false, subHistograms: 2 },
    { exactBins: false, subHistograms: 4, itemsPerThread: 3, workgroupSize: 32, maxWorkgroups: 2 },
    { workgroupSize: 32, itemsPerThread: 4, maxWorkgroups: 2, maxBindingBytes: 4096 },
    { workgroupSize: 4, itemsPerThread: 4, maxWorkgroups: 2 },
  ];
  // Exact integer bins (shift, division, open to the type's end), the estimate, explicit edges.
  const cases: [T3, HistogramBins][] = [
    ['u32', { bins: 256, lo: 0, hi: 2 ** 24 }],
    ['u32', { bins: 7, lo: 3, hi: 3 + 7 * 1000 }],
    ['u32', { bins: 16, lo: 2 ** 32 - 16 * 2 ** 20, hi: 2 ** 32 }],
    ['i32', { bins: 64, lo: -(2 ** 31), hi: 2 ** 31 }],
    ['i32', { bins: 10, lo: -5, hi: 25 }],
    ['i32', { bins: 100, lo: -(2 ** 30), hi: 2 ** 31 - 7 }],
    ['u32', { boundaries: [5, 2 ** 20, 2 ** 30, 3e9] }],
    ['f32', { bins: 50, lo: -0.75, hi: 0.9 }],
  ];
  it('vec4 loads at offsets 0..3 and lengths not multiples of 4, sub-histograms, aggregation, scalar loads, exact bins', async () => {
    for (const [vi, tuning] of variants.entries()) {
      const policy = makeDevicePolicy(device, { fallback: 'error', tuning: { histogram: tuning } });
      for (const [ci, [type, bins]] of cases.entries()) {
        for (const n of [1, 3, 6, 130, 1029, 5003]) {
          const kind = (n + ci) % 3 === 0 ? 'constant' : (n + ci) % 3 === 1 ? 'random' : 'small';
          const d = makeData(type, n, kind === 'constant' ? 'random' : kind, n + ci);
          if (kind === 'constant') d.fill(d[0] as number);
          // Integer data near the bins' range for the narrow cases.
          if (type !== 'f32' && 'bins' in bins && bins.hi - bins.lo < 2 ** 20) {
            for (let i = 0; i < n; i++) d[i] = bins.lo - 3 + (((d[i] as number) >>> 0) % (bins.hi - bins.lo + 6));
          }
          const off = (n + vi) % 4;
          const a = place(device, d, off);
          expectSameArray(
            await histogram(policy, a.view, bins),
            histogramRef(d, bins),
            `${JSON.stringify(tuning)} ${type} case ${ci} n=${n} @${off}`,
          );
          a.parent.destroy();
        }
      }
    }
  });
});

describe('histogram: bad input', () => {
  const seq = execution.seq;
  it('names the argument and leaves the output untouched', async () => {
    const a = Uint32Array.from([1, 2, 3]);
    const out = new Uint32Array(4).fill(9);
    await expect(histogram(seq, [1] as unknown as Uint32Array, { bins: 2, lo: 0, hi: 4 })).rejects.toThrow(
      /input: expected/,
    );
    await expect(histogram(seq, a, undefined as never)).rejects.toThrow(/bins: expected/);
    await expect(histogram(seq, a, { bins: 0, lo: 0, hi: 1 })).rejects.toThrow(/bins.bins: expected an integer/);
    await expect(histogram(seq, a, { bins: 2.5, lo: 0, hi: 1 })).rejects.toThrow(/bins.bins/);
    await expect(histogram(seq, a, { bins: 2, lo: 1, hi: 1 })).rejects.toThrow(/bins.hi: expected a number greater/);
    await expect(histogram(seq, a, { bins: 2, lo: Number.NaN, hi: 1 })).rejects.toThrow(/bins.lo: expected a finite/);
    await expect(histogram(seq, a, { boundaries: [1] })).rejects.toThrow(/bins.boundaries: expected 2 to/);
    await expect(histogram(seq, a, { boundaries: [1, 0] })).rejects.toThrow(/ascending/);
    await expect(histogram(seq, a, { boundaries: [0, Number.NaN] })).rejects.toThrow(/boundaries\[1\]/);
    await expect(histogram(seq, a, { bins: 4, lo: 0, hi: 4 }, new Int32Array(4))).rejects.toThrow(
      /output: expected an array of u32/,
    );
    await expect(histogram(seq, a, { bins: 5, lo: 0, hi: 4 }, out)).rejects.toThrow(/output: expected at least 5/);
    await expect(histogram(seq, a, { bins: 2, lo: 0, hi: 4 }, a)).rejects.toThrow(
      /output: expected memory that does not overlap/,
    );
    await expect(histogram(undefined as never, a, { bins: 2, lo: 0, hi: 4 })).rejects.toThrow(/policy/);
    expect([...out]).toEqual([9, 9, 9, 9]);
    expect([...a]).toEqual([1, 2, 3]);
  });

  if (testDevice) {
    const device = testDevice;
    it('DeviceArrays need a device policy; global atomics past workgroup memory; edges not cached', async () => {
      const d = DeviceArray.from(device, Uint32Array.from([1, 2, 3]));
      await expect(histogram(execution.par, d, { bins: 2, lo: 0, hi: 4 })).rejects.toThrow(/policy/);
      expectSameArray(await histogram(execution.auto, d, { bins: 2, lo: 0, hi: 4 }), Uint32Array.from([1, 2]));
      d.destroy();
      const huge = makeDevicePolicy(device, { fallback: 'error', tuning: { histogram: { privateBins: 1 << 24 } } });
      const data: HostArray = makeData('u32', 5000, 'random');
      const bins = { bins: 1 << 16, lo: 0, hi: 2 ** 32 };
      expectSameArray(await histogram(huge, data, bins), histogramRef(data, bins), '65536 bins');
      // Privatized bins with the edges read from their binding.
      const uncached = makeDevicePolicy(device, { fallback: 'error', tuning: { histogram: { cacheEdges: false } } });
      for (const b of [{ bins: 256, lo: 0, hi: 2 ** 32 }, { boundaries: [0, 7, 2 ** 20, 2 ** 31, 3e9] }]) {
        expectSameArray(await histogram(uncached, data, b), histogramRef(data, b), 'edges not cached');
      }
    });
  }
});
