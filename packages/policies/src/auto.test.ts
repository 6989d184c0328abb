import { DeviceArray, type GpuDevice, gpuForTests, plus } from '@webdpl/core';
import { describe, expect, it } from 'vitest';
import { autoCrossovers, autoRecord, autoSide } from './auto';
import { execution, makeAutoPolicy } from './policy';
import { type BackendRequest, selectBackend } from './select-backend';

/** A stand-in hardware GPU: the learner keys its tables by device object and reads info.kind only. */
function fakeGpu(): GpuDevice {
  return { info: { kind: 'gpu' } } as unknown as GpuDevice;
}

describe('auto crossover learning', () => {
  it('measures the GPU twice and the CPU once per size bucket, then runs the faster side', () => {
    const d = fakeGpu();
    const n = 1 << 20;
    expect(autoSide(d, 'reduce', 'f32', n, undefined)).toBe('gpu');
    autoRecord(d, 'reduce', 'f32', n, 'gpu', 50); // first GPU call: compiles pipelines
    expect(autoSide(d, 'reduce', 'f32', n, undefined)).toBe('gpu');
    autoRecord(d, 'reduce', 'f32', n + 5, 'gpu', 2);
    expect(autoSide(d, 'reduce', 'f32', n, undefined)).toBe('cpu');
    autoRecord(d, 'reduce', 'f32', n, 'cpu', 3);
    // The second GPU time (2 ms) beats the CPU (3 ms): the first GPU call's compile time is not held against it.
    for (let k = 0; k < 3; k++) expect(autoSide(d, 'reduce', 'f32', n + k, undefined)).toBe('gpu');
    // Another type, algorithm or device has its own table.
    expect(autoSide(d, 'reduce', 'u32', n, undefined)).toBe('gpu');
    expect(autoSide(fakeGpu(), 'reduce', 'f32', n, undefined)).toBe('gpu');
    // Larger buckets follow a smaller one that chose the GPU; smaller ones explore.
    expect(autoSide(d, 'reduce', 'f32', 4 * n, undefined)).toBe('gpu');
    const small = 1 << 10;
    expect(autoSide(d, 'reduce', 'f32', small, undefined)).toBe('gpu');
    autoRecord(d, 'reduce', 'f32', small, 'gpu', 0.5);
    autoRecord(d, 'reduce', 'f32', small, 'gpu', 0.3);
    expect(autoSide(d, 'reduce', 'f32', small, undefined)).toBe('cpu');
    autoRecord(d, 'reduce', 'f32', small, 'cpu', 0.01);
    expect(autoSide(d, 'reduce', 'f32', small, undefined)).toBe('cpu');
    expect(autoCrossovers(d).find((c) => c.algorithm === 'reduce' && c.type === 'f32')).toEqual({
      algorithm: 'reduce',
      type: 'f32',
      fromLog2: 20,
      buckets: [
        { log2: 10, gpuMs: 0.3, cpuMs: 0.01 },
        { log2: 20, gpuMs: 2, cpuMs: 3 },
      ],
    });
  });

  it('a fixed crossover decides by size alone; a software GPU is never picked for host arrays', () => {
    const d = fakeGpu();
    expect(autoSide(d, 'sort', 'u32', 999, 1000)).toBe('cpu');
    expect(autoSide(d, 'sort', 'u32', 1000, 1000)).toBe('gpu');
    const soft = { info: { kind: 'software-gpu' } } as unknown as GpuDevice;
    expect(autoSide(soft, 'sort', 'u32', 1 << 24, undefined)).toBe('cpu');
    autoRecord(soft, 'sort', 'u32', 1 << 24, 'gpu', 1);
    expect(autoCrossovers(soft)).toEqual([]);
    expect(autoSide(soft, 'sort', 'u32', 1 << 24, 0)).toBe('gpu');
  });

  it('makeAutoPolicy checks its crossover option', () => {
    expect(makeAutoPolicy({ crossover: { '*': 5, sort: Infinity } }).crossover).toEqual({ '*': 5, sort: Infinity });
    expect(() => makeAutoPolicy({ crossover: { sort: -1 } })).toThrow(/^options\.crossover\.sort: expected/);
    expect(() => makeAutoPolicy({ crossover: 3 as never })).toThrow(/^options\.crossover: expected/);
  });
});

const device = await gpuForTests();
const REQ: BackendRequest = {
  algorithm: 'reduce',
  types: ['u32'],
  functions: [{ fn: plus, argTypes: ['u32', 'u32'] }],
};

describe.skipIf(!device)('execution.auto on a real adapter', () => {
  it('host arrays: the fixed crossover decides; on a software GPU the CPU runs them', async () => {
    const d = device as GpuDevice;
    const fixed = makeAutoPolicy({ crossover: { reduce: 1000 } });
    expect((await selectBackend(fixed, { ...REQ, n: 999 })).kind).toBe('par');
    const big = await selectBackend(fixed, { ...REQ, n: 1000 });
    expect(big.kind).toBe('gpu');
    expect(typeof big.measure).toBe('function');
    const learned = await selectBackend(execution.auto, { ...REQ, n: 1 << 20 });
    if (d.info.kind === 'software-gpu') expect(learned.kind).toBe('par');
    else expect(learned.kind).toBe('gpu');
    // Unknown sizes (no n) run where the GPU can run them, and measure nothing.
    const unsized = await selectBackend(execution.auto, REQ);
    expect(unsized.kind).toBe('gpu');
    expect(unsized.measure).toBeUndefined();
  });

  it('DeviceArray arguments run on their device, a software GPU included (the data lives there)', async () => {
    const d = device as GpuDevice;
    const arr = DeviceArray.from(d, Uint32Array.from([1, 2, 3]));
    try {
      const backend = await selectBackend(execution.auto, { ...REQ, n: 1 << 20, deviceArrays: [arr] });
      expect(backend.kind).toBe('gpu');
      if (backend.kind === 'gpu') expect(backend.device).toBe(d);
      expect(backend.measure, 'nothing to learn: there is no choice').toBeUndefined();
    } finally {
      arr.destroy();
    }
  });
});
