/**
 * GPU part of merge and mergeByKey: the merge sort engine's merge-path pieces (engines/merge-sort
 * kernels with `twoInputs`: a and b read as one range, one pair of runs): one partition dispatch
 * (a merge-path search per output tile) and one merge dispatch (a tile per workgroup through
 * workgroup memory), in one submission with the readbacks of host outputs.
 *
 * Arrays are bound whole from offset 0 of a binding: an input or output at an offset no binding can
 * start at, or an input in an output's buffer, goes through a temporary copy (in the same command
 * buffer). Merges of more elements than one storage binding holds are windowed
 * (engines/merge-sort/windows.ts: merge-path splits searched from the host, then one merge per
 * output window), in a few submissions.
 */
import { type DeviceArray, type GpuFunction, getPipeline, type NumericType, type Recorder } from '@webdpl/core';
import { checkMergeTuning, fitMergeTile } from '../engines/merge-sort';
import {
  MS_MERGE_TWO,
  MS_MERGE_TWO_VALUES,
  MS_PARTITION_TWO,
  mergeKernel,
  PARTITION_THREADS,
  partitionKernel,
} from '../engines/merge-sort/kernels';
import { mergeWindowed, type Run } from '../engines/merge-sort/windows';
import type { GpuCall } from '../pattern/dispatch';
import { mergeByKeyTuning, mergeTuning } from './tuning';

/** Inputs and outputs of one merge on the device (values: both inputs' and the output's, or none). */
export interface DeviceMerge {
  readonly a: DeviceArray;
  readonly b: DeviceArray;
  readonly out: DeviceArray;
  readonly values?: { readonly a: DeviceArray; readonly b: DeviceArray; readonly out: DeviceArray };
}

function whole(x: DeviceArray): GPUBufferBinding {
  return { buffer: x.buffer, offset: x.byteOffset, size: x.length * 4 };
}

/** Merges m.a and m.b into m.out by `comp` (stable: ties from a first); `algorithm` names the tuning. */
export async function gpuMerge(call: GpuCall, algorithm: string, m: DeviceMerge, comp: GpuFunction): Promise<void> {
  const { device } = call;
  const t = checkMergeTuning(device, algorithm, m.values ? mergeByKeyTuning : mergeTuning, call.tuning);
  const na = m.a.length;
  const nb = m.b.length;
  const n = na + nb;
  if (n === 0) return;
  const align = device.limits.minStorageBufferOffsetAlignment;
  const outs = m.values ? [m.out, m.values.out] : [m.out];
  const copies: [DeviceArray, DeviceArray][] = [];
  /** `x`, or a temporary copy of it when x cannot be bound (offset) or shares an output's buffer. */
  const readable = (x: DeviceArray): DeviceArray => {
    if (x.length === 0 || (x.byteOffset % align === 0 && !outs.some((o) => o.buffer === x.buffer))) return x;
    const c = call.temp(x.type as NumericType, x.length);
    copies.push([x, c]);
    return c;
  };
  /** `y`, or a temporary written back to y after the merge when y cannot be bound at its offset. */
  const writeBacks: [DeviceArray, DeviceArray][] = [];
  const writable = (y: DeviceArray): DeviceArray => {
    if (y.byteOffset % align === 0) return y;
    const c = call.temp(y.type as NumericType, y.length);
    writeBacks.push([c, y]);
    return c;
  };
  const keyType = m.a.type as NumericType;
  const a = readable(m.a);
  const b = readable(m.b);
  const va = m.values ? readable(m.values.a) : undefined;
  const vb = m.values ? readable(m.values.b) : undefined;
  const base = { keyType, comparator: comp.wgsl([keyType, keyType]), hasValues: m.values !== undefined };
  const fit = fitMergeTile(device, t, call.tuning, base);
  const copy = (rec: Recorder, from: DeviceArray, to: DeviceArray, at = 0) => {
    if (from.length)
      rec.encoder.copyBufferToBuffer(from.buffer, from.byteOffset, to.buffer, to.byteOffset + at * 4, from.length * 4);
  };
  const reads: { k: number; rb: { data(): ArrayBuffer } }[] = [];
  const readOutputs = (rec: Recorder) => {
    outs.forEach((o, k) => {
      if (call.readBack(k)) reads.push({ k, rb: rec.readback(o.buffer, o.byteOffset, n * 4) });
    });
  };
  if (n * 4 > device.limits.maxStorageBufferBindingSize) {
    // Beyond one storage binding: windows of the output, each merged from the two sub-ranges its
    // merge-path splits give (engines/merge-sort/windows.ts); outputs are written at any offset.
    if (copies.length) {
      await device.queue.submit(`${algorithm} (input copies)`, (rec) => {
        for (const [x, c] of copies) copy(rec, x, c);
      });
    }
    const run = (k: DeviceArray, v: DeviceArray | undefined): Run => ({
      keys: k.buffer,
      keyByte: k.byteOffset,
      values: v?.buffer,
      valueByte: v?.byteOffset,
      length: k.length,
    });
    const job = { a: run(a, va), b: run(b, vb), out: { ...run(m.out, m.values?.out), length: n } };
    await mergeWindowed(device, [job], { ...base, ...fit }, algorithm);
    if (outs.some((_, k) => call.readBack(k))) await device.queue.submit(algorithm, readOutputs);
    for (const { k, rb } of reads) call.deliver(k, rb.data(), n);
    return;
  }
  const both = na > 0 && nb > 0;
  const out = both ? writable(m.out) : m.out;
  const vout = m.values ? (both ? writable(m.values.out) : m.values.out) : undefined;
  const tile = fit.workgroupSize * fit.itemsPerThread;
  const tiles = Math.ceil(n / tile);
  const kp = { ...base, ...fit, twoInputs: true };
  const [partPipe, mergePipe] = both
    ? await Promise.all([getPipeline(device, partitionKernel(kp)), getPipeline(device, mergeKernel(kp))])
    : [undefined, undefined];
  const parts = both ? call.temp('u32', tiles + 1) : undefined;
  await device.queue.submit(algorithm, (rec) => {
    for (const [x, c] of copies) copy(rec, x, c);
    if (partPipe && mergePipe && parts) {
      // Whole arrays from their binding's start: every element offset is 0.
      const words = MS_MERGE_TWO.pack({
        n,
        width: na,
        tiles,
        a_off: 0,
        b_off: 0,
        o_off: 0,
        av_off: 0,
        bv_off: 0,
        ov_off: 0,
      });
      const params = { buffer: rec.uniform(words) };
      const [ka, kb, pb] = [whole(a), whole(b), whole(parts)];
      const pass = rec.beginPass(algorithm);
      pass.setPipeline(partPipe);
      pass.setBindGroup(
        0,
        device.gpu.createBindGroup({
          layout: partPipe.getBindGroupLayout(0),
          entries: MS_PARTITION_TWO.entries({ ms_params: params, keys_a: ka, keys_b: kb, parts: pb }),
        }),
      );
      rec.dispatch(pass, Math.ceil((tiles + 1) / PARTITION_THREADS));
      pass.setPipeline(mergePipe);
      const entries = MS_MERGE_TWO.entries(
        {
          ms_params: params,
          keys_a: ka,
          keys_b: kb,
          keys_dst: whole(out),
          parts: pb,
          vals_a: va && whole(va),
          vals_b: vb && whole(vb),
          vals_dst: vout && whole(vout),
        },
        m.values ? MS_MERGE_TWO_VALUES : {},
      );
      pass.setBindGroup(0, device.gpu.createBindGroup({ layout: mergePipe.getBindGroupLayout(0), entries }));
      rec.dispatch(pass, tiles);
      pass.end();
      for (const [c, y] of writeBacks) copy(rec, c.view(0, n), y);
    } else {
      // One input is empty: the merge is a copy of the other.
      copy(rec, na ? a : b, out);
      if (va && vb && vout) copy(rec, na ? va : vb, vout);
    }
    readOutputs(rec);
  });
  for (const { k, rb } of reads) call.deliver(k, rb.data(), n);
}
