/**
 * GPU part of histogram: the counts are cleared and filled in one submission (clear, one dispatch of
 * the histogram kernel per input segment that fits a storage binding, the readback for a host
 * output). Edges go to the device as a temporary of the element type; counts and edges are bound
 * whole. A counts array in the input's GPU buffer (a buffer cannot be bound read-only and writable
 * in one dispatch) or at an offset no binding can start at is filled through a temporary.
 */
import { ArgumentError, type DeviceArray, getPipeline, type NumericType, UnsupportedOnDeviceError } from '@webdpl/core';
import { segmentsFor, type Window, windowOf, windowResource } from '../common/segments';
import { bindingLimit, resolveTuning, useSubgroups } from '../common/tuning';
import type { GpuCall } from '../pattern/dispatch';
import type { BinEdges, ExactBins } from './bins';
import { HIST, type HistogramBinKind, histogramKernel } from './kernels';
import { histogramTuning } from './tuning';

/**
 * Counts of `x` per bin of `b` into `y` (b.bins elements, overwritten); `exactOf` is `exactBins(type, b)`,
 * computed once by the front (the CPU loop uses it too).
 */
export async function gpuHistogram(
  call: GpuCall,
  x: DeviceArray,
  y: DeviceArray,
  b: BinEdges,
  exactOf: ExactBins | undefined,
): Promise<void> {
  const { device } = call;
  const t = resolveTuning('histogram', histogramTuning, call.tuning);
  const w = t.workgroupSize;
  if (!Number.isInteger(w) || w < 1 || w > device.limits.maxComputeInvocationsPerWorkgroup) {
    throw new ArgumentError('tuning.histogram.workgroupSize', 'a positive integer within the device limit', String(w));
  }
  for (const k of ['itemsPerThread', 'maxWorkgroups', 'subHistograms'] as const) {
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
  const exact = t.exactBins ? exactOf : undefined;
  const kind: HistogramBinKind = exact ? (exact.shift >= 0 ? 'shift' : 'div') : b.even ? 'even' : 'edges';
  // The edges next to the bins in workgroup memory when they fit (edge reads are most of binning).
  const cacheEdges = !exact && t.cacheEdges && privateBins > 0 && (2 * pow2 + 1) * 4 <= room;
  let copies = privateBins ? t.subHistograms : 1;
  while (copies > 1 && (copies * pow2 + (cacheEdges ? pow2 + 1 : 0)) * 4 > room) copies--;
  const run = n > 0 && m > 0;
  const loads = t.vectorize ? Math.ceil(t.itemsPerThread / 4) : t.itemsPerThread;
  const tile = w * t.itemsPerThread;
  const granule = t.vectorize ? w * loads * 4 : tile;
  const segments = run ? segmentsFor(device, n, bindingLimit(device, t.maxBindingBytes), granule) : [];
  const windows = segments.map((s) => windowOf(device, x, s));
  // The vec4 binding needs 16 bytes (an adopted buffer need not be padded).
  const vector = t.vectorize && windows.every((win) => win.size >= 16);
  const pipeline = run
    ? await getPipeline(
        device,
        histogramKernel({
          type: type as 'u32',
          kind,
          privateBins,
          subHistograms: copies,
          cacheEdges,
          subgroups,
          workgroupSize: w,
          loads: vector ? loads : t.itemsPerThread,
          vector,
        }),
      )
    : undefined;
  // Counts bound whole: through a temporary when y shares the input's buffer or its offset is not
  // a valid binding offset (a view).
  const align = device.limits.minStorageBufferOffsetAlignment;
  const target = y.buffer === x.buffer || y.byteOffset % align !== 0 ? call.temp('u32', bins) : y;
  let edges: DeviceArray | undefined;
  if (run && !exact) {
    edges = call.temp(type, m);
    const e =
      type === 'u32' ? new Uint32Array(b.edges) : type === 'i32' ? new Int32Array(b.edges) : new Float32Array(b.edges);
    (edges as DeviceArray<'u32'>).write(e as Uint32Array);
  }
  let rb: { data(): ArrayBuffer } | undefined;
  await device.queue.submit('histogram', (rec) => {
    rec.encoder.clearBuffer(target.buffer, target.byteOffset, bins * 4);
    if (pipeline) {
      const pass = rec.beginPass('histogram');
      pass.setPipeline(pipeline);
      for (const [i, s] of segments.entries()) {
        const win = windows[i] as Window;
        // Vector: whole vec4s [a, z) of the window through the tiles, [base, a) and [z, end) one by one.
        const first = win.localBase;
        const end = first + s.length;
        let a = Math.ceil(first / 4) * 4;
        let z = Math.floor(end / 4) * 4;
        if (a >= z) [a, z] = [end, end];
        const vcount = vector ? (z - a) / 4 : 0;
        const tiles = vector ? Math.ceil(vcount / (w * loads)) : Math.ceil(s.length / tile);
        const wgs = Math.max(1, Math.min(tiles, t.maxWorkgroups));
        const head = vector ? Math.min(a, end) - first : 0;
        const params = HIST.pack({
          count: s.length,
          base: first,
          m,
          open: b.open ? 1 : 0,
          lo: b.lo,
          scale: b.scale,
          bins,
          num_wg: wgs,
          num_tiles: tiles,
          ulo: exact?.ulo ?? 0,
          width: exact ? (exact.shift >= 0 ? exact.shift : exact.width) : 0,
          // a is not a multiple of 4 when the segment holds no whole vec4 (a = end): the word truncates.
          vbase: Math.floor(a / 4),
          vcount,
          head,
          tail: z,
          extra: vector ? head + (end - z) : 0,
        });
        const window = windowResource(x, win);
        // The exact kinds read no edges (an unused binding is not in the layout).
        const entries = HIST.entries(
          {
            hp: { buffer: rec.uniform(params) },
            h_in: window,
            h_edges: edges && { buffer: edges.buffer, offset: edges.byteOffset, size: m * 4 },
            h_counts: { buffer: target.buffer, offset: target.byteOffset, size: bins * 4 },
            h_in4: vector ? window : undefined,
          },
          { h_edges: !exact, h_in4: vector },
        );
        pass.setBindGroup(0, device.gpu.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries }));
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
