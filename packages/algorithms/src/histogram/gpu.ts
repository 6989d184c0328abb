/**
 * GPU part of histogram: the counts are cleared and filled in one submission (clear, one dispatch of
 * the histogram kernel per input segment that fits a storage binding, the readback for a host
 * output). Edges go to the device as a temporary of the element type; counts and edges are bound
 * whole. A counts array in the input's GPU buffer (a buffer cannot be bound read-only and writable
 * in one dispatch) or at an offset no binding can start at is filled through a temporary.
 */
import { ArgumentError, type DeviceArray, getPipeline, type NumericType, UnsupportedOnDeviceError } from '@webdpl/core';
import { segmentsFor, windowEntry, windowOf } from '../common/segments';
import { bindingLimit, resolveTuning, useSubgroups } from '../common/tuning';
import type { GpuCall } from '../pattern/dispatch';
import type { BinEdges } from './bins';
import { histogramKernel } from './kernels';
import { histogramTuning } from './tuning';

const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);

function bitsOfF32(v: number): number {
  f32[0] = v;
  return f32Bits[0] as number;
}

/** Counts of `x` per bin of `b` into `y` (b.bins elements, overwritten). */
export async function gpuHistogram(call: GpuCall, x: DeviceArray, y: DeviceArray, b: BinEdges): Promise<void> {
  const { device } = call;
  const t = resolveTuning('histogram', histogramTuning, call.tuning);
  const w = t.workgroupSize;
  if (!Number.isInteger(w) || w < 1 || w > device.limits.maxComputeInvocationsPerWorkgroup) {
    throw new ArgumentError('tuning.histogram.workgroupSize', 'a positive integer within the device limit', String(w));
  }
  for (const k of ['itemsPerThread', 'maxWorkgroups'] as const) {
    if (!Number.isInteger(t[k]) || t[k] < 1)
      throw new ArgumentError(`tuning.histogram.${k}`, 'a positive integer', String(t[k]));
  }
  const type = x.type as NumericType;
  const bins = b.bins;
  const m = b.edges.length;
  const n = x.length;
  if (Math.max(bins, m) * 4 > device.limits.maxStorageBufferBindingSize) {
    throw new UnsupportedOnDeviceError(
      `histogram of ${bins} bins exceeds one storage binding on '${device.info.name}'`,
    );
  }
  const subgroups = useSubgroups(device, t.subgroups);
  const room = device.limits.maxComputeWorkgroupStorageSize - (subgroups ? 16 : 0);
  const pow2 = Math.max(64, 2 ** Math.ceil(Math.log2(bins)));
  const privateBins = t.privateBins > 0 && bins <= t.privateBins && pow2 * 4 <= room ? pow2 : 0;
  // The edges next to the bins in workgroup memory when they fit (edge reads are most of binning).
  const cacheEdges = t.cacheEdges && privateBins > 0 && (2 * pow2 + 1) * 4 <= room;
  const run = n > 0 && m > 0;
  const pipeline = run
    ? await getPipeline(
        device,
        histogramKernel({
          type: type as 'u32',
          even: b.even,
          privateBins,
          cacheEdges,
          subgroups,
          workgroupSize: w,
          itemsPerThread: t.itemsPerThread,
        }),
      )
    : undefined;
  // Counts bound whole: through a temporary when y shares the input's buffer or its offset is not
  // a valid binding offset (a view).
  const align = device.limits.minStorageBufferOffsetAlignment;
  const target = y.buffer === x.buffer || y.byteOffset % align !== 0 ? call.temp('u32', bins) : y;
  let edges: DeviceArray | undefined;
  if (run) {
    edges = call.temp(type, m);
    const e =
      type === 'u32' ? new Uint32Array(b.edges) : type === 'i32' ? new Int32Array(b.edges) : new Float32Array(b.edges);
    (edges as DeviceArray<'u32'>).write(e as Uint32Array);
  }
  const tile = w * t.itemsPerThread;
  const segments = run ? segmentsFor(device, n, bindingLimit(device, t.maxBindingBytes), tile) : [];
  let rb: { data(): ArrayBuffer } | undefined;
  await device.queue.submit('histogram', (rec) => {
    rec.encoder.clearBuffer(target.buffer, target.byteOffset, bins * 4);
    if (pipeline && edges) {
      const pass = rec.beginPass('histogram');
      pass.setPipeline(pipeline);
      for (const s of segments) {
        const win = windowOf(device, x, s);
        const tiles = Math.ceil(s.length / tile);
        const wgs = Math.min(tiles, t.maxWorkgroups);
        const params = new Uint32Array([
          s.length,
          win.localBase,
          m,
          b.open ? 1 : 0,
          bitsOfF32(b.lo),
          bitsOfF32(b.scale),
          bins,
          wgs,
          tiles,
          0,
          0,
          0,
        ]);
        pass.setBindGroup(
          0,
          device.gpu.createBindGroup({
            layout: pipeline.getBindGroupLayout(0),
            entries: [
              { binding: 0, resource: { buffer: rec.uniform(params) } },
              windowEntry(1, x, win),
              { binding: 2, resource: { buffer: edges.buffer, offset: edges.byteOffset, size: m * 4 } },
              { binding: 3, resource: { buffer: target.buffer, offset: target.byteOffset, size: bins * 4 } },
            ],
          }),
        );
        rec.dispatch(pass, wgs);
      }
      pass.end();
    }
    if (target !== y)
      rec.encoder.copyBufferToBuffer(target.buffer, target.byteOffset, y.buffer, y.byteOffset, bins * 4);
    if (call.readBack(0)) rb = rec.readback(y.buffer, y.byteOffset, bins * 4);
  });
  call.deliver(0, rb?.data(), bins);
}
