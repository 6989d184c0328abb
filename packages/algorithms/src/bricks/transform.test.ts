import { ArgumentError, coerce, type HostArray, type NumericType, plus } from '@webdpl/core';
import { allocShared, createPool } from '@webdpl/policies';
import { afterAll, describe, expect, it } from 'vitest';
import { mapUnroll } from './kernels';
import { alloc, diff, makeData, sharedCopy, TEST_SIZES, TYPES, testBackends } from './test-data';
import { inlineFunction, mod7is3, times3plus1 } from './test-functions';
import { cpuForEach, cpuTransform } from './transform';

const pool = createPool({ size: 2 });
afterAll(() => pool.close());

/** Reference: x * 3 + 1 in the element type (f32: double product, then rounded by the store). */
function ref3x1(t: NumericType, v: number): number {
  return t === 'f32' ? Math.fround(v * 3 + 1) : coerce(t, Math.imul(v, 3) + 1);
}

function refPlus(t: NumericType, a: number, b: number): number {
  return t === 'f32' ? Math.fround(a + b) : coerce(t, a + b);
}

describe.each(testBackends(pool))('cpuTransform on $name', ({ backend }) => {
  for (const t of TYPES) {
    it(`unary ${t}, every test size, random and constant data`, async () => {
      for (const n of TEST_SIZES) {
        for (const kind of ['random', 'constant'] as const) {
          const x = makeData(t, n, kind);
          const before = x.slice();
          const y = alloc(t, n);
          await cpuTransform(backend, x, y, times3plus1);
          const want = alloc(t, n);
          for (let i = 0; i < n; i++) want[i] = ref3x1(t, x[i] as number);
          expect(diff(y, want), `n=${n} ${kind}`).toBe('');
          expect(diff(x, before)).toBe('');
        }
      }
    });

    it(`unary ${t}, every length 0..24 (each tail of the eight-store steps), in place too`, async () => {
      for (let n = 0; n <= 24; n++) {
        const x = makeData(t, n, 'random', n + 1);
        const want = alloc(t, n);
        for (let i = 0; i < n; i++) want[i] = ref3x1(t, x[i] as number);
        const y = alloc(t, n).fill(0);
        await cpuTransform(backend, x, y, times3plus1);
        expect(diff(y, want), `n=${n}`).toBe('');
        await cpuForEach(backend, x, times3plus1);
        expect(diff(x, want), `n=${n} in place`).toBe('');
      }
    });

    it(`binary ${t} (plus over two inputs, the second longer)`, async () => {
      for (const n of [0, 1, 3, 100, 129, 2 ** 17 + 3]) {
        const a = makeData(t, n, 'random', 1);
        const b = makeData(t, n + 5, 'random', 2);
        const y = alloc(t, n);
        await cpuTransform(backend, [a, b], y, plus);
        const want = alloc(t, n);
        for (let i = 0; i < n; i++) want[i] = refPlus(t, a[i] as number, b[i] as number);
        expect(diff(y, want), `n=${n}`).toBe('');
      }
    });
  }

  it('stores through the output type: i32 -> f32, predicate -> u32 1/0', async () => {
    for (const n of [7, 257, 2 ** 17 + 3]) {
      const x = makeData('i32', n, 'random');
      const yf = new Float32Array(n);
      await cpuTransform(backend, x, yf, times3plus1);
      expect(
        diff(
          yf,
          Array.from(x, (v) => Math.fround(coerce('i32', Math.imul(v, 3) + 1))),
        ),
      ).toBe('');
      const yb = new Uint32Array(n);
      await cpuTransform(backend, x, yb, mod7is3);
      expect(
        diff(
          yb,
          Array.from(x, (v) => (Math.abs(v) % 7 === 3 ? 1 : 0)),
        ),
      ).toBe('');
    }
  });

  it('writes only the first n elements of a longer output', async () => {
    const x = makeData('u32', 300, 'random');
    const y = new Uint32Array(310).fill(99);
    await cpuTransform(backend, x, y, times3plus1);
    expect(Array.from(y.subarray(300))).toEqual(new Array(10).fill(99));
    expect(y[299]).toBe(ref3x1('u32', x[299] as number));
  });

  it('runs on shared arrays in place (no copies) and on plain arrays in place (copied back)', async () => {
    for (const n of [3, 129, 2 ** 17 + 3]) {
      const x = makeData('f32', n, 'random');
      const want = x.map((v) => ref3x1('f32', v));
      const plain = x.slice();
      await cpuForEach(backend, plain, times3plus1);
      expect(diff(plain, want)).toBe('');
      const shared = sharedCopy(x);
      await cpuForEach(backend, shared, times3plus1);
      expect(diff(shared, want)).toBe('');
      const out = allocShared('f32', n);
      await cpuTransform(backend, x, out, times3plus1);
      expect(diff(out, want)).toBe('');
    }
  });

  it('mixes shared and plain arrays (only plain ones are copied): inputs, outputs, a longer output', async () => {
    for (const n of [129, 4099, 2 ** 17 + 3]) {
      const x = makeData('i32', n, 'random', 5);
      const x2 = makeData('i32', n, 'random', 6);
      const want = Array.from(x, (v) => ref3x1('i32', v));
      const plainOut = new Int32Array(n + 7).fill(-5);
      await cpuTransform(backend, sharedCopy(x), plainOut, times3plus1);
      expect(diff(plainOut.subarray(0, n), want), `n=${n}`).toBe('');
      expect(Array.from(plainOut.subarray(n))).toEqual(new Array(7).fill(-5));
      const sum = allocShared('i32', n);
      await cpuTransform(backend, [x, sharedCopy(x2)], sum, plus);
      expect(
        diff(
          sum,
          Array.from(x, (v, i) => refPlus('i32', v, x2[i] as number)),
        ),
        `n=${n}`,
      ).toBe('');
      const sum2 = new Int32Array(n);
      await cpuTransform(backend, [sharedCopy(x), x2], sum2, plus);
      expect(diff(sum2, sum), `n=${n}`).toBe('');
    }
  });
});

describe('cpuTransform arguments', () => {
  const seq = { kind: 'seq' } as const;
  it('names the bad argument', async () => {
    const x = new Uint32Array(4);
    await expect(cpuTransform(seq, new Float64Array(4) as unknown as HostArray, x, times3plus1)).rejects.toThrow(
      ArgumentError,
    );
    await expect(cpuTransform(seq, new Float64Array(4) as unknown as HostArray, x, times3plus1)).rejects.toThrow(
      /^input:/,
    );
    await expect(cpuTransform(seq, x, new Uint32Array(3), times3plus1)).rejects.toThrow(/^output: expected at least 4/);
    await expect(cpuTransform(seq, x, x, plus)).rejects.toThrow(/^fn: expected a function of 1 argument/);
    await expect(cpuTransform(seq, [x, x], x, times3plus1)).rejects.toThrow(/^fn:/);
    await expect(cpuTransform(seq, x, x, ((a: number) => a) as never)).rejects.toThrow(/^fn: expected a GpuFunction/);
    await expect(cpuTransform(seq, [x, new Uint32Array(3)], x, plus)).rejects.toThrow(
      /^input\[1\]: expected at least 4/,
    );
  });
});

describe('the map loop unrolled by the transform source length (mapUnroll)', () => {
  // times3plus1's f32 source, padded with a comment to lengths that select 16, 8, 4, 2 and 1 stores
  // per step (u * length <= 920).
  const padded = (length: number) =>
    inlineFunction({
      name: `times3plus1_padded_${length}`,
      arity: 1,
      source: () => {
        const src = '(x) => Math.fround(x * 3 + 1)';
        return `${src} /*${'.'.repeat(Math.max(0, length - src.length - 5))}*/`;
      },
    });
  for (const [length, stores] of [
    [40, 16],
    [100, 8],
    [200, 4],
    [400, 2],
    [600, 1],
  ] as const) {
    it(`source of ${length} characters: ${stores} stores per step, every length 0..40, seq and par`, async () => {
      const fn = padded(length);
      expect(fn.jsSource(['f32'])).toHaveLength(length);
      expect(
        mapUnroll({
          kind: 'map',
          t: { fn, argTypes: ['f32'] },
          inputs: 1,
          bit: false,
          arrays: ['f32', undefined, 'f32'],
        }),
      ).toBe(stores);
      for (const { backend } of testBackends(pool)) {
        for (let n = 0; n <= 40; n++) {
          const x = makeData('f32', n, 'random', n + 7);
          const want = alloc('f32', n);
          for (let i = 0; i < n; i++) want[i] = ref3x1('f32', x[i] as number);
          const y = alloc('f32', n).fill(0);
          await cpuTransform(backend, x, y, fn);
          expect(diff(y, want), `n=${n}`).toBe('');
        }
      }
    });
  }
});
