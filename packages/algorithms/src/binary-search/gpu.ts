/**
 * GPU backend of the vectorized searches: one dispatch of searchKernel (one thread per query, 2-D
 * grid past 65,535 workgroups) in one command buffer, with the result read back in the same one
 * when asked. Inputs at offsets the device cannot bind are copied to temporaries first.
 */
import {
  ArgumentError,
  DeviceArray,
  type GpuDevice,
  type GpuFunction,
  getPipeline,
  maximum,
  type NumericType,
  plus,
  UnsupportedOnDeviceError,
} from '@webdpl/core';
import { bindingLimit, fitThreads, resolveTuning } from '../common/tuning';
import { functionElement } from '../engines/map/elements';
import { mapDevice } from '../engines/map/index';
import { SEARCH, type SearchKind, searchKernel } from './kernels';
import { type BinarySearchTuning, binarySearchTuning } from './tuning';

/**
 * Searches each of `queries` in `sorted` (both n, m >= 1 elements, on `device`) into `result`; returns
 * the result's bytes when `readBack`. Beyond one storage binding (or the `maxBindingBytes` tuning):
 * queries go in chunks, and a sorted range is searched segment by segment, the per-segment answers
 * combined: lower and upper bounds are counts (of elements before the query, or not after it), so
 * they add up over segments; binarySearch's found-flags are or-ed.
 */
export async function gpuSearch(
  device: GpuDevice,
  tuningOverrides: Readonly<Record<string, number | boolean>>,
  kind: SearchKind,
  sorted: DeviceArray,
  queries: DeviceArray,
  result: DeviceArray,
  comp: GpuFunction,
  readBack: boolean,
): Promise<ArrayBuffer | undefined> {
  const t = resolveTuning('binary-search', fitThreads(device, binarySearchTuning), tuningOverrides);
  const w = t.workgroupSize;
  if (!Number.isInteger(w) || w < 1 || (w & (w - 1)) !== 0) {
    throw new ArgumentError('tuning.binary-search.workgroupSize', 'a power of two', String(w));
  }
  const n = sorted.length;
  const m = queries.length;
  const limitElems = Math.floor(bindingLimit(device, t.maxBindingBytes) / 4);
  if (n <= limitElems && m <= limitElems) return searchOne(device, t, kind, sorted, queries, result, comp, readBack);
  // Chunks stay 256-byte aligned and leave room for an unaligned view's copy.
  const per = Math.max(64, Math.floor((limitElems - 64) / 64) * 64);
  const combine = functionElement(kind === 'binary' ? maximum : plus, ['u32', 'u32'], 'u32');
  const tmp = n > per ? DeviceArray.create(device, 'u32', Math.min(m, per)) : undefined;
  try {
    for (let q = 0; q < m; q += per) {
      const qn = Math.min(per, m - q);
      const qs = queries.view(q, qn);
      const rs = result.view(q, qn);
      for (let s = 0; s < n; s += per) {
        const seg = sorted.view(s, Math.min(per, n - s));
        if (s === 0) {
          await searchOne(device, t, kind, seg, qs, rs, comp, false);
          continue;
        }
        const part = (tmp as DeviceArray).view(0, qn);
        await searchOne(device, t, kind, seg, qs, part, comp, false);
        await mapDevice(device, {
          label: kind === 'binary' ? 'binarySearch' : `${kind}Bound`,
          n: qn,
          inputs: [rs, part],
          output: rs,
          elem: combine,
          tuningName: 'map',
        });
      }
    }
  } finally {
    tmp?.discard();
  }
  if (!readBack) return undefined;
  let rb: { data(): ArrayBuffer } | undefined;
  await device.queue.submit('search readback', (rec) => {
    rb = rec.readback(result.buffer, result.byteOffset, m * 4);
  });
  return rb?.data();
}

async function searchOne(
  device: GpuDevice,
  t: BinarySearchTuning,
  kind: SearchKind,
  sorted: DeviceArray,
  queries: DeviceArray,
  result: DeviceArray,
  comp: GpuFunction,
  readBack: boolean,
): Promise<ArrayBuffer | undefined> {
  const w = t.workgroupSize;
  const type = sorted.type as NumericType;
  const n = sorted.length;
  const m = queries.length;
  const limit = device.limits.maxStorageBufferBindingSize;
  if (n * 4 > limit || m * 4 > limit) {
    throw new UnsupportedOnDeviceError(`search over ${n} elements with ${m} queries exceeds one storage binding`);
  }
  const pipeline = await getPipeline(
    device,
    searchKernel({ kind, type, comparator: comp.wgsl([type, type]), workgroupSize: w }),
  );
  let rb: { data(): ArrayBuffer } | undefined;
  await device.queue.submit(kind === 'binary' ? 'binarySearch' : `${kind}Bound`, (rec) => {
    const align = device.limits.minStorageBufferOffsetAlignment;
    // Arrays at offsets the device cannot bind go through aligned temporaries, copied before the
    // pass opens (nothing may be recorded on the encoder while a pass is open).
    const bind = (a: DeviceArray, count: number, copy: boolean): GPUBufferBinding => {
      const size = Math.max(4, count * 4);
      if (a.byteOffset % align === 0) return { buffer: a.buffer, offset: a.byteOffset, size };
      const tmp = rec.temp(size);
      if (copy) rec.encoder.copyBufferToBuffer(a.buffer, a.byteOffset, tmp, 0, count * 4);
      return { buffer: tmp, offset: 0, size };
    };
    const params = { buffer: rec.uniform(SEARCH.pack({ n, m })) };
    const sortedIn = bind(sorted, n, true);
    const queriesIn = bind(queries, m, true);
    const res = bind(result, m, false);
    const entries = SEARCH.entries({ bs_params: params, sorted: sortedIn, queries: queriesIn, result: res });
    const pass = rec.beginPass('search');
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, device.gpu.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries }));
    rec.dispatch(pass, Math.ceil(m / w));
    pass.end();
    if (res.buffer !== result.buffer) {
      rec.encoder.copyBufferToBuffer(res.buffer, 0, result.buffer, result.byteOffset, m * 4);
    }
    if (readBack) rb = rec.readback(result.buffer, result.byteOffset, m * 4);
  });
  return rb?.data();
}
