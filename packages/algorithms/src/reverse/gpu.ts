/**
 * GPU parts of reverse and rotate (permuting copies of 4-byte elements). Host arrays arrive uploaded
 * (pattern/dispatch.ts); an output in the input's GPU buffer (in place, or another view of it) reads
 * from a copy of the input in a temporary, since a buffer cannot be bound both read-only and
 * writable in one dispatch, nor be both source and destination of one buffer copy.
 */
import {
  ArgumentError,
  type DeviceArray,
  type GpuDevice,
  getPipeline,
  type NumericType,
  type Recorder,
} from '@webdpl/core';
import { segmentsFor, windowOf, windowResource } from '../common/segments';
import { bindingLimit, resolveTuning } from '../common/tuning';
import type { GpuCall } from '../pattern/dispatch';
import { REV, reverseKernel } from './kernels';
import { reverseTuning } from './tuning';

/** The input to read: `x` itself, or a temporary holding a copy of it (copied by `before`). */
function sourceOf(call: GpuCall, x: DeviceArray, y: DeviceArray, n: number) {
  if (x.buffer !== y.buffer) return { src: x, before: (_: Recorder) => {} };
  const src = call.temp(x.type as NumericType, n);
  return {
    src,
    before: (rec: Recorder) =>
      rec.encoder.copyBufferToBuffer(x.buffer, x.byteOffset, src.buffer, src.byteOffset, n * 4),
  };
}

/** Records the readback of y's first n elements when output 0 is a host array, and delivers it. */
async function submit(call: GpuCall, label: string, y: DeviceArray, n: number, record: (rec: Recorder) => void) {
  const { device } = call;
  let rb: { data(): ArrayBuffer } | undefined;
  const back = call.readBack(0);
  await device.queue.submit(label, (rec) => {
    record(rec);
    if (back) rb = rec.readback(y.buffer, y.byteOffset, n * 4);
  });
  call.deliver(0, rb?.data(), n);
}

/**
 * y[j] = x[n - 1 - j] for j < n, in segments of the output that fit one storage binding (each
 * reads the mirrored segment of the input).
 */
export async function gpuReverse(call: GpuCall, x: DeviceArray, y: DeviceArray, n: number): Promise<void> {
  const device: GpuDevice = call.device;
  const t = resolveTuning('reverse', reverseTuning, call.tuning);
  const w = t.workgroupSize;
  if (!Number.isInteger(w) || w < 1 || w > device.limits.maxComputeInvocationsPerWorkgroup) {
    throw new ArgumentError('tuning.reverse.workgroupSize', 'a positive integer within the device limit', String(w));
  }
  if (!Number.isInteger(t.itemsPerThread) || t.itemsPerThread < 1) {
    throw new ArgumentError('tuning.reverse.itemsPerThread', 'a positive integer', String(t.itemsPerThread));
  }
  const tile = w * t.itemsPerThread;
  const pipeline = await getPipeline(device, reverseKernel({ workgroupSize: w, itemsPerThread: t.itemsPerThread }));
  const { src, before } = sourceOf(call, x, y, n);
  const segments = segmentsFor(device, n, bindingLimit(device, t.maxBindingBytes), tile);
  await submit(call, 'reverse', y, n, (rec) => {
    before(rec);
    const pass = rec.beginPass('reverse');
    pass.setPipeline(pipeline);
    for (const s of segments) {
      const wo = windowOf(device, y, s);
      const wi = windowOf(device, src, { start: n - s.start - s.length, length: s.length });
      const params = rec.uniform(REV.pack({ count: s.length, base_out: wo.localBase, base_in: wi.localBase }));
      pass.setBindGroup(
        0,
        device.gpu.createBindGroup({
          layout: pipeline.getBindGroupLayout(0),
          entries: REV.entries({
            rev: { buffer: params },
            rev_src: windowResource(src, wi),
            rev_dst: windowResource(y, wo),
          }),
        }),
      );
      rec.dispatch(pass, Math.ceil(s.length / tile));
    }
    pass.end();
  });
}

/** y = x[m..n) followed by x[0..m): two buffer copies (no kernel, no binding limit). */
export async function gpuRotate(call: GpuCall, x: DeviceArray, y: DeviceArray, n: number, m: number): Promise<void> {
  // No kernel to tune, but the overrides are still checked (a misspelt key is an error).
  resolveTuning('rotate', reverseTuning, call.tuning);
  const { src, before } = sourceOf(call, x, y, n);
  await submit(call, 'rotate', y, n, (rec) => {
    before(rec);
    const e = rec.encoder;
    if (n - m > 0) e.copyBufferToBuffer(src.buffer, src.byteOffset + m * 4, y.buffer, y.byteOffset, (n - m) * 4);
    if (m > 0) e.copyBufferToBuffer(src.buffer, src.byteOffset, y.buffer, y.byteOffset + (n - m) * 4, m * 4);
  });
}
