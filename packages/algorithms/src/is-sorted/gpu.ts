/**
 * GPU backend of isSortedUntil: one dispatch of isSortedKernel over tiles of
 * workgroupSize x itemsPerThread elements (2-D grid past 65,535 workgroups) and a 4-byte readback,
 * in one command buffer. Host arrays arrive uploaded (pattern/dispatch.ts).
 */
import {
  ArgumentError,
  type DeviceArray,
  type GpuDevice,
  type GpuFunction,
  getPipeline,
  type NumericType,
  UnsupportedOnDeviceError,
} from '@webdpl/core';
import { bindingLimit, fitThreads, resolveTuning } from '../common/tuning';
import { IS_SORTED, isSortedKernel } from './kernels';
import { type IsSortedTuning, isSortedTuning } from './tuning';

/**
 * The end of the sorted prefix of `data` (n when sorted). Inputs beyond one storage binding (or the
 * `maxBindingBytes` tuning) are checked in segments that overlap by one element, in order, stopping
 * at the first segment with an unsorted pair; segment starts stay 256-byte aligned.
 */
export async function gpuIsSortedUntil(
  device: GpuDevice,
  tuningOverrides: Readonly<Record<string, number | boolean>>,
  data: DeviceArray,
  comp: GpuFunction,
): Promise<number> {
  const t = resolveTuning('is-sorted', fitThreads(device, isSortedTuning), tuningOverrides);
  const w = t.workgroupSize;
  if (!Number.isInteger(w) || w < 1 || (w & (w - 1)) !== 0) {
    throw new ArgumentError('tuning.is-sorted.workgroupSize', 'a power of two', String(w));
  }
  const n = data.length;
  const limitElems = Math.floor(bindingLimit(device, t.maxBindingBytes) / 4);
  if (n <= limitElems) return isSortedOne(device, t, data, comp);
  // Segments of `per` elements plus the first of the next (its pair with the last one), and room for
  // an unaligned view's copy.
  const per = Math.max(64, Math.floor((limitElems - 65) / 64) * 64);
  for (let s = 0; s + 1 < n; s += per) {
    const len = Math.min(per + 1, n - s);
    const r = await isSortedOne(device, t, data.view(s, len), comp);
    if (r < len) return s + r;
  }
  return n;
}

async function isSortedOne(
  device: GpuDevice,
  t: IsSortedTuning,
  data: DeviceArray,
  comp: GpuFunction,
): Promise<number> {
  const w = t.workgroupSize;
  const n = data.length;
  if (n * 4 > device.limits.maxStorageBufferBindingSize) {
    throw new UnsupportedOnDeviceError(
      `isSorted of ${n} elements exceeds one storage binding on '${device.info.name}'`,
    );
  }
  const pipeline = await getPipeline(
    device,
    isSortedKernel({
      type: data.type as NumericType,
      comparator: comp.wgsl([data.type as NumericType, data.type as NumericType]),
      workgroupSize: w,
      itemsPerThread: t.itemsPerThread,
    }),
  );
  {
    const a = data;
    let rb: { data(): ArrayBuffer } | undefined;
    await device.queue.submit('isSortedUntil', (rec) => {
      const result = rec.temp(16, 'isSortedUntil result');
      rec.encoder.clearBuffer(result);
      const align = device.limits.minStorageBufferOffsetAlignment;
      let buffer = a.buffer;
      let offset = a.byteOffset;
      if (offset % align !== 0) {
        buffer = rec.temp(n * 4, 'isSortedUntil copy');
        rec.encoder.copyBufferToBuffer(a.buffer, a.byteOffset, buffer, 0, n * 4);
        offset = 0;
      }
      const pass = rec.beginPass('isSortedUntil');
      pass.setPipeline(pipeline);
      pass.setBindGroup(
        0,
        device.gpu.createBindGroup({
          layout: pipeline.getBindGroupLayout(0),
          entries: IS_SORTED.entries({
            is_params: { buffer: rec.uniform(IS_SORTED.pack({ n })) },
            data: { buffer, offset, size: n * 4 },
            result: { buffer: result },
          }),
        }),
      );
      rec.dispatch(pass, Math.ceil(n / (w * t.itemsPerThread)));
      pass.end();
      rb = rec.readback(result, 0, 4);
    });
    const v = new Uint32Array((rb as { data(): ArrayBuffer }).data())[0] as number;
    return v === 0 ? n : n - v;
  }
}
