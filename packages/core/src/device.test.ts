import { describe, expect, it } from 'vitest';
import { enumerateDevices, fromGPUDevice, type GpuDevice, getCpuDevice, openDevice, releaseDevices } from './device';
import { DeviceArray } from './device-array';
import {
  ArgumentError,
  DestroyedArrayError,
  DeviceLostError,
  DeviceNotFoundError,
  ForeignArrayError,
  GpuValidationError,
  UnsupportedOnDeviceError,
  UnsupportedTypeError,
} from './errors';
import { isSharedBuffer, SHARED_UPLOAD_SLICE, writeHost } from './host-upload';
import { getPipeline, pipelineCount } from './pipeline-cache';
import { gridFor } from './queue';
import { aspectSelector, cpuSelector, defaultSelector, gpuSelector, selectCandidate, selectDevice } from './selectors';
import { gpuForTests } from './testing/gpu';
import { fragment, link, WgslLinkError, workgroupFootprint } from './wgsl/fragment';

const gpu = await gpuForTests();

describe('devices and selectors', () => {
  it('enumerates the CPU last and describes it', async () => {
    const all = await enumerateDevices();
    const cpu = all[all.length - 1];
    expect(cpu?.info.kind).toBe('cpu');
    expect(cpu?.info.backend).toBe('host');
    expect((await getCpuDevice()).cores).toBeGreaterThan(0);
  });

  it('cpuSelector picks the host CPU', async () => {
    const d = await selectDevice(cpuSelector);
    expect(d.type).toBe('cpu');
  });

  it('aspectSelector rejects unknown aspects with an ArgumentError naming the argument', () => {
    expect(() => aspectSelector(['warp-drive' as never])).toThrow(ArgumentError);
    expect(() => aspectSelector(['warp-drive' as never])).toThrow(/required: expected aspects among/);
    expect(() => aspectSelector([], ['nope' as never])).toThrow(/denied/);
    expect(() => aspectSelector('gpu' as never)).toThrow(/required: expected an array/);
  });

  it('a selector returning a non-number is an error; rejecting everything lists what was found', async () => {
    await expect(selectDevice((() => 'yes') as never)).rejects.toThrow(/selector: expected to return a number/);
    await expect(selectDevice(() => -1)).rejects.toThrow(DeviceNotFoundError);
    await expect(selectDevice(() => -1)).rejects.toThrow(/found: .*host CPU/);
    await expect(selectDevice(42 as never)).rejects.toThrow(/selector: expected a function/);
  });

  it('an aspect no device has gives DeviceNotFoundError', async () => {
    await expect(selectDevice(aspectSelector(['cpu', 'subgroups']))).rejects.toThrow(DeviceNotFoundError);
  });

  it('grids split past the per-dimension limit', () => {
    expect(gridFor(10, 65535)).toEqual([10, 1, 1]);
    const [x, y] = gridFor(200_000, 65535);
    expect(x * y).toBeGreaterThanOrEqual(200_000);
    expect(x).toBeLessThanOrEqual(65535);
  });

  it('workgroupFootprint is what the linker sums (each fragment once)', () => {
    const a = fragment({ name: 'fa', code: '', workgroupBytes: 100 });
    const b = fragment({ name: 'fb', code: '', workgroupBytes: 20, deps: [a] });
    const root = fragment({ name: 'fr', code: '', workgroupBytes: 3, deps: [a, b] });
    expect(workgroupFootprint(root)).toBe(123);
    expect(link(root).workgroupBytes).toBe(123);
    expect(() => link(root, 122)).toThrow(UnsupportedOnDeviceError);
  });

  it('the linker checks workgroup memory and duplicate names', () => {
    const a = fragment({ name: 'a', code: 'var<workgroup> a: array<u32, 4096>;', workgroupBytes: 16384 });
    const b = fragment({ name: 'b', code: 'var<workgroup> b: array<u32, 4096>;', workgroupBytes: 16384, deps: [a] });
    expect(() => link(b, 16384)).toThrow(WgslLinkError);
    expect(link(b, 32768).workgroupBytes).toBe(32768);
    const a2 = fragment({ name: 'a', code: 'different' });
    expect(() => link(fragment({ name: 'c', code: '', deps: [a, a2] }))).toThrow(
      /two different fragments are named 'a'/,
    );
  });
});

describe.skipIf(!gpu)('GPU device, queue and DeviceArray', () => {
  const device = gpu as GpuDevice;

  it('the default and gpu selectors pick the same GPU device, opened once with its features', async () => {
    const a = await selectDevice(gpuSelector);
    const b = await selectDevice(defaultSelector);
    expect(a).toBe(b);
    expect(a.type).toBe('gpu');
    expect(a.info.kind === 'gpu' || a.info.kind === 'software-gpu').toBe(true);
    if (a.type === 'gpu' && a.info.features.has('subgroups')) {
      expect(a.info.subgroupMinSize).toBeGreaterThanOrEqual(4);
      expect(a.info.subgroupMaxSize).toBeLessThanOrEqual(128);
    }
    expect(a.type === 'gpu' && a.limits.maxStorageBufferBindingSize).toBeGreaterThanOrEqual(128 * 1024 * 1024);
  });

  it('round-trips every element type, views read their range', async () => {
    const u = Uint32Array.from([1, 2, 3, 0xffffffff, 5]);
    const a = DeviceArray.from(device, u);
    expect(a.type).toBe('u32');
    expect(a.length).toBe(5);
    expect(Array.from(await a.read())).toEqual(Array.from(u));
    expect(Array.from(await a.view(1, 3).read())).toEqual([2, 3, 0xffffffff]);
    expect(Array.from(await a.view(5).read())).toEqual([]);
    const i = DeviceArray.from(device, Int32Array.from([-1, -2147483648, 7]));
    expect(Array.from(await i.read())).toEqual([-1, -2147483648, 7]);
    const f = DeviceArray.from(device, Float32Array.from([1.5, Number.NaN, -0, Number.POSITIVE_INFINITY]));
    const fr = await f.read();
    expect(fr[0]).toBe(1.5);
    expect(fr[1]).toBeNaN();
    expect(Object.is(fr[2], -0)).toBe(true);
    if (device.features.has('shader-f16')) {
      const h = DeviceArray.from(device, Float32Array.from([1, 0.5, 65504, -2, 1e-7]), { type: 'f16' });
      expect(h.type).toBe('f16');
      const hr = await h.read();
      expect(Array.from(hr.slice(0, 4))).toEqual([1, 0.5, 65504, -2]);
      h.destroy();
    }
    const w = DeviceArray.create(device, 'u32', 3);
    w.write(Uint32Array.from([9, 8, 7]));
    expect(Array.from(await w.read())).toEqual([9, 8, 7]);
    for (const x of [a, i, f, w]) x.destroy();
  });

  it('uploads typed arrays over a SharedArrayBuffer (from, write, at offsets), reads back into shared arrays', async () => {
    const n = 1001;
    const sab = new SharedArrayBuffer(4 * (n + 3));
    const u = new Uint32Array(sab, 8, n);
    for (let i = 0; i < n; i++) u[i] = (i * 2654435761) >>> 0;
    const a = DeviceArray.from(device, u);
    expect(Array.from(await a.read())).toEqual(Array.from(u));
    const f = new Float32Array(new SharedArrayBuffer(4 * 5));
    f.set([1.5, Number.NaN, -0, Number.POSITIVE_INFINITY, -3]);
    const fr = await DeviceArray.from(device, f).read();
    expect(new Uint32Array(fr.buffer, fr.byteOffset, 5)).toEqual(new Uint32Array(f.buffer));
    if (device.features.has('shader-f16')) {
      const h = DeviceArray.from(device, f, { type: 'f16' });
      expect(Array.from((await h.read()).subarray(3))).toEqual([Number.POSITIVE_INFINITY, -3]);
      h.destroy();
    }
    // write() into a view at an element offset: the bytes around it stay.
    const w = DeviceArray.from(device, new Int32Array(n + 2).fill(-7));
    const s = new Int32Array(new SharedArrayBuffer(4 * n));
    for (let i = 0; i < n; i++) s[i] = i - 500;
    w.view(1, n).write(s);
    const wr = await w.read();
    expect(wr[0]).toBe(-7);
    expect(wr[n + 1]).toBe(-7);
    expect(Array.from(wr.subarray(1, n + 1))).toEqual(Array.from(s));
    // Results copied into a shared host array.
    const into = new Int32Array(new SharedArrayBuffer(4 * n));
    into.set(await w.view(1, n).read());
    expect(into).toEqual(s);
    for (const x of [a, w]) x.destroy();
  });

  it('writeHost: plain views pass through in one writeBuffer; shared ones go in staging slices at increasing offsets', async () => {
    const queue = device.gpu.queue;
    const calls: { offset: number; data: unknown; dataOffset: number; size: number }[] = [];
    const original = queue.writeBuffer;
    queue.writeBuffer = function (this: GPUQueue, ...args: Parameters<GPUQueue['writeBuffer']>) {
      calls.push({ offset: args[1], data: args[2], dataOffset: args[3] ?? 0, size: args[4] ?? -1 });
      return original.apply(this, args);
    } as GPUQueue['writeBuffer'];
    try {
      const n = 1003;
      const d = DeviceArray.create(device, 'u32', n + 1);
      const plain = new Uint32Array(n + 2).subarray(1, n + 1);
      for (let i = 0; i < n; i++) plain[i] = i * 7 + 1;
      writeHost(queue, d.buffer, 4, plain);
      expect(calls).toEqual([{ offset: 4, data: plain.buffer, dataOffset: 4, size: 4 * n }]);
      const shared = new Uint32Array(new SharedArrayBuffer(4 * (n + 2)), 4, n);
      for (let i = 0; i < n; i++) shared[i] = 0xfffffff0 - i * 3;
      for (const slice of [4, 40, 4000, 4 * n, SHARED_UPLOAD_SLICE]) {
        calls.length = 0;
        writeHost(queue, d.buffer, 4, shared, slice);
        const k = Math.ceil((4 * n) / slice);
        expect(calls.length).toBe(k);
        expect(calls.map((c) => c.offset)).toEqual(Array.from({ length: k }, (_, j) => 4 + j * slice));
        expect(calls.every((c) => !isSharedBuffer(c.data as ArrayBufferLike))).toBe(true);
        expect(calls.reduce((t, c) => t + c.size, 0)).toBe(4 * n);
        expect(Array.from(await d.view(1, n).read())).toEqual(Array.from(shared));
        writeHost(queue, d.buffer, 4, plain);
        expect(Array.from(await d.view(1, n).read())).toEqual(Array.from(plain));
      }
      d.destroy();
      // Past one default slice: two writeBuffer calls, the second at SHARED_UPLOAD_SLICE.
      const m = SHARED_UPLOAD_SLICE / 4 + 3;
      const big = new Uint32Array(new SharedArrayBuffer(4 * m));
      for (let i = 0; i < m; i++) big[i] = Math.imul(i, 0x9e3779b1) >>> 0;
      calls.length = 0;
      const b = DeviceArray.from(device, big);
      expect(calls.map((c) => [c.offset, c.size])).toEqual([
        [0, SHARED_UPLOAD_SLICE],
        [SHARED_UPLOAD_SLICE, 12],
      ]);
      const br = await b.read();
      let wrong = 0;
      for (let i = 0; i < m; i++) if (br[i] !== big[i]) wrong++;
      expect(wrong).toBe(0);
      b.destroy();
    } finally {
      queue.writeBuffer = original;
    }
    expect(isSharedBuffer(new ArrayBuffer(4))).toBe(false);
    expect(isSharedBuffer(new SharedArrayBuffer(4))).toBe(true);
  });

  it('wrong host array types, bad lengths, bad views and destroyed arrays are clear typed errors', async () => {
    expect(() => DeviceArray.from(device, [1, 2, 3] as never)).toThrow(
      /data: expected a Uint32Array, Int32Array or Float32Array, got Array/,
    );
    expect(() => DeviceArray.from(device, new Float64Array(3) as never)).toThrow(ArgumentError);
    expect(() => DeviceArray.from({} as never, new Uint32Array(3))).toThrow(/device: expected a GPU device/);
    expect(() => DeviceArray.from(device, new Uint32Array(3), { type: 'f16' })).toThrow(
      /data: expected a Float32Array/,
    );
    expect(() => DeviceArray.create(device, 'u64' as never, 3)).toThrow(/type: expected one of/);
    expect(() => DeviceArray.create(device, 'u32', -1)).toThrow(/length: expected a non-negative integer/);
    const a = DeviceArray.from(device, new Uint32Array(10));
    expect(() => a.view(11)).toThrow(/offset: expected an integer in \[0, 10\]/);
    expect(() => a.view(2, 9)).toThrow(/length: expected an integer in \[0, 8\]/);
    expect(() => a.view(2, 3).destroy()).toThrow(/a view cannot be destroyed/);
    const v = a.view(1, 2);
    a.destroy();
    a.destroy();
    await expect(a.read()).rejects.toThrow(DestroyedArrayError);
    await expect(v.read()).rejects.toThrow(DestroyedArrayError);
    expect(() => v.check(undefined, 'input')).toThrow(/input: DeviceArray<u32>\[2\] was destroyed/);
    expect(() => a.write(new Uint32Array(10))).toThrow(DestroyedArrayError);
  });

  it('an array of another device is a ForeignArrayError', async () => {
    const other = (await selectDevice(gpuSelector, { disableFeatures: ['subgroups'] })) as GpuDevice;
    expect(other).not.toBe(device);
    expect(other.features.has('subgroups')).toBe(false);
    const a = DeviceArray.from(other, new Uint32Array(4));
    expect(() => a.check(device, 'input')).toThrow(ForeignArrayError);
    expect(() => a.check(device, 'input')).toThrow(/input: DeviceArray belongs to device/);
    a.destroy();
    other.destroy();
  });

  it('WGSL errors surface from the call that caused them; pipelines are cached', async () => {
    const bad = fragment({ name: 'bad_kernel', code: '@compute @workgroup_size(1) fn main() { let x: u32 = 1.5; }' });
    // A kernel the device's compiler rejects is unsupported there (policies that fall back use the CPU).
    await expect(getPipeline(device, bad)).rejects.toThrow(UnsupportedOnDeviceError);
    await expect(getPipeline(device, bad)).rejects.toThrow(
      /^WGSL module 'bad_kernel' failed to compile on '.*': [\s\S]*bad_kernel line 1:54 cannot convert/,
    );
    // The linker checks workgroup sizes against the limits, as an UnsupportedOnDeviceError too.
    const wide = fragment({ name: 'wide_kernel', code: '@compute @workgroup_size(64, 4) fn main() {}' });
    expect(() => link(wide, { invocations: 128 })).toThrow(
      /'wide_kernel' needs 256 invocations; the device allows 128/,
    );
    expect(() => link(wide, { invocations: 256, sizeX: 32, sizeY: 4, sizeZ: 1 })).toThrow(UnsupportedOnDeviceError);
    expect(link(wide, { invocations: 256, sizeX: 64, sizeY: 4, sizeZ: 1 }).code).toContain('wide_kernel');
    const good = fragment({ name: 'good_kernel', code: '@compute @workgroup_size(1) fn main() {}' });
    const before = pipelineCount(device);
    const p1 = await getPipeline(device, good);
    const p2 = await getPipeline(device, good);
    expect(p1).toBe(p2);
    expect(pipelineCount(device)).toBe(before + 1);
  });

  it('GPU validation errors inside a submission become GpuValidationError and leave the queue usable', async () => {
    const a = DeviceArray.from(device, new Uint32Array(4));
    await expect(
      device.queue.submit('bad copy', (rec) => {
        rec.encoder.copyBufferToBuffer(a.buffer, 0, a.buffer, 0, 1 << 20);
      }),
    ).rejects.toThrow(GpuValidationError);
    // With a readback: the call that caused the error throws it (it never waits for data that cannot
    // come), naming itself, and the next call is clean.
    await expect(
      device.queue.submit('bad copy with readback', (rec) => {
        rec.encoder.copyBufferToBuffer(a.buffer, 0, a.buffer, 0, 1 << 20);
        rec.readback(a.buffer, 0, 16);
      }),
    ).rejects.toThrow(/^bad copy with readback: GPU validation error/);
    expect(Array.from(await a.read())).toEqual([0, 0, 0, 0]);
    a.destroy();
  });

  it('profiling reports device time', async () => {
    if (!device.features.has('timestamp-query')) return;
    const k = fragment({
      name: 'busy',
      code: '@group(0) @binding(0) var<storage, read_write> b: array<u32>;\n@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) { b[g.x] = b[g.x] * 3u + 1u; }',
    });
    const p = await getPipeline(device, k);
    const a = DeviceArray.from(device, new Uint32Array(1 << 16));
    device.queue.setProfiling(true);
    device.queue.resetDeviceTime();
    await device.queue.submit('busy', (rec) => {
      const pass = rec.beginPass();
      pass.setPipeline(p);
      pass.setBindGroup(
        0,
        device.gpu.createBindGroup({
          layout: p.getBindGroupLayout(0),
          entries: [{ binding: 0, resource: { buffer: a.buffer } }],
        }),
      );
      pass.dispatchWorkgroups(1024);
      pass.end();
    });
    device.queue.setProfiling(false);
    expect(device.queue.lastDeviceTimeNs).toBeGreaterThan(0);
    expect(device.queue.lastPassTimesNs.map((t) => t.label)).toEqual(['busy']);
    expect(device.queue.lastPassTimesNs[0]?.ns).toBeGreaterThan(0);
    expect(device.queue.lastPassTimesNs[0]?.ns).toBeLessThanOrEqual(device.queue.lastDeviceTimeNs);
    a.destroy();
  });

  it('a lost device turns every later call into DeviceLostError', async () => {
    const d = (await selectDevice(gpuSelector, { disableFeatures: ['timestamp-query'] })) as GpuDevice;
    const a = DeviceArray.from(d, new Uint32Array(4));
    d.destroy();
    await expect(a.read()).rejects.toThrow(DeviceLostError);
    expect(() => DeviceArray.from(d, new Uint32Array(4))).toThrow(DeviceLostError);
  });

  it("a device's limits are a plain object with the implementation's values (no native getter per read)", async () => {
    const d = (await selectDevice(gpuSelector)) as GpuDevice;
    const wrapped = fromGPUDevice(d.gpu);
    for (const dev of [d, wrapped]) {
      expect(dev.limits).not.toBe(dev.gpu.limits);
      expect(Object.getPrototypeOf(dev.limits)).toBe(Object.prototype);
      expect(Object.isFrozen(dev.limits)).toBe(true);
      let numbers = 0;
      for (const k in dev.gpu.limits) {
        const v = (dev.gpu.limits as unknown as Record<string, unknown>)[k];
        if (typeof v !== 'number') continue;
        numbers++;
        expect((dev.limits as unknown as Record<string, number>)[k], k).toBe(v);
      }
      expect(numbers).toBeGreaterThan(20);
    }
  });

  it('unsupported element types name the missing feature', async () => {
    const d = (await selectDevice(gpuSelector, { disableFeatures: ['shader-f16'] })) as GpuDevice;
    expect(() => DeviceArray.create(d, 'f16', 4)).toThrow(UnsupportedTypeError);
    expect(() => DeviceArray.create(d, 'f16', 4)).toThrow(/shader-f16/);
    d.destroy();
  });

  it('opens a device with lowered limits and a wider subgroup range; checks those options', async () => {
    const candidate = await selectCandidate(gpuSelector);
    const d = (await openDevice(candidate, {
      limits: { maxComputeWorkgroupStorageSize: 4096, maxComputeInvocationsPerWorkgroup: 64 },
      subgroupSizes: { min: 4, max: 128 },
    })) as GpuDevice;
    try {
      expect(d).not.toBe(await openDevice(candidate)); // its own device, not the shared one
      expect(d.limits.maxComputeWorkgroupStorageSize).toBe(4096);
      expect(d.limits.maxComputeInvocationsPerWorkgroup).toBe(64);
      expect(d.limits.maxStorageBufferBindingSize).toBe(device.limits.maxStorageBufferBindingSize);
      if (d.features.has('subgroups')) {
        expect([d.info.subgroupMinSize, d.info.subgroupMaxSize]).toEqual([4, 128]);
      }
      const big = fragment({ name: 'big_wg', code: '@compute @workgroup_size(128) fn main() {}' });
      expect(() => getPipeline(d, big)).toThrow(/'big_wg' needs 128 invocations; the device allows 64/);
    } finally {
      d.destroy();
    }
    await expect(openDevice(candidate, { limits: { minStorageBufferOffsetAlignment: 4 } })).rejects.toThrow(
      /^options\.limits\.minStorageBufferOffsetAlignment: expected a max\* limit/,
    );
    await expect(openDevice(candidate, { limits: { maxBufferSize: 0 } })).rejects.toThrow(
      /^options\.limits\.maxBufferSize: expected a positive integer/,
    );
    await expect(openDevice(candidate, { subgroupSizes: { min: 3 } })).rejects.toThrow(
      /^options\.subgroupSizes\.min: expected a power of two in \[4, 128\]/,
    );
  });
});

describe.skipIf(!gpu)('process exit', () => {
  it('a Node program using the GPU exits by itself', async () => {
    const { spawnSync } = await import('node:child_process');
    const code = `import('@webdpl/core').then(async (c) => { const d = await c.selectDevice(c.gpuSelector); const a = c.DeviceArray.from(d, new Uint32Array([1,2,3])); console.log((await a.read()).join(',')); });`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', code], {
      cwd: new URL('..', import.meta.url).pathname,
      timeout: 60_000,
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('1,2,3');
  });

  it('releaseDevices with a garbage collection right after it does not crash Dawn', async () => {
    // Dawn for Node crashes when an instance is collected in the task that destroyed its devices
    // (gpu-instance.ts, `retired`); before the fix this program died (SIGSEGV/abort) nearly every run.
    const { spawnSync } = await import('node:child_process');
    const code = `import('@webdpl/core').then(async (c) => {
      for (let r = 0; r < 3; r++) {
        const d = await c.selectDevice(c.gpuSelector);
        await c.DeviceArray.from(d, new Uint32Array([r])).read();
        const other = await c.selectDevice(c.gpuSelector, { disableFeatures: ['timestamp-query'] });
        other.destroy();
        c.releaseDevices();
        globalThis.gc();
        await new Promise((res) => setTimeout(res, 20));
        globalThis.gc();
      }
      const d = await c.selectDevice(c.gpuSelector);
      console.log((await c.DeviceArray.from(d, new Uint32Array([7, 8])).read()).join(','));
      c.releaseDevices();
      globalThis.gc();
    });`;
    const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', '-e', code], {
      cwd: new URL('..', import.meta.url).pathname,
      timeout: 60_000,
      encoding: 'utf8',
    });
    expect(r.signal, r.stderr).toBe(null);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('7,8');
  });

  it('releaseDevices drops every device', async () => {
    // Runs last in this file: later files get fresh devices.
    releaseDevices();
    const d = await selectDevice(gpuSelector);
    expect(d.type).toBe('gpu');
  });
});
