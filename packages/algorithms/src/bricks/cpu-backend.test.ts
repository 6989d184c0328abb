import { plus } from '@webdpl/core';
import {
  allocShared,
  CHUNKS_PER_WORKER,
  type CpuBackend,
  cpuTuning,
  createPool,
  DEFAULT_MIN_CHUNK,
  DEFAULT_PARALLEL_THRESHOLD,
  isShared,
  parallelChunks,
  planParallel,
  toShared,
  type WorkerPool,
} from '@webdpl/policies';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { cpuFindFirst } from './find';
import { cpuFill, MAP_PARALLEL_MIN } from './map';
import { cpuCountIf, cpuReduce, cpuTransformReduce } from './reduce';
import { cpuExclusiveScan, cpuInclusiveScan } from './scan';
import {
  acquireScratch,
  dropScratch,
  IDLE_RELEASE_MS,
  idleRelease,
  MAX_PER_SIZE,
  MAX_RETAINED_BUFFERS,
  MAX_RETAINED_BYTES,
  releaseScratch,
  retainedScratchBytes,
} from './scratch';
import { countingPool } from './test-data';
import { equals, inlineFunction, mod7is3, times3plus1 } from './test-functions';
import { cpuForEach, cpuTransform } from './transform';

describe('parallelChunks', () => {
  it('covers [0, n) in order with contiguous, non-empty chunks', () => {
    for (const size of [1, 2, 3, 16]) {
      for (const minChunk of [1, 7, 16, 1000]) {
        for (const n of [0, 1, 2, 3, 15, 16, 17, 100, 255, 256, 1000, 4097, 2 ** 20 + 5]) {
          const chunks = parallelChunks({ size }, n, minChunk);
          if (n === 0) {
            expect(chunks).toEqual([]);
            continue;
          }
          expect(chunks[0]?.begin).toBe(0);
          expect(chunks.at(-1)?.end).toBe(n);
          for (let i = 0; i < chunks.length; i++) {
            const c = chunks[i] as { begin: number; end: number };
            expect(c.end).toBeGreaterThan(c.begin);
            if (i > 0) expect(c.begin).toBe(chunks[i - 1]?.end);
            if (chunks.length > 1) expect(c.end - c.begin).toBeGreaterThanOrEqual(Math.min(minChunk, n) - 16);
          }
          expect(chunks.length).toBeLessThanOrEqual(size * CHUNKS_PER_WORKER);
        }
      }
    }
  });

  it('balances sizes and aligns long chunks to 16 elements', () => {
    const chunks = parallelChunks({ size: 2 }, 2 ** 24 + 3, 1 << 14);
    expect(chunks).toHaveLength(2 * CHUNKS_PER_WORKER);
    const sizes = chunks.map((c) => c.end - c.begin);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(32);
    for (const c of chunks.slice(1)) expect(c.begin % 16).toBe(0);
  });

  it('checks its arguments', () => {
    expect(() => parallelChunks({ size: 2 }, -1, 1)).toThrow(/^n:/);
    expect(() => parallelChunks({ size: 2 }, 1.5, 1)).toThrow(/^n:/);
    expect(() => parallelChunks({ size: 2 }, 10, 0)).toThrow(/^minChunk:/);
  });
});

describe('planParallel and tuning', () => {
  const pool = { size: 2 } as WorkerPool;
  it('seq never chunks; par chunks from the threshold on', () => {
    expect(planParallel({ kind: 'seq' }, 1e8)).toBeUndefined();
    const par: CpuBackend = { kind: 'par', pool };
    expect(cpuTuning(par)).toEqual({
      parallelThreshold: DEFAULT_PARALLEL_THRESHOLD,
      minChunk: DEFAULT_MIN_CHUNK,
      callerWorks: true,
    });
    expect(planParallel(par, DEFAULT_PARALLEL_THRESHOLD - 1)).toBeUndefined();
    expect(planParallel(par, DEFAULT_PARALLEL_THRESHOLD)?.length).toBeGreaterThan(1);
    const tiny: CpuBackend = { kind: 'par', pool, tuning: { parallelThreshold: 0, minChunk: 1 } };
    expect(planParallel(tiny, 1)).toBeUndefined();
    expect(planParallel(tiny, 2)).toHaveLength(2);
    expect(planParallel(tiny, 100)).toHaveLength(Math.min(100, 2 * CHUNKS_PER_WORKER));
    expect(cpuTuning({ kind: 'par', pool, tuning: { minChunk: 0, parallelThreshold: true, callerWorks: 1 } })).toEqual(
      cpuTuning(par),
    );
    expect(cpuTuning({ kind: 'par', pool, tuning: { callerWorks: false } }).callerWorks).toBe(false);
  });
});

describe('engines on par really use the pool (and seq never does)', () => {
  const inner = createPool({ size: 2 });
  afterAll(() => inner.close());
  const counting = countingPool(inner);
  const par: CpuBackend = { kind: 'par', pool: counting.pool, tuning: { parallelThreshold: 64, minChunk: 8 } };
  const calls: [string, number, (b: CpuBackend, n: number) => Promise<unknown>][] = [
    ['transform', 1, (b, n) => cpuTransform(b, new Uint32Array(n), new Uint32Array(n), times3plus1)],
    ['forEach', 1, (b, n) => cpuForEach(b, new Uint32Array(n), times3plus1)],
    ['reduce', 1, (b, n) => cpuReduce(b, new Uint32Array(n), 0, plus)],
    ['transformReduce', 1, (b, n) => cpuTransformReduce(b, new Uint32Array(n), 0, plus, times3plus1)],
    ['countIf', 1, (b, n) => cpuCountIf(b, new Uint32Array(n), mod7is3)],
    ['findFirst', 1, (b, n) => cpuFindFirst(b, new Uint32Array(n), equals(1))],
    ['inclusiveScan', 2, (b, n) => cpuInclusiveScan(b, new Uint32Array(n), new Uint32Array(n), plus)],
    ['exclusiveScan', 2, (b, n) => cpuExclusiveScan(b, new Uint32Array(n), new Uint32Array(n), plus)],
  ];
  for (const [name, expected, call] of calls) {
    it(name, async () => {
      counting.reset();
      await call({ kind: 'seq' }, 1000);
      expect(counting.runs()).toBe(0);
      await call(par, 63);
      expect(counting.runs()).toBe(0);
      await call(par, 1000);
      expect(counting.runs()).toBe(expected);
    });
  }
});

describe('fill, iota and copy on par', () => {
  const inner = createPool({ size: 2 });
  afterAll(() => inner.close());
  const counting = countingPool(inner);
  const par: CpuBackend = { kind: 'par', pool: counting.pool, tuning: { parallelThreshold: 64, minChunk: 8 } };
  it('fill, iota and copy on shared arrays from MAP_PARALLEL_MIN elements', async () => {
    const n = MAP_PARALLEL_MIN;
    const y = allocShared('u32', n);
    const x = allocShared('u32', n).fill(3);
    await cpuFill(par, 0, y, n - 1, 1, 'u32');
    await cpuFill(par, 0, new Uint32Array(n), n, 1, 'u32');
    expect(counting.runs()).toBe(0);
    await cpuFill(par, 0, y, n, 7, 'u32');
    expect(counting.runs()).toBe(1);
    expect(y.every((v) => v === 7)).toBe(true);
    counting.reset();
    await cpuFill(par, 1, y, n - 1, 1, 'u32');
    await cpuFill(par, 2, y, n - 1, 0, 'u32', x);
    await cpuFill(par, 2, new Uint32Array(n), n, 0, 'u32', x);
    expect(counting.runs()).toBe(0);
    await cpuFill(par, 1, y, n, 1, 'u32');
    expect(counting.runs()).toBe(1);
    expect(y[n - 1]).toBe(n);
    await cpuFill(par, 2, y, n, 0, 'u32', x);
    expect(counting.runs()).toBe(2);
    expect(y[n - 1]).toBe(3);
  });
});

describe('shared memory helpers', () => {
  it('toShared copies plain arrays and passes shared ones through', () => {
    const plain = new Float32Array([1.5, 2.5, 3.5]);
    const s = toShared(plain);
    expect(s).not.toBe(plain);
    expect(s).toBeInstanceOf(Float32Array);
    expect(isShared(s)).toBe(true);
    expect(isShared(plain)).toBe(false);
    expect(Array.from(s)).toEqual([1.5, 2.5, 3.5]);
    expect(toShared(s)).toBe(s);
    const sub = new Int32Array([1, 2, 3, 4]).subarray(1, 3);
    const sc = toShared(sub);
    expect(Array.from(sc)).toEqual([2, 3]);
    expect(sc.byteOffset).toBe(0);
  });

  it('allocShared gives zeroed shared arrays of the type', () => {
    const a = allocShared('u32', 5);
    expect(a).toBeInstanceOf(Uint32Array);
    expect(isShared(a)).toBe(true);
    expect(Array.from(a)).toEqual([0, 0, 0, 0, 0]);
    expect(allocShared('i32', 1)).toBeInstanceOf(Int32Array);
    expect(allocShared('f32', 0)).toBeInstanceOf(Float32Array);
  });
});

describe('staging scratch', () => {
  it('keeps large staging buffers for the next call, up to the cap', () => {
    dropScratch();
    const a = acquireScratch(4 << 20);
    expect(a.byteLength).toBe(4 << 20);
    releaseScratch(a);
    expect(retainedScratchBytes()).toBe(4 << 20);
    expect(acquireScratch(3 << 20)).toBe(a); // fits without wasting half
    expect(retainedScratchBytes()).toBe(0);
    releaseScratch(a);
    expect(acquireScratch(1 << 20)).not.toBe(a); // would waste more than half
    releaseScratch(new SharedArrayBuffer(1024)); // small: not kept
    expect(retainedScratchBytes()).toBe(4 << 20);
    // Sizes from 64 KiB on are powers of two; other sizes are not kept.
    expect(acquireScratch((1 << 20) + 4).byteLength).toBe(2 << 20);
    releaseScratch(new SharedArrayBuffer(3 << 20));
    expect(retainedScratchBytes()).toBe(4 << 20);
    // At most MAX_PER_SIZE of one size, and MAX_RETAINED_BUFFERS in all (the oldest go first).
    for (let i = 0; i < 40; i++) releaseScratch(new SharedArrayBuffer(1 << 16));
    expect(retainedScratchBytes()).toBe((4 << 20) + MAX_PER_SIZE * (1 << 16));
    for (let k = 0; k < 10; k++) {
      for (let i = 0; i < MAX_PER_SIZE; i++) releaseScratch(new SharedArrayBuffer(1 << (16 + k)));
    }
    let kept = 0;
    for (let k = 10 - MAX_RETAINED_BUFFERS / MAX_PER_SIZE; k < 10; k++) kept += MAX_PER_SIZE * (1 << (16 + k));
    expect(retainedScratchBytes()).toBe(kept);
    dropScratch();
    releaseScratch(a);
    expect(retainedScratchBytes()).toBe(4 << 20);
    releaseScratch(new SharedArrayBuffer(MAX_RETAINED_BYTES));
    expect(retainedScratchBytes()).toBeLessThanOrEqual(MAX_RETAINED_BYTES);
    dropScratch();
    expect(retainedScratchBytes()).toBe(0);
  });

  it('drops kept buffers IDLE_RELEASE_MS after the last use, not the first, with one timer armed per idle period', () => {
    vi.useFakeTimers();
    try {
      dropScratch();
      const a = acquireScratch(1 << 20);
      releaseScratch(a);
      vi.advanceTimersByTime(IDLE_RELEASE_MS - 10);
      expect(acquireScratch(1 << 20)).toBe(a);
      releaseScratch(a);
      // Past the first use's deadline, within the second's: still kept.
      vi.advanceTimersByTime(IDLE_RELEASE_MS - 10);
      expect(retainedScratchBytes()).toBe(1 << 20);
      vi.advanceTimersByTime(20);
      expect(retainedScratchBytes()).toBe(0);
      // Uses in a row arm no second timer; drops run once per idle period.
      let drops = 0;
      const idle = idleRelease(100, () => drops++);
      for (let i = 0; i < 50; i++) {
        idle.touch();
        vi.advanceTimersByTime(10);
      }
      expect(vi.getTimerCount()).toBe(1);
      expect(drops).toBe(0);
      vi.advanceTimersByTime(89);
      expect(drops).toBe(0);
      vi.advanceTimersByTime(2);
      expect(drops).toBe(1);
      expect(vi.getTimerCount()).toBe(0);
      idle.touch();
      idle.cancel();
      vi.advanceTimersByTime(200);
      expect(drops).toBe(1);
    } finally {
      dropScratch();
      vi.useRealTimers();
    }
  });

  it('a par call on plain arrays leaves its staging buffers for reuse', async () => {
    const p = createPool({ size: 2 });
    try {
      dropScratch();
      const x = new Float32Array(1 << 19).fill(1);
      const y = new Float32Array(1 << 19);
      // Below PLAIN_MEMORY_BOUND_MIN a plain-array map runs seq: nothing staged.
      await cpuTransform({ kind: 'par', pool: p }, x, y, times3plus1);
      expect(y[0]).toBe(4);
      expect(retainedScratchBytes()).toBe(0);
      // Forced onto the pool (an explicit threshold), it stages and keeps the buffers for reuse.
      const forced = { kind: 'par', pool: p, tuning: { parallelThreshold: 0 } } as const;
      y.fill(0);
      await cpuTransform(forced, x, y, times3plus1);
      expect(y[0]).toBe(4);
      expect(retainedScratchBytes()).toBe(2 * 4 * (1 << 19));
      await cpuTransform(forced, x, y, times3plus1);
      expect(retainedScratchBytes()).toBe(2 * 4 * (1 << 19));
    } finally {
      dropScratch();
      await p.close();
    }
  });
});

describe('errors thrown by a function inside a par step', () => {
  const p = createPool({ size: 2 });
  afterAll(() => p.close());
  const throwing = inlineFunction({
    name: 'throwsAt5',
    arity: 1,
    source: () => "(x) => { if (x === 5) throw new RangeError('bad element ' + x); return x; }",
  });
  for (const callerWorks of [true, false]) {
    it(`reject the call (callerWorks: ${callerWorks}), and the pool keeps working`, async () => {
      const backend: CpuBackend = { kind: 'par', pool: p, tuning: { parallelThreshold: 0, minChunk: 4, callerWorks } };
      const x = new Int32Array(1000);
      for (const at of [0, 500, 999]) {
        x.fill(0);
        x[at] = 5;
        await expect(cpuTransform(backend, x, new Int32Array(1000), throwing)).rejects.toThrow('bad element 5');
        await expect(
          cpuInclusiveScan(backend, x, new Int32Array(1000), plus, 0, { transform: throwing }),
        ).rejects.toThrow(RangeError);
      }
      x.fill(1);
      expect(await cpuReduce(backend, x, 0, plus)).toBe(1000);
    });
  }
});
