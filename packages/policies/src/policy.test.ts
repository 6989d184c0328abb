import {
  ArgumentError,
  bitAnd,
  cpuSelector,
  DeviceArray,
  gpuForTests,
  gpuSelector,
  plus,
  UnsupportedOnDeviceError,
} from '@webdpl/core';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { execution, isPolicy, makeAutoPolicy, makeDevicePolicy, makeHostPolicy } from './policy';
import { createPool, defaultPool } from './pool';
import { type BackendRequest, checkPolicy, selectBackend, selectBackendNow } from './select-backend';

const gpu = await gpuForTests();
const pool = createPool({ size: 1 });
afterAll(() => pool.close());

const REQ: BackendRequest = {
  algorithm: 'reduce',
  types: ['u32'],
  functions: [{ fn: plus, argTypes: ['u32', 'u32'] }],
};

describe('execution policies', () => {
  it('host policies have kind, mode and info, and are frozen', () => {
    for (const mode of ['seq', 'unseq', 'par', 'parUnseq'] as const) {
      const p = execution[mode];
      expect(p.kind).toBe('host');
      expect(p.mode).toBe(mode);
      expect(typeof p.info).toBe('string');
      expect(p.pool).toBeUndefined();
      expect(Object.isFrozen(p)).toBe(true);
      expect(isPolicy(p)).toBe(true);
    }
    expect(execution.par.info).toBe('par on a worker pool');
  });

  it('auto and device policies', () => {
    expect(execution.auto).toMatchObject({ kind: 'auto', tuning: {} });
    expect(makeAutoPolicy({ tuning: { reduce: { workgroupSize: 64 } } }).tuning).toEqual({
      reduce: { workgroupSize: 64 },
    });
    const d = execution.device;
    expect(d.kind).toBe('device');
    expect(execution.device).toBe(d);
    expect(d.fallback).toBe('cpu');
    expect(d.tuning).toEqual({});
    expect(d.fallbackPolicy).toBeUndefined();
    expect(typeof d.resolve).toBe('function');
    expect(isPolicy(d)).toBe(true);
    expect(isPolicy(execution.auto)).toBe(true);
  });

  it('isPolicy and checkPolicy reject anything else', () => {
    for (const x of [undefined, null, 'seq', 1, {}, { kind: 'gpu' }, () => 0]) {
      expect(isPolicy(x)).toBe(false);
      expect(() => checkPolicy(x)).toThrow(ArgumentError);
      expect(() => checkPolicy(x)).toThrow(/^policy: expected an execution policy/);
    }
  });

  it('makeHostPolicy takes a pool or options, and names bad arguments', () => {
    const p = makeHostPolicy('par', pool);
    expect(p).toMatchObject({ kind: 'host', mode: 'par', pool });
    const q = makeHostPolicy('parUnseq', { pool, tuning: { '*': { minChunk: 4 } } });
    expect(q.pool).toBe(pool);
    expect(q.tuning).toEqual({ '*': { minChunk: 4 } });
    expect(makeHostPolicy('seq').mode).toBe('seq');
    expect(() => makeHostPolicy('fast' as never)).toThrow(/^mode:/);
    expect(() => makeHostPolicy('par', 3 as never)).toThrow(/^options:/);
    expect(() => makeHostPolicy('par', { pool: {} as never })).toThrow(/^options\.pool:/);
    expect(() => makeHostPolicy('par', { tuning: 5 as never })).toThrow(/^options\.tuning:/);
  });
});

describe('makeDevicePolicy arguments', () => {
  it('names the bad argument', () => {
    expect(() => makeDevicePolicy(execution.par as never)).toThrow(ArgumentError);
    expect(() => makeDevicePolicy(execution.par as never)).toThrow(/^target: expected a device policy/);
    expect(() => makeDevicePolicy(execution.auto as never)).toThrow(/^target:.*got a auto policy/);
    expect(() => makeDevicePolicy(42 as never)).toThrow(/^target: expected a Queue, a GPU device/);
    expect(() => makeDevicePolicy({} as never)).toThrow(/^target:/);
    expect(() => makeDevicePolicy(gpuSelector, { fallback: 'gpu' as never })).toThrow(/^options\.fallback:/);
    expect(() => makeDevicePolicy(gpuSelector, null as never)).toThrow(/^options:/);
  });

  it('a selector that picks the CPU is refused when the device is resolved', async () => {
    const p = makeDevicePolicy(cpuSelector);
    expect(p.device).toBeUndefined();
    expect(p.info).toMatch(/not chosen yet/);
    await expect(p.resolve()).rejects.toThrow(/^selector: expected to select a GPU/);
  });
});

describe('selectBackend for host policies', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('rejects non-policies, naming the argument', async () => {
    await expect(selectBackend('par', REQ)).rejects.toThrow(/^policy:/);
    await expect(selectBackend(undefined, REQ)).rejects.toThrow(ArgumentError);
  });

  it('seq and unseq run seq; par and parUnseq run on the default pool', async () => {
    expect(await selectBackend(execution.seq, REQ)).toEqual({ kind: 'seq' });
    expect(await selectBackend(execution.unseq, REQ)).toEqual({ kind: 'seq' });
    for (const p of [execution.par, execution.parUnseq]) {
      const b = await selectBackend(p, REQ);
      expect(b.kind).toBe('par');
      if (b.kind === 'par') {
        expect(b.pool).toBe(defaultPool());
        expect(b.tuning).toEqual({});
      }
    }
  });

  it('a host policy with its own pool and tuning passes them on (*, engine, then algorithm entries)', async () => {
    const p = makeHostPolicy('par', {
      pool,
      tuning: {
        '*': { minChunk: 4, parallelThreshold: 1 },
        'transform-reduce': { minChunk: 8 },
        reduce: { parallelThreshold: 0 },
      },
    });
    const b = await selectBackend(p, { ...REQ, engine: 'transform-reduce' });
    expect(b).toEqual({ kind: 'par', pool, tuning: { minChunk: 8, parallelThreshold: 0 } });
    const other = await selectBackend(p, { algorithm: 'scan', types: ['u32'] });
    expect(other).toEqual({ kind: 'par', pool, tuning: { minChunk: 4, parallelThreshold: 1 } });
  });

  it('par degrades to seq without SharedArrayBuffer', async () => {
    vi.stubGlobal('SharedArrayBuffer', undefined);
    const p = makeHostPolicy('par');
    expect(p.mode).toBe('par');
    expect(p.info).toMatch(/runs as seq: SharedArrayBuffer is unavailable/);
    expect(await selectBackend(p, REQ)).toEqual({ kind: 'seq' });
    // Checked per call as well: a par policy made earlier also runs seq.
    expect(await selectBackend(execution.par, REQ)).toEqual({ kind: 'seq' });
  });
});

describe.skipIf(!gpu)('device policies and selectBackend on a GPU', () => {
  const device = gpu as NonNullable<typeof gpu>;

  it('makeDevicePolicy from a selector, a device, a queue or another policy', async () => {
    const fromSelector = makeDevicePolicy(gpuSelector, { tuning: { reduce: { workgroupSize: 64 } } });
    const resolved = await fromSelector.resolve();
    expect(resolved.type).toBe('gpu');
    expect(fromSelector.device).toBe(resolved);
    expect(fromSelector.queue).toBe(resolved.queue);
    expect(fromSelector.info).toMatch(/^device policy on /);
    expect(await fromSelector.resolve()).toBe(resolved);

    const fromDevice = makeDevicePolicy(device);
    expect(fromDevice.device).toBe(device);
    expect(await fromDevice.resolve()).toBe(device);

    const fromQueue = makeDevicePolicy(device.queue, { fallback: 'error' });
    expect(fromQueue.device).toBe(device);
    expect(fromQueue.fallback).toBe('error');

    const fromPolicy = makeDevicePolicy(fromQueue, {
      tuning: { reduce: { itemsPerThread: 2 } },
      fallbackPolicy: execution.seq,
    });
    expect(fromPolicy.device).toBe(device);
    expect(fromPolicy.fallback).toBe('cpu');
    expect(fromPolicy.tuning).toEqual({ reduce: { itemsPerThread: 2 } });
    expect(fromPolicy.fallbackPolicy).toBe(execution.seq);
    expect(await fromPolicy.resolve()).toBe(device);
  });

  it('a device that can run the request gets the gpu backend with the tuning for the algorithm', async () => {
    const p = makeDevicePolicy(device, { tuning: { reduce: { workgroupSize: 64 }, scan: { workgroupSize: 32 } } });
    const b = await selectBackend(p, REQ);
    expect(b).toEqual({ kind: 'gpu', device, tuning: { workgroupSize: 64 } });
  });

  it("fallback 'cpu' runs the fallback policy when gpuCheck says no; 'error' throws", async () => {
    const req: BackendRequest = { ...REQ, gpuCheck: () => 'no u64 atomics here' };
    const toPar = await selectBackend(makeDevicePolicy(device), req);
    expect(toPar.kind).toBe('par');
    expect(await selectBackend(makeDevicePolicy(device, { fallbackPolicy: execution.seq }), req)).toEqual({
      kind: 'seq',
    });
    const strict = makeDevicePolicy(device, { fallback: 'error' });
    await expect(selectBackend(strict, req)).rejects.toThrow(UnsupportedOnDeviceError);
    await expect(selectBackend(strict, req)).rejects.toThrow(/reduce cannot run on .*: no u64 atomics here/);
  });

  it('an operator without a form for the type falls back too', async () => {
    const req: BackendRequest = {
      algorithm: 'reduce',
      types: ['f32'],
      functions: [{ fn: bitAnd, argTypes: ['f32', 'f32'] }],
    };
    expect((await selectBackend(makeDevicePolicy(device), req)).kind).toBe('par');
    await expect(selectBackend(makeDevicePolicy(device, { fallback: 'error' }), req)).rejects.toThrow(/bitAnd/);
  });

  it('DeviceArray arguments need a device policy (host policy: ArgumentError naming policy)', async () => {
    const a = DeviceArray.from(device, new Uint32Array([1, 2, 3]));
    try {
      const req: BackendRequest = { ...REQ, deviceArrays: [a] };
      await expect(selectBackend(execution.par, req)).rejects.toThrow(/^policy: expected a device policy/);
      expect((await selectBackend(makeDevicePolicy(device), req)).kind).toBe('gpu');
      expect((await selectBackend(execution.auto, req)).kind).toBe('gpu');
      // With device arrays there is no CPU fallback.
      await expect(selectBackend(makeDevicePolicy(device), { ...req, gpuCheck: () => 'nope' })).rejects.toThrow(
        UnsupportedOnDeviceError,
      );
    } finally {
      a.destroy();
    }
  });

  it('selectBackendNow answers without a promise where nothing waits, as selectBackend does', async () => {
    const p = makeDevicePolicy(device, { tuning: { reduce: { workgroupSize: 64 }, scan: { workgroupSize: 32 } } });
    const now = selectBackendNow(p, REQ);
    expect(now).toEqual({ kind: 'gpu', device, tuning: { workgroupSize: 64 } });
    // One backend object per (device, resolved tuning): the same for every call of the shape ...
    expect(selectBackendNow(p, REQ)).toBe(now);
    expect(await selectBackend(p, REQ)).toBe(now);
    // ... and another for another algorithm's, engine's or policy's tuning.
    expect(selectBackendNow(p, { ...REQ, algorithm: 'scan' })).toEqual({
      kind: 'gpu',
      device,
      tuning: { workgroupSize: 32 },
    });
    const tuningOf = (b: ReturnType<typeof selectBackendNow>) => (b?.kind === 'gpu' ? b.tuning : undefined);
    expect(tuningOf(selectBackendNow(p, { ...REQ, engine: 'scan' }))).toEqual({ workgroupSize: 64 });
    const other = makeDevicePolicy(device, { tuning: { reduce: { workgroupSize: 128 } } });
    expect(tuningOf(selectBackendNow(other, REQ))).toEqual({ workgroupSize: 128 });
    expect(tuningOf(selectBackendNow(makeDevicePolicy(device), REQ))).toEqual({});
    // The same checks and errors.
    expect(() => selectBackendNow('par', REQ)).toThrow(/^policy:/);
    const strict = makeDevicePolicy(device, { fallback: 'error' });
    expect(() => selectBackendNow(strict, { ...REQ, gpuCheck: () => 'no u64 atomics here' })).toThrow(
      /reduce cannot run on .*: no u64 atomics here/,
    );
    expect(selectBackendNow(makeDevicePolicy(device), { ...REQ, gpuCheck: () => 'no' })?.kind).toBe('par');
    expect(selectBackendNow(execution.seq, REQ)).toEqual({ kind: 'seq' });
    // A device not resolved yet, or auto on host arrays: undefined (the caller awaits selectBackend).
    expect(selectBackendNow(makeDevicePolicy(gpuSelector), REQ)).toBeUndefined();
    expect(selectBackendNow(execution.auto, REQ)).toBeUndefined();
    const a = DeviceArray.from(device, new Uint32Array([1, 2, 3]));
    try {
      expect(selectBackendNow(execution.auto, { ...REQ, deviceArrays: [a] })?.kind).toBe('gpu');
      a.destroy();
      expect(() => selectBackendNow(p, { ...REQ, deviceArrays: [a], deviceArrayNames: ['input'] })).toThrow(/input/);
    } finally {
      a.destroy();
    }
  });

  it('auto runs on the GPU when it can, else on the CPU pool', async () => {
    expect((await selectBackend(execution.auto, REQ)).kind).toBe('gpu');
    expect((await selectBackend(execution.auto, { ...REQ, gpuCheck: () => 'no' })).kind).toBe('par');
  });
});
