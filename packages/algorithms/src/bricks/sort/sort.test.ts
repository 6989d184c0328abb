/**
 * The CPU sort bricks (cpuSort: TypedArray#sort, radix seq/par, merge sort seq/par) against simple
 * references: TypedArray#sort's order for keys (-0 before +0, NaN last; descending reverses the
 * numbers, NaN stays last), a stable index sort for pairs. Runs with plain arrays, arrays over
 * SharedArrayBuffer, and with SharedArrayBuffer hidden (a browser page without cross-origin isolation).
 */
import type { NumericType } from '@webdpl/core';
import { type CpuBackend, createPool, sharedMemoryAvailable, type WorkerPool } from '@webdpl/policies';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { greater, less } from '../../sort/comparators';
import { sortReference } from '../../testing/sort-reference';
import { diff, failingPool, rng, sharedCopy } from '../test-data';
import {
  type Before,
  type CpuComparator,
  cpuSort,
  type KeyArray,
  PAR_PAIRS_MIN,
  PAR_RADIX_MIN,
  SEQ_PAIRS_MERGE_MAX,
  SEQ_RADIX_MIN,
} from './index';
import { INSERTION_MAX, LOCAL_MAX } from './radix-kernel';

const pool = createPool({ size: 2 });
afterAll(() => pool.close());
afterEach(() => vi.unstubAllGlobals());

/** `pool` behind a counter of the jobs it was given. */
function countingJobs(pool: WorkerPool): { pool: WorkerPool; jobs(): number } {
  let jobs = 0;
  return {
    pool: {
      size: pool.size,
      run: (task, js) => {
        jobs += js.length;
        return pool.run(task, js);
      },
      close: async () => {},
    },
    jobs: () => jobs,
  };
}

const BACKENDS: { name: string; backend: CpuBackend }[] = [
  { name: 'seq', backend: { kind: 'seq' } },
  { name: 'par tiny chunks', backend: { kind: 'par', pool, tuning: { parallelThreshold: 0, minChunk: 16 } } },
  { name: 'par default', backend: { kind: 'par', pool } },
];

type Kind = 'random' | 'few' | 'specials' | 'skewed' | 'low21' | 'equal' | 'big-bucket';

/** `n` keys of `type`: see Kind (specials: f32 -0/+0/NaN/inf/denormals mixed in). */
function keysOf(type: NumericType, n: number, kind: Kind, seed = 7): KeyArray {
  const r = rng(seed * 1009 + n);
  const a = type === 'u32' ? new Uint32Array(n) : type === 'i32' ? new Int32Array(n) : new Float32Array(n);
  const bits = new Uint32Array(a.buffer);
  const specials = [0x80000000, 0, 0x7fc00000, 0xffc00001, 0x7f800001, 0x7f800000, 0xff800000, 1, 0x80000001];
  for (let i = 0; i < n; i++) {
    const x = r();
    switch (kind) {
      case 'random':
        if (type === 'f32') a[i] = (x / 2 ** 32) * 2e6 - 1e6;
        else bits[i] = x;
        break;
      case 'few':
        if (type === 'f32') a[i] = (x % 5) - 2;
        else bits[i] = (x % 5) * 0x10000001;
        break;
      case 'specials':
        if (type === 'f32') bits[i] = x % 3 === 0 ? (specials[x % specials.length] as number) : r();
        else bits[i] = x % 3 === 0 ? (specials[x % specials.length] as number) : x;
        break;
      case 'skewed':
        bits[i] = x % 4 === 0 ? x : x & 0xfff;
        break;
      case 'low21':
        bits[i] = x & 0x1fffff;
        break;
      case 'equal':
        bits[i] = type === 'f32' ? 0x3f400000 : 12345;
        break;
      case 'big-bucket':
        // Most keys share the top digit and differ below it: one bucket above LOCAL_MAX.
        bits[i] = x % 10 === 0 ? x : (x & 0x1fffff) | 0x40000000;
        break;
    }
  }
  return a;
}

/** -1/0/1 in TypedArray#sort's order (NaN last, -0 before +0), or reversed numbers (NaN still last). */
function order(a: number, b: number, descending: boolean): number {
  const an = Number.isNaN(a);
  const bn = Number.isNaN(b);
  if (an || bn) return an === bn ? 0 : an ? 1 : -1;
  let c = a < b ? -1 : a > b ? 1 : 0;
  if (c === 0 && a === 0) c = Object.is(a, -0) === Object.is(b, -0) ? 0 : Object.is(a, -0) ? -1 : 1;
  return descending ? -c : c;
}

/** Stable reference of sortByKey: the keys' order, ties by input position. */
function pairsReference(keys: KeyArray, values: Uint32Array, descending: boolean): [KeyArray, Uint32Array] {
  const idx = Array.from({ length: keys.length }, (_, i) => i);
  idx.sort((i, j) => order(keys[i] as number, keys[j] as number, descending) || i - j);
  const k = keys.slice() as KeyArray;
  const v = values.slice();
  idx.forEach((from, to) => {
    k[to] = keys[from] as number;
    v[to] = values[from] as number;
  });
  return [k, v];
}

/** The CPU form of `less` / `greater` for keys of `type`, as the sort front makes it. */
function builtin(descending: boolean, type: NumericType): CpuComparator {
  const c = descending ? greater : less;
  return { kind: 'builtin', descending, before: c.js([type, type]) as Before, source: c.jsSource([type, type]) };
}

async function checkSort(
  backend: CpuBackend,
  type: NumericType,
  n: number,
  kind: Kind,
  descending: boolean,
  opts: { pairs?: boolean; shared?: boolean } = {},
): Promise<void> {
  const input = keysOf(type, n, kind);
  const label = `${type} n=${n} ${kind} ${descending ? 'desc' : 'asc'}${opts.pairs ? ' pairs' : ''}${opts.shared ? ' shared' : ''}`;
  let keys = input.slice() as KeyArray;
  let values = opts.pairs ? Uint32Array.from({ length: n }, (_, i) => i) : undefined;
  if (opts.shared) {
    keys = sharedCopy(keys);
    if (values) values = sharedCopy(values);
  }
  await cpuSort(backend, keys, values, type, builtin(descending, type));
  if (values) {
    const [wk, wv] = pairsReference(
      input,
      Uint32Array.from({ length: n }, (_, i) => i),
      descending,
    );
    expect(diff(keys, wk), `${label} keys`).toBe('');
    expect(diff(values, wv), `${label} values (stability)`).toBe('');
  } else {
    expect(diff(keys, sortReference(input, descending)), label).toBe('');
  }
}

const EDGE = [...Array.from({ length: 17 }, (_, i) => i), 100, INSERTION_MAX + 1, 1000];
const THRESHOLDS = [
  SEQ_PAIRS_MERGE_MAX,
  SEQ_PAIRS_MERGE_MAX + 1,
  SEQ_RADIX_MIN - 1,
  SEQ_RADIX_MIN,
  SEQ_RADIX_MIN + 1,
  PAR_RADIX_MIN - 1,
  PAR_RADIX_MIN,
  PAR_PAIRS_MIN,
];
const TYPES: NumericType[] = ['u32', 'i32', 'f32'];
const KINDS: Kind[] = ['random', 'few', 'specials', 'skewed', 'low21', 'equal'];

describe('cpuSort with built-in orders', () => {
  for (const { name, backend } of BACKENDS) {
    it(`${name}: edge sizes, every type, order and data kind, keys and pairs`, async () => {
      for (const type of TYPES)
        for (const descending of [false, true])
          for (const kind of KINDS)
            for (const n of EDGE) {
              await checkSort(backend, type, n, kind, descending);
              await checkSort(backend, type, n, kind, descending, { pairs: true });
            }
    });

    it(`${name}: around the thresholds, plain and shared arrays`, async () => {
      for (const type of TYPES)
        for (const n of THRESHOLDS)
          for (const kind of ['random', 'specials', 'few'] as const) {
            await checkSort(backend, type, n, kind, type === 'i32');
            await checkSort(backend, type, n, kind, false, { pairs: true, shared: true });
          }
    });
  }

  it('large random sizes, seq and par, keys and pairs, plain and shared', async () => {
    for (const { backend } of BACKENDS)
      for (const [type, n] of [
        ['u32', 2 ** 20 + 3],
        ['f32', 2 ** 19 + 17],
        ['i32', 300_001],
      ] as const) {
        await checkSort(backend, type, n, 'random', false);
        await checkSort(backend, type, n, 'specials', true, { pairs: true });
        await checkSort(backend, type, n, 'random', false, { shared: true });
      }
  });

  it('par radix sort: the calling thread claims chunks and buckets with the workers (all of them when no worker runs), not with callerWorks off; a worker error fails the call', async () => {
    // Workers that never run a job (their runs resolve at once): the calling thread does it all.
    const idle: WorkerPool = {
      size: 2,
      run: async (_task, jobs) => new Array(jobs.length).fill(0),
      close: async () => {},
    };
    const failing = failingPool(pool);
    const tuning = { parallelThreshold: 0, minChunk: 64 };
    for (const n of [2, 3, 65, 1000, 40_001]) {
      for (const p of [idle, pool]) {
        const backend: CpuBackend = { kind: 'par', pool: p, tuning };
        await checkSort(backend, 'u32', n, 'random', false, { pairs: true, shared: true });
        await checkSort(backend, 'f32', n, 'specials', true);
      }
      // callerWorks off: pool.size workers per step and the calling thread waits (with workers that
      // never run, nothing is sorted).
      const counting = countingJobs(pool);
      await checkSort(
        { kind: 'par', pool: counting.pool, tuning: { ...tuning, callerWorks: false } },
        'u32',
        n,
        'random',
        false,
        {
          shared: true,
        },
      );
      expect(counting.jobs() % pool.size, `n ${n} callerWorks off`).toBe(0);
      const keys = sharedCopy(keysOf('u32', n, 'random'));
      const before = keys.slice();
      await cpuSort(
        { kind: 'par', pool: idle, tuning: { ...tuning, callerWorks: false } },
        keys,
        undefined,
        'u32',
        builtin(false, 'u32'),
      );
      expect(diff(keys, before), `n ${n} callerWorks off, idle workers`).toBe('');
      await expect(
        cpuSort(
          { kind: 'par', pool: failing, tuning },
          sharedCopy(keysOf('u32', n, 'random')),
          undefined,
          'u32',
          builtin(false, 'u32'),
        ),
      ).rejects.toThrow('worker failed');
    }
  });

  it('a bucket larger than LOCAL_MAX and skewed keys', async () => {
    const n = 8 * LOCAL_MAX + 5;
    for (const { backend } of BACKENDS)
      for (const type of TYPES) {
        await checkSort(backend, type, n, 'big-bucket', false);
        await checkSort(backend, type, n, 'big-bucket', true, { pairs: true });
        await checkSort(backend, type, n, 'low21', false, { pairs: true });
        await checkSort(backend, type, n, 'equal', false, { pairs: true });
      }
  });
});

/** Orders u32 keys by their top 24 bits: many ties, so stability shows. */
const byHigh: CpuComparator = {
  kind: 'function',
  before: (a, b) => a >>> 8 < b >>> 8,
  source: '(a, b) => a >>> 8 < b >>> 8',
};

/** Sorts n random u32 keys (index values along) by `byHigh` on `backend`; checks the stable order. */
async function checkByHigh(backend: CpuBackend, n: number, what: string): Promise<void> {
  const input = keysOf('u32', n, 'random') as Uint32Array;
  const keys = input.slice();
  const values = Uint32Array.from({ length: n }, (_, i) => i);
  await cpuSort(backend, keys, values, 'u32', byHigh);
  const idx = Array.from({ length: n }, (_, i) => i).sort(
    (i, j) => ((input[i] as number) >>> 8) - ((input[j] as number) >>> 8) || i - j,
  );
  expect(diff(values, idx), what).toBe('');
  expect(
    diff(
      keys,
      Uint32Array.from(idx, (i) => input[i] as number),
    ),
    what,
  ).toBe('');
}

describe('cpuSort with user comparators', () => {
  for (const { name, backend } of BACKENDS) {
    it(`${name}: stable merge sort by a comparator, edge and random sizes`, async () => {
      for (const n of [...EDGE, 4097, PAR_RADIX_MIN + 3]) await checkByHigh(backend, n, `n=${n}`);
    });

    it(`${name}: a comparator that throws leaves the caller's arrays as they were`, async () => {
      for (const n of [100, 5000, PAR_RADIX_MIN + 3]) {
        const input = keysOf('f32', n, 'random');
        const keys = input.slice();
        const values = Uint32Array.from({ length: n }, (_, i) => i);
        let calls = 0;
        // Compiled once per thread: its counter makes it throw after 50 comparisons.
        const source =
          '(() => { let c = 0; return (a, b) => { if (++c > 50) throw new Error("boom"); return a < b; }; })()';
        const comp: CpuComparator = {
          kind: 'function',
          before: (a, b) => {
            if (++calls > n) throw new Error('boom');
            return a < b;
          },
          source,
        };
        await expect(cpuSort(backend, keys, values, 'f32', comp)).rejects.toThrow('boom');
        expect(diff(keys, input), `n=${n} keys`).toBe('');
        expect(
          diff(
            values,
            Uint32Array.from({ length: n }, (_, i) => i),
          ),
          `n=${n} values`,
        ).toBe('');
      }
    });
  }
});

describe('par merge sort (user comparators) on the pool', () => {
  it('the calling thread claims every round with pool.size - 1 workers (all of it when no worker runs); with callerWorks off the workers get the jobs themselves', async () => {
    // Workers that never run a job (their runs resolve at once): the calling thread does it all.
    const idle: WorkerPool = {
      size: 2,
      run: async (_task, jobs) => new Array(jobs.length).fill(0),
      close: async () => {},
    };
    /** `pool`, recording the ops of the jobs of each run. */
    const recording = (): { pool: WorkerPool; runs: string[][] } => {
      const runs: string[][] = [];
      return {
        pool: {
          size: pool.size,
          run: (task, jobs) => {
            runs.push(jobs.map((j) => String((j as { op?: unknown }).op)));
            return pool.run(task, jobs);
          },
          close: async () => {},
        },
        runs,
      };
    };
    const tuning = { parallelThreshold: 0, minChunk: 16 };
    for (const n of [65, 1000, 40_001]) {
      const on = recording();
      const off = recording();
      for (const [p, callerWorks] of [
        [idle, true],
        [pool, true],
        [on.pool, true],
        [off.pool, false],
      ] as const) {
        await checkByHigh(
          { kind: 'par', pool: p, tuning: { ...tuning, callerWorks } },
          n,
          `n=${n} callerWorks ${callerWorks}`,
        );
      }
      // Every round (the chunk sorts, each merge level) hands the pool pool.size - 1 claim jobs.
      expect(on.runs.length, `n=${n} rounds`).toBeGreaterThan(1);
      for (const r of on.runs) expect(r, `n=${n}`).toEqual(new Array(pool.size - 1).fill('claim'));
      // callerWorks off: the jobs themselves (sorts, then merges), none claimed.
      expect(off.runs.length).toBe(on.runs.length);
      expect(off.runs[0]?.every((op) => op === 'sort')).toBe(true);
      expect(off.runs.flat().includes('claim')).toBe(false);
    }
  });
});

describe('cpuSort without SharedArrayBuffer', () => {
  it('hiding it makes shared memory unavailable (as in a page without cross-origin isolation)', () => {
    vi.stubGlobal('SharedArrayBuffer', undefined);
    expect(sharedMemoryAvailable()).toBe(false);
  });

  for (const { name, backend } of BACKENDS) {
    it(`${name}: every path sorts on the calling thread with plain memory (f32 with -0 and NaN)`, async () => {
      vi.stubGlobal('SharedArrayBuffer', undefined);
      for (const type of TYPES)
        for (const n of [0, 1, 2, 16, 300, SEQ_RADIX_MIN, SEQ_RADIX_MIN + 1, PAR_RADIX_MIN + 7]) {
          await checkSort(backend, type, n, 'specials', false);
          await checkSort(backend, type, n, 'specials', true, { pairs: true });
          await checkSort(backend, type, n, 'random', false, { pairs: true });
        }
      const input = keysOf('u32', PAR_RADIX_MIN + 7, 'random');
      const keys = input.slice();
      const comp: CpuComparator = { kind: 'function', before: (a, b) => a > b, source: '(a, b) => a > b' };
      await cpuSort(backend, keys, undefined, 'u32', comp);
      expect(diff(keys, sortReference(input, true))).toBe('');
    });
  }
});
