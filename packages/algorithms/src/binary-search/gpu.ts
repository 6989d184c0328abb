/**
 * GPU backend of the vectorized searches: one dispatch of searchKernel (one thread per query, 2-D
 * grid past 65,535 workgroups) in one command buffer, with the result read back in the same one
 * when it is a host array. Inputs at offsets the device cannot bind are copied to temporaries first.
 */
import {
  ArgumentError,
  type DeviceArray,
  type GpuDevice,
  type GpuFunction,
  getPipeline,
  UnsupportedOnDeviceError,
} from '@webdpl/core';
import type { CheckedArray } from '../common/args';
import { copyInto, releaseTemps, toDevice } from '../common/gpu-io';
import { resolveTuning } from '../common/tuning';
import { type SearchKind, searchKernel } from './kernels';
import { binarySearchTuning } from './tuning';

export async function gpuSearch(
  device: GpuDevice,
  tuningOverrides: Readonly<Record<string, number | boolean>>,
  kind: SearchKind,
  sorted: CheckedArray,
  queries: CheckedArray,
  result: CheckedArray,
  comp: GpuFunction,
): Promise<void> {
  const t = resolveTuning('binary-search', binarySearchTuning, tuningOverrides);
  const w = t.workgroupSize;
  if (!Number.isInteger(w) || w < 1 || (w & (w - 1)) !== 0) {
    throw new ArgumentError('tuning.binary-search.workgroupSize', 'a power of two', String(w));
  }
  const n = sorted.length;
  const m = queries.length;
  const limit = device.limits.maxStorageBufferBindingSize;
  if (n * 4 > limit || m * 4 > limit) {
    throw new UnsupportedOnDeviceError(`search over ${n} elements with ${m} queries exceeds one storage binding`);
  }
  const pipeline = await getPipeline(
    device,
    searchKernel({ kind, type: sorted.type, comparator: comp.wgsl([sorted.type, sorted.type]), workgroupSize: w }),
  );
  const s = toDevice(device, sorted);
  const q = toDevice(device, queries);
  const r = toDevice(device, result, false);
  try {
    let rb: { data(): ArrayBuffer } | undefined;
    await device.queue.submit(kind === 'binary' ? 'binarySearch' : `${kind}Bound`, (rec) => {
      const align = device.limits.minStorageBufferOffsetAlignment;
      const bind = (binding: number, a: DeviceArray, count: number, copy: boolean): GPUBindGroupEntry => {
        const size = Math.max(4, count * 4);
        if (a.byteOffset % align === 0) return { binding, resource: { buffer: a.buffer, offset: a.byteOffset, size } };
        const tmp = rec.temp(size);
        if (copy) rec.encoder.copyBufferToBuffer(a.buffer, a.byteOffset, tmp, 0, count * 4);
        return { binding, resource: { buffer: tmp, offset: 0, size } };
      };
      const out = bind(3, r.array, m, false);
      const pass = rec.beginPass('search');
      pass.setPipeline(pipeline);
      pass.setBindGroup(
        0,
        device.gpu.createBindGroup({
          layout: pipeline.getBindGroupLayout(0),
          entries: [
            { binding: 0, resource: { buffer: rec.uniform(new Uint32Array([n, m, 0, 0])) } },
            bind(1, s.array, n, true),
            bind(2, q.array, m, true),
            out,
          ],
        }),
      );
      rec.dispatch(pass, Math.ceil(m / w));
      pass.end();
      const res = out.resource as GPUBufferBinding;
      if (res.buffer !== r.array.buffer) {
        rec.encoder.copyBufferToBuffer(res.buffer, 0, r.array.buffer, r.array.byteOffset, m * 4);
      }
      if (result.kind === 'host') rb = rec.readback(r.array.buffer, r.array.byteOffset, m * 4);
    });
    if (result.kind === 'host' && rb) copyInto(result.array, rb.data(), m);
  } finally {
    releaseTemps(s, q, r);
  }
}
