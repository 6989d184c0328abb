/**
 * The by-key bricks on the worker pool: par runs the pool (counted) with chunks of 16, so runs cross
 * chunk boundaries everywhere, and gives seq's results exactly (integers; a non-commutative operator).
 */
import { lambda, lastNonZero, plus } from '@webdpl/core';
import { allocShared, type CpuBackend, createPool } from '@webdpl/policies';
import { afterAll, describe, expect, it } from 'vitest';
import { keyEqual } from '../by-key/key-equal';
import { refRuns } from '../testing/by-key-reference';
import { rng } from '../testing/matrix';
import { type ByKeyFunctions, byKeyKernel, cpuRunsByKey, cpuScanByKey } from './by-key';
import { countingPool, failingPool, tellingPool } from './test-data';
import { inlineFunction } from './test-functions';

const inner = createPool({ size: 2 });
afterAll(() => inner.close());
const counting = countingPool(inner);
const par: CpuBackend = { kind: 'par', pool: counting.pool, tuning: { parallelThreshold: 0, minChunk: 16 } };
const seq: CpuBackend = { kind: 'seq' };
const tooShort = (runs: number) => new Error(`${runs} runs`);

/** Keys in runs of 1..maxRun (0: one run over everything). */
function keysOf(n: number, maxRun: number, seed: number): Uint32Array {
  const r = rng(seed);
  const k = new Uint32Array(n);
  let key = 0;
  let left = 0;
  for (let i = 0; i < n; i++) {
    if (left === 0) {
      key++;
      left = maxRun === 0 ? n : 1 + (r() % maxRun);
    }
    k[i] = key;
    left--;
  }
  return k;
}

describe('by-key bricks on the pool', () => {
  for (const maxRun of [1, 5, 40, 0]) {
    it(`scans, reduce and unique match seq (runs of 1..${maxRun || 'n'})`, async () => {
      for (const n of [1, 15, 16, 17, 100, 1000, 20011]) {
        const keys = keysOf(n, maxRun, n);
        const r = rng(n + 1);
        const vals = Uint32Array.from({ length: n }, () => (r() % 3 === 0 ? r() : 0));
        for (const op of [plus, lastNonZero]) {
          const fns: ByKeyFunctions = { op, keyEq: keyEqual, keyType: 'u32', valueType: 'u32' };
          for (const exclusive of [false, true]) {
            const want = new Uint32Array(n);
            await cpuScanByKey(seq, keys, vals, want, fns, exclusive, 9);
            counting.reset();
            const got = new Uint32Array(n);
            await cpuScanByKey(par, keys, vals, got, fns, exclusive, 9);
            if (n >= 100) expect(counting.runs()).toBeGreaterThan(0);
            expect(Array.from(got)).toEqual(Array.from(want));
            const inPlace = vals.slice();
            await cpuScanByKey(par, keys, inPlace, inPlace, fns, exclusive, 9);
            expect(Array.from(inPlace)).toEqual(Array.from(want));
          }
          for (const reduce of [true, false]) {
            const ks = new Uint32Array(n);
            const vs = new Uint32Array(n);
            const m = await cpuRunsByKey(seq, keys, vals, ks, vs, fns, reduce, tooShort);
            const kp = new Uint32Array(n);
            const vp = new Uint32Array(n);
            counting.reset();
            expect(await cpuRunsByKey(par, keys, vals, kp, vp, fns, reduce, tooShort)).toBe(m);
            if (n >= 100) expect(counting.runs()).toBeGreaterThan(0);
            expect(Array.from(kp)).toEqual(Array.from(ks));
            expect(Array.from(vp)).toEqual(Array.from(vs));
          }
        }
      }
    });
  }
});

describe('scans by key on the pool: fix-ups of the runs crossing chunk boundaries', () => {
  it('short ones on the calling thread (one pool step), long ones as a second pool step, both exact', async () => {
    // Runs of 1..40 and of 1..1000 (first runs of up to 40 / 1000 elements: fix-ups short in all)
    // and one run over everything (every chunk but the first fixed whole: more than 2^16 elements).
    for (const [maxRun, steps] of [
      [40, 1],
      [1000, 1],
      [0, 2],
    ] as const) {
      const n = 150001;
      const keys = keysOf(n, maxRun, maxRun + 3);
      const r = rng(maxRun + 4);
      const vals = Uint32Array.from({ length: n }, () => r() % 1000);
      const fns: ByKeyFunctions = { op: lastNonZero, keyEq: keyEqual, keyType: 'u32', valueType: 'u32' };
      for (const exclusive of [false, true]) {
        const want = new Uint32Array(n);
        await cpuScanByKey(seq, keys, vals, want, fns, exclusive, 9);
        for (const shared of [false, true]) {
          const k = shared ? sharedOf(keys) : keys;
          const v = shared ? sharedOf(vals) : vals;
          const got = shared ? (allocShared('u32', n) as Uint32Array) : new Uint32Array(n);
          counting.reset();
          await cpuScanByKey(par, k, v, got, fns, exclusive, 9);
          const at = `runs of 1..${maxRun || 'n'} ${exclusive ? 'exclusive' : 'inclusive'} ${shared ? 'shared' : 'plain'}`;
          expect(counting.runs(), at).toBe(steps);
          expect(Array.from(got), at).toEqual(Array.from(want));
        }
      }
    }
  });
});

function sharedOf(a: Uint32Array): Uint32Array {
  const s = allocShared('u32', a.length) as Uint32Array;
  s.set(a);
  return s;
}

/** allocShared keys in runs of 1..40 (seed `seed`) and random values (seed `seed + 1`). */
function sharedKeysValues(n: number, seed: number): { keys: Uint32Array; vals: Uint32Array } {
  const keys = allocShared('u32', n) as Uint32Array;
  const vals = allocShared('u32', n) as Uint32Array;
  keys.set(keysOf(n, 40, seed));
  const r = rng(seed + 1);
  for (let i = 0; i < n; i++) vals[i] = r();
  return { keys, vals };
}

describe('reduce and unique by key: one pass, outputs checked without touching them', () => {
  const u32Fns: ByKeyFunctions = { op: plus, keyEq: keyEqual, keyType: 'u32', valueType: 'u32' };
  const u32Plus = (a: number, b: number) => (a + b) >>> 0;
  const backends: [string, CpuBackend][] = [
    ['seq', seq],
    ['par', par],
  ];

  it('par chunk boundaries on and inside runs (plain and shared inputs and outputs), outputs of exactly the runs, short ones untouched', async () => {
    // 8192 elements in 32 chunks of 256: keys (i + off) >> 4 put every boundary on a run boundary
    // (off 0) or inside a run (off 1, 7).
    const n = 8192;
    for (const off of [0, 1, 7]) {
      for (const shared of [false, true]) {
        const keys = shared ? (allocShared('u32', n) as Uint32Array) : new Uint32Array(n);
        const vals = shared ? (allocShared('u32', n) as Uint32Array) : new Uint32Array(n);
        for (let i = 0; i < n; i++) {
          keys[i] = (i + off) >>> 4;
          vals[i] = (Math.imul(i, 2654435761) >>> 0) + 1;
        }
        for (const reduce of [true, false]) {
          const want = refRuns(keys, vals, reduce ? u32Plus : undefined, Object.is);
          const runs = want.keys.length;
          // Shared outputs: the workers copy runs into them too (after every chunk is counted).
          for (const [[name, b], outShared] of backends.flatMap((x) => [false, true].map((o) => [x, o] as const))) {
            const what = `${name} off ${off} shared ${shared} outputs shared ${outShared} reduce ${reduce}`;
            const out = (m: number) => (outShared ? (allocShared('u32', m) as Uint32Array) : new Uint32Array(m));
            const ko = out(runs);
            const vo = out(runs);
            counting.reset();
            expect(await cpuRunsByKey(b, keys, vals, ko, vo, u32Fns, reduce, tooShort), what).toBe(runs);
            if (b.kind === 'par') expect(counting.runs(), what).toBeGreaterThan(0);
            expect(Array.from(ko), what).toEqual(want.keys);
            expect(Array.from(vo), what).toEqual(want.values);
            // One element short (either output, or both): an error, both outputs untouched.
            for (const [kl, vl] of [
              [runs - 1, runs],
              [runs, runs - 1],
              [runs - 1, n],
              [0, 0],
            ] as const) {
              const ks = out(kl).fill(7);
              const vs = out(vl).fill(7);
              await expect(cpuRunsByKey(b, keys, vals, ks, vs, u32Fns, reduce, tooShort), what).rejects.toThrow(
                `${runs} runs`,
              );
              expect(ks.every((x) => x === 7) && vs.every((x) => x === 7), `${what}: ${kl}/${vl} untouched`).toBe(true);
            }
          }
        }
      }
    }
  });

  it('shared outputs: workers place runs only once every chunk is counted (callerWorks off: two workers count)', async () => {
    const n = 1 << 18;
    const { keys, vals } = sharedKeysValues(n, 3);
    const workersOnly: CpuBackend = { kind: 'par', pool: inner, tuning: { callerWorks: false, minChunk: 1024 } };
    for (const reduce of [true, false]) {
      const want = refRuns(keys, vals, reduce ? u32Plus : undefined, Object.is);
      const runs = want.keys.length;
      for (const b of [workersOnly, par]) {
        for (let rep = 0; rep < 3; rep++) {
          const ko = allocShared('u32', runs) as Uint32Array;
          const vo = allocShared('u32', runs) as Uint32Array;
          expect(await cpuRunsByKey(b, keys, vals, ko, vo, u32Fns, reduce, tooShort)).toBe(runs);
          expect(Array.from(ko)).toEqual(want.keys);
          expect(Array.from(vo)).toEqual(want.values);
        }
      }
    }
  });

  it("shared inputs: the call returns without the workers' replies only once every worker returned; a worker's error still fails it", async () => {
    const n = 1 << 16;
    const { keys, vals } = sharedKeysValues(n, 5);
    const telling = tellingPool(inner);
    const failing = failingPool(inner);
    const tuning = { parallelThreshold: 0, minChunk: 1024 };
    for (const reduce of [true, false]) {
      const want = refRuns(keys, vals, reduce ? u32Plus : undefined, Object.is);
      const runs = want.keys.length;
      for (const outShared of [false, true]) {
        const out = (m: number) => (outShared ? (allocShared('u32', m) as Uint32Array) : new Uint32Array(m));
        telling.reset();
        // Back to back: each call's workers may still owe their reply to the call before.
        for (let rep = 0; rep < 20; rep++) {
          const ko = out(rep & 1 ? n : runs);
          const vo = out(rep & 1 ? n : runs);
          const b: CpuBackend = { kind: 'par', pool: telling.pool, tuning };
          expect(await cpuRunsByKey(b, keys, vals, ko, vo, u32Fns, reduce, tooShort)).toBe(runs);
          expect(Array.from(ko.subarray(0, runs))).toEqual(want.keys);
          expect(Array.from(vo.subarray(0, runs))).toEqual(want.values);
        }
        expect(telling.told(), `outputs shared ${outShared}`).toBeGreaterThan(0);
        const b: CpuBackend = { kind: 'par', pool: failing, tuning };
        for (let rep = 0; rep < 5; rep++) {
          await expect(cpuRunsByKey(b, keys, vals, out(runs), out(runs), u32Fns, reduce, tooShort)).rejects.toThrow(
            'worker failed',
          );
        }
      }
    }
  });

  it('shared inputs, outputs of n or more: the calling thread writes its chunks straight into them, the workers through the scratch; exact at every size, elements past the runs untouched', async () => {
    for (const n of [1, 15, 16, 17, 100, 1000, 4099, 20011]) {
      for (const maxRun of [1, 5, 40, 0]) {
        const keys = allocShared('u32', n) as Uint32Array;
        const vals = allocShared('u32', n) as Uint32Array;
        keys.set(keysOf(n, maxRun, n + maxRun));
        const r = rng(n * 3 + maxRun);
        for (let i = 0; i < n; i++) vals[i] = r();
        for (const reduce of [true, false]) {
          const want = refRuns(keys, vals, reduce ? u32Plus : undefined, Object.is);
          const runs = want.keys.length;
          for (const outShared of [false, true]) {
            for (const len of [n, n + 3]) {
              const what = `n ${n} runs of 1..${maxRun || 'n'} reduce ${reduce} outputs shared ${outShared} length ${len}`;
              const out = () => (outShared ? (allocShared('u32', len) as Uint32Array) : new Uint32Array(len)).fill(7);
              const ko = out();
              const vo = out();
              expect(await cpuRunsByKey(par, keys, vals, ko, vo, u32Fns, reduce, tooShort), what).toBe(runs);
              expect(Array.from(ko.subarray(0, runs)), what).toEqual(want.keys);
              expect(Array.from(vo.subarray(0, runs)), what).toEqual(want.values);
              expect(ko.subarray(runs).every((x) => x === 7) && vo.subarray(runs).every((x) => x === 7), what).toBe(
                true,
              );
            }
          }
        }
      }
    }
  });

  it('a user key equality and value operator on f32 values, empty input', async () => {
    // Keys of one decade are equal, so runs merge across different keys; an f32 lambda rounds
    // every step, in order within each run (a run over several chunks is folded by one thread).
    const decade = lambda((a: number, b: number) => Math.floor(a / 10) === Math.floor(b / 10));
    const deq = (a: number, b: number) => Math.floor(a / 10) === Math.floor(b / 10);
    const fop = lambda((a: number, b: number) => a * 0.5 + b);
    const jop = (a: number, b: number) => Math.fround(Math.fround(a * 0.5) + b);
    const fns: ByKeyFunctions = { op: fop, keyEq: decade, keyType: 'u32', valueType: 'f32' };
    for (const n of [1, 17, 4000, 20011]) {
      const keys = keysOf(n, 9, n + 1).map((k) => k * 3);
      const r = rng(n);
      const vals = Float32Array.from({ length: n }, () => (r() % 1000) / 7);
      for (const reduce of [true, false]) {
        const want = refRuns(keys, vals, reduce ? jop : undefined, deq);
        const runs = want.keys.length;
        for (const [name, b] of backends) {
          for (const len of [runs, n]) {
            const ko = new Uint32Array(len);
            const vo = new Float32Array(len);
            expect(await cpuRunsByKey(b, keys, vals, ko, vo, fns, reduce, tooShort)).toBe(runs);
            expect(Array.from(ko.subarray(0, runs)), `${name} n=${n} keys`).toEqual(want.keys);
            expect(Array.from(vo.subarray(0, runs)), `${name} n=${n} values`).toEqual(want.values);
          }
          if (runs > 1) {
            const vs = new Float32Array(runs - 1).fill(7);
            await expect(cpuRunsByKey(b, keys, vals, new Uint32Array(n), vs, fns, reduce, tooShort)).rejects.toThrow(
              `${runs} runs`,
            );
            expect(vs.every((x) => x === 7)).toBe(true);
          }
        }
      }
    }
    for (const [, b] of backends) {
      const out = Uint32Array.of(7);
      const e = new Uint32Array(0);
      expect(await cpuRunsByKey(b, e, e, out, out.slice(), u32Fns, true, tooShort)).toBe(0);
      expect(await cpuRunsByKey(b, e, e, e, e, u32Fns, false, tooShort)).toBe(0);
      expect(out[0]).toBe(7);
      await cpuScanByKey(b, e, e, e, u32Fns, true, 1);
    }
  });
});

describe('scans by key on seq against a reference', () => {
  it('every length 1..40 (every tail of the unrolled loop), runs of 1..5 and one run, inclusive and exclusive', async () => {
    const u32Fns: ByKeyFunctions = { op: plus, keyEq: keyEqual, keyType: 'u32', valueType: 'u32' };
    for (let n = 1; n <= 40; n++) {
      for (const maxRun of [1, 5, 0]) {
        const keys = keysOf(n, maxRun, n * 7 + maxRun);
        const r = rng(n);
        const vals = Uint32Array.from({ length: n }, () => r());
        for (const exclusive of [false, true]) {
          // Reference: a run starts where the key differs from the one before.
          const want: number[] = [];
          let acc = 0;
          for (let i = 0; i < n; i++) {
            const head = i === 0 || keys[i] !== keys[i - 1];
            if (exclusive) {
              const before = head ? 9 : acc;
              want.push(before);
              acc = (before + (vals[i] as number)) >>> 0;
            } else {
              acc = head ? (vals[i] as number) : (acc + (vals[i] as number)) >>> 0;
              want.push(acc);
            }
          }
          const got = new Uint32Array(n);
          await cpuScanByKey(seq, keys, vals, got, u32Fns, exclusive, 9);
          expect(Array.from(got), `n ${n} runs ${maxRun} exclusive ${exclusive}`).toEqual(want);
        }
      }
    }
  });

  it('reduce and unique: every length 1..40, runs of 1..5, of 1..20 and one run', async () => {
    const u32Fns: ByKeyFunctions = { op: plus, keyEq: keyEqual, keyType: 'u32', valueType: 'u32' };
    const u32Plus = (a: number, b: number) => (a + b) >>> 0;
    for (let n = 1; n <= 40; n++) {
      for (const maxRun of [1, 5, 20, 0]) {
        const keys = keysOf(n, maxRun, n * 5 + maxRun);
        const r = rng(n + 3);
        const vals = Uint32Array.from({ length: n }, () => r());
        for (const reduce of [true, false]) {
          const want = refRuns(keys, vals, reduce ? u32Plus : undefined, Object.is);
          const ko = new Uint32Array(n);
          const vo = new Uint32Array(n);
          const what = `n ${n} runs ${maxRun} reduce ${reduce}`;
          expect(await cpuRunsByKey(seq, keys, vals, ko, vo, u32Fns, reduce, tooShort), what).toBe(want.keys.length);
          expect(Array.from(ko.subarray(0, want.keys.length)), what).toEqual(want.keys);
          expect(Array.from(vo.subarray(0, want.keys.length)), what).toEqual(want.values);
        }
      }
    }
  });

  it('the same-run test only where op and eq are short (V8 inlining budget), both paths exact', async () => {
    const same = 'eq(p, k0) && eq(k0, k1) && eq(k1, k2) && eq(k2, k3)';
    const short: ByKeyFunctions = { op: plus, keyEq: keyEqual, keyType: 'u32', valueType: 'u32' };
    // The same operator with a long source (a comment): no same-run test.
    const longPlus = inlineFunction({
      name: 'longPlus',
      arity: 2,
      source: () => `(a, b) => (a + b) >>> 0 /* ${'.'.repeat(80)} */`,
    });
    const long: ByKeyFunctions = { ...short, op: longPlus };
    for (const kind of ['reduce', 'unique'] as const) {
      expect(byKeyKernel(kind, short).source).toContain(same);
      expect(byKeyKernel(kind, long).source).not.toContain(same);
    }
    const n = 1003;
    const keys = keysOf(n, 20, 5);
    const r = rng(9);
    const vals = Uint32Array.from({ length: n }, () => r());
    const want = refRuns(keys, vals, (a: number, b: number) => (a + b) >>> 0, Object.is);
    for (const fns of [short, long]) {
      const ko = new Uint32Array(n);
      const vo = new Uint32Array(n);
      expect(await cpuRunsByKey(seq, keys, vals, ko, vo, fns, true, tooShort)).toBe(want.keys.length);
      expect(Array.from(vo.subarray(0, want.keys.length))).toEqual(want.values);
    }
  });
});
