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
  bufferId,
  type Combiner,
  type DeviceArray,
  dispatchCache,
  fragment,
  type GpuDevice,
  mangle,
  type NumericType,
  type Owned,
  paramsBuffer,
  pipelineFor,
  type Readback,
  type Turn,
  type WgslFragment,
} from '@webdpl/core';
import { type CachedStep, cachedTuning, recordSteps } from '../../common/gpu-io';
import { scratchBuffer } from '../../common/scratch';
import { segmentsFor, windowOf, windowResource } from '../../common/segments';
import { bindingLimit, fitThreads, useSubgroups } from '../../common/tuning';
import {
  atomicFoldOf,
  blockedKernel,
  finalKernel,
  partialsKernel,
  type ReducePath,
  TR,
  type TrBinding,
  type TupleShape,
  trInput,
  trUse,
} from './kernels';
import { softwareTransformReduceTuning, type TransformReduceTuning, transformReduceTuning } from './tuning';

export type { ReducePath, TupleShape } from './kernels';
export { softwareTransformReduceTuning, transformReduceTuning } from './tuning';

export interface TransformReduceRequest {
  /** Label for errors and profiling. */
  readonly label: string;
  /** 1 to 4 inputs of equal length >= 1; or none, with `n` (the load computes from the index). */
  readonly inputs: readonly DeviceArray[];
  /** Number of elements when there is no input (counting(n)). */
  readonly n?: number;
  /**
   * Declares `fn <name>([x0: T0, [x1: T1,]] i: u32) -> Acc`. Its mangled name keys the cached kernel
   * (the code is compared on every call), so a front may build it per call.
   */
  readonly load: WgslFragment;
  readonly combiner: Combiner;
  /** Whether the combine may reorder (enables the vectorized strided path). */
  readonly commutative: boolean;
  /**
   * The combiner's type is a struct (tuple accumulators, `TupleShape`): pass 1 runs the ordered
   * blocked kernel (shuffling the struct field by field where subgroups are used); pass 2 folds
   * the partials through the workgroup-memory tree (subgroup operations cannot move structs).
   */
  readonly tuple?: TupleShape;
  /** Tuning overrides from the policy. */
  readonly tuning?: Readonly<Record<string, number | boolean>>;
  /** Name of the tuning entry the overrides were given under. @default 'reduce' */
  readonly tuningName?: string;
}

const identityLoads = new Map<NumericType, WgslFragment>();

/** `fn(x: T, i: u32) -> T { return x; }`: the load of a plain reduce (one object per type). */
export function identityLoad(type: NumericType): WgslFragment {
  let f = identityLoads.get(type);
  if (!f) {
    const name = mangle('load_id', type);
    f = fragment({ name, code: `fn ${name}(x: ${type}, i: u32) -> ${type} { return x; }` });
    identityLoads.set(type, f);
  }
  return f;
}

function choosePath(req: TransformReduceRequest): ReducePath {
  if (req.tuple) {
    return req.inputs.length > 0 && req.inputs.every((a) => a.offset % 4 === 0) ? 'blocked-vec' : 'blocked';
  }
  if (!req.commutative) return 'ordered';
  if (req.inputs.length === 0 || req.inputs.length > 2) return 'strided';
  return req.inputs.every((a) => a.offset % 4 === 0) ? 'vec' : 'strided';
}

/** One call's recorded work, reused by every later call of the same shape on the same arrays. */
interface ReducePlan extends Owned {
  readonly steps: readonly CachedStep[];
  readonly partials: GPUBuffer;
  readonly partialBytes: number;
  /** Byte offset of the result in `partials`. */
  readonly resultAt: number;
  /** Byte offset of the word the atomic fold starts from, cleared before the pass (atomic plans). */
  readonly clearAt: number | undefined;
  readonly loadCode: string;
  readonly combineCode: string;
}

/**
 * Runs the engine and returns the readback of the reduced accumulator (combiner.bytes long: its
 * `word(0)` for a 4-byte one, `data()` for a struct).
 * The caller combines its init value on the host.
 *
 * Per call on arrays seen before (same shape, tuning and arrays) nothing is built: the pipelines,
 * bind groups and parameter buffers come from a per-device cache, and the call records its
 * dispatches and the 4-byte readback into one command buffer (one error scope, one wait).
 * With `result`: resolves with `result(readback)`, run where the readback arrives (no promise step
 * between it and the caller's answer, e.g. a front's fold of init with the reduced value).
 */
export function transformReduceDevice<T = Readback>(
  device: GpuDevice,
  req: TransformReduceRequest,
  result?: (readback: Readback) => T,
): Promise<T> {
  // No async function on the hot path (a plan cached): the promise of the queue's submission is
  // the call's, with no promise step of its own (issue 12). Errors reject, as before.
  try {
    const stride = req.combiner.bytes;
    // A call like the device's last one (the same request fields, arrays and tuning object) takes
    // its plan key without building it (issue 12); the key is still looked up, so an evicted plan
    // is rebuilt.
    const last = lastCalls.get(device);
    const sameAsLast = last !== undefined && sameCall(last, req);
    const keyed = sameAsLast ? undefined : planKeyOf(device, req);
    const planKey = keyed ? keyed.planKey : (last as LastCall).planKey;
    // The call's place in the device's call order, before anything that may wait.
    const turn = device.queue.reserve();
    const cache = dispatchCache<ReducePlan>(device, 'transform-reduce');
    let plan = cache.get(planKey);
    if (
      plan &&
      (plan.loadCode !== req.load.code ||
        plan.combineCode !== req.combiner.combine.code ||
        scratchBuffer(device, partialsKey(stride), plan.partialBytes) !== plan.partials)
    ) {
      plan = undefined;
    }
    if (!plan) return buildThenSubmit(device, req, keyed ?? planKeyOf(device, req), planKey, sameAsLast, turn, result);
    if (!sameAsLast) lastCalls.set(device, lastCallOf(req, planKey));
    return submitPlan(device, req, plan, turn, result);
  } catch (e) {
    return Promise.reject(e);
  }
}

/** The cold path of a call: builds its plan (releasing the turn if that fails), caches it and submits. */
async function buildThenSubmit<T>(
  device: GpuDevice,
  req: TransformReduceRequest,
  k: ReturnType<typeof planKeyOf>,
  planKey: string,
  sameAsLast: boolean,
  turn: Turn,
  result: ((readback: Readback) => T) | undefined,
): Promise<T> {
  let plan: ReducePlan;
  try {
    plan = await buildPlan(device, req, k.t, k.kernelKey, {
      n: k.n,
      path: k.path,
      subgroups: k.subgroups,
      minSubgroupSize: k.minSubgroupSize,
    });
  } catch (e) {
    turn.release();
    throw e;
  }
  dispatchCache<ReducePlan>(device, 'transform-reduce').set(planKey, plan);
  if (!sameAsLast) lastCalls.set(device, lastCallOf(req, planKey));
  return submitPlan(device, req, plan, turn, result);
}

/**
 * Records a plan's dispatches and the accumulator's readback and submits them; resolves with
 * `result(readback)`, or the readback.
 */
function submitPlan<T>(
  device: GpuDevice,
  req: TransformReduceRequest,
  p: ReducePlan,
  turn: Turn,
  result: ((readback: Readback) => T) | undefined,
): Promise<T> {
  const stride = req.combiner.bytes;
  return device.queue.submitRead(
    req.label,
    (rec) => {
      if (p.clearAt !== undefined) rec.encoder.clearBuffer(p.partials, p.clearAt, 4);
      const pass = rec.beginPass(req.label);
      recordSteps(rec, pass, p.steps);
      pass.end();
      rec.readback(p.partials, p.resultAt, stride);
    },
    turn,
    // Without `result`, submitRead's default: the readback itself.
    result as ((readback: Readback | undefined) => T) | undefined,
  );
}

/** A call's tuning, geometry choices and cache keys (the kernel's, and the plan's). */
function planKeyOf(device: GpuDevice, req: TransformReduceRequest) {
  const defaults = device.info.kind === 'software-gpu' ? softwareTransformReduceTuning : transformReduceTuning;
  const t = cachedTuning(req.tuningName ?? 'reduce', fitThreads(device, defaults), req.tuning);
  const n = req.inputs[0]?.length ?? req.n ?? 0;
  const subgroups = useSubgroups(device, t.subgroups);
  const minSubgroupSize = device.info.subgroupMinSize || 4;
  const path = choosePath(req);
  let kernelKey = `tr|${path}|${req.load.name}|${req.combiner.name}|${t.workgroupSize}|${t.vecsPerThread}|${t.itemsPerThread}|${subgroups ? minSubgroupSize : 0}|${req.tuple?.raw.name ?? ''}`;
  for (const a of req.inputs) kernelKey += `|${a.type}`;
  let planKey = `${kernelKey}|${n}|${t.maxWorkgroups}|${t.minTilesPerWorkgroup}|${t.atomicFold}|${t.maxBindingBytes}`;
  for (const a of req.inputs) planKey += `|${bufferId(a.buffer)}@${a.offset}`;
  return { t, n, subgroups, minSubgroupSize, path, kernelKey, planKey };
}

/**
 * What a call's plan key is made of, by identity (fragments, combiners, tuple shapes and policies'
 * tuning objects are memoized and frozen) and by value (each input's buffer, offset, length and
 * type; `n`; `commutative`; the tuning entry's name), with the key it gave.
 */
interface LastCall {
  readonly load: WgslFragment;
  readonly combiner: Combiner;
  readonly commutative: boolean;
  readonly tuple: TupleShape | undefined;
  readonly tuning: object | undefined;
  readonly tuningName: string | undefined;
  readonly n: number | undefined;
  readonly buffers: readonly GPUBuffer[];
  /** offset, length and type of each input. */
  readonly shapes: readonly (number | string)[];
  readonly planKey: string;
}

/** Per device, its last transform-reduce call (the fast path of a repeated call). */
const lastCalls = new WeakMap<GpuDevice, LastCall>();

function lastCallOf(req: TransformReduceRequest, planKey: string): LastCall {
  const buffers: GPUBuffer[] = [];
  const shapes: (number | string)[] = [];
  for (const a of req.inputs) {
    buffers.push(a.buffer);
    shapes.push(a.offset, a.length, a.type);
  }
  return {
    load: req.load,
    combiner: req.combiner,
    commutative: req.commutative,
    tuple: req.tuple,
    tuning: req.tuning,
    tuningName: req.tuningName,
    n: req.n,
    buffers,
    shapes,
    planKey,
  };
}

/** Whether `req` has every part of `last`'s plan key (so the same key). */
function sameCall(last: LastCall, req: TransformReduceRequest): boolean {
  if (
    last.load !== req.load ||
    last.combiner !== req.combiner ||
    last.commutative !== req.commutative ||
    last.tuple !== req.tuple ||
    last.tuning !== req.tuning ||
    last.tuningName !== req.tuningName ||
    last.n !== req.n ||
    last.buffers.length !== req.inputs.length
  ) {
    return false;
  }
  for (let k = 0; k < req.inputs.length; k++) {
    const a = req.inputs[k] as DeviceArray;
    if (
      last.buffers[k] !== a.buffer ||
      last.shapes[3 * k] !== a.offset ||
      last.shapes[3 * k + 1] !== a.length ||
      last.shapes[3 * k + 2] !== a.type
    ) {
      return false;
    }
  }
  return true;
}

const partialsKeys = new Map<number, string>();

/** The scratch key of the partials of accumulators of `stride` bytes (one string per stride). */
function partialsKey(stride: number): string {
  let k = partialsKeys.get(stride);
  if (k === undefined) {
    k = `tr-partials-${stride}`;
    partialsKeys.set(stride, k);
  }
  return k;
}

/** Builds the pipelines, bind groups and parameter buffers of a call (the cold path). */
async function buildPlan(
  device: GpuDevice,
  req: TransformReduceRequest,
  t: TransformReduceTuning,
  kernelKey: string,
  g: { n: number; path: ReducePath; subgroups: boolean; minSubgroupSize: number },
): Promise<ReducePlan> {
  const { n, path, subgroups, minSubgroupSize } = g;
  const w = t.workgroupSize;
  const tuple = req.tuple;
  const tileElems = path === 'vec' || tuple ? 4 * w * t.vecsPerThread : w * t.itemsPerThread;
  const inTypes = req.inputs.map((a) => a.type as NumericType);
  const leaves = tuple ? [req.load, req.combiner.combine, tuple.raw] : [req.load, req.combiner.combine];
  const segments = segmentsFor(device, n, bindingLimit(device, t.maxBindingBytes), tileElems);
  // Geometry per segment: workgroups and tiles per workgroup.
  const geometry = segments.map((s) => {
    const tiles = Math.max(1, Math.ceil(s.length / tileElems));
    const wgs = Math.max(1, Math.min(tiles, t.maxWorkgroups, Math.floor(tiles / t.minTilesPerWorkgroup)));
    const tilesPerWg = Math.ceil(tiles / wgs);
    return { s, wgs: Math.ceil(tiles / tilesPerWg), tilesPerWg };
  });
  const partialCount = geometry.reduce((a, p) => a + p.wgs, 0);
  // Integer plus / or / xor (max over u32) fold every workgroup's total into one word with an
  // atomic: one pass, no second dispatch (commutative: any order gives the same bits).
  const atomicFold =
    t.atomicFold && !tuple && req.commutative && partialCount > 1 ? atomicFoldOf(req.combiner) : undefined;
  const build = (): WgslFragment =>
    tuple
      ? blockedKernel({
          inTypes,
          load: req.load,
          combiner: req.combiner,
          tuple,
          vec: path === 'blocked-vec',
          workgroupSize: w,
          itemsPerThread: 4 * t.vecsPerThread,
          subgroups,
          minSubgroupSize,
        })
      : partialsKernel({
          inTypes,
          load: req.load,
          combiner: req.combiner,
          path,
          workgroupSize: w,
          vecsPerThread: t.vecsPerThread,
          itemsPerThread: t.itemsPerThread,
          subgroups,
          minSubgroupSize,
          atomicFold,
        });
  const pass1 = await pipelineFor(device, atomicFold ? `${kernelKey}|${atomicFold}` : kernelKey, leaves, build);
  const needFinal = partialCount > 1 && !atomicFold;
  const sgFinal = subgroups && !tuple;
  const finalKey = `tr_final|${req.combiner.name}|${w}|${sgFinal ? minSubgroupSize : 0}`;
  const pass2 = needFinal
    ? await pipelineFor(device, finalKey, [req.combiner.combine], () =>
        finalKernel({ combiner: req.combiner, workgroupSize: w, subgroups: sgFinal, minSubgroupSize }),
      )
    : undefined;
  const stride = req.combiner.bytes;
  const partialBytes = (partialCount + 1) * stride;
  const partials = scratchBuffer(device, partialsKey(stride), partialBytes);
  return device.queue.guard(req.label, () => {
    const owned: GPUBuffer[] = [];
    const steps: CachedStep[] = [];
    const layout1 = pass1.getBindGroupLayout(0);
    const vec = path === 'vec' || path === 'blocked-vec';
    const use = trUse(req.inputs.length, vec, atomicFold !== undefined);
    let out = 0;
    for (const plan of geometry) {
      const wins = req.inputs.map((a) => windowOf(device, a, plan.s));
      const words = TR.pack({
        n: plan.s.length,
        base0: wins[0]?.localBase ?? 0,
        base1: wins[1]?.localBase ?? 0,
        tiles_per_wg: plan.tilesPerWg,
        num_wg: plan.wgs,
        out_offset: atomicFold ? 0 : out,
        seg_start: plan.s.start,
        base2: wins[2]?.localBase ?? 0,
        base3: wins[3]?.localBase ?? 0,
      });
      const params = paramsBuffer(device, words, `${req.label} params`);
      owned.push(params);
      const resources: Partial<Record<TrBinding | 'prm' | 'partials' | 'partials_a', GPUBindingResource>> = {
        prm: { buffer: params },
        [atomicFold ? 'partials_a' : 'partials']: { buffer: partials },
      };
      req.inputs.forEach((a, k) => {
        const r = windowResource(a, wins[k] as ReturnType<typeof windowOf>);
        const b = trInput(k);
        resources[b.s] = r;
        if (vec) resources[b.v] = r;
      });
      const entries = TR.entries(resources, use);
      steps.push({ pipeline: pass1, group: device.gpu.createBindGroup({ layout: layout1, entries }), wgs: plan.wgs });
      out += plan.wgs;
    }
    if (pass2) {
      const words = TR.pack({
        n: partialCount,
        base0: 0,
        base1: 0,
        tiles_per_wg: 0,
        num_wg: 1,
        out_offset: partialCount,
        seg_start: 0,
        base2: 0,
        base3: 0,
      });
      const params = paramsBuffer(device, words, `${req.label} params`);
      owned.push(params);
      const group = device.gpu.createBindGroup({
        layout: pass2.getBindGroupLayout(0),
        entries: TR.entries({ prm: { buffer: params }, partials: { buffer: partials } }, { partials: true }),
      });
      steps.push({ pipeline: pass2, group, wgs: 1 });
    }
    return {
      steps,
      owned,
      partials,
      partialBytes,
      resultAt: needFinal ? partialCount * stride : 0,
      clearAt: atomicFold ? 0 : undefined,
      loadCode: req.load.code,
      combineCode: req.combiner.combine.code,
    };
  });
}
