/**
 * The map engine: transform, forEach, fill, iota, copy and adjacentDifference are all "one output
 * element from the same-index input elements", a bandwidth-bound elementwise kernel; gather and
 * scatter (and their stencil forms) are the same kernel with open hooks (kernels.ts): arrays bound
 * whole and read at any index (`gathered`), and a 'store' element function that writes the output
 * (bound whole) at any index, or not at all.
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
 * buffer, since WebGPU forbids a buffer bound both read-only and writable in one dispatch; so is
 * any gathered array in the output's buffer, and any input in the output's buffer of a 'store' call.
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
import { type Segment, segmentsFor, windowOf, windowResource } from '../../common/segments';
import { bindingLimit, fitThreads } from '../../common/tuning';
import {
  type InputSource,
  MAP,
  MAP_MAX_EXTRA_OUTPUTS,
  MAP_MAX_GATHERED,
  MAP_MAX_INPUTS,
  type MapBinding,
  type MapPath,
  type MapWrite,
  mapGatheredName,
  mapInputName,
  mapKernel,
  mapOutputName,
  mapUse,
} from './kernels';
import { type MapTuning, mapTuning } from './tuning';

export type { MapPath, MapWrite } from './kernels';
export { mapTuning } from './tuning';

export interface MapRequest {
  /** Label for errors and profiling. */
  readonly label: string;
  /** Number of elements to produce (>= 1). */
  readonly n: number;
  /** 0 to 4 streamed inputs of exactly `n` elements (read at each element's index), on the output's device. */
  readonly inputs: readonly DeviceArray[];
  /**
   * The output: exactly `n` elements ('value'), or any length ('store': bound whole; it is what
   * `readBack` returns).
   */
  readonly output: DeviceArray;
  /**
   * Declares `fn <elem.name>([x0: T0, ...,] i: u32, c: vec2<u32>) -> O` where O is the
   * output's type, `i` the element's index in the range and `c` the request's `constants` ('value'),
   * or the same function without a result that writes through `map_store(j: u32, v: O)` ('store').
   * It may read the gathered arrays through `map_load<k>(j: u32) -> T`. Its mangled name keys the
   * cached kernel (the code is compared on every call), so a front may build it per call.
   */
  readonly elem: WgslFragment;
  /** How the output is written (see MapWrite). @default 'value' */
  readonly write?: MapWrite;
  /**
   * 0 to 2 arrays on the output's device, bound whole (each within one storage binding) and read at
   * any index by the element function through `map_load<k>(j)` (gather's input).
   */
  readonly gathered?: readonly DeviceArray[];
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
  /**
   * Outputs 1.. of a zip output ('value' writes, no gathered arrays): exactly `n` elements each,
   * written at the element's index from component k of the element function's `vec{1 + K}<u32>`
   * result (see MapKernelParams.extraOuts). An input in any of their buffers is read from a copy.
   * @default []
   */
  readonly extraOutputs?: readonly DeviceArray[];
  /** Which of `extraOutputs` to read back (`mapDeviceAll` returns their bytes). @default none */
  readonly readBackExtra?: readonly boolean[];
}

/** One call's dispatches, reused by every later call of the same shape on the same arrays. */
interface MapPlan extends Owned {
  readonly steps: readonly CachedStep[];
  readonly elemCode: string;
}

/**
 * Runs `out[i] = elem(in0[i], in1[i], ..., i, c)` (or the store element) for i in [0, n). With `readBack` (or `before`/`after`
 * hooks, which may read back) it resolves once the work is submitted and errors are known, with the
 * output's bytes (n * 4) when read back. Otherwise it does not wait for the GPU: the output stays on
 * the device, later calls on the device see it (calls run in call order), and GPU errors surface
 * from this call, the next call on the device's queue or `queue.finish()` (see core's Queue).
 *
 * Per call on arrays seen before (same shape, tuning, constants and arrays) nothing is built: the
 * pipelines, bind groups and parameter buffers come from a per-device cache.
 */
export async function mapDevice(device: GpuDevice, req: MapRequest): Promise<ArrayBuffer | undefined> {
  return (await mapDeviceAll(device, req))[0];
}

/**
 * `mapDevice` returning the bytes read back of every output: the first, then each of `extraOutputs`
 * (undefined where not read back).
 */
export async function mapDeviceAll(device: GpuDevice, req: MapRequest): Promise<(ArrayBuffer | undefined)[]> {
  const { n, output } = req;
  const store = req.write === 'store';
  const gathered = req.gathered ?? [];
  const extras = req.extraOutputs ?? [];
  const [c0, c1] = req.constants ?? [0, 0];
  // A call like the device's last one (lastMaps) takes its plan key without building it (issue 12);
  // the key is still looked up, so an evicted plan is rebuilt.
  const last = lastMaps.get(device);
  const sameAsLast = last !== undefined && sameMapCall(last, req);
  const k = sameAsLast ? undefined : mapKeyOf(device, req);
  const key = k ? k.key : (last as LastMap).key;
  const copyNeeded = k ? k.copyNeeded : false;
  const copyOf = (a: DeviceArray, streamed: boolean) =>
    needsCopy(req, a, streamed) ? DeviceArray.create(device, a.type, a.length) : undefined;
  const copies = copyNeeded ? req.inputs.map((a) => copyOf(a, true)) : NO_COPIES;
  const gatheredCopies = copyNeeded ? gathered.map((a) => copyOf(a, false)) : NO_COPIES;
  const cache = dispatchCache<MapPlan>(device, 'map');
  let plan = copyNeeded ? undefined : cache.get(key);
  if (plan && plan.elemCode !== req.elem.code) plan = undefined;
  // The call's place in the device's call order, before anything that may wait.
  const turn = device.queue.reserve();
  try {
    if (!plan) {
      try {
        plan = await buildPlan(device, req, mapTuningOf(device, req), copies, gatheredCopies, [c0, c1]);
      } catch (e) {
        turn.release();
        throw e;
      }
      if (!copyNeeded) cache.set(key, plan);
    }
    if (!sameAsLast && !copyNeeded && gathered.length === 0 && extras.length === 0) {
      lastMaps.set(device, lastMapOf(req, key));
    }
    const steps = plan.steps;
    let rb: { data(): ArrayBuffer } | undefined;
    const rbs: ({ data(): ArrayBuffer } | undefined)[] = [];
    const readExtra = req.readBackExtra ?? [];
    const record = (rec: Recorder) => {
      req.before?.(rec);
      if (copyNeeded) {
        const copyIn = (a: DeviceArray, copy: DeviceArray | undefined) => {
          if (copy) rec.encoder.copyBufferToBuffer(a.buffer, a.byteOffset, copy.buffer, 0, a.length * 4);
        };
        for (const [k, a] of req.inputs.entries()) copyIn(a, copies[k]);
        for (const [k, a] of gathered.entries()) copyIn(a, gatheredCopies[k]);
      }
      const pass = rec.beginPass(req.label);
      recordSteps(rec, pass, steps);
      pass.end();
      req.after?.(rec);
      if (req.readBack) rb = rec.readback(output.buffer, output.byteOffset, (store ? output.length : n) * 4);
      extras.forEach((o, k) => {
        rbs[k] = readExtra[k] ? rec.readback(o.buffer, o.byteOffset, n * 4) : undefined;
      });
    };
    if (req.readBack || readExtra.includes(true) || req.before || req.after) {
      await device.queue.submit(req.label, record, turn);
    } else await device.queue.enqueue(req.label, record, turn);
    const bytes: (ArrayBuffer | undefined)[] = [rb?.data()];
    for (let k = 0; k < extras.length; k++) bytes.push(rbs[k]?.data());
    return bytes;
  } finally {
    for (const c of copies) c?.discard();
    for (const c of gatheredCopies) c?.discard();
    if (copyNeeded) for (const b of plan?.owned ?? []) device.queue.retire(b);
  }
}

/** A call's tuning. */
function mapTuningOf(device: GpuDevice, req: MapRequest): MapTuning {
  return cachedTuning(req.tuningName ?? 'map', fitThreads(device, mapTuning), req.tuning);
}

/** A call's plan key, and whether it reads an array from a copy (then it builds its plan each time). */
function mapKeyOf(device: GpuDevice, req: MapRequest): { readonly key: string; readonly copyNeeded: boolean } {
  const t = mapTuningOf(device, req);
  const { n, output } = req;
  const gathered = req.gathered ?? [];
  const extras = req.extraOutputs ?? [];
  if (
    req.inputs.length > MAP_MAX_INPUTS ||
    gathered.length > MAP_MAX_GATHERED ||
    extras.length > MAP_MAX_EXTRA_OUTPUTS
  ) {
    throw new Error(
      `map engine: at most ${MAP_MAX_INPUTS} inputs, ${MAP_MAX_GATHERED} gathered arrays and ${MAP_MAX_EXTRA_OUTPUTS} more outputs`,
    );
  }
  const [c0, c1] = req.constants ?? [0, 0];
  let copyNeeded = false;
  let key = `map|${req.write ?? 'value'}|${req.elem.name}|${n}|${t.workgroupSize}|${t.vecsPerThread}|${t.itemsPerThread}|${t.maxWorkgroups}|${t.maxBindingBytes}|${c0 >>> 0}|${c1 >>> 0}|${output.type}:${bufferId(output.buffer)}@${output.offset}+${output.length}`;
  // Arrays read from a copy (needsCopy): such calls build their plan each time.
  for (const a of req.inputs) {
    if (needsCopy(req, a, true)) copyNeeded = true;
    key += `|${a.type}:${bufferId(a.buffer)}@${a.offset}`;
  }
  for (const a of gathered) {
    if (needsCopy(req, a, false)) copyNeeded = true;
    key += `|g${a.type}:${bufferId(a.buffer)}@${a.offset}+${a.length}`;
  }
  for (const a of extras) key += `|o${a.type}:${bufferId(a.buffer)}@${a.offset}`;
  return { key, copyNeeded };
}

/**
 * What a plan key of a call without gathered arrays, extra outputs or copies is made of, by
 * identity (the element fragment, the policy's tuning object) and by value (n, write, constants,
 * tuning name, the output's and each input's buffer, offset, length and type), with its key.
 */
interface LastMap {
  readonly n: number;
  readonly write: MapWrite | undefined;
  readonly elem: WgslFragment;
  readonly c0: number;
  readonly c1: number;
  readonly tuning: object | undefined;
  readonly tuningName: string | undefined;
  /** The output's, then each input's: buffer, offset, length, type. */
  readonly arrays: readonly (GPUBuffer | number | string)[];
  readonly key: string;
}

/** Per device, its last map call that may take the fast path. */
const lastMaps = new WeakMap<GpuDevice, LastMap>();

function lastMapOf(req: MapRequest, key: string): LastMap {
  const arrays: (GPUBuffer | number | string)[] = [];
  for (const a of [req.output, ...req.inputs]) arrays.push(a.buffer, a.offset, a.length, a.type);
  return {
    n: req.n,
    write: req.write,
    elem: req.elem,
    c0: req.constants?.[0] ?? 0,
    c1: req.constants?.[1] ?? 0,
    tuning: req.tuning,
    tuningName: req.tuningName,
    arrays,
    key,
  };
}

function sameArray(arrays: readonly (GPUBuffer | number | string)[], at: number, a: DeviceArray): boolean {
  return (
    arrays[at] === a.buffer && arrays[at + 1] === a.offset && arrays[at + 2] === a.length && arrays[at + 3] === a.type
  );
}

/** Whether `req` has every part of `last`'s plan key (so the same key), and no gathered arrays or extra outputs. */
function sameMapCall(last: LastMap, req: MapRequest): boolean {
  if (
    last.n !== req.n ||
    last.write !== req.write ||
    last.elem !== req.elem ||
    last.c0 !== (req.constants?.[0] ?? 0) ||
    last.c1 !== (req.constants?.[1] ?? 0) ||
    last.tuning !== req.tuning ||
    last.tuningName !== req.tuningName ||
    last.arrays.length !== 4 * (1 + req.inputs.length) ||
    (req.gathered?.length ?? 0) > 0 ||
    (req.extraOutputs?.length ?? 0) > 0 ||
    !sameArray(last.arrays, 0, req.output)
  ) {
    return false;
  }
  for (let k = 0; k < req.inputs.length; k++) {
    if (!sameArray(last.arrays, 4 * (k + 1), req.inputs[k] as DeviceArray)) return false;
  }
  return true;
}

const NO_COPIES: readonly (DeviceArray | undefined)[] = [];
const NO_ARRAYS: readonly DeviceArray[] = [];

/**
 * Whether array `a` of a call is read from a copy: one read elsewhere in the output's buffer
 * (WebGPU forbids a buffer bound both read-only and writable in one dispatch), any array in the
 * output's buffer of a 'store' call (its output is bound whole), or one in an extra output's buffer.
 */
function needsCopy(req: MapRequest, a: DeviceArray, streamed: boolean): boolean {
  const output = req.output;
  if (a.buffer === output.buffer && (req.write === 'store' || !streamed || a.offset !== output.offset)) return true;
  for (const o of req.extraOutputs ?? NO_ARRAYS) if (o.buffer === a.buffer) return true;
  return false;
}

/** Builds the pipelines, bind groups and parameter buffers of a call (the cold path). */
async function buildPlan(
  device: GpuDevice,
  req: MapRequest,
  t: MapTuning,
  copies: readonly (DeviceArray | undefined)[],
  gatheredCopies: readonly (DeviceArray | undefined)[],
  [c0, c1]: readonly [number, number],
): Promise<MapPlan> {
  const { n, output } = req;
  const store = req.write === 'store';
  const kernelSources = req.inputs.map(
    (a, k): InputSource =>
      !copies[k] && a.buffer === output.buffer && a.offset === output.offset ? 'output' : 'binding',
  );
  const inputs = req.inputs.map((a, k) => copies[k] ?? a);
  const gathered = (req.gathered ?? []).map((a, k) => gatheredCopies[k] ?? a);
  const inTypes = inputs.map((a) => a.type as NumericType);
  const gatheredTypes = gathered.map((a) => a.type as NumericType);
  const extras = req.extraOutputs ?? [];
  const extraTypes = extras.map((a) => a.type as NumericType);
  // A 'store' call (scatter) always takes the scalar path: its loads give neighbouring lanes
  // neighbouring elements, so a map that keeps neighbours near each other stores contiguously per
  // subgroup. On the vec4 path each thread holds four consecutive elements, so one store
  // instruction's lanes write four elements apart (four times the memory transactions).
  const aligned = !store && [output, ...extras, ...inputs].every((a) => a.offset % 4 === 0);
  const n4 = aligned ? n - (n % 4) : 0;
  const limit = bindingLimit(device, t.maxBindingBytes);
  const w = t.workgroupSize;
  const ranges: { path: MapPath; start: number; length: number }[] = [];
  if (n4 > 0) ranges.push({ path: 'vec', start: 0, length: n4 });
  if (n4 < n) ranges.push({ path: 'scalar', start: n4, length: n - n4 });
  const pipelines: GPUComputePipeline[] = [];
  for (const r of ranges) {
    const key = `map|${r.path}|${req.write ?? 'value'}|${req.elem.name}|${inTypes.join(',')}|${gatheredTypes.join(',')}|${kernelSources.join(',')}|${[output.type, ...extraTypes].join(',')}|${w}|${t.vecsPerThread}|${t.itemsPerThread}`;
    pipelines.push(
      await pipelineFor(device, key, [req.elem], () =>
        mapKernel({
          inTypes,
          sources: kernelSources,
          outType: output.type as NumericType,
          elem: req.elem,
          write: req.write ?? 'value',
          gathered: gatheredTypes,
          extraOuts: extraTypes,
          path: r.path,
          workgroupSize: w,
          vecsPerThread: t.vecsPerThread,
          itemsPerThread: t.itemsPerThread,
        }),
      ),
    );
  }
  const use = mapUse(kernelSources, gathered.length, extras.length);
  return device.queue.guard(req.label, () => {
    const owned: GPUBuffer[] = [];
    const steps: CachedStep[] = [];
    ranges.forEach((r, i) => {
      const pipeline = pipelines[i] as GPUComputePipeline;
      const layout = pipeline.getBindGroupLayout(0);
      const tile = r.path === 'vec' ? 4 * w * t.vecsPerThread : w * t.itemsPerThread;
      // Arrays bound whole ('store' outputs, gathered arrays): one window for every segment.
      const whole = (a: DeviceArray) => windowOf(device, a, { start: 0, length: a.length });
      const gwins = gathered.map(whole);
      const woWhole = store ? whole(output) : undefined;
      for (const s of segmentsFor(device, r.length, limit, tile)) {
        const abs: Segment = { start: r.start + s.start, length: s.length };
        const wo = woWhole ?? windowOf(device, output, abs);
        const wins = inputs.map((a) => windowOf(device, a, abs));
        const count = r.path === 'vec' ? s.length / 4 : s.length;
        const per = r.path === 'vec' ? tile / 4 : tile;
        const tiles = Math.max(1, Math.ceil(count / per));
        const wgs = t.maxWorkgroups > 0 ? Math.min(tiles, t.maxWorkgroups) : tiles;
        const ewins = extras.map((a) => windowOf(device, a, abs));
        const words = MAP.pack({
          n: s.length,
          base_out: wo.localBase,
          base0: wins[0]?.localBase ?? 0,
          base1: wins[1]?.localBase ?? 0,
          base2: wins[2]?.localBase ?? 0,
          base3: wins[3]?.localBase ?? 0,
          index_start: abs.start,
          num_wg: wgs,
          c0: c0 >>> 0,
          c1: c1 >>> 0,
          num_tiles: tiles,
          gbase0: gwins[0]?.localBase ?? 0,
          gbase1: gwins[1]?.localBase ?? 0,
          base_o1: ewins[0]?.localBase ?? 0,
          base_o2: ewins[1]?.localBase ?? 0,
          base_o3: ewins[2]?.localBase ?? 0,
        });
        const params = paramsBuffer(device, words, `${req.label} params`);
        owned.push(params);
        const resources: Partial<Record<MapBinding | 'prm' | 'out_d', GPUBindingResource>> = {
          prm: { buffer: params },
          out_d: windowResource(output, wo),
        };
        inputs.forEach((a, k) => {
          if (kernelSources[k] === 'binding') resources[mapInputName(k)] = windowResource(a, wins[k] as typeof wo);
        });
        gathered.forEach((a, k) => {
          resources[mapGatheredName(k)] = windowResource(a, gwins[k] as typeof wo);
        });
        extras.forEach((a, k) => {
          resources[mapOutputName(k + 1)] = windowResource(a, ewins[k] as typeof wo);
        });
        const entries = MAP.entries(resources, use);
        steps.push({ pipeline, group: device.gpu.createBindGroup({ layout, entries }), wgs });
      }
    });
    return { steps, owned, elemCode: req.elem.code };
  });
}
