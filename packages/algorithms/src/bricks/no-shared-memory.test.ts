/**
 * Without SharedArrayBuffer (a browser page without cross-origin isolation) every brick of this
 * folder runs on the calling thread with plain memory, even when handed a par backend: right
 * results, no pool run, nothing thrown.
 */
import { plus } from '@webdpl/core';
import { type CpuBackend, createPool } from '@webdpl/policies';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cpuCount } from './count';
import { cpuFindFirst } from './find';
import { cpuFill } from './map';
import { cpuCountIf, cpuReduce, cpuTransformReduce } from './reduce';
import { cpuExclusiveScan, cpuInclusiveScan } from './scan';
import { countingPool } from './test-data';
import { equals, mod7is3, times3plus1 } from './test-functions';
import { cpuForEach, cpuTransform } from './transform';

const inner = createPool({ size: 2 });
afterAll(() => inner.close());
const counting = countingPool(inner);
const par: CpuBackend = { kind: 'par', pool: counting.pool, tuning: { parallelThreshold: 0, minChunk: 16 } };

const n = 2 ** 17 + 3;
const x = Uint32Array.from({ length: n }, (_, i) => (i * 2654435761) >>> 0);

describe('bricks without SharedArrayBuffer', () => {
  beforeEach(() => {
    counting.reset();
    vi.stubGlobal('SharedArrayBuffer', undefined);
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('the global is really hidden', () => {
    expect(typeof SharedArrayBuffer).toBe('undefined');
  });

  it('reductions, find and count run on the calling thread', async () => {
    let sum = 0;
    let mapped = 1;
    let count = 0;
    let sevens = 0;
    for (let i = 0; i < n; i++) {
      const v = x[i] as number;
      sum = (sum + v) >>> 0;
      mapped = (mapped + ((Math.imul(v, 3) + 1) >>> 0)) >>> 0;
      if (Math.abs(Math.trunc(v)) % 7 === 3) count++;
      if (v === 7) sevens++;
    }
    expect(await cpuReduce(par, x, 0, plus)).toBe(sum);
    expect(await cpuTransformReduce(par, x, 1, plus, times3plus1)).toBe(mapped);
    expect(await cpuCountIf(par, x, mod7is3)).toBe(count);
    expect(await cpuFindFirst(par, x, equals(x[n - 2] as number))).toBe(n - 2);
    expect(await cpuCount(par, x, 7)).toBe(sevens);
    expect(counting.runs()).toBe(0);
  });

  it('scans, transforms and fills run on the calling thread, in plain memory', async () => {
    const y = new Uint32Array(n);
    await cpuInclusiveScan(par, x, y, plus);
    let s = 0;
    for (let i = 0; i < n; i++) s = (s + (x[i] as number)) >>> 0;
    expect(y[n - 1]).toBe(s);
    await cpuExclusiveScan(par, x, y, plus, 5);
    expect(y[0]).toBe(5);
    expect(y[n - 1]).toBe((5 + s - (x[n - 1] as number)) >>> 0);
    await cpuTransform(par, x, y, times3plus1);
    expect(y[n - 1]).toBe((Math.imul(x[n - 1] as number, 3) + 1) >>> 0);
    const z = x.slice();
    await cpuForEach(par, z, times3plus1);
    expect(z[5]).toBe(y[5]);
    await cpuFill(par, 0, y, n, 9, 'u32');
    expect(y[n - 1]).toBe(9);
    await cpuFill(par, 1, y, n, 2, 'u32');
    expect(y[n - 1]).toBe(n + 1);
    await cpuFill(par, 2, y, n, 0, 'u32', x);
    expect(y[n - 1]).toBe(x[n - 1]);
    expect(counting.runs()).toBe(0);
  });

  it('with SharedArrayBuffer back, the same par backend uses the pool', async () => {
    vi.unstubAllGlobals();
    expect(await cpuReduce(par, x, 0, plus)).toBeTypeOf('number');
    expect(counting.runs()).toBe(1);
  });
});
