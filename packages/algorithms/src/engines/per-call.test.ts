/**
 * The GPU hot path of the engines on DeviceArrays: a second identical call builds nothing (no WGSL
 * fragment, pipeline, shader module, bind group or buffer, no parameter write), calls chained without awaiting
 * in between run in call order, and GPU errors still surface.
 */
import {
  DestroyedArrayError,
  DeviceArray,
  dawnCallsOf,
  fragmentCount,
  type GpuDevice,
  GpuValidationError,
  lambda,
  pipelineCount,
} from '@webdpl/core';
import { makeDevicePolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { copyIf, unique } from '../compaction/index';
import { reduce } from '../reduce/index';
import { inclusiveScan } from '../scans/index';
import { countCreations } from '../testing/gpu-counts';
import { testDevice } from '../testing/matrix';
import { transform } from '../transform/index';

function data(n: number): Uint32Array {
  const a = new Uint32Array(n);
  for (let i = 0; i < n; i++) a[i] = (i * 2654435761) >>> 22;
  return a;
}

describe.runIf(testDevice)('GPU calls on DeviceArrays: reuse, ordering, errors', () => {
  const device = testDevice as GpuDevice;
  const policy = makeDevicePolicy(device, { fallback: 'error' });
  const n = 10_007; // several tiles of every engine, a partial vec4 at the end
  const host = data(n);
  const triple = lambda((x: number) => x * 3 + 1);
  const even = lambda((x: number) => (x & 1) === 0);
  const sameHigh = lambda((x: number, y: number) => x >> 6 === y >> 6);

  const f32Views = new WeakMap<DeviceArray, DeviceArray>();
  const f32View = (o: DeviceArray): DeviceArray => {
    let v = f32Views.get(o);
    if (!v) {
      v = DeviceArray.fromBuffer(device, o.buffer, 'f32');
      f32Views.set(o, v);
    }
    return v;
  };
  const calls: [string, (a: DeviceArray, o: DeviceArray) => Promise<unknown>][] = [
    ['reduce', (a) => reduce(policy, a)],
    ['inclusiveScan', async (a, o) => inclusiveScan(policy, a, o)],
    // The scan write hook's converting fragment (memoized): u32 values into o's memory as f32.
    [
      'inclusiveScan into f32',
      // One f32 view per output (fromBuffer reads the buffer's size and usage from Dawn).
      async (a, o) => inclusiveScan(policy, a, f32View(o)),
    ],
    ['transform', async (a, o) => transform(policy, a, o, triple)],
    ['copyIf', (a, o) => copyIf(policy, a, o, even)],
    // The scan engine's 'adjacent' hook with the equality's fragment (memoized), in place on a.
    ['unique with an equality', (a) => unique(policy, a, sameHigh)],
  ];

  for (const [name, call] of calls) {
    it(`${name}: a second identical call builds no WGSL, creates no pipeline, bind group or buffer, writes no parameters and reads no native getter`, async () => {
      const a = DeviceArray.from(device, host);
      const o = DeviceArray.create(device, 'u32', n);
      try {
        await call(a, o);
        await device.queue.finish();
        const pipelines = pipelineCount(device);
        const fragments = fragmentCount();
        const counts = await countCreations(device, async () => {
          await call(a, o);
          await device.queue.finish();
        });
        // No WGSL assembled either: operators, predicates and element functions are memoized.
        expect(fragmentCount() - fragments).toBe(0);
        expect(counts).toEqual({
          createBuffer: 0,
          createBindGroup: 0,
          createComputePipeline: 0,
          createComputePipelineAsync: 0,
          createShaderModule: 0,
          createBindGroupLayout: 0,
          createPipelineLayout: 0,
          writeBuffer: 0,
        });
        expect(pipelineCount(device)).toBe(pipelines);
        // Nor reads a buffer's size or a limit from Dawn (native getters).
        expect((await dawnCallsOf(device, () => call(a, o))).filter((c) => c.endsWith('(get)'))).toEqual([]);
        // The counting itself can fail: new arrays need new bind groups.
        const b = DeviceArray.from(device, host);
        const fresh = await countCreations(device, () => call(b, o));
        expect(fresh.createBindGroup).toBeGreaterThan(0);
        b.destroy();
      } finally {
        a.destroy();
        o.destroy();
      }
    });
  }

  it('the answer reaches the caller within 3 microtask turns of the GPU wait settling (issue 12)', async () => {
    // A ticker started when Dawn's wait settles counts the turns until the caller resumes: every
    // promise step between them (an async layer, a then) is one. The floor's own takes 2 here.
    const a = DeviceArray.from(device, host);
    const o = DeviceArray.create(device, 'u32', n);
    const proto = Object.getPrototypeOf(a.buffer) as { mapAsync: (...args: unknown[]) => Promise<void> };
    const nativeMap = proto.mapAsync;
    const gq = device.gpu.queue;
    let ticks = 0;
    let ticking = false;
    const tick = () => {
      if (!ticking || ticks > 50) return;
      ticks++;
      queueMicrotask(tick);
    };
    const settled = () => {
      ticks = 0;
      ticking = true;
      queueMicrotask(tick);
    };
    proto.mapAsync = function (this: unknown, ...args: unknown[]) {
      return nativeMap.apply(this, args).then(settled);
    };
    const nativeDone = gq.onSubmittedWorkDone;
    gq.onSubmittedWorkDone = () =>
      nativeDone.call(gq).then(() => {
        settled();
        return undefined;
      });
    const turns = async (f: () => Promise<unknown>): Promise<number> => {
      ticking = false;
      await f();
      ticking = false;
      return ticks;
    };
    try {
      const got: Record<string, number> = {};
      for (let k = 0; k < 2; k++) {
        got.reduce = await turns(() => reduce(policy, a));
        got.copyIf = await turns(() => copyIf(policy, a, o, even));
        await inclusiveScan(policy, a, o);
        got.finish = await turns(() => device.queue.finish());
      }
      // d2f68b9: reduce 8, copyIf 8, finish 3.
      expect(got).toEqual({ reduce: 3, copyIf: 3, finish: 2 });
    } finally {
      proto.mapAsync = nativeMap;
      // The instance property shadowed the prototype's method: removed (or the original put back).
      delete (gq as { onSubmittedWorkDone?: unknown }).onSubmittedWorkDone;
      if (gq.onSubmittedWorkDone !== nativeDone) gq.onSubmittedWorkDone = nativeDone;
      a.destroy();
      o.destroy();
    }
  });

  it('a chain of DeviceArray calls without awaiting in between gives the right answer, first compiles included', async () => {
    const a = DeviceArray.from(device, host);
    const b = DeviceArray.create(device, 'u32', n);
    const c = DeviceArray.create(device, 'u32', n);
    const d = DeviceArray.create(device, 'u32', n);
    // A lambda seen for the first time: its pipeline compiles while later calls are already made.
    const fresh = lambda((x: number) => x * 7 + 5);
    const xor = lambda((x: number) => x ^ 0x55);
    const pending = [
      transform(policy, a, b, fresh),
      inclusiveScan(policy, b, c),
      transform(policy, c, d, xor),
      transform(policy, a, b, triple),
    ];
    const total = reduce(policy, d);
    const kept = copyIf(policy, b, c, even);
    await Promise.all(pending);
    let run = 0;
    let want = 0;
    let keep = 0;
    const wantC = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      run = (run + ((host[i] as number) * 7 + 5)) >>> 0;
      want = (want + ((run ^ 0x55) >>> 0)) >>> 0;
      const t = ((host[i] as number) * 3 + 1) >>> 0;
      if ((t & 1) === 0) wantC[keep++] = t;
    }
    expect(await total).toBe(want);
    expect(await kept).toBe(keep);
    const gotC = await c.read();
    expect(Array.from(gotC.subarray(0, keep))).toEqual(Array.from(wantC.subarray(0, keep)));
    for (const x of [a, b, c, d]) x.destroy();
  });

  it('errors still surface: a GPU error of a non-waiting call, a destroyed array after cached calls', async () => {
    const a = DeviceArray.from(device, host);
    const o = DeviceArray.create(device, 'u32', n);
    await transform(policy, a, o, triple);
    await reduce(policy, a);
    // A GPU error reported after a non-waiting call returned (as implementations that report errors
    // asynchronously do) is thrown by the next call instead of letting it return a value.
    device.queue.recordUncaptured({ message: 'late error of an earlier call' } as GPUError);
    await expect(reduce(policy, o)).rejects.toThrow(GpuValidationError);
    expect(await reduce(policy, a)).toBe(host.reduce((s, x) => (s + x) >>> 0, 0));
    a.destroy();
    await expect(reduce(policy, a)).rejects.toThrow(DestroyedArrayError);
    await expect(transform(policy, a, o, triple)).rejects.toThrow(DestroyedArrayError);
    o.destroy();
  });
});
