import { DeviceArray, type HostArray } from '@webdpl/core';
import { allocShared, execution, makeDevicePolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { counting } from '../common/counting';
import { zip } from '../common/zip';
import { expectSameArray } from '../testing/arrays';
import { isEngineVariant, itIf, parPool, place } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, rng, TINY_MAP_TILES, testDevice } from '../testing/matrix';
import { transformIf } from './index';

const sizes = edgeSizes([...TINY_MAP_TILES, 256 * 4 * 4], [123457]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

type T3 = 'u32' | 'i32' | 'f32';
type Fn = (...a: number[]) => number | boolean;

function alloc(type: T3, n: number): HostArray {
  return type === 'u32' ? new Uint32Array(n) : type === 'i32' ? new Int32Array(n) : new Float32Array(n);
}

/** Random bits in every element (f32: NaNs with payloads, signalling ones included, and infinities). */
function noise(type: T3, n: number, seed: number): HostArray {
  const a = alloc(type, n);
  const bits = new Uint32Array(a.buffer);
  const r = rng(seed);
  for (let i = 0; i < n; i++) bits[i] = r();
  if (type === 'f32') {
    const nans = [0x7f800001, 0xffc00123, 0x7fbfffff, 0x7f800000];
    for (let i = 0; i < n; i += 3) bits[i] = nans[i % 4] as number;
  }
  return a;
}

/** Asserts the same bits in every element (NaN payloads count). */
function expectSameBits(got: HostArray, want: HostArray, label: string): void {
  expectSameArray(
    new Uint32Array(got.buffer, got.byteOffset, got.length),
    new Uint32Array(want.buffer, want.byteOffset, want.length),
    label,
  );
}

/** The reference: a copy of `out` with `fn(x[i] | i, [i])` where `pred(s[i])` is truthy. */
function ref(
  out: HostArray,
  n: number,
  x: ArrayLike<number> | undefined,
  s: ArrayLike<number> | undefined,
  fn: Fn,
  pred: (v: number) => unknown,
  indexed = false,
): HostArray {
  const want = out.slice();
  for (let i = 0; i < n; i++) {
    const test = s ? (s[i] as number) : x ? (x[i] as number) : i;
    if (!pred(test)) continue;
    const v = x ? (indexed ? fn(x[i] as number, i) : fn(x[i] as number)) : fn(i);
    want[i] = Number(v);
  }
  return want;
}

const FN: Record<T3, Fn> = {
  u32: (x: number) => x * 5 + 1,
  i32: (x: number) => x * 3 - 7,
  f32: (x: number) => x * 2 + 1,
};
const PRED: Record<T3, (x: number) => boolean> = {
  u32: (x: number) => (x & 3) === 1,
  i32: (x: number) => x < -2,
  f32: (x: number) => x > 0.5,
};

describe.each(matrix)('transformIf under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);
  const types: readonly T3[] = variant ? ['f32'] : ['u32', 'i32', 'f32'];
  for (const type of types) {
    it(`${type} at edge sizes: both forms, in place, untouched elements exact`, async () => {
      for (const [k, n] of sizes.entries()) {
        const d = makeData(type, n, k % 2 ? 'random' : 'small');
        const orig = d.slice();
        // Into an output two longer, full of noise: written only where pred holds.
        const out = noise(type, n + 2, n + 7);
        const want = ref(out, n, d, undefined, FN[type], PRED[type]);
        await transformIf(policy, d, out, FN[type], PRED[type]);
        expectSameBits(out, want, `plain form n=${n}`);
        expectSameBits(d, orig, `input kept n=${n}`);
        // The stencil form: an i32 stencil, the default predicate (truthiness) and an explicit one.
        const st = makeData('i32', n, 'small', n + 3);
        const out2 = noise(type, n, n + 9);
        const want2 = ref(out2, n, d, st, FN[type], (s) => s);
        await transformIf(policy, d, st, out2, FN[type]);
        expectSameBits(out2, want2, `stencil, default pred n=${n}`);
        const want3 = ref(want2, n, d, st, FN[type], (s) => s % 3 === 0);
        await transformIf(policy, d, st, out2, FN[type], (s: number) => s % 3 === 0);
        expectSameBits(out2, want3, `stencil, pred n=${n}`);
        // In place.
        const wantIn = ref(d, n, d, undefined, FN[type], PRED[type]);
        await transformIf(policy, d, d, FN[type], PRED[type]);
        expectSameBits(d, wantIn, `in place n=${n}`);
      }
    });
  }

  it('index lambdas, counting(n) input and stencil, other output types, in place on the stencil', async () => {
    for (const n of sizes) {
      if (variant && n % 2 === 1 && n > 16) continue;
      const x = makeData('u32', n, 'random');
      const out = noise('u32', n, n + 1);
      const fi = (v: number, i: number) => v + i;
      const want = ref(out, n, x, undefined, fi, PRED.u32, true);
      await transformIf(policy, x, out, fi, PRED.u32);
      expectSameBits(out, want, `(x, i) n=${n}`);
      // counting(n) input: fn(i) where pred(i), into f32.
      const half = noise('f32', n, n + 2);
      const wantH = ref(
        half,
        n,
        undefined,
        undefined,
        (i) => i * 0.5,
        (i) => i % 3 !== 1,
      );
      await transformIf(
        policy,
        counting(n),
        half,
        (i: number) => i * 0.5,
        (i: number) => i % 3 !== 1,
      );
      expectSameBits(half, wantH, `counting input n=${n}`);
      if (variant) continue;
      // counting(n) stencil; a bool result into i32.
      const f = makeData('f32', n, 'random');
      const flags = noise('i32', n, n + 3);
      const wantF = ref(
        flags,
        n,
        f,
        counting(n) as unknown as undefined,
        (v) => v > 0,
        (i) => i % 2 === 0,
      );
      for (let i = 0; i < n; i++) if (i % 2 === 0) wantF[i] = (f[i] as number) > 0 ? 1 : 0;
      await transformIf(
        policy,
        f,
        counting(n),
        flags,
        (v: number) => v > 0,
        (i: number) => i % 2 === 0,
      );
      expectSameBits(flags, wantF, `counting stencil, bool n=${n}`);
      // The output is the stencil itself: each element tests its old value, then may be replaced.
      const s = makeData('f32', n, 'small', n + 5);
      const wantS = ref(
        s,
        n,
        f,
        s,
        (v) => v * 4,
        (t) => t > 0,
      );
      await transformIf(
        policy,
        f,
        s,
        s,
        (v: number) => v * 4,
        (t: number) => t > 0,
      );
      expectSameBits(s, wantS, `in place on the stencil n=${n}`);
    }
  });

  it('zipped inputs: both forms, index lambdas, in place on a zipped array; a zip of 4 with a stencil', async () => {
    for (const n of sizes) {
      if (variant && n % 2 === 1 && n > 16) continue;
      const a = makeData('i32', n, 'random', n + 1);
      const b = makeData('i32', n, 'random', n + 2);
      const out = noise('i32', n, n + 3);
      const fn = (x: number, y: number) => x - y * 2;
      const want = out.slice();
      for (let i = 0; i < n; i++) if ((a[i] as number) > (b[i] as number)) want[i] = fn(a[i] as number, b[i] as number);
      await transformIf(policy, zip(a, b), out, fn, (x: number, y: number) => x > y);
      expectSameBits(out, want, `zip n=${n}`);
      if (variant) continue;
      // An index lambda over a zip of u32 arrays into u32, with a counting stencil.
      const u = makeData('u32', n, 'random', n + 4);
      const v = makeData('u32', n, 'random', n + 11);
      const uo = noise('u32', n, n + 5);
      const wantU = uo.slice();
      for (let i = 0; i < n; i++) if (i % 3 === 0) wantU[i] = (u[i] as number) + (v[i] as number) + i;
      await transformIf(
        policy,
        zip(u, v),
        counting(n),
        uo,
        (x: number, y: number, i: number) => x + y + i,
        (i: number) => i % 3 === 0,
      );
      expectSameBits(uo, wantU, `zip, index lambda, counting stencil n=${n}`);
      // The stencil form in place on the zip's first array (f32), the default predicate.
      const f = makeData('f32', n, 'random', n + 6);
      const g = makeData('f32', n, 'random', n + 7);
      const st = makeData('u32', n, 'small', n + 8);
      const wantF = ref(
        f,
        n,
        f,
        st,
        (x) => x,
        (s) => s,
      );
      for (let i = 0; i < n; i++) if (st[i]) wantF[i] = Math.fround((f[i] as number) * (g[i] as number));
      await transformIf(policy, zip(f, g), st, f, (x: number, y: number) => x * y);
      expectSameBits(f, wantF, `zip stencil form in place n=${n}`);
      // A zip of 4 and a stencil: 5 streamed arrays, more than the map engine streams.
      const c = makeData('i32', n, 'small', n + 9);
      const o4 = noise('i32', n, n + 10);
      const want4 = o4.slice();
      for (let i = 0; i < n; i++)
        if (st[i]) want4[i] = (a[i] as number) + (b[i] as number) + (c[i] as number) + (c[i] as number);
      const call = transformIf(
        policy,
        zip(a, b, c, c),
        st,
        o4,
        (p: number, q: number, r: number, s: number) => p + q + r + s,
      );
      if (gpu && name !== 'auto') {
        await expect(call).rejects.toThrow(/the map engine streams 4/);
        expectSameBits(o4, noise('i32', n, n + 10), `zip of 4 untouched n=${n}`);
      } else {
        await call;
        expectSameBits(o4, want4, `zip of 4 and a stencil n=${n}`);
      }
    }
  });

  itIf(!variant)('JS truthiness of pred; shared memory arrays on every policy', async () => {
    const t = Float32Array.from([0, 2, Number.NaN, -0, -1]);
    const out = Float32Array.from([5, 5, 5, 5, 5]);
    await transformIf(
      policy,
      t,
      out,
      (x: number) => x + 1,
      (x: number) => x,
    );
    expectSameBits(out, Float32Array.from([5, 3, 5, 5, 0]), 'truthiness');
    // Shared arrays: the pool under par; uploaded through staging slices under GPU policies.
    const n = 5000;
    const a = allocShared('i32', n);
    a.set(makeData('i32', n, 'small'));
    const o = allocShared('i32', n);
    o.set(noise('i32', n, 4));
    const st = allocShared('u32', n);
    st.set(makeData('u32', n, 'small', 11));
    const want = ref(o, n, a, st, FN.i32, (s) => s);
    await transformIf(policy, a, st, o, FN.i32);
    expectSameBits(o, want, 'shared');
  });

  if (gpu && testDevice && !name.includes('no-subgroups')) {
    const device = testDevice;
    it('DeviceArray views at offsets: both forms, in place, padding and unwritten elements untouched', async () => {
      for (const n of [1, 4, 5, 257, 3001]) {
        const d = makeData('i32', n, 'small');
        const st = makeData('u32', n, 'small', 9);
        const o0 = noise('i32', n, 5);
        for (const off of [0, 1, 2]) {
          const a = place(device, d, off);
          const s = place(device, st, (off + 2) % 3);
          const b = place(device, o0, (off + 1) % 3);
          await transformIf(policy, a.view, b.view, FN.i32, PRED.i32);
          const want = ref(o0, n, d, undefined, FN.i32, PRED.i32);
          expectSameBits(await b.read(), want, `plain n=${n} @${off}`);
          await transformIf(policy, a.view, s.view, b.view, FN.i32);
          const want2 = ref(want, n, d, st, FN.i32, (v) => v);
          expectSameBits(await b.read(), want2, `stencil n=${n} @${off}`);
          expectSameBits(await a.read(), d, `input kept n=${n} @${off}`);
          await transformIf(policy, a.view, a.view, FN.i32, PRED.i32);
          expectSameBits(await a.read(), ref(d, n, d, undefined, FN.i32, PRED.i32), `in place n=${n} @${off}`);
          a.parent.destroy();
          s.parent.destroy();
          b.parent.destroy();
        }
      }
    });
  }
});

describe('transformIf: bad input', () => {
  const seq = execution.seq;
  const inc = (x: number) => x + 1;
  const odd = (x: number) => x % 2 === 1;
  it('names the argument and leaves the data untouched', async () => {
    const a = Uint32Array.from([1, 2, 3]);
    const o = Uint32Array.from([7, 7, 7]);
    await expect(transformIf(seq, [1, 2, 3] as unknown as Uint32Array, o, inc, odd)).rejects.toThrow(/input: expected/);
    await expect(transformIf(seq, a, new Uint32Array(2), inc, odd)).rejects.toThrow(/output: expected at least 3/);
    await expect(transformIf(seq, a, new Float32Array(3), inc, odd)).rejects.toThrow(
      /output: expected an array of u32/,
    );
    await expect(transformIf(seq, a, a.subarray(1), inc, odd)).rejects.toThrow(/output: expected/);
    await expect(transformIf(seq, a, o, 3 as never, odd)).rejects.toThrow(/fn/);
    await expect(transformIf(seq, a, o, inc, undefined as never)).rejects.toThrow(/pred/);
    await expect(transformIf(seq, a, o, inc, ((x: number, y: number) => x < y) as never)).rejects.toThrow(/pred/);
    await expect(transformIf(seq, a, new Int32Array(2), o, inc, odd)).rejects.toThrow(/stencil: expected 3 elements/);
    await expect(transformIf(seq, a, [1, 2, 3] as never, o, inc, odd)).rejects.toThrow(/stencil: expected/);
    await expect(transformIf(seq, a, counting(4), o, inc)).rejects.toThrow(/stencil: expected 3 elements/);
    const big = new Uint32Array(6);
    await expect(transformIf(seq, a, big.subarray(0, 3), big.subarray(1, 4), inc)).rejects.toThrow(
      /output: expected stencil itself/,
    );
    await expect(transformIf(seq, a, a, o, 'x' as never, odd)).rejects.toThrow(/fn/);
    await expect(transformIf(undefined as never, a, o, inc, odd)).rejects.toThrow(/policy/);
    const b = Uint32Array.from([4, 5, 6]);
    await expect(transformIf(seq, zip(a, b), zip(o, b) as never, (x: number, y: number) => x + y, odd)).rejects.toThrow(
      /output: expected one array/,
    );
    await expect(transformIf(seq, zip(a, b), o, inc, odd)).rejects.toThrow(/fn: expected a function of 2 parameter/);
    await expect(transformIf(seq, zip(a, b), o, (x: number, y: number) => x + y, odd)).rejects.toThrow(
      /pred: expected a function of 2 parameter/,
    );
    await expect(
      transformIf(
        seq,
        zip(a, b),
        o,
        (x: number, y: number) => x + y,
        (x: number, y: number) => [x, y] as never,
      ),
    ).rejects.toThrow(/pred: expected a function returning a number/);
    expect([...a]).toEqual([1, 2, 3]);
    expect([...o]).toEqual([7, 7, 7]);
  });

  if (testDevice) {
    const device = testDevice;
    it('DeviceArrays need a device policy; a function the GPU cannot run follows the fallback rules', async () => {
      const d = DeviceArray.from(device, Uint32Array.from([1, 2, 5]));
      const o = DeviceArray.from(device, Uint32Array.from([9, 9, 9]));
      await expect(transformIf(execution.par, d, o, inc, odd)).rejects.toThrow(/policy/);
      await transformIf(execution.auto, d, o, inc, odd);
      expect([...(await o.read())]).toEqual([2, 9, 6]);
      // An explicit { js, wgsl } function (a bound CPU kernel) whose WGSL does not compile: the GPU
      // error names the body and the output is untouched, as for transform.
      const bad = { js: (x: number) => x * 10, wgsl: 'return x * 10u + notDefinedHere;' };
      const h = Uint32Array.from([1, 2, 3]);
      const ho = Uint32Array.from([7, 7, 7]);
      const strict = makeDevicePolicy(device, { fallback: 'error' });
      await expect(transformIf(strict, h, ho, bad, odd)).rejects.toThrow(/does not compile/);
      expect([...ho]).toEqual([7, 7, 7]);
      await transformIf(execution.seq, h, ho, bad, odd);
      expect([...ho]).toEqual([10, 7, 30]);
      await transformIf(execution.par, h, h, bad, (x: number) => x > 1);
      expect([...h]).toEqual([1, 20, 30]);
      d.destroy();
      o.destroy();
    });
  }
});
