/**
 * GPU parts of nthElement, partialSort and topK. Built-in orders beyond `fullSortMax` keys run the
 * radix select (kernels.ts): one submission of 5 dispatches finds the wanted rank's key and moves
 * the elements below / equal / above it into a temporary, then partialSort and topK sort only their
 * first k with the radix-sort engine. Up to `fullSortMax` keys, and for user comparators (the
 * merge-sort engine, as sort does), the range is sorted whole. Host arrays arrive uploaded
 * (pattern/dispatch.ts) and are read back from the result in its last submission.
 */
import {
  ArgumentError,
  type DeviceArray,
  getPipeline,
  type NumericType,
  type Recorder,
  type WgslFragment,
} from '@webdpl/core';
import { recordPhases } from '../common/gpu-io';
import { maxWorkgroupThreads, useSubgroups } from '../common/tuning';
import { keyMode, type RadixKeyType } from '../engines/radix-sort/key-bits';
import type { GpuCall, Tuning } from '../pattern/dispatch';
import type { Comparator } from '../sort/comparator-arg';
import { gpuSort } from '../sort/gpu';
import { SEL, SELECT_USE, type SelectPhase, STATE, selectKernel } from './kernels';
import { type SelectTuning, selectTuning } from './tuning';

type GpuComparator = Exclude<Comparator, { kind: 'host-only' }>;

/** The call's tuning split into the select's fields (checked) and the sort engine's (checked by the engine). */
function splitTuning(call: GpuCall, algorithm: string): { select: SelectTuning; sort: Tuning } {
  const { device, tuning } = call;
  const select: Record<string, number | boolean> = { ...selectTuning };
  const sort: Record<string, number | boolean> = {};
  for (const [k, v] of Object.entries(tuning)) {
    if (k in selectTuning) {
      if (typeof v !== 'number') throw new ArgumentError(`tuning.${algorithm}.${k}`, 'a number', typeof v);
      select[k] = v;
    } else sort[k] = v;
  }
  const t = select as SelectTuning;
  const maxThreads = maxWorkgroupThreads(device);
  if (!('selectWorkgroupSize' in tuning)) t.selectWorkgroupSize = Math.min(t.selectWorkgroupSize, maxThreads);
  const w = t.selectWorkgroupSize;
  if (!Number.isInteger(w) || w < 32 || w > maxThreads || (w & (w - 1)) !== 0) {
    throw new ArgumentError(`tuning.${algorithm}.selectWorkgroupSize`, 'a power of two within the device limit, >= 32');
  }
  for (const k of ['selectItemsPerThread', 'selectMaxWorkgroups'] as const) {
    if (!Number.isInteger(t[k]) || t[k] < 1 || t[k] > 65535) {
      throw new ArgumentError(`tuning.${algorithm}.${k}`, 'an integer in [1, 65535]', String(t[k]));
    }
  }
  // The tiled phases stage a tile (workgroupSize x itemsPerThread words) in workgroup memory next to
  // the pick's and the scan's words (at most 3 x 256 words besides, see kernels.ts): the default
  // items per thread shrink to fit the device, an explicit value that does not fit is refused.
  const tileWords = Math.floor(device.limits.maxComputeWorkgroupStorageSize / 4) - 3 * 256 - w - 16;
  if (!('selectItemsPerThread' in tuning)) {
    t.selectItemsPerThread = Math.max(1, Math.min(t.selectItemsPerThread, Math.floor(tileWords / w)));
  }
  if (w * t.selectItemsPerThread > tileWords) {
    throw new ArgumentError(
      `tuning.${algorithm}.selectItemsPerThread`,
      `at most ${Math.max(0, Math.floor(tileWords / w))} with ${w} threads per workgroup (the tile is staged in workgroup memory)`,
      String(t.selectItemsPerThread),
    );
  }
  // The scatter packs two per-tile counts in 16-bit halves.
  if (w * t.selectItemsPerThread > 0xffff) {
    throw new ArgumentError(
      `tuning.${algorithm}.selectItemsPerThread`,
      `at most ${Math.floor(0xffff / w)} with ${w} threads per workgroup (a tile under 2^16 keys)`,
      String(t.selectItemsPerThread),
    );
  }
  return { select: t, sort };
}

function bind(a: DeviceArray): GPUBufferBinding {
  return { buffer: a.buffer, offset: a.byteOffset, size: Math.max(a.length, 1) * 4 };
}

function bindable(device: GpuCall['device'], a: DeviceArray): boolean {
  return a.byteOffset % device.limits.minStorageBufferOffsetAlignment === 0;
}

function copy(rec: Recorder, from: DeviceArray, to: DeviceArray, n: number): void {
  if (n > 0) rec.encoder.copyBufferToBuffer(from.buffer, from.byteOffset, to.buffer, to.byteOffset, n * 4);
}

interface SelectRun {
  readonly algorithm: string;
  readonly src: DeviceArray;
  /** 0-based rank of the key to find. */
  readonly rank: number;
  readonly dst: DeviceArray;
  /** Elements of dst written (below first, then equal, then above). */
  readonly limit: number;
  readonly descending: boolean;
  readonly tuning: SelectTuning;
  /** Recorded before the select (copies in). */
  readonly before?: (rec: Recorder) => void;
  /** Recorded after it, in the same submission (copies out, readbacks). */
  readonly after?: (rec: Recorder) => void;
}

const kernels = new Map<string, WgslFragment>();

/** The select kernel of a phase and geometry, built once (no WGSL text on the hot path). */
function kernelOf(
  phase: SelectPhase,
  workgroupSize: number,
  itemsPerThread: number,
  minSubgroupSize: number,
): WgslFragment {
  const key = `${phase}|${workgroupSize}|${itemsPerThread}|${minSubgroupSize}`;
  let k = kernels.get(key);
  if (!k) {
    k = selectKernel({ phase, workgroupSize, itemsPerThread, subgroups: minSubgroupSize > 0, minSubgroupSize });
    kernels.set(key, k);
  }
  return k;
}

/** The radix select of `src` into `dst` (see kernels.ts), one submission. */
async function radixSelect(call: GpuCall, r: SelectRun): Promise<void> {
  const { device } = call;
  const n = r.src.length;
  const w = r.tuning.selectWorkgroupSize;
  const ipt = r.tuning.selectItemsPerThread;
  // The tiled phases' workgroup scan takes subgroups where the device has them and the call's
  // tuning (`subgroups`, shared with the sort engine) does not turn them off.
  const min = device.info.subgroupMinSize;
  const max = device.info.subgroupMaxSize;
  const sg = useSubgroups(device, call.tuning.subgroups !== false) && min >= 4 && max <= 128 && max >= min && w >= max;
  const phases: SelectPhase[] = ['hist', 'append', 'candidates', 'scatter'];
  const [hist, append, cands, scatter] = await Promise.all(
    phases.map((phase) => getPipeline(device, kernelOf(phase, w, ipt, sg ? min : 0))),
  );
  const state = call.temp('u32', STATE.WORDS);
  const cand = call.temp('u32', n);
  const groups = Math.min(Math.ceil(n / (w * ipt)), r.tuning.selectMaxWorkgroups);
  // The candidate rounds see ~n / 256 keys on spread data (all n only on heavy duplicates): a
  // quarter of the grid, so fewer workgroups repeat the pick only to find no tile left.
  const candGroups = Math.max(1, Math.ceil(groups / 4));
  const mode = keyMode(r.src.type as RadixKeyType, r.descending);
  await device.queue.submit(r.algorithm, (rec) => {
    r.before?.(rec);
    rec.encoder.clearBuffer(state.buffer, state.byteOffset, STATE.WORDS * 4);
    // One compute pass (with setPhasePasses, one per round, labelled by phase: the probes' breakdown).
    const steps: [GPUComputePipeline | undefined, number, SelectPhase, DeviceArray][] = [
      [hist, 0, 'hist', r.src],
      [append, 1, 'append', r.src],
      [cands, 2, 'candidates', cand],
      [cands, 3, 'candidates', cand],
      [scatter, 4, 'scatter', r.src],
    ];
    recordPhases(
      rec,
      `${r.algorithm} (radix select)`,
      steps.map(([pipeline, round, phase, src]) => ({
        name: `${phase} ${round}`,
        record: (rc, pass) => {
          const p = pipeline as GPUComputePipeline;
          const params = SEL.pack({ n, round, mode, k: r.rank, limit: r.limit });
          const entries = SEL.entries(
            {
              sp: { buffer: rc.uniform(params) },
              sel_src: bind(src),
              sel_state: bind(state),
              sel_cand: phase === 'append' ? bind(cand) : undefined,
              sel_out: phase === 'scatter' ? bind(r.dst) : undefined,
            },
            SELECT_USE[phase],
          );
          pass.setPipeline(p);
          pass.setBindGroup(0, device.gpu.createBindGroup({ layout: p.getBindGroupLayout(0), entries }));
          rc.dispatch(pass, pipeline === cands ? candGroups : groups);
        },
      })),
    );
    r.after?.(rec);
  });
}

/** `a`, or a temporary copy of it (recorded by `before`) when its offset cannot be bound. */
function boundSource(call: GpuCall, a: DeviceArray): { src: DeviceArray; before?: (rec: Recorder) => void } {
  if (bindable(call.device, a)) return { src: a };
  const src = call.temp(a.type as NumericType, a.length);
  return { src, before: (rec) => copy(rec, a, src, a.length) };
}

/**
 * nthElement (`sortFirst` 0, `rank` n) and partialSort (`sortFirst` k, `rank` k - 1) of output 0,
 * in place.
 */
export async function gpuSelectInPlace(
  call: GpuCall,
  algorithm: string,
  rank: number,
  sortFirst: number,
  comp: GpuComparator,
): Promise<void> {
  const data = call.outputs[0] as DeviceArray;
  const n = data.length;
  const { select, sort } = splitTuning(call, algorithm);
  const back = call.readBack(0);
  if (comp.kind !== 'builtin' || n <= select.fullSortMax || sortFirst === n) {
    const r = await gpuSort(call.device, sort, algorithm, data, undefined, comp, back);
    call.deliver(0, r.keys, n);
    return;
  }
  const { src, before } = boundSource(call, data);
  const dst = call.temp(data.type as NumericType, n);
  let rb: { data(): ArrayBuffer } | undefined;
  const finish = (rec: Recorder) => {
    if (back) rb = rec.readback(dst.buffer, dst.byteOffset, n * 4);
    else copy(rec, dst, data, n);
  };
  const descending = comp.descending;
  await radixSelect(call, {
    algorithm,
    src,
    rank,
    dst,
    limit: n,
    descending,
    tuning: select,
    before,
    after: sortFirst === 0 ? finish : undefined,
  });
  if (sortFirst > 0) {
    await gpuSort(call.device, sort, algorithm, dst.view(0, sortFirst), undefined, comp, false);
    await call.device.queue.submit(`${algorithm} (result)`, finish);
  }
  call.deliver(0, rb?.data(), n);
}

/** topK: output 0 = the first k of input 0 in the order of `comp`, sorted. */
export async function gpuTopK(call: GpuCall, algorithm: string, k: number, comp: GpuComparator): Promise<void> {
  const input = call.inputs[0] as DeviceArray;
  const out = call.outputs[0] as DeviceArray;
  const n = input.length;
  const { device } = call;
  const { select, sort } = splitTuning(call, algorithm);
  const back = call.readBack(0);
  let rb: { data(): ArrayBuffer } | undefined;
  if (comp.kind !== 'builtin' || n <= select.fullSortMax) {
    const tmp = call.temp(input.type as NumericType, n);
    await device.queue.submit(`${algorithm} (copy)`, (rec) => copy(rec, input, tmp, n));
    await gpuSort(device, sort, algorithm, tmp, undefined, comp, false);
    await device.queue.submit(`${algorithm} (result)`, (rec) => {
      if (back) rb = rec.readback(tmp.buffer, tmp.byteOffset, k * 4);
      else copy(rec, tmp, out, k);
    });
    call.deliver(0, rb?.data(), k);
    return;
  }
  const { src, before } = boundSource(call, input);
  // The scatter binds src read-only and dst writable: never two views of one buffer.
  const dst = bindable(device, out) && out.buffer !== src.buffer ? out : call.temp(out.type as NumericType, k);
  await radixSelect(call, {
    algorithm,
    src,
    rank: k - 1,
    dst,
    limit: k,
    descending: comp.descending,
    tuning: select,
    before,
  });
  const r = await gpuSort(device, sort, algorithm, dst.view(0, k), undefined, comp, back && dst === out);
  if (dst !== out) {
    await device.queue.submit(`${algorithm} (result)`, (rec) => {
      if (back) rb = rec.readback(dst.buffer, dst.byteOffset, k * 4);
      else copy(rec, dst, out, k);
    });
  }
  call.deliver(0, r.keys ?? rb?.data(), k);
}
