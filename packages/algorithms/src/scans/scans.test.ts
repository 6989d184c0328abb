import { DeviceArray, type GpuDevice, lastNonZero, maximum, multiplies, plus } from '@webdpl/core';
import { execution, makeDevicePolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { scanDefaults } from '../engines/scan/tuning';
import { edgeSizes, makeData, policyMatrix, rng, TINY_SCAN_TILE, testDevice } from '../testing/matrix';
import { expectFloatSumScan, expectSameArray, type Op, refScan } from '../testing/scan-reference';
import { exclusiveScan, inclusiveScan, transformExclusiveScan, transformInclusiveScan } from './index';

/** The default tile of the device under test (the engine picks smaller tiles on software adapters). */
const DEFAULT_TILE = testDevice
  ? scanDefaults(testDevice, 'scan').workgroupSize * scanDefaults(testDevice, 'scan').itemsPerThread
  : 256 * 32;
const sizes = edgeSizes([TINY_SCAN_TILE, DEFAULT_TILE], [123457]);
const plusOf = (t: 'u32' | 'i32' | 'f32') => plus.js([t, t]) as Op;
const lnz: Op = (a, b) => (b !== 0 ? b : a);
const twice = (x: number) => x * 2;
const positive = (x: number) => x > 0;

describe.each(policyMatrix())('scans under $name', ({ policy }) => {
  for (const type of ['u32', 'i32', 'f32'] as const) {
    it(`inclusive and exclusive plus<${type}> at edge sizes, random and constant data`, async () => {
      for (const n of sizes) {
        for (const kind of type === 'u32' ? (['random', 'constant'] as const) : (['random'] as const)) {
          const data = makeData(type, n, kind);
          const copy = data.slice();
          const out = data.slice().fill(0);
          const r = await inclusiveScan(policy, data, out);
          expect(r).toBe(out);
          expectSameArray(data, copy, 'input untouched');
          if (type === 'f32') expectFloatSumScan(out, data, 0, false, `incl n=${n}`);
          else expectSameArray(out, refScan(data, plusOf(type), undefined, false), `incl n=${n} ${kind}`);
          await exclusiveScan(policy, data, out, 7);
          if (type === 'f32') expectFloatSumScan(out, data, 7, true, `excl n=${n}`);
          else expectSameArray(out, refScan(data, plusOf(type), 7, true), `excl n=${n} ${kind}`);
        }
      }
    });
  }

  it('a non-commutative operator (lastNonZero), maximum<i32>, multiplies<u32>, and init on inclusive', async () => {
    for (const n of [1, 7, 100, TINY_SCAN_TILE + 1, 5000, 70001]) {
      const du = makeData('u32', n, 'random').map((x) => (x % 7 === 0 ? x : 0));
      const out = new Uint32Array(n);
      await inclusiveScan(policy, du, out, lastNonZero);
      expectSameArray(out, refScan(du, lnz, undefined, false), `lnz incl n=${n}`);
      await exclusiveScan(policy, du, out, 5, lastNonZero);
      expectSameArray(out, refScan(du, lnz, 5, true), `lnz excl n=${n}`);
      await inclusiveScan(policy, du, out, lastNonZero, 9);
      expectSameArray(out, refScan(du, lnz, 9, false), `lnz incl init n=${n}`);
      const di = makeData('i32', n, 'random');
      const oi = new Int32Array(n);
      await inclusiveScan(policy, di, oi, maximum);
      expectSameArray(oi, refScan(di, Math.max, undefined, false), `max n=${n}`);
      const dm = makeData('u32', n, 'small');
      await exclusiveScan(policy, dm, out, 1, multiplies);
      expectSameArray(
        out,
        refScan(dm, (a, b) => Math.imul(a, b) >>> 0, 1, true),
        `mul n=${n}`,
      );
      await inclusiveScan(policy, dm, out, plus, 100);
      expectSameArray(out, refScan(dm, plusOf('u32'), 100, false), `plus init n=${n}`);
    }
  });

  it('transform scans (numeric and bool results) and in-place scans of host arrays', async () => {
    for (const n of [1, 31, 1000, 9000, 70001]) {
      const du = makeData('u32', n, 'random');
      const out = new Uint32Array(n);
      await transformInclusiveScan(policy, du, out, plus, twice);
      expectSameArray(out, refScan(du.map(twice), plusOf('u32'), undefined, false), `t-incl n=${n}`);
      await transformExclusiveScan(policy, du, out, 3, lastNonZero, twice);
      expectSameArray(out, refScan(du.map(twice), lnz, 3, true), `t-excl n=${n}`);
      const df = makeData('f32', n, 'random');
      const counts = new Uint32Array(n);
      await transformInclusiveScan(policy, df, counts, plus, positive);
      expectSameArray(
        counts,
        refScan(
          Array.from(df, (x) => (x > 0 ? 1 : 0)),
          plusOf('u32'),
          undefined,
          false,
        ),
        'bool',
      );
      const inPlace = du.slice();
      await inclusiveScan(policy, inPlace, inPlace);
      expectSameArray(inPlace, refScan(du, plusOf('u32'), undefined, false), `in place n=${n}`);
      const inPlaceF = makeData('f32', n, 'small');
      const want = refScan(inPlaceF, (a, b) => a + b, 2, true);
      await exclusiveScan(policy, inPlaceF, inPlaceF, 2);
      expectSameArray(inPlaceF, want, `in place f32 n=${n}`);
    }
  });

  it('integer values into outputs of another type (u32/i32 bits kept, f32 rounded), at edge sizes', async () => {
    for (const n of sizes) {
      const du = makeData('u32', n, 'random', n);
      const di = makeData('i32', n, 'random', n + 1);
      const df = makeData('f32', n, 'random', n + 2);
      const incl = refScan(du, plusOf('u32'), undefined, false);
      const f = new Float32Array(n);
      await inclusiveScan(policy, du, f);
      expectSameArray(f, Float32Array.from(incl), `u32 -> f32 incl n=${n}`);
      await exclusiveScan(policy, du, f, 9, lastNonZero);
      expectSameArray(f, Float32Array.from(refScan(du, lnz, 9, true)), `u32 -> f32 excl lnz n=${n}`);
      const i = new Int32Array(n);
      await inclusiveScan(policy, du, i, plus, 3);
      expectSameArray(i, Int32Array.from(refScan(du, plusOf('u32'), 3, false)), `u32 -> i32 n=${n}`);
      const u = new Uint32Array(n);
      await exclusiveScan(policy, di, u, -2, maximum);
      expectSameArray(u, Uint32Array.from(refScan(di, Math.max, -2, true)), `i32 max -> u32 n=${n}`);
      // Counts of a bool transform straight into i32 and f32 arrays.
      const counts = refScan(
        Array.from(df, (x) => (x > 0 ? 1 : 0)),
        plusOf('u32'),
        undefined,
        false,
      );
      await transformInclusiveScan(policy, df, i, plus, positive);
      expectSameArray(i, Int32Array.from(counts), `bool -> i32 n=${n}`);
      await transformExclusiveScan(policy, du, f, 0, plus, twice);
      expectSameArray(f, Float32Array.from(refScan(du.map(twice), plusOf('u32'), 0, true)), `t u32 -> f32 n=${n}`);
      // In place: the output is the input's memory as f32.
      const same = du.slice();
      const asF = new Float32Array(same.buffer, same.byteOffset, n);
      await inclusiveScan(policy, same, asF);
      expectSameArray(asF, Float32Array.from(incl), `in place u32 -> f32 n=${n}`);
    }
  });

  it('random sizes with fixed seeds', async () => {
    const r = rng(7);
    for (let k = 0; k < 3; k++) {
      const n = r() % 300_000;
      const data = makeData('i32', n, 'random', k);
      const out = new Int32Array(n);
      await exclusiveScan(policy, data, out, -1);
      expectSameArray(out, refScan(data, plusOf('i32'), -1, true), `n=${n}`);
    }
  });
});

const gpuPolicies = policyMatrix().filter((p) => p.gpu && p.name !== 'auto');

describe.each(gpuPolicies)('scans of DeviceArrays under $name', ({ policy }) => {
  const device = testDevice as GpuDevice;
  it('views with offset 1 and 4, chained calls, in place, and distinct views of one buffer', async () => {
    for (const n of [1, 5, 130, 4099, 20001]) {
      const host = makeData('u32', n + 8, 'random');
      const buf = DeviceArray.from(device, host as Uint32Array);
      const outBuf = DeviceArray.create(device, 'u32', n + 8);
      try {
        for (const offset of [1, 4]) {
          const input = buf.view(offset, n);
          const output = outBuf.view(offset, n);
          const data = host.subarray(offset, offset + n);
          const incl = refScan(data, plusOf('u32'), undefined, false);
          const r = await inclusiveScan(policy, input, output);
          expect(r).toBe(output);
          expectSameArray(await output.read(), incl, `view offset ${offset} n=${n}`);
          // Chained: scan the scan, into a host array.
          const again = new Uint32Array(n);
          await exclusiveScan(policy, r, again, 0, lastNonZero);
          expectSameArray(again, refScan(incl, lnz, 0, true), `chained n=${n}`);
          expectSameArray(await buf.read(), host, 'input untouched');
        }
        // In place on the device (the reduce-then-scan path) at offsets 0 and 1.
        for (const offset of [0, 1]) {
          const data = makeData('f32', n, 'small');
          const arr = DeviceArray.from(device, data as Float32Array);
          const view = offset === 0 ? arr : DeviceArray.from(device, Float32Array.of(9, ...data)).view(1, n);
          await inclusiveScan(policy, view, view);
          expectSameArray(
            await view.read(),
            refScan(data, (a, b) => a + b, undefined, false),
            `in place n=${n}`,
          );
          arr.destroy();
        }
        // Into an f32 output at offsets 0 and 1, and onto the input's own buffer as f32 (in place).
        const data = host.subarray(1, 1 + n);
        for (const offset of [0, 1]) {
          const f = DeviceArray.create(device, 'f32', n + 1);
          await exclusiveScan(policy, buf.view(1, n), f.view(offset, n), 4);
          expectSameArray(
            await f.view(offset, n).read(),
            Float32Array.from(refScan(data, plusOf('u32'), 4, true)),
            `f32 output offset ${offset} n=${n}`,
          );
          f.destroy();
        }
        const own = DeviceArray.from(device, host as Uint32Array);
        const asF = DeviceArray.fromBuffer(device, own.buffer, 'f32', 4, n);
        await inclusiveScan(policy, own.view(1, n), asF);
        expectSameArray(
          await asF.read(),
          Float32Array.from(refScan(data, plusOf('u32'), undefined, false)),
          `in place as f32 n=${n}`,
        );
        own.destroy();
        // Distinct, non-overlapping views of one buffer: input first half, output second half.
        const both = DeviceArray.from(device, makeData('i32', 2 * n, 'random') as Int32Array);
        const first = await both.view(0, n).read();
        await exclusiveScan(policy, both.view(0, n), both.view(n, n), 0);
        expectSameArray(await both.view(n, n).read(), refScan(first, plusOf('i32'), 0, true), `same buffer n=${n}`);
        both.destroy();
      } finally {
        buf.destroy();
        outBuf.destroy();
      }
    }
  });
});

describe.skipIf(!testDevice)(
  'scans with 36 items per thread (9 vec4 rows: the hardware default from SCAN_LARGE)',
  () => {
    const device = testDevice as GpuDevice;
    for (const subgroups of [true, false]) {
      it(`inclusive and exclusive plus<u32>, lastNonZero<u32>, subgroups ${subgroups}`, async () => {
        const policy = makeDevicePolicy(device, {
          fallback: 'error',
          tuning: { scan: { workgroupSize: 32, itemsPerThread: 36, subgroups } },
        });
        for (const n of edgeSizes([32 * 36], [123457])) {
          const data = makeData('u32', n, 'random');
          const out = new Uint32Array(n);
          await inclusiveScan(policy, data, out);
          expectSameArray(out, refScan(data, plusOf('u32'), undefined, false), `incl n=${n}`);
          await exclusiveScan(policy, data, out, 7);
          expectSameArray(out, refScan(data, plusOf('u32'), 7, true), `excl n=${n}`);
          const sparse = data.map((x, i) => (i % 5 === 0 ? x : 0));
          await inclusiveScan(policy, sparse, out, lastNonZero);
          expectSameArray(out, refScan(sparse, lnz, undefined, false), `lnz n=${n}`);
        }
      });
    }
  },
);

describe('scans at 2^24+1', () => {
  for (const { name, policy } of policyMatrix().filter((p) => p.name === 'device' || p.name === 'par')) {
    it(`inclusive plus<u32> under ${name}`, async () => {
      const n = 2 ** 24 + 1;
      const data = makeData('u32', n, 'random');
      const out = new Uint32Array(n);
      await inclusiveScan(policy, data, out);
      let acc = 0;
      for (let i = 0; i < n; i++) {
        acc = (acc + (data[i] as number)) >>> 0;
        if (out[i] !== acc) expect.fail(`element ${i}: ${out[i]} != ${acc}`);
      }
    });
  }
});

describe('scans: bad input', () => {
  it('names the argument and leaves the caller data untouched', async () => {
    const seq = execution.seq;
    const x = Uint32Array.of(1, 2, 3);
    const out = Uint32Array.of(9, 9, 9);
    await expect(inclusiveScan(seq, [1, 2, 3] as unknown as Uint32Array, out)).rejects.toThrow(/input/);
    await expect(inclusiveScan({} as never, x, out)).rejects.toThrow(/policy/);
    await expect(inclusiveScan(seq, x, new Uint32Array(2))).rejects.toThrow(/output.*at least 3/);
    await expect(inclusiveScan(seq, Float32Array.of(1, 2, 3), new Uint32Array(3))).rejects.toThrow(/output.*f32/);
    await expect(inclusiveScan(seq, x, out, 42 as never)).rejects.toThrow(/op/);
    await expect(exclusiveScan(seq, x, out, 'a' as unknown as number)).rejects.toThrow(/init: expected a number/);
    await expect(transformInclusiveScan(seq, x, out, plus, 'f' as never)).rejects.toThrow(/transformFn/);
    await expect(transformInclusiveScan(seq, x, new Uint32Array(3), plus, (v: number) => v * 0.5)).rejects.toThrow(
      /output.*f32/,
    );
    const shared = new Uint32Array(6);
    await expect(inclusiveScan(seq, shared.subarray(0, 4), shared.subarray(2, 6))).rejects.toThrow(/output.*overlap/);
    expect(Array.from(out)).toEqual([9, 9, 9]);
    expect(Array.from(x)).toEqual([1, 2, 3]);
    if (testDevice) {
      const policy = makeDevicePolicy(testDevice, { fallback: 'error' });
      const d = DeviceArray.from(testDevice, Uint32Array.of(1, 2, 3, 4));
      await expect(inclusiveScan(policy, d.view(0, 3), d.view(1, 3))).rejects.toThrow(/output.*overlap/);
      await expect(inclusiveScan(seq, d, new Uint32Array(4))).rejects.toThrow(/policy/);
      expect(Array.from(await d.read())).toEqual([1, 2, 3, 4]);
      d.destroy();
    }
  });
});
