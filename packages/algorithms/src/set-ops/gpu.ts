/**
 * GPU part of the set operations, composed from engines: the keep flags of each side (one kernel:
 * binary searches for every element's rank among its equivalents and their number in the other
 * range), the scan engine's compaction by those flags (a stencil), and for union and symmetric
 * difference the merge of the kept parts (../merge/gpu.ts, the merge sort engine's merge path).
 *   intersection: a's elements with rank < count in b; difference: those with rank >= count;
 *   union: all of a merged with b's elements with rank >= count in a;
 *   symmetric difference: both sides' elements with rank >= count, merged.
 * A few submissions (flags, compaction with its count read back, merge or copy with the readback).
 */
import { ArgumentError, type DeviceArray, type GpuFunction, getPipeline, type NumericType } from '@webdpl/core';
import type { SetOp } from '../bricks/set-ops';
import { predicateFragment } from '../common/predicates';
import { stencilTruthy } from '../compaction/index';
import { mergeSortTuning } from '../engines/merge-sort/tuning';
import { compactDevice, stencilKeep } from '../engines/scan';
import { scanTuning } from '../engines/scan/tuning';
import { gpuMerge } from '../merge/gpu';
import type { GpuCall, Tuning } from '../pattern/dispatch';
import { SET_FLAGS, SET_FLAGS_THREADS, setFlagsKernel } from './kernels';

/** The call's tuning split between the compaction (scan engine) and the merge; other keys are errors. */
function splitTuning(algorithm: string, tuning: Tuning): { scan: Tuning; merge: Tuning } {
  const scan: Record<string, number | boolean> = {};
  const merge: Record<string, number | boolean> = {};
  for (const [k, v] of Object.entries(tuning)) {
    if (k in scanTuning) scan[k] = v;
    if (k in mergeSortTuning) merge[k] = v;
    if (!(k in scanTuning) && !(k in mergeSortTuning)) {
      throw new ArgumentError(`tuning.${algorithm}.${k}`, 'a tuning field of the scan or merge-sort engine', k);
    }
  }
  return { scan, merge };
}

/** Elements of x kept by the flags kernel (against y), compacted into a temporary: [array, count]. */
async function keptOf(
  call: GpuCall,
  algorithm: string,
  x: DeviceArray,
  y: DeviceArray,
  comp: GpuFunction,
  keep: 'first' | 'rest',
  tuning: Tuning,
): Promise<[DeviceArray, number]> {
  const { device } = call;
  const nx = x.length;
  const t = x.type as NumericType;
  const out = call.temp(t, Math.max(nx, 1));
  if (nx === 0) return [out, 0];
  if (y.length === 0 && keep === 'rest') {
    // Nothing to match: every element is left over.
    return [x, nx];
  }
  const flags = call.temp('u32', nx);
  const pipeline = await getPipeline(device, setFlagsKernel({ type: t, comparator: comp.wgsl([t, t]), keep }));
  const bind = (a: DeviceArray): GPUBufferBinding => ({
    buffer: a.buffer,
    offset: a.byteOffset,
    size: Math.max(a.length, 1) * 4,
  });
  await device.queue.submit(`${algorithm} flags`, (rec) => {
    const pass = rec.beginPass(`${algorithm} flags`);
    pass.setPipeline(pipeline);
    pass.setBindGroup(
      0,
      device.gpu.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: SET_FLAGS.entries({
          sp: { buffer: rec.uniform(SET_FLAGS.pack({ nx, ny: y.length })) },
          set_x: bind(x),
          set_y: bind(y.length ? y : x),
          set_flags: bind(flags),
        }),
      }),
    );
    rec.dispatch(pass, Math.ceil(nx / SET_FLAGS_THREADS));
    pass.end();
  });
  const r = await compactDevice(device, {
    label: algorithm,
    input: x,
    output: out,
    keep: stencilKeep(predicateFragment(stencilTruthy, ['u32']), 'u32'),
    inputs: [flags],
    write: 'compact',
    tuning,
    tuningName: algorithm,
  });
  return [out, r.count];
}

/**
 * Runs `op` over sorted a and b (inputs bound whole from aligned offsets: the pattern stages host
 * arrays; DeviceArrays at other offsets go through copies) into `out`; returns the result's length.
 */
export async function gpuSetOp(
  call: GpuCall,
  algorithm: string,
  op: SetOp,
  a: DeviceArray,
  b: DeviceArray,
  out: DeviceArray,
  comp: GpuFunction,
): Promise<number> {
  const tuning = splitTuning(algorithm, call.tuning);
  const mergeCall: GpuCall = { ...call, tuning: tuning.merge };
  // The flags kernel binds both ranges whole: ranges at offsets no binding can start at are copied.
  const aligned = async (v: DeviceArray): Promise<DeviceArray> => {
    if (v.length === 0 || v.byteOffset % call.device.limits.minStorageBufferOffsetAlignment === 0) return v;
    const c = call.temp(v.type as NumericType, v.length);
    await call.device.queue.submit(`${algorithm} copy`, (rec) =>
      rec.encoder.copyBufferToBuffer(v.buffer, v.byteOffset, c.buffer, c.byteOffset, v.length * 4),
    );
    return c;
  };
  const x = await aligned(a);
  const y = await aligned(b);
  if (op === 'union' || op === 'symmetricDifference') {
    const [kb, cb] = await keptOf(call, algorithm, y, x, comp, 'rest', tuning.scan);
    const [ka, ca] = op === 'union' ? [x, x.length] : await keptOf(call, algorithm, x, y, comp, 'rest', tuning.scan);
    await gpuMerge(mergeCall, algorithm, { a: ka.view(0, ca), b: kb.view(0, cb), out }, comp);
    return ca + cb;
  }
  const [k, c] = await keptOf(call, algorithm, x, y, comp, op === 'intersection' ? 'first' : 'rest', tuning.scan);
  // The kept elements are the result: a merge with nothing copies them into the output.
  await gpuMerge(mergeCall, algorithm, { a: k.view(0, c), b: k.view(0, 0), out }, comp);
  return c;
}
