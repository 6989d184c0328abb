/**
 * The map engine: transform, forEach, fill, iota, copy and adjacentDifference are all "one output
 * element from the same-index input elements", a bandwidth-bound elementwise kernel.
 *
 * Size tiers: n = 0 never reaches the engine (callers return at once). Otherwise, when every array
 * starts on a 16-byte boundary, the largest multiple of 4 elements runs the vec4 kernel and the < 4
 * trailing elements the scalar kernel (two dispatches of one pass); else the scalar kernel runs over
 * everything. Each kernel runs one tile per workgroup (or loops over tiles when the tuning caps the
 * workgroups) on a 2-D grid past 65,535 workgroups. Arrays
 * larger than one storage binding are split into segments (one dispatch each). Everything, the
 * optional readback of the output included, is recorded into one command buffer.
 *
 * Aliasing: an input that is the output (same buffer and offset) is read through the output's
 * binding (in place); an input elsewhere in the output's buffer is first copied to a temporary
 * buffer, since WebGPU forbids a buffer bound both read-only and writable in one dispatch.
 */
import {
  bufferId,
  DeviceArray,
  dispatchCache,
  type GpuDevice,
  type NumericType,
  type Owned,
  paramsBuffer,
  pipelineFor,
  type Recorder,
  type WgslFragment,
} from '@webdpl/core';
import { type CachedStep, cachedTuning, recordSteps } from '../../common/gpu-io';
import { type Segment, segmentsFor, windowEntry, windowOf } from '../../common/segments';
import { bindingLimit } from '../../common/tuning';
import { type InputSource, type MapPath, mapKernel } from './kernels';
import { type MapTuning, mapTuning } from './tuning';

export type { MapPath } from './kernels';
export { mapTuning } from './tuning';

export interface MapRequest {
  /** Label for errors and profiling. */
  readonly label: string;
  /** Number of elements to produce (>= 1). */
  readonly n: number;
  /** 0, 1 or 2 inputs of exactly `n` elements, on the output's device. */
  readonly inputs: readonly DeviceArray[];
  /** The output: exactly `n` elements. */
  readonly output: DeviceArray;
  /**
   * Declares `fn <elem.name>([x0: T0, [x1: T1,]] i: u32, c: vec2<u32>) -> O` where O is the
   * output's type, `i` the element's index in the range and `c` the request's `constants`. Its
   * mangled name keys the cached kernel (the code is compared on every call), so a front may build
   * it per call.
   */
  readonly elem: WgslFragment;
  /** Two u32 words handed to every element (fill value bits, iota start bits). @default [0, 0] */
  readonly constants?: readonly [number, number];
  /** Tuning overrides from the policy. */
  readonly tuning?: Readonly<Record<string, number | boolean>>;
  /** Name of the tuning entry the overrides were given under. @default 'map' */
  readonly tuningName?: string;
  /** Records commands before the kernels, into the same command buffer. */
  readonly before?: (rec: Recorder) => void;
  /** Records commands after the kernels, into the same command buffer (may read back). */
  readonly after?: (rec: Recorder) => void;
  /** Reads the output back (in the same command buffer) and returns its bytes. @default false */
  readonly readBack?: boolean;
}

/** One call's dispatches, reused by every later call of the same shape on the same arrays. */
interface MapPlan extends Owned {
  readonly steps: readonly CachedStep[];
  readonly elemCode: string;
}

/**
 * Runs `out[i] = elem(in0[i], in1[i], i, c)` for i in [0, n). With `readBack` (or `before`/`after`
 * hooks, which may read back) it resolves once the work is submitted and errors are known, with the
 * output's bytes (n * 4) when read back. Otherwise it does not wait for the GPU: the output stays on
 * the device, later calls on the device see it (calls run in call order), and GPU errors surface
 * from this call, the next call on the device's queue or `queue.finish()` (see core's Queue).
 *
 * Per call on arrays seen before (same shape, tuning, constants and arrays) nothing is built: the
 * pipelines, bind groups and parameter buffers come from a per-device cache.
 */
export async function mapDevice(device: GpuDevice, req: MapRequest): Promise<ArrayBuffer | undefined> {
  const t: MapTuning = cachedTuning(req.tuningName ?? 'map', mapTuning, req.tuning);
  const { n, output } = req;
  const [c0, c1] = req.constants ?? [0, 0];
  let copyNeeded = false;
  let key = `map|${req.elem.name}|${n}|${t.workgroupSize}|${t.vecsPerThread}|${t.itemsPerThread}|${t.maxWorkgroups}|${t.maxBindingBytes}|${c0 >>> 0}|${c1 >>> 0}|${output.type}:${bufferId(output.buffer)}@${output.offset}`;
  for (const a of req.inputs) {
    if (a.buffer === output.buffer && a.offset !== output.offset) copyNeeded = true;
    key += `|${a.type}:${bufferId(a.buffer)}@${a.offset}`;
  }
  // Inputs elsewhere in the output's buffer read from a copy (WebGPU forbids a buffer bound both
  // read-only and writable in one dispatch); such calls build their plan each time.
  const copies = copyNeeded
    ? req.inputs.map((a) =>
        a.buffer === output.buffer && a.offset !== output.offset ? DeviceArray.create(device, a.type, n) : undefined,
      )
    : [];
  const cache = dispatchCache<MapPlan>(device, 'map');
  let plan = copyNeeded ? undefined : cache.get(key);
  if (plan && plan.elemCode !== req.elem.code) plan = undefined;
  // The call's place in the device's call order, before anything that may wait.
  const turn = device.queue.reserve();
  try {
    if (!plan) {
      try {
        plan = await buildPlan(device, req, t, copies, [c0, c1]);
      } catch (e) {
        turn.release();
        throw e;
      }
      if (!copyNeeded) cache.set(key, plan);
    }
    const steps = plan.steps;
    let rb: { data(): ArrayBuffer } | undefined;
    const record = (rec: Recorder) => {
      req.before?.(rec);
      req.inputs.forEach((a, k) => {
        const copy = copies[k];
        if (copy) rec.encoder.copyBufferToBuffer(a.buffer, a.byteOffset, copy.buffer, 0, n * 4);
      });
      const pass = rec.beginPass(req.label);
      recordSteps(rec, pass, steps);
      pass.end();
      req.after?.(rec);
      if (req.readBack) rb = rec.readback(output.buffer, output.byteOffset, n * 4);
    };
    if (req.readBack || req.before || req.after) await device.queue.submit(req.label, record, turn);
    else await device.queue.enqueue(req.label, record, turn);
    return rb?.data();
  } finally {
    for (const c of copies) c?.destroy();
    if (copyNeeded) for (const b of plan?.owned ?? []) b.destroy();
  }
}

/** Builds the pipelines, bind groups and parameter buffers of a call (the cold path). */
async function buildPlan(
  device: GpuDevice,
  req: MapRequest,
  t: MapTuning,
  copies: readonly (DeviceArray | undefined)[],
  [c0, c1]: readonly [number, number],
): Promise<MapPlan> {
  const { n, output } = req;
  const kernelSources = req.inputs.map(
    (a, k): InputSource =>
      !copies[k] && a.buffer === output.buffer && a.offset === output.offset ? 'output' : 'binding',
  );
  const inputs = req.inputs.map((a, k) => copies[k] ?? a);
  const inTypes = inputs.map((a) => a.type as NumericType);
  const aligned = [output, ...inputs].every((a) => a.offset % 4 === 0);
  const n4 = aligned ? n - (n % 4) : 0;
  const limit = bindingLimit(device, t.maxBindingBytes);
  const w = t.workgroupSize;
  const ranges: { path: MapPath; start: number; length: number }[] = [];
  if (n4 > 0) ranges.push({ path: 'vec', start: 0, length: n4 });
  if (n4 < n) ranges.push({ path: 'scalar', start: n4, length: n - n4 });
  const pipelines: GPUComputePipeline[] = [];
  for (const r of ranges) {
    const key = `map|${r.path}|${req.elem.name}|${inTypes.join(',')}|${kernelSources.join(',')}|${output.type}|${w}|${t.vecsPerThread}|${t.itemsPerThread}`;
    pipelines.push(
      await pipelineFor(device, key, [req.elem], () =>
        mapKernel({
          inTypes,
          sources: kernelSources,
          outType: output.type as NumericType,
          elem: req.elem,
          path: r.path,
          workgroupSize: w,
          vecsPerThread: t.vecsPerThread,
          itemsPerThread: t.itemsPerThread,
        }),
      ),
    );
  }
  return device.queue.guard(req.label, () => {
    const owned: GPUBuffer[] = [];
    const steps: CachedStep[] = [];
    ranges.forEach((r, i) => {
      const pipeline = pipelines[i] as GPUComputePipeline;
      const layout = pipeline.getBindGroupLayout(0);
      const tile = r.path === 'vec' ? 4 * w * t.vecsPerThread : w * t.itemsPerThread;
      for (const s of segmentsFor(device, r.length, limit, tile)) {
        const abs: Segment = { start: r.start + s.start, length: s.length };
        const wo = windowOf(device, output, abs);
        const wins = inputs.map((a) => windowOf(device, a, abs));
        const count = r.path === 'vec' ? s.length / 4 : s.length;
        const per = r.path === 'vec' ? tile / 4 : tile;
        const tiles = Math.max(1, Math.ceil(count / per));
        const wgs = t.maxWorkgroups > 0 ? Math.min(tiles, t.maxWorkgroups) : tiles;
        const params = paramsBuffer(
          device,
          new Uint32Array([
            s.length,
            wo.localBase,
            wins[0]?.localBase ?? 0,
            wins[1]?.localBase ?? 0,
            abs.start,
            wgs,
            c0 >>> 0,
            c1 >>> 0,
            tiles,
            0,
            0,
            0,
          ]),
          `${req.label} params`,
        );
        owned.push(params);
        const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: { buffer: params } }, windowEntry(1, output, wo)];
        inputs.forEach((a, k) => {
          if (kernelSources[k] === 'binding') entries.push(windowEntry(2 + k, a, wins[k] as typeof wo));
        });
        steps.push({ pipeline, group: device.gpu.createBindGroup({ layout, entries }), wgs });
      }
    });
    return { steps, owned, elemCode: req.elem.code };
  });
}
