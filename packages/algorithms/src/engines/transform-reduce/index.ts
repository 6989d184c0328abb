/**
 * The transform-reduce engine: reduce, transformReduce, innerProduct, count(If), min/maxElement,
 * findIf, any/all/noneOf are all "load a value per element, combine in order".
 *
 * Size tiers: n = 0 never reaches the engine (callers return init); one workgroup's worth (or any n
 * whose grid is one workgroup) runs pass 1 alone, writing the result directly; otherwise pass 1 writes
 * up to `maxWorkgroups` partials per binding segment and pass 2 folds them. Inputs larger than one
 * storage binding are split into segments (each its own pass-1 dispatch). Everything is recorded into
 * one command buffer together with the readback of the result.
 */
import {
  type Combiner,
  type DeviceArray,
  fragment,
  type GpuDevice,
  getPipeline,
  mangle,
  type NumericType,
  type WgslFragment,
} from '@webdpl/core';
import { scratchBuffer } from '../../common/scratch';
import { segmentsFor, windowEntry, windowOf } from '../../common/segments';
import { bindingLimit, resolveTuning, useSubgroups } from '../../common/tuning';
import { finalKernel, partialsKernel, type ReducePath } from './kernels';
import { type TransformReduceTuning, transformReduceTuning } from './tuning';

export type { ReducePath } from './kernels';
export { transformReduceTuning } from './tuning';

export interface TransformReduceRequest {
  /** Label for errors and profiling. */
  readonly label: string;
  /** 1 or 2 inputs of equal length >= 1. */
  readonly inputs: readonly DeviceArray[];
  /** Declares `fn <name>(x0: T0[, x1: T1], i: u32) -> Acc`. */
  readonly load: WgslFragment;
  readonly combiner: Combiner;
  /** Whether the combine may reorder (enables the vectorized strided path). */
  readonly commutative: boolean;
  /** Tuning overrides from the policy. */
  readonly tuning?: Readonly<Record<string, number | boolean>>;
  /** Name of the tuning entry the overrides were given under. @default 'reduce' */
  readonly tuningName?: string;
}

/** `fn(x: T, i: u32) -> T { return x; }`: the load of a plain reduce. */
export function identityLoad(type: NumericType): WgslFragment {
  const name = mangle('load_id', type);
  return fragment({ name, code: `fn ${name}(x: ${type}, i: u32) -> ${type} { return x; }` });
}

function choosePath(req: TransformReduceRequest): ReducePath {
  if (!req.commutative) return 'ordered';
  return req.inputs.every((a) => a.offset % 4 === 0) ? 'vec' : 'strided';
}

/**
 * Runs the engine and returns the raw bytes of the reduced accumulator (combiner.bytes long).
 * The caller combines its init value on the host.
 */
export async function transformReduceDevice(device: GpuDevice, req: TransformReduceRequest): Promise<ArrayBuffer> {
  const tuningName = req.tuningName ?? 'reduce';
  const t: TransformReduceTuning = resolveTuning(tuningName, transformReduceTuning, req.tuning ?? {});
  const n = (req.inputs[0] as DeviceArray).length;
  const subgroups = useSubgroups(device, t.subgroups);
  const minSubgroupSize = device.info.subgroupMinSize || 4;
  const path = choosePath(req);
  const w = t.workgroupSize;
  const tileElems = path === 'vec' ? 4 * w * t.vecsPerThread : w * t.itemsPerThread;
  const inTypes = req.inputs.map((a) => a.type as NumericType);
  const pass1 = await getPipeline(
    device,
    partialsKernel({
      inTypes,
      load: req.load,
      combiner: req.combiner,
      path,
      workgroupSize: w,
      vecsPerThread: t.vecsPerThread,
      itemsPerThread: t.itemsPerThread,
      subgroups,
      minSubgroupSize,
    }),
  );
  const segments = segmentsFor(device, n, bindingLimit(device, t.maxBindingBytes), tileElems);
  // Geometry per segment: workgroups and tiles per workgroup.
  const plans = segments.map((s) => {
    const tiles = Math.max(1, Math.ceil(s.length / tileElems));
    const wgs = Math.min(tiles, t.maxWorkgroups);
    const tilesPerWg = Math.ceil(tiles / wgs);
    return { s, wgs: Math.ceil(tiles / tilesPerWg), tilesPerWg };
  });
  const partialCount = plans.reduce((a, p) => a + p.wgs, 0);
  const needFinal = partialCount > 1;
  const pass2 = needFinal
    ? await getPipeline(device, finalKernel({ combiner: req.combiner, workgroupSize: w, subgroups, minSubgroupSize }))
    : undefined;
  const stride = req.combiner.bytes;
  const partials = scratchBuffer(device, `tr-partials-${stride}`, (partialCount + 1) * stride);
  let rb: { data(): ArrayBuffer } | undefined;
  await device.queue.submit(req.label, (rec) => {
    const pass = rec.beginPass(req.label);
    pass.setPipeline(pass1);
    let out = 0;
    for (const plan of plans) {
      const wins = req.inputs.map((a) => windowOf(device, a, plan.s));
      const params = new Uint32Array([
        plan.s.length,
        wins[0]?.localBase ?? 0,
        wins[1]?.localBase ?? 0,
        plan.tilesPerWg,
        plan.wgs,
        out,
        plan.s.start,
        0,
      ]);
      const entries: GPUBindGroupEntry[] = [
        { binding: 0, resource: { buffer: rec.uniform(params) } },
        { binding: 1, resource: { buffer: partials } },
      ];
      req.inputs.forEach((a, k) => {
        const win = wins[k] as ReturnType<typeof windowOf>;
        if (path === 'vec') entries.push(windowEntry(2 + 2 * k, a, win));
        entries.push(windowEntry(3 + 2 * k, a, win));
      });
      pass.setBindGroup(0, device.gpu.createBindGroup({ layout: pass1.getBindGroupLayout(0), entries }));
      rec.dispatch(pass, plan.wgs);
      out += plan.wgs;
    }
    if (pass2) {
      pass.setPipeline(pass2);
      const params = new Uint32Array([partialCount, 0, 0, 0, 1, partialCount, 0, 0]);
      pass.setBindGroup(
        0,
        device.gpu.createBindGroup({
          layout: pass2.getBindGroupLayout(0),
          entries: [
            { binding: 0, resource: { buffer: rec.uniform(params) } },
            { binding: 1, resource: { buffer: partials } },
          ],
        }),
      );
      pass.dispatchWorkgroups(1);
    }
    pass.end();
    rb = rec.readback(partials, needFinal ? partialCount * stride : 0, stride);
  });
  return (rb as { data(): ArrayBuffer }).data();
}
