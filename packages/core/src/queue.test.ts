import { describe, expect, it } from 'vitest';
import type { GpuDevice } from './device';
import { DeviceArray } from './device-array';
import { GpuValidationError, WgslLinkError } from './index';
import { getPipeline, pipelineCount, pipelineFor } from './pipeline-cache';
import { Queue, type Readback } from './queue';
import { gpuForTests } from './testing/gpu';
import { fragment } from './wgsl/fragment';

const gpu = await gpuForTests();

/** A kernel adding `k` to every element of a u32 buffer (one workgroup of 64). */
function addKernel(name: string, k: number) {
  return fragment({
    name,
    code: `@group(0) @binding(0) var<storage, read_write> b: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) { if (i < arrayLength(&b)) { b[i] = b[i] + ${k}u; } }`,
  });
}

async function runKernel(device: GpuDevice, pipeline: GPUComputePipeline, a: DeviceArray, enqueue: boolean) {
  const group = device.gpu.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [{ binding: 0, resource: { buffer: a.buffer, size: a.length * 4 } }],
  });
  const record = (rec: Parameters<Parameters<GpuDevice['queue']['submit']>[1]>[0]) => {
    const pass = rec.beginPass('add');
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(1);
    pass.end();
  };
  if (enqueue) await device.queue.enqueue('add', record);
  else await device.queue.submit('add', record);
}

describe.skipIf(!gpu)('queue: ordering, non-waiting calls, errors', () => {
  const device = gpu as GpuDevice;

  it('pipelines are keyed by code: two fragments of one name and equal code length get their own pipelines', async () => {
    const a = addKernel('same_name_add', 1);
    const b = addKernel('same_name_add', 2);
    expect(a.code.length).toBe(b.code.length);
    const before = pipelineCount(device);
    const pa = await getPipeline(device, a);
    const pb = await getPipeline(device, b);
    expect(pa).not.toBe(pb);
    expect(await getPipeline(device, addKernel('same_name_add', 1))).toBe(pa);
    expect(pipelineCount(device)).toBe(before + 2);
    const x = DeviceArray.from(device, new Uint32Array([10, 20, 30]));
    await runKernel(device, pb, x, false);
    expect(Array.from(await x.read())).toEqual([12, 22, 32]);
    x.destroy();
  });

  it('pipelineFor builds once per key and rejects another leaf under a known name', async () => {
    const leaf = fragment({ name: 'leaf_f', code: 'fn leaf_f(x: u32) -> u32 { return x + 1u; }' });
    let builds = 0;
    const build = () => {
      builds++;
      return fragment({
        name: 'uses_leaf',
        deps: [leaf],
        code: `@group(0) @binding(0) var<storage, read_write> b: array<u32>;
@compute @workgroup_size(1) fn main() { b[0] = leaf_f(b[0]); }`,
      });
    };
    const p1 = await pipelineFor(device, 'test|uses_leaf', [leaf], build);
    const p2 = await pipelineFor(device, 'test|uses_leaf', [leaf], build);
    expect(p1).toBe(p2);
    expect(builds).toBe(1);
    const other = fragment({ name: 'leaf_f', code: 'fn leaf_f(x: u32) -> u32 { return x + 2u; }' });
    expect(() => pipelineFor(device, 'test|uses_leaf', [other], build)).toThrow(WgslLinkError);
  });

  it('enqueued calls run in call order without waits; finish waits for them', async () => {
    const x = DeviceArray.from(device, new Uint32Array(64).fill(1));
    const add1 = await getPipeline(device, addKernel('order_add1', 1));
    const submissions = device.queue.submissions;
    // Each call doubles nothing, so order is seen through a non-commutative mix: +1, then copy.
    const y = DeviceArray.create(device, 'u32', 64);
    for (let r = 0; r < 5; r++) await runKernel(device, add1, x, true);
    await device.queue.enqueue('copy', (rec) => rec.encoder.copyBufferToBuffer(x.buffer, 0, y.buffer, 0, 256));
    for (let r = 0; r < 5; r++) await runKernel(device, add1, x, true);
    await device.queue.finish();
    expect(device.queue.submissions - submissions).toBe(11);
    expect((await y.read())[0]).toBe(6);
    expect((await x.read())[63]).toBe(11);
    x.destroy();
    y.destroy();
  });

  it('a turn taken first submits first, even when it waits before submitting', async () => {
    const x = DeviceArray.from(device, new Uint32Array(4).fill(0));
    const y = DeviceArray.create(device, 'u32', 4);
    const turn = device.queue.reserve();
    // A later call (a copy of x) must wait for the earlier turn (which writes x).
    const later = device.queue.submit('copy', (rec) => rec.encoder.copyBufferToBuffer(x.buffer, 0, y.buffer, 0, 16));
    await new Promise((r) => setTimeout(r, 20));
    await device.queue.enqueue('write', (rec) => rec.encoder.clearBuffer(x.buffer, 0, 16), turn);
    await later;
    expect(Array.from(await y.read())).toEqual([0, 0, 0, 0]);
    const t2 = device.queue.reserve();
    x.write(Uint32Array.from([5, 6, 7, 8]));
    const copy = device.queue.submit('copy', (rec) => rec.encoder.copyBufferToBuffer(x.buffer, 0, y.buffer, 0, 16));
    t2.release();
    await copy;
    expect(Array.from(await y.read())).toEqual([5, 6, 7, 8]);
    x.destroy();
    y.destroy();
  });

  it('turns: ready only while an earlier turn is pending; a chain of three waits in order; finish waits for the last', async () => {
    // Nothing pending: no promise to wait for.
    const alone = device.queue.reserve();
    expect(alone.ready).toBeUndefined();
    alone.release();
    const t0 = device.queue.reserve();
    expect(t0.ready).toBeUndefined();
    const t1 = device.queue.reserve();
    expect(t1.ready).toBeDefined();
    t0.release();
    await t1.ready;
    const t2 = device.queue.reserve();
    const t3 = device.queue.reserve();
    const seen: string[] = [];
    const w2 = t2.ready?.then(() => seen.push('t2'));
    const w3 = t3.ready?.then(() => seen.push('t3'));
    let finished = false;
    const fin = device.queue.finish().then(() => {
      finished = true;
    });
    await new Promise((r) => setTimeout(r, 5));
    expect(seen).toEqual([]);
    expect(finished).toBe(false);
    t1.release();
    await w2;
    expect(seen).toEqual(['t2']);
    t2.release();
    t2.release(); // idempotent
    await w3;
    expect(seen).toEqual(['t2', 't3']);
    expect(finished).toBe(false);
    t3.release();
    await fin;
    expect(finished).toBe(true);
    // All released: the next turn waits for nothing.
    const after = device.queue.reserve();
    expect(after.ready).toBeUndefined();
    after.release();
  });

  it("a non-waiting call's GPU error surfaces once (from the call or the next one), naming the call", async () => {
    const a = DeviceArray.from(device, new Uint32Array(4));
    const errors: unknown[] = [];
    await device.queue
      .enqueue('bad copy', (rec) => rec.encoder.copyBufferToBuffer(a.buffer, 0, a.buffer, 0, 1 << 20))
      .catch((e) => errors.push(e));
    await device.queue.finish().catch((e) => errors.push(e));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(GpuValidationError);
    expect(String(errors[0])).toMatch(/bad copy/);
    // Thrown once: the queue is usable again.
    await device.queue.finish();
    expect(Array.from(await a.read())).toEqual([0, 0, 0, 0]);
    a.destroy();
  });

  it('an error reported after a call returned is thrown by the next call that reads back, not lost', async () => {
    const a = DeviceArray.from(device, new Uint32Array([1, 2, 3, 4]));
    // As an implementation that reports errors asynchronously would: after the call returned.
    device.queue.recordUncaptured({ message: 'injected late error' } as GPUError);
    await expect(a.read()).rejects.toThrow(/injected late error.*DeviceArray\.read/);
    expect(Array.from(await a.read())).toEqual([1, 2, 3, 4]);
    device.queue.recordUncaptured({ message: 'another late error' } as GPUError);
    await expect(device.queue.finish()).rejects.toThrow(GpuValidationError);
    await device.queue.finish();
    a.destroy();
  });

  it('pooledBuffers counts the uniforms and readback buffers kept for reuse', async () => {
    // A queue of its own, so the device queue's pools (used by the other tests) do not count.
    const q = new Queue(device, () => undefined);
    expect(q.pooledBuffers).toBe(0);
    const src = DeviceArray.from(device, new Uint32Array([1, 2, 3, 4]));
    let rb: { data(): ArrayBuffer } | undefined;
    await q.submit('pooled', (rec) => {
      rec.uniform(new Uint32Array([7]));
      rb = rec.readback(src.buffer, 0, 16);
    });
    expect([...new Uint32Array(rb?.data() as ArrayBuffer)]).toEqual([1, 2, 3, 4]);
    // One uniform back in its pool, one readback buffer back in its size class.
    expect(q.pooledBuffers).toBe(2);
    src.destroy();
  });

  it('readbacks of a few words (kept as words) and of more give the same bytes and words', async () => {
    const words = Uint32Array.from({ length: 12 }, (_, i) => (i * 0x9e3779b9 + 0x80000001) >>> 0);
    const src = DeviceArray.from(device, words);
    // Sizes around SMALL_READBACK (16 bytes), whole and partial words, and two readbacks in one
    // submission (the path beside Node's one-readback path).
    for (const [offset, size] of [
      [0, 4],
      [4, 8],
      [8, 12],
      [0, 16],
      [4, 6],
      [0, 20],
      [12, 36],
    ] as const) {
      for (const two of [false, true]) {
        const rbs: Readback[] = [];
        await device.queue.submit('readback sizes', (rec) => {
          rbs.push(rec.readback(src.buffer, offset, size));
          if (two) rbs.push(rec.readback(src.buffer, 0, 4));
        });
        const rb = rbs[0] as Readback;
        const want = new Uint8Array(words.buffer, offset, size);
        const what = `${size} bytes at ${offset}${two ? ', two readbacks' : ''}`;
        expect([...new Uint8Array(rb.data())], what).toEqual([...want]);
        // data() again: the same bytes.
        expect(rb.data().byteLength, what).toBe(size);
        for (let i = 0; i < Math.floor(size / 4); i++) {
          expect(rb.word(i), `${what}, word ${i}`).toBe(words[offset / 4 + i]);
        }
        if (two) expect((rbs[1] as Readback).word(0)).toBe(words[0]);
      }
    }
    // A word read before the submission completed is an error, as data() is.
    let early: Readback | undefined;
    const pending = device.queue.submit('early', (rec) => {
      early = rec.readback(src.buffer, 0, 4);
    });
    expect(() => early?.word(0)).toThrow(/before its submission completed/);
    expect(() => early?.data()).toThrow(/before its submission completed/);
    await pending;
    expect(early?.word(0)).toBe(words[0]);
    src.destroy();
  });
  it('submitRead resolves with the first readback, submit with nothing; failures reject, never throw', async () => {
    const q = new Queue(device, () => undefined);
    const src = DeviceArray.from(device, new Uint32Array([5, 6, 7, 8]));
    let made: Readback | undefined;
    const got = await q.submitRead('read one', (rec) => {
      made = rec.readback(src.buffer, 4, 4);
    });
    expect(got).toBe(made);
    expect(got?.word(0)).toBe(6);
    // Its readback buffer went back to the pool (the hot path settles the submission itself).
    expect(q.pooledBuffers).toBe(1);
    // A result made where the readback arrives; one that throws rejects the call.
    expect(
      await q.submitRead(
        'mapped',
        (rec) => void rec.readback(src.buffer, 8, 8),
        undefined,
        (rb) => rb?.word(1),
      ),
    ).toBe(8);
    await expect(
      q.submitRead(
        'bad result',
        (rec) => void rec.readback(src.buffer, 0, 4),
        undefined,
        () => {
          throw new Error('result failed');
        },
      ),
    ).rejects.toThrow(/result failed/);
    expect(
      await q.submitRead(
        'no readback',
        () => {},
        undefined,
        (rb) => (rb === undefined ? 'none' : 'some'),
      ),
    ).toBe('none');
    expect(await q.submit('read one', (rec) => void rec.readback(src.buffer, 0, 4))).toBeUndefined();
    expect(await q.submitRead('no readback', (rec) => rec.encoder.clearBuffer(src.buffer, 0, 0))).toBeUndefined();
    // A recording that throws: a rejected promise (the turn released: the next call runs).
    const throwing = () => {
      throw new Error('recording failed');
    };
    for (const f of [() => q.submit('throws', throwing), () => q.submitRead('throws', throwing)]) {
      let p: Promise<unknown> | undefined;
      expect(() => {
        p = f();
      }).not.toThrow();
      await expect(p).rejects.toThrow(/recording failed/);
    }
    // A submission that fails validation, with a readback: rejected, naming the call; the queue
    // goes on (the device's queue: the one its uncaptured errors are recorded on).
    await expect(
      device.queue.submitRead('bad copy', (rec) => {
        rec.encoder.copyBufferToBuffer(src.buffer, 0, src.buffer, 0, 1 << 20);
        rec.readback(src.buffer, 0, 4);
      }),
    ).rejects.toThrow(/bad copy/);
    expect((await device.queue.submitRead('after', (rec) => void rec.readback(src.buffer, 8, 4)))?.word(0)).toBe(7);
    src.destroy();
  });
});
