import { ArgumentError, type HostArray, lambda, UnsupportedOnDeviceError } from '@webdpl/core';
import { execution, makeDevicePolicy, type TuningOverrides } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { selectKernel } from '../bricks/select';
import { setPhasePasses } from '../common/gpu-io';
import { cpuComparator } from '../sort/comparator-arg';
import { greater, less } from '../sort/index';
import { isEngineVariant, parPool, place } from '../testing/device-data';
import {
  edgeSizes,
  type NamedPolicy,
  policyMatrix,
  randomSizes,
  rng,
  TINY_SORT_TUNING,
  testDevice,
} from '../testing/matrix';
import { type SortKeys, sortReference } from '../testing/sort-reference';
import { nthElement, partialSort, topK } from './index';

type T3 = 'u32' | 'i32' | 'f32';
type Before = (x: number, y: number) => boolean;
type Kind = 'random' | 'dups' | 'equal';

/** The radix select at every size with its default geometry ('device tiny' runs it in tiles of 64). */
const selectDefault: TuningOverrides = {
  nthElement: { fullSortMax: 0 },
  partialSort: { fullSortMax: 0 },
  topK: { fullSortMax: 0 },
};

const matrix: NamedPolicy[] = [...policyMatrix(TINY_SORT_TUNING), { name: 'par pool', policy: parPool, gpu: false }];
if (testDevice) {
  const policy = makeDevicePolicy(testDevice, { fallback: 'error', tuning: selectDefault });
  matrix.push({ name: 'device select', policy, gpu: true });
}

const SPECIALS = [0x7fc00000, 0xffc00000, 0x7f800001, 0x80000000, 0, 0x7f800000, 0xff800000, 1, 0x80000001];

function makeKeys(type: T3, n: number, seed: number, kind: Kind): SortKeys {
  const r = rng(seed);
  const out = type === 'u32' ? new Uint32Array(n) : type === 'i32' ? new Int32Array(n) : new Float32Array(n);
  const bits = new Uint32Array(out.buffer);
  for (let i = 0; i < n; i++) {
    if (kind === 'equal') out[i] = type === 'f32' ? -0 : 7;
    else if (kind === 'dups') out[i] = (r() % 5) - 2;
    else if (type === 'f32' && r() % 4 === 0) bits[i] = SPECIALS[r() % SPECIALS.length] as number;
    else if (type === 'f32') out[i] = (r() / 2 ** 31 - 1) * 1000;
    else bits[i] = r();
  }
  if (kind === 'dups' && type === 'f32' && n > 3) {
    out[0] = -0;
    out[n - 1] = Number.NaN;
    out[n >> 1] = 0;
  }
  return out;
}

/** TypedArray#sort's order (or its reverse with NaN still last). */
function beforeOf(descending: boolean): Before {
  const less: Before = (x, y) =>
    x < y || (x === 0 && y === 0 && Object.is(x, -0) && !Object.is(y, -0)) || (!Number.isNaN(x) && Number.isNaN(y));
  return descending ? (x, y) => (Number.isNaN(x) || Number.isNaN(y) ? less(x, y) : less(y, x)) : less;
}

function same(got: ArrayLike<number>, want: ArrayLike<number>, from: number, to: number, what: string): void {
  for (let i = from; i < to; i++) {
    if (!Object.is(got[i], want[i])) throw new Error(`${what}: at ${i}: got ${got[i]}, want ${want[i]}`);
  }
}

/** `got` is a permutation of `keys` (same sorted multiset). */
function samePermutation(got: SortKeys, keys: SortKeys, what: string): void {
  same(sortReference(got, false), sortReference(keys, false), 0, keys.length, `${what} (permutation)`);
}

/** The nth_element property: got[n] is the sorted n-th, nothing before it after it, nothing after it before it. */
function checkNth(got: SortKeys, keys: SortKeys, n: number, descending: boolean, what: string): void {
  const want = sortReference(keys, descending);
  same(got, want, n, n + 1, `${what} (the n-th)`);
  const before = beforeOf(descending);
  const p = got[n] as number;
  for (let i = 0; i < got.length; i++) {
    const x = got[i] as number;
    if (i < n && before(p, x)) throw new Error(`${what}: ${x} at ${i} goes after the n-th ${p}`);
    if (i > n && before(x, p)) throw new Error(`${what}: ${x} at ${i} goes before the n-th ${p}`);
  }
  samePermutation(got, keys, what);
}

/** The indices tried at a size: the ends, the middle and a random one. */
function indices(len: number, seed: number, inclusive: boolean): number[] {
  const max = inclusive ? len : len - 1;
  if (max < 0) return [];
  return [...new Set([0, max, max >> 1, rng(seed)() % (max + 1), Math.min(1, max)])];
}

const sizes = edgeSizes([32 * 2, 128 * 15, 1 << 13], [123457, ...randomSizes(1, 16)]);

describe.each(matrix)('nthElement, partialSort, topK under $name', ({ name, policy, gpu }) => {
  // 'device select' runs every type; the other engine variants f32 only.
  const variant = isEngineVariant(name) && name !== 'device select';
  const types: readonly T3[] = variant ? ['f32'] : ['u32', 'i32', 'f32'];
  const kinds: readonly Kind[] = ['random', 'dups', 'equal'];
  const sz = gpu ? sizes.filter((n, i) => (n <= 16 ? i % 3 === 0 : true)) : sizes;
  for (const type of types) {
    it(`${type} at edge sizes against a full sort: random, duplicates-heavy, all-equal data`, async () => {
      for (const [s, len] of sz.entries()) {
        const kind = kinds[s % 3] as Kind;
        const keys = makeKeys(type, len, s + 1, kind);
        const descending = gpu ? s % 4 === 1 : s % 2 === 1;
        const comp = descending ? greater : undefined;
        const what = `${type} ${kind} n=${len}${descending ? ' greater' : ''}`;
        const want = sortReference(keys, descending);
        for (const n of indices(len, s, false).slice(0, gpu ? 2 : 5)) {
          const d = keys.slice();
          await nthElement(policy, d, n, comp);
          checkNth(d, keys, n, descending, `nthElement ${what} at ${n}`);
        }
        for (const k of indices(len, s + 7, true).slice(0, gpu ? 3 : 5)) {
          const d = keys.slice();
          await partialSort(policy, d, k, comp);
          same(d, want, 0, k, `partialSort ${what} k=${k}`);
          samePermutation(d, keys, `partialSort ${what} k=${k}`);
          const input = keys.slice();
          const out = new (keys.constructor as new (n: number) => SortKeys)(k + 1).fill(5);
          await topK(policy, input, k, out, { largest: descending });
          same(out, want, 0, k, `topK ${what} k=${k}`);
          expect(out[k], 'past k untouched').toBe(5);
          same(input, keys, 0, len, `topK ${what}: input untouched`);
        }
      }
    });
  }

  it('user comparators: a GPU lambda and a host-only function', async () => {
    const byAbs = (a: number, b: number) => Math.abs(a) < Math.abs(b);
    const keys = makeKeys('f32', 3001, 3, 'random').map((x) => (Number.isNaN(x) ? 1 : x)) as Float32Array;
    const abs = Float32Array.from(keys, Math.abs);
    const d = keys.slice();
    await nthElement(policy, d, 1500, lambda(byAbs));
    checkNth(Float32Array.from(d, Math.abs), abs, 1500, false, 'nthElement by |x|');
    const p = keys.slice();
    await partialSort(policy, p, 100, lambda(byAbs));
    same(Float32Array.from(p.subarray(0, 100), Math.abs), sortReference(abs, false), 0, 100, 'partialSort by |x|');
    const out = new Float32Array(10);
    await topK(policy, keys, 10, out, { comp: lambda(byAbs) });
    same(Float32Array.from(out, Math.abs), sortReference(abs, false), 0, 10, 'topK by |x|');
    if (!gpu) {
      const table = [5, 3, 9, 1, 0, 2];
      const byTable = (a: number, b: number) => (table[a] as number) < (table[b] as number);
      const t = Uint32Array.of(0, 1, 2, 3, 4, 5);
      await partialSort(policy, t, 3, byTable);
      expect(Array.from(t.subarray(0, 3))).toEqual([4, 3, 5]);
    }
  });

  if (gpu && testDevice && !variant) {
    const device = testDevice;
    it('DeviceArray views at offsets (copied to bind), outputs past k and padding untouched', async () => {
      for (const [len, offset] of [
        [1, 0],
        [2, 1],
        [300, 1],
        [20000, 0],
        [20001, 3],
      ] as const) {
        const keys = makeKeys('i32', len, len, 'dups') as Int32Array;
        const want = sortReference(keys, false);
        const nth = place(device, keys, offset);
        const k = len >> 1;
        try {
          await nthElement(policy, nth.view, k);
          checkNth(await nth.read(), keys, k, false, `device nthElement n=${len}`);
        } finally {
          nth.parent.destroy();
        }
        const part = place(device, keys, offset);
        try {
          await partialSort(policy, part.view, k);
          const got = await part.read();
          same(got, want, 0, k, `device partialSort n=${len}`);
          samePermutation(got, keys, `device partialSort n=${len}`);
        } finally {
          part.parent.destroy();
        }
        const input = place(device, keys, offset);
        const out = place(device, new Int32Array(k + 2).fill(9), offset ? 0 : 1);
        try {
          await topK(policy, input.view, k, out.view);
          const got = await out.read();
          same(got, want, 0, k, `device topK n=${len}`);
          expect(Array.from(got.subarray(k)), 'past k').toEqual([9, 9]);
          same(await input.read(), keys, 0, len, 'device topK input untouched');
        } finally {
          input.parent.destroy();
          out.parent.destroy();
        }
      }
      // Input and output as two views of one buffer, both bindable (the scatter cannot bind both: a copy).
      const keys = makeKeys('u32', 20000, 4, 'random');
      const both = place(device, keys, 0, 300);
      try {
        await topK(policy, both.view, 100, both.parent.view(20032, 100), { largest: true });
        const got = (await both.parent.read()) as Uint32Array;
        same(got.subarray(20032, 20132), sortReference(keys, true), 0, 100, 'topK into the same buffer');
        same(got, keys, 0, 20000, 'topK same buffer: input untouched');
      } finally {
        both.parent.destroy();
      }
    });
  }
});

describe.skipIf(!testDevice)('the radix select at 2^24 + 1 keys', () => {
  it('nthElement and topK: 20-bit keys (the top digit alike, candidates ~n / 16), grid-strided tiles', async () => {
    const n = 2 ** 24 + 1;
    const r = rng(3);
    const keys = new Uint32Array(n);
    for (let i = 0; i < n; i++) keys[i] = r() & 0xfffff;
    const policy = makeDevicePolicy(testDevice as NonNullable<typeof testDevice>, { fallback: 'error' });
    const at = 12_345_678;
    const d = keys.slice();
    await nthElement(policy, d, at);
    const sorted = keys.slice().sort();
    expect(d[at]).toBe(sorted[at]);
    const p = d[at] as number;
    for (let i = 0; i < n; i++) {
      if ((i < at && (d[i] as number) > p) || (i > at && (d[i] as number) < p)) throw new Error(`${d[i]} at ${i}`);
    }
    const out = new Uint32Array(100);
    await topK(policy, keys, 100, out, { largest: true });
    expect(Array.from(out)).toEqual(Array.from(sorted.subarray(n - 100)).reverse());
  }, 600_000);
});

describe.skipIf(!testDevice)('the radix select, each round in a compute pass of its own', () => {
  it("setPhasePasses (the probes' diagnostics): the same selection", async () => {
    const policy = makeDevicePolicy(testDevice as NonNullable<typeof testDevice>, {
      fallback: 'error',
      tuning: selectDefault,
    });
    setPhasePasses(true);
    try {
      for (const n of [1, 1000, 70_001]) {
        const r = rng(n + 4);
        const keys = Uint32Array.from({ length: n }, () => r() & 0xffff);
        const k = Math.min(n, 37);
        const out = new Uint32Array(k);
        await topK(policy, keys, k, out, { largest: true });
        const sorted = keys.slice().sort();
        expect(Array.from(out), `topK n=${n}`).toEqual(Array.from(sorted.subarray(n - k)).reverse());
      }
    } finally {
      setPhasePasses(false);
    }
  });
});

describe('nthElement, partialSort, topK: arguments', () => {
  it('rejects bad arguments with ArgumentError naming them, leaving the data untouched', async () => {
    const data = Uint32Array.of(3, 1, 2);
    const out = new Uint32Array(3);
    const seq = execution.seq;
    const cases: [Promise<unknown>, RegExp][] = [
      [nthElement(seq, data, 3), /\bn\b/],
      [nthElement(seq, data, -1), /\bn\b/],
      [nthElement(seq, data, 1.5), /\bn\b/],
      [nthElement(seq, new Uint32Array(0), 0), /\bn\b/],
      [nthElement(seq, [3, 1] as never, 0), /data/],
      [nthElement(seq, data, 1, 42 as never), /comp/],
      [partialSort(seq, data, 4), /\bk\b/],
      [partialSort(seq, data, '1' as never), /\bk\b/],
      [topK(seq, data, 4, out), /\bk\b/],
      [topK(seq, data, 2, new Uint32Array(1)), /output/],
      [topK(seq, data, 2, new Int32Array(3)), /output/],
      [topK(seq, data, 2, data.subarray(1)), /output/],
      [topK(seq, data, 2, out, { largest: 1 as never }), /largest/],
      [topK(seq, data, 2, out, { largest: true, comp: greater }), /options/],
      [topK(seq, data, 2, out, null as never), /options/],
    ];
    for (const [p, re] of cases) {
      await expect(p).rejects.toThrow(ArgumentError);
      await expect(p).rejects.toThrow(re);
    }
    expect(Array.from(data)).toEqual([3, 1, 2]);
    expect(Array.from(out)).toEqual([0, 0, 0]);
  });

  it('k = 0 and n = 0 touch nothing; a throwing comparator leaves the data as it was', async () => {
    const data = Int32Array.of(5, -1, 3, 0);
    await partialSort(execution.seq, data, 0);
    const out = new Int32Array(2).fill(4);
    await topK(execution.par, data, 0, out);
    expect(Array.from(out)).toEqual([4, 4]);
    await nthElement(execution.seq, data, 0);
    expect(data[0]).toBe(-1);
    const big = Int32Array.from({ length: 100 }, (_, i) => (i * 37) % 101);
    const copy = big.slice();
    let calls = 0;
    const throwing = (a: number, b: number) => {
      if (++calls > 150) throw new Error('boom');
      return a < b;
    };
    await expect(partialSort(execution.seq, big, 50, throwing)).rejects.toThrow(/boom/);
    expect(Array.from(big)).toEqual(Array.from(copy));
  });

  it('a host-only comparator on a device policy: UnsupportedOnDeviceError, or the CPU with fallback', async () => {
    if (!testDevice) return;
    const table = [5, 3, 9, 1];
    const byTable = (a: number, b: number) => (table[a] as number) < (table[b] as number);
    const strict = makeDevicePolicy(testDevice, { fallback: 'error' });
    await expect(nthElement(strict, Uint32Array.of(1, 0), 0, byTable)).rejects.toThrow(UnsupportedOnDeviceError);
    const lenient = makeDevicePolicy(testDevice, { fallback: 'cpu', fallbackPolicy: execution.seq });
    const out = new Uint32Array(2);
    await topK(lenient, Uint32Array.of(2, 3, 0, 1), 2, out, { comp: byTable });
    expect(Array.from(out)).toEqual([3, 1]);
  });

  it('the heapselect guard: every partition depth down to 0, inlined and called comparators', () => {
    const inlined = cpuComparator({ kind: 'builtin', fn: less, descending: false }, 'f32');
    const called = { kind: 'function' as const, before: inlined.before };
    for (const comp of [inlined, called]) {
      for (const [s, len] of [1, 2, 17, 100, 1000, 4099].entries()) {
        for (const kind of ['random', 'dups', 'equal'] as const) {
          const keys = makeKeys('f32', len, s + 3, kind);
          for (const depth of [0, 1, 2, 3]) {
            for (const k of indices(len, s + depth, false)) {
              const d = keys.slice();
              selectKernel(comp).select(d, 0, len, k, depth);
              checkNth(d, keys, k, false, `${comp.kind} ${kind} n=${len} depth ${depth} at ${k}`);
            }
          }
        }
      }
    }
  });

  it('topK of few (the heap path): descending, ascending, duplicate and special inputs, both orders', async () => {
    const n = 10_000;
    const inputs: [string, SortKeys][] = [
      ['descending', Float32Array.from({ length: n }, (_, i) => n - i)],
      ['ascending', Float32Array.from({ length: n }, (_, i) => i - 5000)],
      ['duplicates', makeKeys('f32', n, 5, 'dups')],
      ['specials', makeKeys('f32', n, 6, 'random')],
    ];
    for (const [what, keys] of inputs) {
      for (const largest of [false, true]) {
        for (const k of [1, 2, 100, 156]) {
          const out = new Float32Array(k);
          for (const policy of [execution.seq, parPool]) {
            await topK(policy, keys, k, out, { largest });
            same(out, sortReference(keys, largest), 0, k, `topK ${what} k=${k}${largest ? ' largest' : ''}`);
          }
        }
      }
      const out = new Float32Array(20);
      // NaN last: a NaN is the only value not equal to itself.
      // biome-ignore lint/suspicious/noSelfCompare: the NaN test is what the comparator needs
      const byFunction = (a: number, b: number) => a > b || (a === a && b !== b);
      await topK(execution.seq, keys, 20, out, { comp: byFunction });
      same(out, sortReference(keys, true), 0, 20, `topK ${what} by a function`);
    }
  });

  it('topK on the CPU reuses its copy: calls in a row with other data, sizes and k stay exact', async () => {
    // The radix select's copy (k of n above n / 64) and the partial sort's are borrowed scratch: a
    // call must not read what the one before left there.
    for (const [n, k, seed] of [
      [1 << 14, 1 << 12, 1],
      [1 << 14, 1 << 13, 2],
      [(1 << 14) - 3, 1000, 3],
      [5000, 4999, 4],
      [1 << 14, 1 << 12, 5],
    ] as const) {
      for (const type of ['u32', 'f32'] as const) {
        const keys = makeKeys(type, n, seed, 'random');
        const out = (type === 'u32' ? new Uint32Array(k) : new Float32Array(k)) as HostArray;
        for (const largest of [false, true]) {
          // u32: a comparator function first (its copy then holds the call before's data: other
          // keys); f32 keys hold NaNs, which `<` leaves unordered.
          if (type === 'u32') {
            const byFunction = largest ? (a: number, b: number) => a > b : (a: number, b: number) => a < b;
            await topK(execution.seq, keys, k, out, { comp: byFunction });
            same(out, sortReference(keys, largest), 0, k, `topK by a function n=${n} k=${k}`);
          }
          await topK(execution.seq, keys, k, out, { largest });
          same(out, sortReference(keys, largest), 0, k, `topK ${type} n=${n} k=${k} largest=${largest}`);
        }
      }
    }
  });

  it('large random data on the CPU against a full sort (introselect and its heap guard)', async () => {
    const n = 1 << 18;
    const keys = makeKeys('u32', n, 99, 'random');
    const want = sortReference(keys, false);
    const d = keys.slice();
    await nthElement(execution.par, d, 12345);
    checkNth(d, keys, 12345, false, 'nthElement 2^18');
    // Organ-pipe data (median-of-3 killers are not needed for the guard; this checks correctness).
    const pipe = Uint32Array.from({ length: n }, (_, i) => (i < n / 2 ? i : n - i));
    const p = pipe.slice();
    await partialSort(execution.seq, p, 1000);
    same(p, sortReference(pipe, false), 0, 1000, 'partialSort organ pipe');
    const out = new Uint32Array(50) as HostArray;
    await topK(execution.seq, keys, 50, out, { largest: true });
    same(out, sortReference(keys, true), 0, 50, 'topK largest 2^18');
    expect(want.length).toBe(n);
  });
});
