/**
 * One compile per kernel: a call with a new arrow function of a source seen before compiles nothing,
 * on the calling thread (`compileCount`) nor in the workers (their `__webdplCompileCount`), through
 * the bricks and through the public front; explicit `{ js, wgsl }` closures of equal source keep
 * their own kernels.
 */
import { type GpuFunction, lambda, plus, toGpuFunction } from '@webdpl/core';
import {
  allocShared,
  type CpuBackend,
  compileCount,
  createPool,
  defaultPool,
  execution,
  makeHostPolicy,
  type Policy,
  type WorkerPool,
} from '@webdpl/policies';
import { afterAll, describe, expect, it } from 'vitest';
import { counting } from '../common/counting';
import { copyIf } from '../compaction/index';
import { countIf } from '../count/index';
import { gather, gatherIf } from '../gather/index';
import { transform } from '../transform/index';
import { transformReduce } from '../transform-reduce/index';
import { cpuCountIf, cpuReduce, cpuTransformReduce } from './reduce';
import { cpuInclusiveScan } from './scan';
import { cpuTransform } from './transform';

const pool = createPool({ size: 2 });
afterAll(() => pool.close());

/** Pool task: this worker's compile count, after a pause so each worker of the pool takes one job. */
function workerCompiles(): number {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 40);
  return (globalThis as { __webdplCompileCount?: number }).__webdplCompileCount ?? 0;
}

/** Compiles so far on the calling thread and in every worker of `p`. */
async function compiles(p: WorkerPool): Promise<number> {
  const each = await p.run(workerCompiles, new Array<number>(p.size).fill(0));
  return compileCount() + each.reduce((a, b) => a + b, 0);
}

const data = Float32Array.from({ length: 2 ** 17 + 5 }, (_, i) => ((i * 7919) % 1000) / 1000);
let above = 0;
for (const v of data) if (v > 0.25) above++;

const seq: CpuBackend = { kind: 'seq' };
const par: CpuBackend = { kind: 'par', pool, tuning: { parallelThreshold: 0 } };

describe('compile once', () => {
  it('bricks: a new inline arrow of the same source compiles nothing (seq and par)', async () => {
    // One source per backend, seen nowhere else: the first call compiles, the next ones do not.
    const preds = [
      () => toGpuFunction((v: number) => v > 0.25, 'pred', 1),
      () => toGpuFunction((v: number) => 0.25 < v, 'pred', 1),
    ];
    for (const [k, backend] of [seq, par].entries()) {
      const pred = preds[k] as () => GpuFunction;
      const first = await compiles(pool);
      expect(await cpuCountIf(backend, data, pred())).toBe(above);
      const before = await compiles(pool);
      expect(before, `${backend.kind}: the first call compiles`).toBeGreaterThan(first);
      for (let r = 0; r < 3; r++) expect(await cpuCountIf(backend, data, pred())).toBe(above);
      expect(await compiles(pool), backend.kind).toBe(before);
    }
  });

  it('bricks: lambda() objects made per call find their kernels by name', async () => {
    const op = () => lambda((a: number, b: number) => Math.max(a, b), { commutative: true });
    const sq = () => lambda((v: number) => v * v);
    const y = new Float32Array(data.length);
    for (const backend of [seq, par]) {
      await cpuReduce(backend, data, 0, op());
      await cpuTransformReduce(backend, data, 0, plus, sq());
      await cpuInclusiveScan(backend, data, y, op());
      const before = await compiles(pool);
      expect(await cpuReduce(backend, data, 0, op())).toBe(Math.fround(0.999));
      await cpuTransformReduce(backend, data, 0, plus, sq());
      await cpuInclusiveScan(backend, data, y, op());
      expect(y[data.length - 1]).toBe(Math.fround(0.999));
      expect(await compiles(pool), backend.kind).toBe(before);
    }
  });

  it('explicit closures of equal source keep their own kernels and run their own js', async () => {
    const scale = (m: number) => (a: number) => a * m;
    const x = new Float32Array([1, 2, 3]);
    const y = new Float32Array(3);
    const fns: GpuFunction[] = [2, 3].map((m) => toGpuFunction({ js: scale(m), wgsl: 'return a;' }, 'fn', 1));
    await cpuTransform(seq, x, y, fns[0] as GpuFunction);
    expect(Array.from(y)).toEqual([2, 4, 6]);
    await cpuTransform(seq, x, y, fns[1] as GpuFunction);
    expect(Array.from(y)).toEqual([3, 6, 9]);
  });

  it('index lambdas, counting(n), gather and stencil compaction compile once (seq and par)', async () => {
    const n = data.length;
    const idx = Uint32Array.from({ length: n }, (_, i) => n - 1 - i);
    const out = new Float32Array(n);
    const shared = allocShared('f32', n);
    const calls = (policy: Policy) => [
      () => transform(policy, data, out, (x: number, i: number) => x + i * 0.5),
      () => transform(policy, counting(n), out, (i: number) => i * 0.25),
      () => transformReduce(policy, counting(n), 0, plus, (i: number) => i % 5 === 1),
      () => gather(policy, idx, data, shared),
      () => gatherIf(policy, idx, data, data, shared, (s: number) => s > 0.5),
      () => copyIf(policy, data, idx, out, (s: number) => s % 3 === 0),
    ];
    // par from the first element on, so the workers compile (and must not recompile) too.
    const parEager = makeHostPolicy('par', { tuning: { '*': { parallelThreshold: 0 } } });
    for (const [name, policy] of [
      ['seq', execution.seq],
      ['par', parEager],
    ] as const) {
      for (const call of calls(policy)) await call();
      const before = await compiles(defaultPool());
      for (let k = 0; k < 2; k++) for (const call of calls(policy)) await call();
      expect(await compiles(defaultPool()), name).toBe(before);
    }
    expect(shared[0]).toBe(data[n - 1]);
  });

  it('public countIf with a new arrow of the same source compiles nothing (seq and par)', async () => {
    const calls = [
      () => countIf(execution.seq, data, (v: number) => v > 0.25 && v < 2),
      () => countIf(execution.par, data, (v: number) => v > 0.25 && v < 3),
    ];
    for (const call of calls) {
      const first = await compiles(defaultPool());
      expect(await call()).toBe(above);
      const before = await compiles(defaultPool());
      expect(before, 'the first call compiles').toBeGreaterThan(first);
      for (let k = 0; k < 3; k++) expect(await call()).toBe(above);
      expect(await compiles(defaultPool())).toBe(before);
    }
  });
});
