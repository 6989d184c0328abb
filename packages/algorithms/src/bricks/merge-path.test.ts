/**
 * Merge-path pieces on the pool (merge-path.ts): merge, mergeByKey and the four set operations give
 * seq's results exactly (stable ties, TypedArray#sort order for f32 with -0 and NaN, runs of equal
 * elements across piece boundaries) on plain and shared arrays, with pieces of 1 and 16 elements
 * (workers alone and with the calling thread) and the default tuning; set operations over plain
 * arrays stay on the calling thread under the default tuning (merges stage them); without
 * SharedArrayBuffer nothing reaches the pool.
 */
import type { HostArray, NumericType } from '@webdpl/core';
import { allocShared, type CpuBackend, createPool } from '@webdpl/policies';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { checkComparator, cpuComparator } from '../sort/comparator-arg';
import { greater } from '../sort/comparators';
import { cpuMerge } from './merge';
import { MERGE_PAR_MIN, mergeCuts, mergePieces, type PieceJob, pieceTask, setSource } from './merge-path';
import { cpuSetOp, type SetOp } from './set-ops';
import type { KeyArray } from './sort/index';
import { alloc, countingPool, diff, failingPool, sharedCopy, tellingPool, testBackends } from './test-data';
import { sortedData } from './test-sorted';

const inner = createPool({ size: 2 });
afterAll(() => inner.close());
const counting = countingPool(inner);
const seq: CpuBackend = { kind: 'seq' };
/** par with chunks of 1 (workers alone), of 16, and the default tuning. */
const pars = testBackends(counting.pool).filter((b) => b.backend.kind === 'par');
const OPS: readonly SetOp[] = ['union', 'intersection', 'difference', 'symmetricDifference'];
/** Edge sizes and sizes around the piece boundaries of the tunings above. */
const SIZES: readonly number[] = [0, 1, 2, 3, 7, 16, 17, 33, 63, 64, 65, 128, 129, 255, 1000, 4099, 40001];

function comparatorOf(type: NumericType, descending: boolean) {
  return cpuComparator(checkComparator(descending ? greater : undefined, 'comp'), type);
}

const shareIf = <T extends HostArray>(a: T, shared: boolean): T => (shared ? sharedCopy(a) : a);

/**
 * Checks seq merge and mergeByKey of a and b against the textbook stable merge over comp's `before`
 * (ties: a's element first), values numbering each input's elements.
 */
async function checkSeqMerge(
  type: NumericType,
  comp: ReturnType<typeof comparatorOf>,
  a: KeyArray,
  b: KeyArray,
  at: string,
): Promise<void> {
  const na = a.length;
  const nb = b.length;
  const va = Uint32Array.from({ length: na }, (_, i) => i);
  const vb = Uint32Array.from({ length: nb }, (_, i) => 1e6 + i);
  const wantK = alloc(type, na + nb) as KeyArray;
  const wantV = new Uint32Array(na + nb);
  let i = 0;
  let j = 0;
  for (let d = 0; d < na + nb; d++) {
    const fromB = i >= na || (j < nb && comp.before(b[j] as number, a[i] as number));
    wantK[d] = fromB ? (b[j] as number) : (a[i] as number);
    wantV[d] = fromB ? (vb[j++] as number) : (va[i++] as number);
  }
  const ko = alloc(type, na + nb) as KeyArray;
  const vo = new Uint32Array(na + nb);
  await cpuMerge(seq, a, b, ko, type, comp, { a: va, b: vb, out: vo });
  expect(diff(ko, wantK), at).toBe('');
  expect(diff(vo, wantV), `${at} values`).toBe('');
  const keysOnly = alloc(type, na + nb) as KeyArray;
  await cpuMerge(seq, a, b, keysOnly, type, comp);
  expect(diff(keysOnly, wantK), `${at} keys only`).toBe('');
}

describe('merge-path pieces', () => {
  afterEach(() => vi.unstubAllGlobals());

  for (const type of ['u32', 'i32', 'f32'] as const) {
    for (const descending of [false, true]) {
      it(`${type} ${descending ? 'greater' : 'less'}: set operations and merges match seq, plain and shared`, async () => {
        const comp = comparatorOf(type, descending);
        for (const [k, na] of SIZES.entries()) {
          const nb = k % 4 === 3 ? 0 : (na * 7 + k) % (na + 40);
          // Few distinct values (long runs of equal elements across pieces) or many.
          const spread = k % 2 === 0 ? 5 : 3 * (na + nb) + 3;
          const a = sortedData(type, na, k + 1, spread, descending);
          const b = sortedData(type, nb, k + 101, spread, descending);
          const va = Uint32Array.from({ length: na }, (_, i) => i);
          const vb = Uint32Array.from({ length: nb }, (_, i) => 1e6 + i);
          for (const op of OPS) {
            const want = alloc(type, na + nb) as KeyArray;
            const m = await cpuSetOp(seq, op, a, b, want, comp);
            for (const { name, backend } of pars) {
              for (const shared of [false, true]) {
                const out = shareIf(alloc(type, na + nb + 1).fill(7), shared) as KeyArray;
                const got = await cpuSetOp(backend, op, shareIf(a, shared), shareIf(b, shared), out, comp);
                const at = `${op} ${name} ${shared ? 'shared' : 'plain'} na=${na} nb=${nb}`;
                expect(got, at).toBe(m);
                expect(diff(out.subarray(0, m), want.subarray(0, m)), at).toBe('');
                expect(out[na + nb], `${at}: past the end`).toBe(7);
              }
            }
          }
          const wantK = alloc(type, na + nb) as KeyArray;
          const wantV = new Uint32Array(na + nb);
          await cpuMerge(seq, a, b, wantK, type, comp, { a: va, b: vb, out: wantV });
          for (const { name, backend } of pars) {
            for (const shared of [false, true]) {
              const ko = shareIf(alloc(type, na + nb), shared) as KeyArray;
              const vo = shareIf(new Uint32Array(na + nb), shared);
              const sa = shareIf(a, shared);
              const sb = shareIf(b, shared);
              await cpuMerge(backend, sa, sb, ko, type, comp, {
                a: shareIf(va, shared),
                b: shareIf(vb, shared),
                out: vo,
              });
              const at = `mergeByKey ${name} ${shared ? 'shared' : 'plain'} na=${na} nb=${nb}`;
              expect(diff(ko, wantK), at).toBe('');
              expect(diff(vo, wantV), `${at} (values: stable order)`).toBe('');
              const keysOnly = shareIf(alloc(type, na + nb), shared) as KeyArray;
              await cpuMerge(backend, sa, sb, keysOnly, type, comp);
              expect(diff(keysOnly, wantK), `merge ${at}`).toBe('');
            }
          }
        }
      });
    }
  }

  it('seq merges match a reference merge (every pair of short lengths, runs of ties, f32 -0 and NaN)', async () => {
    for (const type of ['u32', 'i32', 'f32'] as const) {
      for (const descending of [false, true]) {
        const comp = comparatorOf(type, descending);
        const pairs: [number, number][] = [];
        for (let na = 0; na <= 6; na++) for (let nb = 0; nb <= 6; nb++) pairs.push([na, nb]);
        pairs.push([1000, 33], [17, 4099], [4099, 4099]);
        for (const [k, [na, nb]] of pairs.entries()) {
          const spread = k % 2 === 0 ? 5 : 3 * (na + nb) + 3;
          const a = sortedData(type, na, k + 1, spread, descending);
          const b = sortedData(type, nb, k + 101, spread, descending);
          await checkSeqMerge(type, comp, a, b, `${type} ${descending ? 'greater' : 'less'} na=${na} nb=${nb}`);
        }
      }
    }
  });

  it('seq merges of alternating runs match a reference (the integer kernel: probe, branchy phase, both exits)', async () => {
    // Keys dealt to a and b in alternating runs of r (the probe's 64 steps, the branchy phase's 512,
    // one input running out in either phase), ties between the inputs at every fifth key.
    for (const type of ['u32', 'i32', 'f32'] as const) {
      for (const descending of [false, true]) {
        const comp = comparatorOf(type, descending);
        for (const r of [1, 2, 7, 63, 64, 65, 200, 511, 512, 513, 700, 3000]) {
          for (const total of [3 * r + 5, 2000 + r]) {
            const keys = Array.from(
              { length: total },
              (_, i) => (type === 'i32' ? i - 1000 : i) - (i % 5 === 1 ? 1 : 0),
            );
            if (descending) keys.reverse();
            const fromA = (i: number) => Math.floor(i / r) % 2 === 0;
            const Ctor = type === 'u32' ? Uint32Array : type === 'i32' ? Int32Array : Float32Array;
            const ka: KeyArray = Ctor.from(keys.filter((_, i) => fromA(i)));
            const kb: KeyArray = Ctor.from(keys.filter((_, i) => !fromA(i)));
            await checkSeqMerge(
              type,
              comp,
              ka,
              kb,
              `${type} ${descending ? 'greater' : 'less'} runs of ${r}, ${total} keys`,
            );
            await checkSeqMerge(
              type,
              comp,
              kb,
              ka,
              `${type} ${descending ? 'greater' : 'less'} runs of ${r}, ${total} keys, b first`,
            );
          }
        }
      }
    }
  });

  it('uses the pool for shared arrays by default, never for plain arrays', async () => {
    const comp = comparatorOf('u32', false);
    // a and b together at MERGE_PAR_MIN, the least the default tuning takes to the pool.
    const n = MERGE_PAR_MIN / 2;
    const a = sortedData('u32', n, 1, 1000, false);
    const b = sortedData('u32', n, 2, 1000, false);
    const want = new Uint32Array(2 * n);
    const m = await cpuSetOp(seq, 'union', a, b, want, comp);
    const par: CpuBackend = { kind: 'par', pool: counting.pool };
    expect(mergePieces(par, 2 * n)).toBeGreaterThan(1);
    expect(mergePieces(par, 2 * n - 1)).toBe(0);
    counting.reset();
    const out = new Uint32Array(2 * n);
    expect(await cpuSetOp(par, 'union', a, b, out, comp)).toBe(m);
    expect(counting.runs(), 'plain arrays, set operation').toBe(0);
    await cpuMerge(par, a, b, out, 'u32', comp);
    expect(counting.runs(), 'plain arrays, merge').toBe(0);
    const sa = allocShared('u32', n);
    const sb = allocShared('u32', n);
    sa.set(a);
    sb.set(b);
    const so = allocShared('u32', 2 * n);
    expect(await cpuSetOp(par, 'union', sa, sb, so, comp)).toBe(m);
    expect(diff(so.subarray(0, m), want.subarray(0, m))).toBe('');
    await cpuMerge(par, sa, sb, so, 'u32', comp);
    expect(counting.runs(), 'shared arrays').toBe(2);
    // Shared keys, one plain array of values: seq, and the same result.
    const wantV = new Uint32Array(2 * n);
    const wantK = new Uint32Array(2 * n);
    const va = Uint32Array.from({ length: n }, (_, i) => i);
    const vb = Uint32Array.from({ length: n }, (_, i) => n + i);
    await cpuMerge(seq, a, b, wantK, 'u32', comp, { a: va, b: vb, out: wantV });
    const vo = new Uint32Array(2 * n);
    await cpuMerge(par, sa, sb, so, 'u32', comp, { a: sharedCopy(va), b: sharedCopy(vb), out: vo });
    expect(counting.runs(), 'a plain output of values').toBe(2);
    expect(diff(so, wantK)).toBe('');
    expect(diff(vo, wantV)).toBe('');
    const svo = allocShared('u32', 2 * n);
    await cpuMerge(par, sa, sb, so, 'u32', comp, { a: sharedCopy(va), b: sharedCopy(vb), out: svo });
    expect(counting.runs(), 'all shared, merge by key').toBe(3);
    expect(diff(svo, wantV)).toBe('');
  });

  it('cuts set-operation pieces only at the starts of classes of equivalent elements', () => {
    const comp = comparatorOf('u32', false);
    const a = Uint32Array.from([1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3]);
    const b = Uint32Array.from([1, 1, 2, 2, 2, 3, 3, 3, 3, 3]);
    const cuts = mergeCuts(a, b, 8, comp.before, true);
    for (let p = 2; p + 2 < cuts.length; p += 2) {
      const i = cuts[p] as number;
      const j = cuts[p + 1] as number;
      const next = Math.min(i < a.length ? (a[i] as number) : 9, j < b.length ? (b[j] as number) : 9);
      if (i > 0) expect(a[i - 1], `cut ${p / 2} in a`).toBeLessThan(next);
      if (j > 0) expect(b[j - 1], `cut ${p / 2} in b`).toBeLessThan(next);
    }
    expect(Array.from(cuts.subarray(-2))).toEqual([a.length, b.length]);
  });

  it('cuts at the stable merge split of each diagonal, moved back to its class start (set operations), empty pieces kept', () => {
    const comp = comparatorOf('u32', false);
    for (const [na, nb, distinct] of [
      [0, 50, 10],
      [50, 0, 10],
      [1, 1, 1],
      [300, 260, 40],
      [1000, 3000, 7],
      [5000, 4000, 100000],
      [2000, 2000, 1],
    ] as const) {
      const a = sortedData('u32', na, na + 1, distinct, false) as Uint32Array;
      const b = sortedData('u32', nb, nb + 2, distinct, false) as Uint32Array;
      // The stable merge's source of each position (ties: a first).
      const fromA: boolean[] = [];
      for (let i = 0, j = 0; i + j < na + nb; ) {
        const takeB = i >= na || (j < nb && comp.before(b[j] as number, a[i] as number));
        fromA.push(!takeB);
        if (takeB) j++;
        else i++;
      }
      for (const pieces of [1, 2, 3, 7, 64]) {
        for (const classes of [false, true]) {
          const cut = mergeCuts(a, b, pieces, comp.before, classes);
          const at = `na ${na} nb ${nb} distinct ${distinct} pieces ${pieces} classes ${classes}`;
          expect(cut.length, at).toBe(2 * (pieces + 1));
          expect([cut[0], cut[1], cut[2 * pieces], cut[2 * pieces + 1]], at).toEqual([0, 0, na, nb]);
          for (let k = 1; k < pieces; k++) {
            const d = Math.floor((k * (na + nb)) / pieces);
            let i = fromA.slice(0, d).filter((x) => x).length;
            let j = d - i;
            if (classes) {
              const v = fromA[d] ? (a[i] as number) : (b[j] as number);
              i = a.findIndex((x) => !comp.before(x, v));
              j = b.findIndex((x) => !comp.before(x, v));
              if (i < 0) i = na;
              if (j < 0) j = nb;
            }
            expect([cut[2 * k], cut[2 * k + 1]], `${at} cut ${k}`).toEqual([i, j]);
          }
        }
      }
    }
  });

  it('a worker given the job before the splits waits for go, then runs with them', async () => {
    const comp = comparatorOf('u32', false);
    const a = sharedCopy(sortedData('u32', 3000, 5, 400, false) as Uint32Array);
    const b = sharedCopy(sortedData('u32', 2600, 6, 400, false) as Uint32Array);
    for (const op of ['union', 'intersection'] as const) {
      const want = new Uint32Array(5600);
      const m = await cpuSetOp(seq, op, a, b, want, comp);
      const P = 9;
      const words = new Int32Array(new SharedArrayBuffer(4 * (3 + 2 * P)));
      const cut = new Int32Array(new SharedArrayBuffer(8 * (P + 1)));
      const out = sharedCopy(new Uint32Array(5600));
      const job: PieceJob = {
        src: setSource(comp.source as string, op, 'u32'),
        set: 1,
        both: op === 'union' ? 1 : 0,
        claim: 1,
        tail: 0,
        ctl: words.subarray(0, 2 + 2 * P),
        go: words.subarray(2 + 2 * P),
        cut,
        a,
        b,
        va: undefined,
        vb: undefined,
        out,
        outV: undefined,
        scr: sharedCopy(new Uint32Array(5600)),
      };
      const run = inner.run(pieceTask, [job]);
      await new Promise((r) => setTimeout(r, 30));
      cut.set(mergeCuts(a, b, P, comp.before, true));
      Atomics.store(words, 2 + 2 * P, 1);
      Atomics.notify(words, 2 + 2 * P);
      expect(await run, op).toEqual([P]);
      expect(diff(out.subarray(0, m), want.subarray(0, m)), op).toBe('');
    }
  });

  it('claims set-operation pieces in pairs and then one at a time: every piece runs once, in place', async () => {
    // One thread alone (pieceTask on the calling thread): every claim's pieces run, none twice,
    // whatever the number of pieces against the claim and the tail.
    const comp = comparatorOf('u32', false);
    const a = sharedCopy(sortedData('u32', 300, 5, 40, false) as Uint32Array);
    const b = sharedCopy(sortedData('u32', 260, 6, 40, false) as Uint32Array);
    for (const op of OPS) {
      const want = new Uint32Array(560);
      const m = await cpuSetOp(seq, op, a, b, want, comp);
      for (const pieces of [1, 2, 3, 4, 5, 6, 7, 9, 12]) {
        for (const [claim, tail] of [
          [2, 2],
          [2, 0],
          [3, 1],
          [1, 0],
        ] as const) {
          const cut = mergeCuts(a, b, pieces, comp.before, true);
          const P = (cut.length >> 1) - 1;
          const out = sharedCopy(new Uint32Array(561).fill(7));
          const job: PieceJob = {
            src: setSource(comp.source as string, op, 'u32'),
            set: 1,
            both: op === 'union' || op === 'symmetricDifference' ? 1 : 0,
            claim,
            tail,
            ctl: new Int32Array(new SharedArrayBuffer(4 * (2 + 2 * P))),
            cut,
            a,
            b,
            va: undefined,
            vb: undefined,
            out,
            outV: undefined,
            scr: sharedCopy(new Uint32Array(560)),
          };
          const at = `${op} ${P} pieces, claim ${claim}, tail ${tail}`;
          expect(pieceTask(job), at).toBe(P);
          let written = 0;
          for (let p = 0; p < P; p++) written += (job.ctl[2 + p] as number) - 1;
          expect(written, at).toBe(m);
          expect(diff(out.subarray(0, m), want.subarray(0, m)), at).toBe('');
          expect(out[m], `${at}: past the result`).toBe(7);
        }
      }
    }
  });

  it("returns without the workers' replies only once every worker returned; a worker's error still fails the call", async () => {
    const comp = comparatorOf('u32', false);
    const n = 1 << 15;
    const a = sharedCopy(sortedData('u32', n, 7, 5000, false) as Uint32Array);
    const b = sharedCopy(sortedData('u32', n - 77, 8, 5000, false) as Uint32Array);
    const va = sharedCopy(Uint32Array.from({ length: a.length }, (_, i) => i));
    const vb = sharedCopy(Uint32Array.from({ length: b.length }, (_, i) => 1e6 + i));
    const telling = tellingPool(inner);
    const failing = failingPool(inner);
    const tuning = { parallelThreshold: 0, minChunk: 1024 };
    const total = a.length + b.length;
    type Call = (backend: CpuBackend, out: Uint32Array, outV: Uint32Array) => Promise<number>;
    const mergeByKey: Call = async (backend, out, outV) => {
      await cpuMerge(backend, a, b, out, 'u32', comp, { a: va, b: vb, out: outV });
      return total;
    };
    const calls: [string, Call][] = [
      ...OPS.map((op): [string, Call] => [op, (backend, out) => cpuSetOp(backend, op, a, b, out, comp)]),
      ['mergeByKey', mergeByKey],
    ];
    for (const [what, call] of calls) {
      const want = new Uint32Array(total);
      const wantV = new Uint32Array(total);
      const m = await call(seq, want, wantV);
      telling.reset();
      // Back to back: each call's workers may still owe their reply to the call before.
      for (let rep = 0; rep < 20; rep++) {
        const out = allocShared('u32', total).fill(7);
        const outV = allocShared('u32', total).fill(7);
        expect(await call({ kind: 'par', pool: telling.pool, tuning }, out, outV), what).toBe(m);
        expect(diff(out.subarray(0, m), want.subarray(0, m)), what).toBe('');
        expect(
          out.subarray(m).every((x) => x === 7),
          `${what}: past the result`,
        ).toBe(true);
        if (what === 'mergeByKey') expect(diff(outV, wantV), what).toBe('');
      }
      expect(telling.told(), what).toBeGreaterThan(0);
      for (let rep = 0; rep < 5; rep++) {
        const out = allocShared('u32', total);
        await expect(call({ kind: 'par', pool: failing, tuning }, out, out), what).rejects.toThrow('worker failed');
      }
    }
  });

  it('without SharedArrayBuffer runs on the calling thread', async () => {
    const comp = comparatorOf('f32', false);
    const a = sortedData('f32', 5000, 3, 50, false);
    const b = sortedData('f32', 4000, 4, 50, false);
    const want = new Float32Array(9000);
    const wantM = new Float32Array(9000);
    const m = await cpuSetOp(seq, 'symmetricDifference', a, b, want, comp);
    await cpuMerge(seq, a, b, wantM, 'f32', comp);
    vi.stubGlobal('SharedArrayBuffer', undefined);
    counting.reset();
    const par = pars[1]?.backend as CpuBackend;
    const out = new Float32Array(9000);
    expect(await cpuSetOp(par, 'symmetricDifference', a, b, out, comp)).toBe(m);
    expect(diff(out.subarray(0, m), want.subarray(0, m))).toBe('');
    await cpuMerge(par, a, b, out, 'f32', comp);
    expect(diff(out, wantM)).toBe('');
    expect(counting.runs()).toBe(0);
  });
});
