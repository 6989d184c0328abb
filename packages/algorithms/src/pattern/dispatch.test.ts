/**
 * The pattern layer: the policy is checked first, n = 0, CPU/GPU dispatch with staging, the CPU
 * fallback of device-specific GPU failures (and only where the policy allows it), and the fronts'
 * error messages that depend on it.
 */
import {
  ArgumentError,
  DeviceArray,
  DeviceLostError,
  dispatchCacheBuffers,
  type GpuDevice,
  GpuValidationError,
  lambda,
  UnsupportedOnDeviceError,
  WgslLinkError,
} from '@webdpl/core';
import { execution, makeDevicePolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { lowerBound } from '../binary-search/index';
import { reduce } from '../reduce/index';
import { inclusiveScan } from '../scans/index';
import { sort } from '../sort/index';
import { testDevice } from '../testing/matrix';
import { transform } from '../transform/index';
import { dispatch, type Pattern, stagingPoolSize } from './dispatch';

/** A pattern that doubles its input into its output, with a GPU part that fails with `error`. */
function doubling(input: Float32Array, output: Float32Array, error: () => Error): Pattern<string> {
  return {
    algorithm: 'doubling',
    n: input.length,
    inputs: [{ kind: 'host', array: input, type: 'f32', length: input.length }],
    outputs: [{ arg: { kind: 'host', array: output, type: 'f32', length: output.length } }],
    empty: () => 'empty',
    cpu: ({ inputs: [x], outputs: [y] }) => {
      for (let i = 0; i < input.length; i++) (y as Float32Array)[i] = 2 * (x as Float32Array)[i]!;
      return 'cpu';
    },
    gpu: async ({ outputs: [y], readBack, deliver }) => {
      expect(y).toBeInstanceOf(DeviceArray);
      expect(readBack(0)).toBe(true);
      // A failed attempt must not have written the caller's output.
      deliver(0, undefined, input.length);
      throw error();
    },
  };
}

describe('dispatch', () => {
  it.skipIf(!testDevice)('host arrays are staged in pooled device buffers, reused by a repeated call', async () => {
    const device = testDevice as GpuDevice;
    const policy = makeDevicePolicy(device, { fallback: 'error' });
    // A size class of its own (2^13 elements) among this file's calls.
    const x = new Uint32Array(5000).fill(3);
    const y = new Uint32Array(5000);
    const inc = lambda((v: number) => v + 1);
    await transform(policy, x, y, inc);
    const kept = stagingPoolSize(device);
    const cached = dispatchCacheBuffers(device);
    // Input and output went back to the pool; the map engine's cache owns the call's parameters.
    expect(kept.buffers).toBeGreaterThanOrEqual(2);
    expect(kept.bytes).toBeGreaterThanOrEqual(2 * 8192 * 4);
    expect(cached).toBeGreaterThanOrEqual(1);
    await transform(policy, x, y, inc);
    expect(y[4999]).toBe(4);
    expect(stagingPoolSize(device)).toEqual(kept);
    expect(dispatchCacheBuffers(device)).toBe(cached);
  });

  it('checks the policy before the arguments', async () => {
    // A forgotten policy: the array lands in the policy's place.
    const call = (reduce as unknown as (x: unknown) => Promise<number>)(new Float32Array(3));
    await expect(call).rejects.toThrow(ArgumentError);
    await expect(call).rejects.toThrow(/^policy: expected an execution policy/);
    await expect(dispatch(undefined, () => ({}) as Pattern<number>)).rejects.toThrow(/policy/);
  });

  it('answers n = 0 with empty() after the argument checks', async () => {
    let declared = 0;
    const p = (n: number): Pattern<string> => ({
      algorithm: 'x',
      n,
      empty: () => 'empty',
      cpu: () => 'cpu',
      gpu: async () => 'gpu',
    });
    expect(
      await dispatch(execution.seq, () => {
        declared++;
        return p(0);
      }),
    ).toBe('empty');
    expect(await dispatch(execution.par, () => p(5))).toBe('cpu');
    expect(declared).toBe(1);
    await expect(reduce(execution.seq, new Float64Array(0) as never)).rejects.toThrow(/^input: expected/);
  });

  it.skipIf(!testDevice)(
    'falls back to the CPU on device-specific GPU failures where the policy allows it',
    async () => {
      const device = testDevice as GpuDevice;
      const input = Float32Array.from([1, 2, 3, -0.5]);
      for (const error of [
        () => new UnsupportedOnDeviceError('too big'),
        () => new WgslLinkError('needs 40000 bytes of workgroup memory'),
        () => new DeviceLostError('lost', 'destroyed'),
      ]) {
        for (const policy of [
          execution.auto,
          makeDevicePolicy(device),
          makeDevicePolicy(device, { fallback: 'cpu' }),
        ]) {
          const out = new Float32Array(4);
          expect(await dispatch(policy, () => doubling(input, out, error))).toBe('cpu');
          expect(Array.from(out)).toEqual([2, 4, 6, -1]);
        }
        const out = new Float32Array(4).fill(7);
        const strict = makeDevicePolicy(device, { fallback: 'error' });
        await expect(dispatch(strict, () => doubling(input, out, error))).rejects.toThrow(error().constructor as never);
        expect(Array.from(out), 'untouched').toEqual([7, 7, 7, 7]);
      }
      // Other errors are the caller's to see, never hidden by a fallback.
      const out = new Float32Array(4).fill(7);
      await expect(
        dispatch(makeDevicePolicy(device), () => doubling(input, out, () => new RangeError('bug'))),
      ).rejects.toThrow(RangeError);
      expect(Array.from(out)).toEqual([7, 7, 7, 7]);
    },
  );

  it.skipIf(!testDevice)('never falls back for DeviceArray arguments', async () => {
    const device = testDevice as GpuDevice;
    const a = DeviceArray.from(device, Float32Array.from([1, 2]));
    try {
      const pattern: Pattern<string> = {
        algorithm: 'x',
        n: 2,
        inputs: [{ kind: 'device', array: a, type: 'f32', length: 2 }],
        empty: () => 'empty',
        cpu: () => 'cpu',
        gpu: async () => {
          throw new UnsupportedOnDeviceError('no');
        },
      };
      await expect(dispatch(execution.auto, () => pattern)).rejects.toThrow(UnsupportedOnDeviceError);
      await expect(dispatch(makeDevicePolicy(device), () => pattern)).rejects.toThrow(UnsupportedOnDeviceError);
    } finally {
      a.destroy();
    }
  });

  it.skipIf(!testDevice)(
    'stages host arrays: one upload per distinct input, device memory reused by the next call',
    async () => {
      const device = testDevice as GpuDevice;
      const policy = makeDevicePolicy(device, { fallback: 'error' });
      const run = async (x: Float32Array, y: Float32Array, value: number) => {
        const seen: DeviceArray[] = [];
        const r = await dispatch(policy, () => ({
          algorithm: 'stage',
          n: 3,
          inputs: [
            { kind: 'host', array: x, type: 'f32', length: 3 },
            { kind: 'host', array: x, type: 'f32', length: 3 },
          ],
          outputs: [{ arg: { kind: 'host', array: y, type: 'f32', length: 5 }, length: 3 }],
          empty: () => -1,
          cpu: () => -2,
          gpu: async ({ inputs, outputs, deliver }) => {
            expect(inputs[0]).toBe(inputs[1]);
            expect(outputs[0]?.length).toBe(3);
            seen.push(inputs[0] as DeviceArray, outputs[0] as DeviceArray);
            expect(Array.from(await (inputs[0] as DeviceArray).read())).toEqual(Array.from(x));
            deliver(0, Float32Array.from([value, value, value]).buffer, 3);
            return 1;
          },
        }));
        expect(r).toBe(1);
        return seen;
      };
      const y = new Float32Array(5).fill(9);
      const first = await run(Float32Array.from([1, 2, 3]), y, 4);
      expect(Array.from(y)).toEqual([4, 4, 4, 9, 9]);
      // The next call of the same shape binds the same buffers, with the new data uploaded.
      const second = await run(Float32Array.from([5, 6, 7]), y, 8);
      expect(Array.from(y)).toEqual([8, 8, 8, 9, 9]);
      expect(second[0]?.buffer).toBe(first[0]?.buffer);
      expect(second[1]?.buffer).toBe(first[1]?.buffer);
    },
  );
});

describe('call order on a device', () => {
  it.skipIf(!testDevice)(
    'a chain over DeviceArrays without awaits runs in call order across policies and engines',
    async () => {
      const device = testDevice as GpuDevice;
      const n = 3000;
      const host = Uint32Array.from({ length: n }, (_, i) => (i * 2654435761) % 1000);
      const a = DeviceArray.from(device, host);
      const b = DeviceArray.create(device, 'u32', n);
      const c = DeviceArray.create(device, 'u32', n);
      try {
        // Policies that reach their engines after different numbers of awaits, and a sort (several
        // kernels, its own pipelines) in the middle of the chain.
        const lazy = makeDevicePolicy(() => 1);
        const strict = makeDevicePolicy(device, { fallback: 'error' });
        const calls = [
          transform(lazy, a, b, (x) => x + 1),
          sort(strict, b),
          inclusiveScan(execution.auto, b, c),
          transform(strict, c, b, (x) => x * 2),
        ];
        const total = reduce(execution.auto, b);
        await Promise.all(calls);
        const want = Uint32Array.from(host, (x) => x + 1).sort();
        for (let i = 1; i < n; i++) want[i] = ((want[i] as number) + (want[i - 1] as number)) >>> 0;
        const doubled = Uint32Array.from(want, (x) => (x * 2) >>> 0);
        expect(await b.read()).toEqual(doubled);
        let sum = 0;
        for (const x of doubled) sum = (sum + x) >>> 0;
        expect(await total).toBe(sum);
      } finally {
        a.destroy();
        b.destroy();
        c.destroy();
      }
    },
  );
});

describe('call order: tickets released out of order', () => {
  it.skipIf(!testDevice)(
    'a call that runs on the CPU between GPU calls lets the later ones go once the earlier settled',
    async () => {
      const device = testDevice as GpuDevice;
      const n = 2048;
      const host = Uint32Array.from({ length: n }, (_, i) => i % 97);
      const a = DeviceArray.from(device, host);
      const b = DeviceArray.create(device, 'u32', n);
      const strict = makeDevicePolicy(device, { fallback: 'error' });
      // An operator without an identity cannot run on the GPU: this policy runs it on the CPU, so
      // its ticket is released before the reduce's before it (the call order's out-of-order path).
      const cpuFallback = makeDevicePolicy(device, { fallback: 'cpu' });
      const noIdentity = lambda((x: number, y: number) => x + y + 1);
      try {
        for (let round = 0; round < 3; round++) {
          const first = reduce(strict, a);
          const onCpu = reduce(cpuFallback, Uint32Array.of(1, 2, 3), 0, noIdentity);
          const after = transform(strict, a, b, (x) => x * 3);
          const last = reduce(strict, b);
          const settled = await Promise.race([
            Promise.all([first, onCpu, after, last]),
            new Promise((r) => setTimeout(() => r('stuck'), 5000)),
          ]);
          expect(settled).not.toBe('stuck');
          const sum = host.reduce((s, x) => s + x, 0);
          expect(await first).toBe(sum);
          expect(await onCpu).toBe(9);
          expect(await last).toBe(3 * sum);
        }
      } finally {
        a.destroy();
        b.destroy();
      }
    },
  );
});

describe('the GPU hot path (a resolved device, DeviceArrays)', () => {
  it.skipIf(!testDevice)(
    'failures reject (never throw) and release the call order: the calls after them run',
    async () => {
      const device = testDevice as GpuDevice;
      const strict = makeDevicePolicy(device, { fallback: 'error' });
      const a = DeviceArray.from(device, Uint32Array.of(1, 2, 3, 4));
      const gone = DeviceArray.create(device, 'u32', 4);
      gone.destroy();
      const failing = (how: 'throws' | 'rejects'): Pattern<number> => ({
        algorithm: 'failing',
        n: 4,
        inputs: [{ kind: 'device', array: a, type: 'u32', length: 4 }],
        empty: () => 0,
        cpu: () => 0,
        gpu: (): Promise<number> => {
          if (how === 'throws') throw new Error('gpu part threw');
          return Promise.reject(new Error('gpu part rejected'));
        },
      });
      try {
        for (let round = 0; round < 2; round++) {
          let calls: Promise<unknown>[] = [];
          expect(() => {
            calls = [
              reduce(strict, gone),
              dispatch(strict, () => failing('throws')),
              dispatch(strict, () => failing('rejects')),
              reduce(strict, a, 0, 42 as never),
            ];
          }).not.toThrow();
          const after = reduce(strict, a);
          await expect(calls[0]).rejects.toThrow(/destroyed/);
          await expect(calls[1]).rejects.toThrow(/gpu part threw/);
          await expect(calls[2]).rejects.toThrow(/gpu part rejected/);
          await expect(calls[3]).rejects.toThrow(/op/);
          const settled = await Promise.race([after, new Promise((r) => setTimeout(() => r('stuck'), 5000))]);
          expect(settled).toBe(10);
        }
      } finally {
        a.destroy();
      }
    },
  );
});

describe('front errors that the pattern layer shapes', () => {
  it.skipIf(!testDevice)('a lambda without identity names its source and suggests { identity }', async () => {
    const device = testDevice as GpuDevice;
    const strict = makeDevicePolicy(device, { fallback: 'error' });
    const data = Float32Array.from([1, 5, 2]);
    const call = reduce(strict, data, 0, (a, b) => Math.max(a, b));
    await expect(call).rejects.toThrow(UnsupportedOnDeviceError);
    await expect(call).rejects.toThrow(/\(a, b\) => Math\.max\(a, b\).*identity/);
    // The README's example runs everywhere else, and with an identity on the strict device too.
    expect(await reduce(makeDevicePolicy(device), data, 0, (a, b) => Math.max(a, b))).toBe(5);
    expect(await reduce(execution.auto, data, 0, (a, b) => Math.max(a, b))).toBe(5);
    expect(
      await reduce(
        strict,
        data,
        0,
        lambda((a, b) => Math.max(a, b), { identity: -Infinity }),
      ),
    ).toBe(5);
    const scan = inclusiveScan(strict, data, new Float32Array(3), (a, b) => Math.max(a, b));
    await expect(scan).rejects.toThrow(/Math\.max\(a, b\).*identity/);
  });

  it.skipIf(!testDevice)('a { wgsl } body that does not compile is reported against that body', async () => {
    const device = testDevice as GpuDevice;
    const strict = makeDevicePolicy(device, { fallback: 'error' });
    const fn = { js: (x: number) => x + 1, wgsl: 'let y = x + 1u;\nreturn y + notDefinedHere;' };
    const out = new Uint32Array(3);
    const call = transform(strict, Uint32Array.from([1, 2, 3]), out, fn);
    await expect(call).rejects.toThrow(GpuValidationError);
    await expect(call).rejects.toThrow(
      /^the \{ wgsl \} body of function 'fn_\w+' does not compile \(line 2 of the body: .*notDefinedHere/,
    );
    expect(Array.from(out)).toEqual([0, 0, 0]);
  });

  it('init is required (ArgumentError naming init) for an operator without identity', async () => {
    await expect(reduce(execution.seq, Float32Array.from([1]), undefined, (a, b) => a - b)).rejects.toThrow(
      /^init: expected a start value/,
    );
  });

  it.skipIf(!testDevice)('searches on unaligned DeviceArray views', async () => {
    const device = testDevice as GpuDevice;
    const sorted = DeviceArray.from(
      device,
      Uint32Array.from({ length: 300 }, (_, i) => 2 * i),
    );
    const queries = DeviceArray.from(
      device,
      Uint32Array.from({ length: 40 }, (_, i) => 7 * i),
    );
    const result = DeviceArray.create(device, 'u32', 50);
    try {
      const policy = makeDevicePolicy(device, { fallback: 'error' });
      // Offsets 1..3 elements: never a multiple of the storage offset alignment.
      for (const k of [1, 3]) {
        const s = sorted.view(k, 250);
        const q = queries.view(k, 30);
        const r = result.view(k, 30);
        await lowerBound(policy, s, q, r);
        const host = await lowerBound(execution.seq, await s.read(), await q.read());
        expect(Array.from(await r.read())).toEqual(Array.from(host));
      }
    } finally {
      sorted.destroy();
      queries.destroy();
      result.destroy();
    }
  });

  it.skipIf(!testDevice)('a search in an empty range writes only the queries-many results', async () => {
    const device = testDevice as GpuDevice;
    const policy = makeDevicePolicy(device, { fallback: 'error' });
    const empty = DeviceArray.create(device, 'u32', 1).view(0, 0);
    const queries = DeviceArray.from(device, Uint32Array.from([5, 6]));
    const result = DeviceArray.from(device, Uint32Array.from([9, 9, 9, 9]));
    try {
      await lowerBound(policy, empty, queries, result);
      expect(Array.from(await result.read())).toEqual([0, 0, 9, 9]);
      const host = Uint32Array.from([9, 9, 9, 9]);
      await lowerBound(execution.seq, new Uint32Array(0), Uint32Array.from([5, 6]), host);
      expect(Array.from(host)).toEqual([0, 0, 9, 9]);
    } finally {
      queries.destroy();
      result.destroy();
    }
  });

  it.skipIf(!testDevice)(
    'sorts and transforms keys beyond one storage binding on the GPU, in segments (no fallback needed)',
    async () => {
      const device = testDevice as GpuDevice;
      // The same device, as if its storage bindings held 4 KiB: 2048 keys need 8 KiB.
      const limits = { ...limitsOf(device), maxStorageBufferBindingSize: 4096 };
      const small = Object.create(device, { limits: { value: limits } }) as GpuDevice;
      const keys = Uint32Array.from({ length: 2048 }, (_, i) => (i * 2654435761) >>> 0);
      const want = keys.slice().sort();
      const k1 = keys.slice();
      await sort(makeDevicePolicy(small), k1);
      expect(k1).toEqual(want);
      const k2 = keys.slice();
      await sort(makeDevicePolicy(small, { fallback: 'error' }), k2);
      expect(k2).toEqual(want);
      const out = new Uint32Array(2048);
      await transform(makeDevicePolicy(small, { fallback: 'error' }), keys, out, (x) => x + 1);
      expect(out[5]).toBe(((keys[5] as number) + 1) >>> 0);
    },
  );
});

function limitsOf(device: GpuDevice): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k in device.limits) out[k] = (device.limits as unknown as Record<string, number>)[k] as number;
  return out;
}
