/**
 * The scan-scatter engine: inclusive/exclusive scans (with a transform) and compaction (copyIf,
 * removeIf, partition, unique) are all "generate a value per element, scan it in order, write".
 *
 * Strategy: by default the single-pass chained scan with decoupled look-back and fallback (see
 * kernels.ts): one read and one write per element. The three-pass reduce-then-scan (tile
 * reductions, one workgroup scanning the tile sums, tiles rescanned from their carry-in; about 1.5x
 * the traffic) is a tuning choice, and the strategy of in-place scans of a DeviceArray: the chained
 * scan's fallback re-reads predecessor tiles, which an in-place scan may already have overwritten.
 *
 * Size tiers: n = 0 never reaches the engine (callers return at once). A segment of one tile runs one
 * workgroup straight from the carry (tile 0 never looks back; reduce-then-scan runs its pass 3 alone). Inputs beyond one storage binding (or
 * the tuning's lower `maxBindingBytes`) are split into segments of whole tiles, processed in order by
 * their own dispatches; each segment's last tile writes its inclusive total to the control buffer and
 * the next segment starts from it. More than 65,535 tiles run on a 2-D grid. Everything (clears,
 * passes, the copy of a last partial vec4, the compaction count and output readbacks) is recorded
 * into one command buffer.
 *
 * Compaction writes kept elements to output[number kept before] (partition: rejected ones to
 * output[n - 1 - number rejected before]) straight from the scan, and reads the count back in the
 * same submission; a 'scatter' write hook's fragment stores each written element into up to 3
 * outputs (`more`: zips), each with its own finish copy and read-back in that submission. Outputs
 * are bound whole, so each must fit one storage binding of the device, and a call's storage
 * bindings must fit the device's per-stage limit (`compactionFits`).
 */
import {
  bufferId,
  type Combiner,
  combinerOf,
  DeviceArray,
  dispatchCache,
  fragment,
  type GpuDevice,
  type LruCache,
  mangle,
  type NumericType,
  type Owned,
  objectId,
  paramsBuffer,
  pipelineFor,
  plus,
  type Readback,
  type Recorder,
  type Turn,
  UnsupportedOnDeviceError,
  type WgslFragment,
} from '@webdpl/core';
import { type CachedStep, cachedTuning, recordSteps, sameLeaves } from '../../common/gpu-io';
import { scratchBuffer } from '../../common/scratch';
import { type Segment, segmentsFor, type Window, windowOf, windowResource } from '../../common/segments';
import { bindingLimit, maxWorkgroupThreads, useSubgroups } from '../../common/tuning';
import {
  ctrlWords,
  type ElementHook,
  extraOutputs,
  type FinishMode,
  finishKernel,
  type GenerateHook,
  genFnName,
  genKind,
  genSignature,
  isCompaction,
  keysOf,
  neighboursOf,
  SCAN_MAX_INPUTS,
  SCAN_MAX_OUTPUTS,
  SCN,
  SCN_FINISH,
  type ScanWrite,
  type ScatterWrite,
  SPINE_USE,
  scanOf,
  spineKernel,
  storageBindings,
  storeOf,
  streamedInputs,
  stripedKind,
  type TileKernelParams,
  type TilePhase,
  tileKernel,
  tileKernelName,
  tileUse,
  vecStored,
  type WriteHook,
  writeName,
} from './kernels';
import { largeTilesFrom, type ScanKind, type ScanTuning, scanDefaults } from './tuning';

export type {
  AdjacentHook,
  AdjacentKeys,
  ByKeyHook,
  ElementHook,
  FinishMode,
  GenerateHook,
  ScanWrite,
  ScatterWrite,
  TilePhase,
  WriteHook,
} from './kernels';
export { SCAN_MAX_INPUTS, SCAN_MAX_OUTPUTS, segmentedCombiner } from './kernels';
export { type ScanKind, type ScanTuning, scanDefaults, scanTuning } from './tuning';

/** Tuning entry name of the engine (policies' `tuning.scan`). */
export const SCAN_ENGINE = 'scan';

interface CommonRequest {
  /** Label for errors and profiling. */
  readonly label: string;
  /** The input, at least 1 element. */
  readonly input: DeviceArray;
  /** Tuning overrides from the policy. */
  readonly tuning?: Readonly<Record<string, number | boolean>>;
  /** Name of the tuning entry the overrides were given under (for error messages). @default 'scan' */
  readonly tuningName?: string;
}

export interface ScanDeviceRequest extends CommonRequest {
  /** Same length as the input, element type = the combiner's; may be the input itself (in place). */
  readonly output: DeviceArray;
  /**
   * An 'element' hook (the element itself, or its function into the combiner's type over the
   * element, `inputs` and its index); or a scan by key ('by-key' with `scan`, over `keys`, with
   * `segmentedCombiner` of the value combiner: never in place).
   */
  readonly gen: Extract<GenerateHook, { kind: 'element' | 'by-key' | 'adjacent' }>;
  /** The streamed inputs of an 'element' hook, one per entry of its `inputs`: the input's length, on its device. */
  readonly inputs?: readonly DeviceArray[];
  /** The keys of a scan by key: the input's length, on its device. */
  readonly keys?: DeviceArray;
  /**
   * 'inclusive' / 'exclusive' (the built-in scan writes: the prefix to `output`), or a scan hook
   * whose fragment stores into `output` and the `more` outputs (one per output type after the first).
   */
  readonly write: 'inclusive' | 'exclusive' | ScanWrite;
  /**
   * A scan fragment's outputs 1.. (SCN's `out1_s`, `out2_s`): each bound whole, at least
   * input-length elements, not an input, with its own read-back.
   */
  readonly more?: readonly MoreOutput[];
  /** Combiner over the scan's value type (the output's element type unless a fragment stores). */
  readonly combiner: Combiner;
  /** Bits of the value the scan starts from (init, or the operator's identity). */
  readonly initBits: number;
  /** Read the output back in the same submission and return its bytes. @default false */
  readonly readBack?: boolean;
}

export interface CompactDeviceRequest extends CommonRequest {
  /** Where kept (and, for partition, rejected) elements go: at least input-length elements, not the input. */
  readonly output: DeviceArray;
  /** Which elements are kept: an 'element' hook's function returns bool. */
  readonly keep: GenerateHook;
  /** The streamed inputs of an 'element' keep, one per entry of its `inputs`: the input's length, on its device. */
  readonly inputs?: readonly DeviceArray[];
  /** The keys of a `{ kind: 'by-key' }` keep: the input's length, on its device. */
  readonly keys?: DeviceArray;
  /**
   * 'compact' / 'partition' (the built-in scatter writes: x to `output`), or a scatter hook whose
   * fragment stores into `output` and the `more` outputs (one per output type after the first).
   */
  readonly write: 'compact' | 'partition' | ScatterWrite;
  /** Copy the result from `output` into `dst` afterwards, on the device (in-place algorithms). */
  readonly finish?: CompactFinish;
  /** Read output[0, input length) back in the same submission. @default false */
  readonly readBack?: boolean;
  /**
   * A scatter fragment's outputs 1.. (SCN's `out1_s`, `out2_s`): each like `output` (bound whole,
   * at least input-length elements, not an input), with its own finish copy and read-back.
   */
  readonly more?: readonly MoreOutput[];
}

/** A compaction's copy of its result from an output into `dst` (in-place algorithms, short outputs). */
export interface CompactFinish {
  readonly dst: DeviceArray;
  readonly mode: FinishMode;
  /** 'prefix': copy only when count <= cap. @default dst.length */
  readonly cap?: number;
}

/** One more output of a scatter write. */
export interface MoreOutput {
  readonly output: DeviceArray;
  readonly finish?: CompactFinish;
  /** Read output[0, input length) back in the same submission. @default false */
  readonly readBack?: boolean;
}

export interface CompactResult {
  /** Number of kept elements. */
  readonly count: number;
  /** output[0, n) when `readBack` was asked. */
  readonly bytes?: ArrayBuffer;
  /** Each `more` output's [0, n) when its `readBack` was asked. */
  readonly moreBytes?: readonly (ArrayBuffer | undefined)[];
}

interface SegmentPlan {
  readonly seg: Segment;
  readonly tiles: number;
  readonly tileOffset: number;
  /** 'chained'; reduce-then-scan: 'rts' (passes 1-3), 'direct' (one tile: pass 3 from the carry). */
  readonly kind: 'chained' | 'rts' | 'direct';
  readonly inWin: Window;
  readonly inBase: number;
  readonly outWin: Window;
  /**
   * The windows of the streamed arrays (an 'element' hook's inputs; by key the keys, with one more
   * key on each side where there is one).
   */
  readonly stWins: readonly Window[];
  /** Index of the segment's first element within each streamed array's window. */
  readonly stBases: readonly number[];
}

interface EngineCall {
  readonly label: string;
  /** What the call resolves with, made from its result where the readback arrives (compactDevice's). */
  readonly after?: (r: RunResult) => unknown;
  readonly input: DeviceArray;
  readonly output: DeviceArray;
  /** The keys output of 'by-key-firsts'. */
  readonly keysOut?: DeviceArray;
  /** The streamed arrays: an 'element' hook's inputs, or by key the keys. */
  readonly streams: readonly DeviceArray[];
  readonly gen: GenerateHook;
  readonly write: WriteHook;
  readonly combiner: Combiner;
  readonly initBits: number;
  readonly tuning: Readonly<Record<string, number | boolean>>;
  readonly tuningName: string;
  readonly readBack: boolean;
  readonly finish?: CompactFinish;
  /** A scatter write's outputs 1... */
  readonly more: readonly MoreOutput[];
  readonly runsCopy?: RunsByKeyDeviceRequest['copyTo'];
}

function sameView(a: DeviceArray, b: DeviceArray): boolean {
  return a.buffer === b.buffer && a.offset === b.offset && a.length === b.length;
}

/** No overrides: one object, so the tuning memo (by overrides object) hits. */
const NO_TUNING: Readonly<Record<string, number | boolean>> = Object.freeze({});

/**
 * Runs a scan: output[i] = init op v0 op ... op vi (inclusive) or init op v0 op ... op v(i-1)
 * (exclusive), v = gen(input[i]). Returns the output's bytes when `readBack`.
 */
export function scanDevice(device: GpuDevice, req: ScanDeviceRequest): Promise<ArrayBuffer | undefined> {
  return run(device, {
    label: req.label,
    input: req.input,
    output: req.output,
    streams: streamsOf(req.gen, req.inputs, req.keys),
    gen: req.gen,
    write: req.write,
    combiner: req.combiner,
    initBits: req.initBits,
    tuning: req.tuning ?? NO_TUNING,
    tuningName: req.tuningName ?? SCAN_ENGINE,
    readBack: req.readBack ?? false,
    more: req.more ?? [],
  }).then(bytesOf);
}

/** The bytes read back of a call's result (a function, not a closure per call). */
function bytesOf(r: RunResult): ArrayBuffer | undefined {
  return r.bytes;
}

const U32_PLUS = combinerOf(plus, 'u32');

/** The streamed arrays of a call: an 'element' hook's inputs, or the keys by key. */
function streamsOf(gen: GenerateHook, inputs?: readonly DeviceArray[], keys?: DeviceArray): readonly DeviceArray[] {
  if (keysOf(gen)) return keys ? [keys] : [];
  return inputs ?? [];
}

/**
 * The 'element' hook of a compaction by a stencil: keep element i when `fn(stencil[i])`, `fn`
 * declaring `fn <fn.name>(x0: S) -> bool` (the stencil is the call's one streamed input).
 */
export function stencilKeep(fn: WgslFragment, stencilType: NumericType): ElementHook {
  return { kind: 'element', fn, element: false, inputs: [stencilType] };
}

const conversions = new Map<string, ScanWrite>();

/**
 * The scan write storing each result converted to `outType` into output 0 (scans of integer values
 * into an f32 array: `f32(prefix)`, rounded to the nearest f32; between u32 and i32 the bits are
 * kept; f32 values to integers convert as WGSL does), for input elements of `inType` and values of
 * `valueType`. One object per signature, so a call builds nothing on a plan hit.
 */
export function convertingWrite(
  exclusive: boolean,
  inType: NumericType,
  valueType: NumericType,
  outType: NumericType,
): ScanWrite {
  const key = `${exclusive}|${inType}|${valueType}|${outType}`;
  let w = conversions.get(key);
  if (!w) {
    const name = mangle('scn_to', outType, valueType, inType);
    const ints = outType !== 'f32' && valueType !== 'f32';
    const v = outType === valueType ? 'p' : ints ? `bitcast<${outType}>(p)` : `${outType}(p)`;
    const fn = fragment({
      name,
      code: `fn ${name}(i: u32, p: ${valueType}, x: ${inType}) { scn_store0(i, ${v}); }`,
    });
    w = { kind: 'scan', exclusive, fn, outputs: [outType] };
    conversions.set(key, w);
  }
  return w;
}

export interface RunsByKeyDeviceRequest extends CommonRequest {
  /** The keys: the input's length, on its device. */
  readonly keys: DeviceArray;
  /** The 'by-key' head hook. */
  readonly gen: Extract<GenerateHook, { kind: 'by-key' }>;
  /**
   * Each run's first element, bound whole, in no input's buffer; runs beyond its length (or
   * keysOut's) are not written.
   */
  readonly valuesOut: DeviceArray;
  /** Each run's first key, bound whole, in no input's buffer. */
  readonly keysOut: DeviceArray;
  /**
   * Outputs written through temporaries (`valuesOut`/`keysOut`): afterwards, in the same submission,
   * the first `count` elements of each are copied into these arrays when count <= `cap` (else
   * nothing is copied, so they stay untouched).
   */
  readonly copyTo?: { readonly keys?: DeviceArray; readonly values?: DeviceArray; readonly cap: number };
  /** Read both outputs' first n elements back in the same submission. @default false */
  readonly readBack?: boolean;
}

export interface RunsByKeyResult {
  /** Number of runs. */
  readonly count: number;
  readonly keys?: ArrayBuffer;
  readonly values?: ArrayBuffer;
}

/**
 * uniqueByKey in one pass: a compaction of the heads writing their elements and keys
 * ('by-key-firsts'); the number of runs is read back. (reduceByKey: by-key/runs.ts.)
 */
export async function runsByKeyDevice(device: GpuDevice, req: RunsByKeyDeviceRequest): Promise<RunsByKeyResult> {
  const r = await run(device, {
    label: req.label,
    input: req.input,
    output: req.valuesOut,
    keysOut: req.keysOut,
    streams: [req.keys],
    gen: req.gen,
    write: 'by-key-firsts',
    combiner: U32_PLUS,
    initBits: 0,
    tuning: req.tuning ?? NO_TUNING,
    tuningName: req.tuningName ?? SCAN_ENGINE,
    readBack: req.readBack ?? false,
    runsCopy: req.copyTo,
    more: [],
  });
  return { count: r.count, values: r.bytes, keys: r.keyBytes };
}

/**
 * Runs a compaction and returns the number of kept elements (and the output's bytes when asked).
 * With `after`: resolves with `after(result)`, made where the readback arrives (no promise step
 * between it and the caller's answer, issue 12); an error `after` throws rejects.
 */
export function compactDevice<T = CompactResult>(
  device: GpuDevice,
  req: CompactDeviceRequest,
  after?: (r: CompactResult) => T,
): Promise<T> {
  return run(device, {
    label: req.label,
    after,
    input: req.input,
    output: req.output,
    streams: streamsOf(req.keep, req.inputs, req.keys),
    gen: req.keep,
    write: req.write,
    combiner: U32_PLUS,
    initBits: 0,
    tuning: req.tuning ?? NO_TUNING,
    tuningName: req.tuningName ?? SCAN_ENGINE,
    readBack: req.readBack ?? false,
    finish: req.finish,
    more: req.more ?? [],
  }) as Promise<unknown> as Promise<T>;
}

/** Why a compaction of `n` elements cannot run on `device`, if it cannot (its output is bound whole). */
export function compactionLimit(device: GpuDevice, n: number): string | undefined {
  const bytes = n * 4 + 512;
  return bytes > device.limits.maxStorageBufferBindingSize
    ? `a compaction output of ${n} elements exceeds one storage binding (${device.limits.maxStorageBufferBindingSize} bytes)`
    : undefined;
}

/**
 * Whether a compaction with this generate hook and write binds no more storage buffers than the
 * device allows per shader stage (`maxStorageBuffersPerShaderStage`: WebGPU's default is 8) on its
 * scalar path; the vec4 path binds the input twice (vec4 and scalar views) and is taken only where
 * it fits too. A scatter write over 2 streamed inputs and 3 outputs binds 8 on the scalar path.
 */
export function compactionFits(device: GpuDevice, keep: GenerateHook, write: WriteHook): boolean {
  return bindingsOf(keep, write, false) <= device.limits.maxStorageBuffersPerShaderStage;
}

/** Storage bindings of a call's kernels (the chained and downsweep variants bind the most). */
function bindingsOf(gen: GenerateHook, write: WriteHook, vec: boolean): number {
  return storageBindings(tileUse({ phase: 'chained', vec, inPlace: false, gen, write }));
}

/** One call's recorded work, reused by every later call of the same shape on the same arrays. */
interface ScanPlan extends Owned {
  readonly steps: readonly CachedStep[];
  /** The scratch buffer of ctrl (from byte 0) and the tile states (from `stateAt`, `stateBytes` long). */
  readonly ctrl: GPUBuffer;
  readonly stateAt: number;
  readonly stateBytes: number;
  /** Words of look-back state per tile (cleared per call). */
  readonly stateWordsPerTile: number;
  /** Segments and all tiles. */
  readonly segments: number;
  readonly totalTiles: number;
  /**
   * Whether a call clears the tile counters and states first: chained segments need them zero,
   * except a call of one chained tile (one segment), whose kernel takes its tile from the workgroup
   * index and never looks back, so it reads nothing of them (issue 12: no clearBuffer per call).
   */
  readonly clear: boolean;
  /** Elements past the last whole vec4 of a vec scan, copied from the control buffer. */
  readonly tailCount: number;
  /** The caller's fragments (combine, generate), compared on every hit (by identity, else code). */
  readonly leaves: readonly WgslFragment[];
}

function leavesOf(call: EngineCall): WgslFragment[] {
  const leaves = [call.combiner.combine];
  const byKey = keysOf(call.gen);
  const eq = neighboursOf(call.gen)?.fn;
  if (byKey) {
    leaves.push(byKey.keyEq);
    if (byKey.scan) leaves.push(byKey.scan.op);
  } else if (eq) leaves.push(eq);
  else if (call.gen.kind === 'element' && call.gen.fn) leaves.push(call.gen.fn);
  const store = storeOf(call.write)?.fn;
  if (store) leaves.push(store);
  return leaves;
}

/**
 * Defaults per device, kind of call and whether the call may use subgroups (scanDefaults: a policy
 * that turns subgroups off gets the tiles of the path it runs), one object each so tuning memoizes.
 */
const defaultsMemo = new WeakMap<GpuDevice, Map<number, ScanTuning>>();
const KIND_CODES: Readonly<Record<ScanKind, number>> = { scan: 0, 'by-key': 1, compaction: 2, select: 3, runs: 4 };

function defaultsFor(device: GpuDevice, kind: ScanKind, subgroups: boolean, n: number): ScanTuning {
  let m = defaultsMemo.get(device);
  if (!m) {
    m = new Map();
    defaultsMemo.set(device, m);
  }
  // The defaults' one size rule per kind (largeTilesFrom): two objects per kind at most.
  const from = largeTilesFrom(kind);
  const large = n >= from;
  // A number, not a string, per call (issue 12).
  const key = KIND_CODES[kind] * 4 + (subgroups ? 2 : 0) + (large ? 1 : 0);
  let d = m.get(key);
  if (!d) {
    d = scanDefaults(device, kind, subgroups, large ? from : 0);
    m.set(key, d);
  }
  return d;
}

/** Whether a compaction takes the striped layout where subgroups are on (kernels.ts, `stripedKind`). */
function striped(call: EngineCall): boolean {
  return stripedKind(call.gen, call.write) !== undefined;
}

/**
 * Runs a scan or compaction. Per call on arrays seen before (same shape, tuning and arrays) nothing
 * is built: pipelines, bind groups and parameter buffers come from a per-device cache. A call that
 * reads nothing back (a scan of DeviceArrays) does not wait for the GPU (core's `Queue.enqueue`).
 */
const NO_FLAGS: readonly boolean[] = [];

/** Whether `buffer` is the buffer of one of the call's outputs. */
function inOutputBuffers(call: EngineCall, buffer: GPUBuffer): boolean {
  if (call.output.buffer === buffer) return true;
  for (const m of call.more) if (m.output.buffer === buffer) return true;
  return false;
}

/** What a call derives before its plan lookup: tuning, in-place and copy decisions, leaves and plan key. */
interface Prepared {
  /** A compaction: its outputs are bound whole and its count is read back. */
  readonly compaction: boolean;
  readonly t: ScanTuning;
  readonly inPlace: boolean;
  readonly copyInput: boolean;
  readonly copyStream: readonly boolean[];
  readonly copied: boolean;
  readonly leaves: readonly WgslFragment[];
  readonly key: string;
}

/** A call's checks and derivations before its plan lookup (see `Prepared`); throws on a bad request. */
function prepare(device: GpuDevice, call: EngineCall): Prepared {
  const compaction = isCompaction(call.write);
  const kind: ScanKind = compaction ? (striped(call) ? 'select' : 'compaction') : keysOf(call.gen) ? 'by-key' : 'scan';
  const t: ScanTuning = cachedTuning(
    call.tuningName,
    defaultsFor(device, kind, call.tuning.subgroups !== false, call.input.length),
    call.tuning,
  );
  const n = call.input.length;
  // A scan write's fragment never runs in place: the input is read from a copy (below).
  const inPlace = !compaction && !scanOf(call.write)?.fn && sameView(call.input, call.output);
  // A distinct view of an output's buffer cannot be bound read-only next to it: scan a copy (such
  // calls build their plan each time).
  const copyInput = !inPlace && inOutputBuffers(call, call.input.buffer);
  // Likewise streamed arrays (a stencil, keys) in an output's buffer.
  const copyStream = call.streams.length ? call.streams.map((a) => inOutputBuffers(call, a.buffer)) : NO_FLAGS;
  const copied = copyInput || copyStream.includes(true);
  const byKey = keysOf(call.gen);
  const wanted = byKey ? 1 : streamedInputs(call.gen).length;
  if (wanted > SCAN_MAX_INPUTS) throw new Error(`${call.label}: at most ${SCAN_MAX_INPUTS} streamed inputs`);
  if (call.streams.length !== wanted || (wanted > 0 && call.streams.some((a) => a.length !== n))) {
    throw new Error(`${call.label}: ${wanted} streamed input(s) (a stencil, keys) of the input's length are needed`);
  }
  const types = streamedInputs(call.gen);
  if (wanted > 0 && call.streams.some((a, k) => types[k] !== undefined && a.type !== types[k])) {
    throw new Error(`${call.label}: the streamed inputs' types must be the hook's (${types.join(', ')})`);
  }
  if (byKey && inPlace) throw new Error(`${call.label}: a scan by key never runs in place`);
  const more = extraOutputs(call.write);
  const store = storeOf(call.write);
  if ((store?.outputs.length ?? 0) > SCAN_MAX_OUTPUTS) {
    throw new Error(`${call.label}: at most ${SCAN_MAX_OUTPUTS} outputs`);
  }
  if (
    call.more.length !== more.length ||
    call.more.some((m, k) => m.output.type !== more[k] || m.output.length < n) ||
    (store && store.outputs[0] !== undefined && call.output.type !== store.outputs[0])
  ) {
    throw new Error(
      `${call.label}: one output per type of the write's fragment (${(store?.outputs ?? []).join(', ')}), of the input's length at least`,
    );
  }
  const leaves = leavesOf(call);
  // The generate hook as the kernel's name has it (kind, function, signature: keys' type and edge).
  const gen = `${genKind(call.gen)}:${genFnName(call.gen)}:${genSignature(call.gen)}`;
  // Every tuning field through the resolved tuning object's id (cachedTuning: one object per
  // policy's overrides and defaults), not a hand-kept list of fields.
  let key = `scan|${writeName(call.write)}|${gen}|${call.combiner.name}|${call.initBits >>> 0}|${n}|t${objectId(t)}|${call.input.type}:${bufferId(call.input.buffer)}@${call.input.offset}|${bufferId(call.output.buffer)}@${call.output.offset}+${call.output.length}`;
  const finish = call.finish;
  if (finish)
    key += `|${finish.mode}:${bufferId(finish.dst.buffer)}@${finish.dst.offset}+${finish.dst.length}:${finish.cap ?? -1}`;
  for (const a of call.streams) key += `|st${a.type}:${bufferId(a.buffer)}@${a.offset}`;
  if (call.keysOut) key += `|ko:${bufferId(call.keysOut.buffer)}@${call.keysOut.offset}+${call.keysOut.length}`;
  for (const m of call.more) {
    const f = m.finish;
    key += `|mo:${bufferId(m.output.buffer)}@${m.output.offset}+${m.output.length}`;
    if (f) key += `:${f.mode}:${bufferId(f.dst.buffer)}@${f.dst.offset}+${f.dst.length}:${f.cap ?? -1}`;
  }
  const rc = call.runsCopy;
  if (rc) {
    const at = (a?: DeviceArray) => (a ? `${bufferId(a.buffer)}@${a.offset}+${a.length}` : '-');
    key += `|rc:${at(rc.keys)}:${at(rc.values)}:${rc.cap}`;
  }
  return { compaction, t, inPlace, copyInput, copyStream, copied, leaves, key };
}

/**
 * Per device, its last few scan-engine calls of distinct shapes and what they derived (the fast
 * path of a repeated call, issue 12): a call whose every part the derivations read equals one of
 * theirs takes its derivations instead of deriving them again; its plan is still looked up by the
 * key, so an evicted plan is rebuilt. Calls that copy an input (`copied`) are never kept.
 */
interface LastScan {
  readonly write: WriteHook;
  readonly combiner: Combiner;
  readonly tuning: object;
  readonly tuningName: string;
  readonly initBits: number;
  readonly readBack: boolean;
  readonly gen: GenerateHook;
  readonly finishMode: FinishMode | undefined;
  readonly finishCap: number | undefined;
  readonly streams: number;
  readonly keysOut: boolean;
  /**
   * Buffer, offset, length and type of each array the call names: input, output, streams, keysOut
   * (when there is one), finish.dst (when there is one). Taken when the call was kept: a kept
   * array may be destroyed since (its getters throw).
   */
  readonly arrays: readonly unknown[];
  readonly prepared: Prepared;
}

/** Calls kept per device, most recent first (calls of a few shapes interleaved, as a scan and a copyIf). */
const LAST_SCANS = 4;
const lastScans = new WeakMap<GpuDevice, LastScan[]>();

/** The arrays of a call in `LastScan.arrays` order. */
function arraysOf(call: EngineCall): DeviceArray[] {
  const out = [call.input, call.output, ...call.streams];
  if (call.keysOut) out.push(call.keysOut);
  if (call.finish) out.push(call.finish.dst);
  return out;
}

function keep(call: EngineCall, prepared: Prepared): LastScan {
  const arrays: unknown[] = [];
  for (const a of arraysOf(call)) arrays.push(a.buffer, a.offset, a.length, a.type);
  return {
    write: call.write,
    combiner: call.combiner,
    tuning: call.tuning,
    tuningName: call.tuningName,
    initBits: call.initBits,
    readBack: call.readBack,
    gen: call.gen,
    finishMode: call.finish?.mode,
    finishCap: call.finish?.cap,
    streams: call.streams.length,
    keysOut: call.keysOut !== undefined,
    arrays,
    prepared,
  };
}

/** The derivations of `call`: a kept call's when one has the same parts, else `prepare`'s (then kept). */
function preparedFor(device: GpuDevice, call: EngineCall): Prepared {
  let kept = lastScans.get(device);
  if (kept) {
    for (let k = 0; k < kept.length; k++) {
      const e = kept[k] as LastScan;
      if (sameScan(e, call)) return e.prepared;
    }
  }
  const prepared = prepare(device, call);
  // Calls with copies, several outputs or copies of runs never take the fast path.
  if (prepared.copied || call.more.length > 0 || call.runsCopy) return prepared;
  if (!kept) {
    kept = [];
    lastScans.set(device, kept);
  }
  kept.unshift(keep(call, prepared));
  if (kept.length > LAST_SCANS) kept.pop();
  return prepared;
}

/** Whether two generate hooks are the same: the same object, or 'element' hooks of equal parts. */
function sameGen(a: GenerateHook, b: GenerateHook): boolean {
  if (a === b) return true;
  if (a.kind !== 'element' || b.kind !== 'element') return false;
  if (a.fn !== b.fn || a.element !== b.element || a.index !== b.index) return false;
  const x = a.inputs;
  const y = b.inputs;
  if (x === y) return true;
  if (!x || !y || x.length !== y.length) return false;
  for (let k = 0; k < x.length; k++) if (x[k] !== y[k]) return false;
  return true;
}

/** Whether array `a` is the one at slot `k` of `parts` (buffer, offset, length, type). */
function sameSlot(parts: readonly unknown[], k: number, a: DeviceArray): boolean {
  return (
    parts[4 * k] === a.buffer &&
    parts[4 * k + 1] === a.offset &&
    parts[4 * k + 2] === a.length &&
    parts[4 * k + 3] === a.type
  );
}

/** Whether `call` has every part that `prepare` reads equal to the kept call's (so it derives the same). */
function sameScan(last: LastScan, call: EngineCall): boolean {
  const finish = call.finish;
  if (
    last.write !== call.write ||
    last.combiner !== call.combiner ||
    last.tuning !== call.tuning ||
    last.tuningName !== call.tuningName ||
    last.initBits !== call.initBits ||
    last.readBack !== call.readBack ||
    call.more.length !== 0 ||
    call.runsCopy !== undefined ||
    last.streams !== call.streams.length ||
    last.keysOut !== (call.keysOut !== undefined) ||
    last.finishMode !== finish?.mode ||
    last.finishCap !== finish?.cap ||
    !sameGen(last.gen, call.gen)
  ) {
    return false;
  }
  const parts = last.arrays;
  if (!sameSlot(parts, 0, call.input) || !sameSlot(parts, 1, call.output)) return false;
  let k = 2;
  for (const a of call.streams) if (!sameSlot(parts, k++, a)) return false;
  if (call.keysOut && !sameSlot(parts, k++, call.keysOut)) return false;
  return finish === undefined || sameSlot(parts, k, finish.dst);
}

type RunResult = CompactResult & { keyBytes?: ArrayBuffer };

/**
 * Runs a call of the engine. A call whose plan is cached and copies nothing runs no async
 * function (issue 12: an async frame and its promise steps per call): it submits at once and
 * returns the submission's promise, then the result; everything else goes through `runBuilding`.
 * Errors reject, as before.
 */
function run(device: GpuDevice, call: EngineCall): Promise<RunResult> {
  try {
    const prepared = preparedFor(device, call);
    const { copied, leaves, key } = prepared;
    const cache = dispatchCache<ScanPlan>(device, 'scan');
    let plan = copied ? undefined : cache.get(key);
    // A cached plan's kernel fitted the device's storage buffers when it was built (its key names
    // the generate and write hooks): the count is taken on plan misses only.
    if (!plan && !compactionFits(device, call.gen, call.write)) {
      throw new UnsupportedOnDeviceError(
        `${call.label}: the kernel binds ${bindingsOf(call.gen, call.write, false)} storage buffers; the device allows ${device.limits.maxStorageBuffersPerShaderStage}`,
      );
    }
    if (
      plan &&
      (!sameLeaves(plan.leaves, leaves) ||
        scratchBuffer(device, 'scan-lookback', plan.stateAt + plan.stateBytes) !== plan.ctrl)
    ) {
      plan = undefined;
    }
    if (!plan) return runBuilding(device, call, prepared, cache);
    // The call's place in the device's call order.
    return submitPlan(device, call, prepared, plan, call.input, call.streams, device.queue.reserve());
  } catch (e) {
    return Promise.reject(e);
  }
}

/** A call that builds its plan (a cache miss, or a call that copies an input or a stream). */
async function runBuilding(
  device: GpuDevice,
  call: EngineCall,
  prepared: Prepared,
  cache: LruCache<ScanPlan>,
): Promise<RunResult> {
  const { t, inPlace, copyInput, copyStream, copied, leaves, key } = prepared;
  const n = call.input.length;
  const input = copyInput ? DeviceArray.create(device, call.input.type, n) : call.input;
  const streams = copied
    ? call.streams.map((a, k) => (copyStream[k] ? DeviceArray.create(device, a.type, n) : a))
    : call.streams;
  // The call's place in the device's call order, before anything that may wait.
  const turn = device.queue.reserve();
  let plan: ScanPlan | undefined;
  try {
    try {
      plan = await buildPlan(device, call, t, input, streams, inPlace, leaves);
    } catch (e) {
      turn.release();
      throw e;
    }
    if (!copied) cache.set(key, plan);
    return await submitPlan(device, call, prepared, plan, input, streams, turn);
  } finally {
    if (copyInput) input.discard();
    if (copied) {
      for (let k = 0; k < streams.length; k++) if (copyStream[k]) (streams[k] as DeviceArray).discard();
      for (const b of plan?.owned ?? []) device.queue.retire(b);
    }
  }
}

/**
 * Records a call's plan (after copying the input and streams into `input` and `streams` when the
 * call copies them) and submits it in its turn; resolves with the count and what was read back.
 */
function submitPlan(
  device: GpuDevice,
  call: EngineCall,
  prepared: Prepared,
  p: ScanPlan,
  input: DeviceArray,
  streams: readonly DeviceArray[],
  turn: Turn,
): Promise<RunResult> {
  const { compaction, copyInput, copyStream, copied } = prepared;
  const n = call.input.length;
  let countRb: Readback | undefined;
  let outRb: { data(): ArrayBuffer } | undefined;
  let keysRb: { data(): ArrayBuffer } | undefined;
  const more = call.more;
  const moreRb: ({ data(): ArrayBuffer } | undefined)[] | undefined = more.length > 0 ? [] : undefined;
  const S = p.segments;
  const record = (rec: Recorder) => {
    const enc = rec.encoder;
    if (copyInput) enc.copyBufferToBuffer(call.input.buffer, call.input.byteOffset, input.buffer, 0, n * 4);
    // Loops, not forEach: no closure per call on the hot path (issue 12).
    if (copied) {
      for (let k = 0; k < call.streams.length; k++) {
        const a = call.streams[k] as DeviceArray;
        if (copyStream[k]) enc.copyBufferToBuffer(a.buffer, a.byteOffset, (streams[k] as DeviceArray).buffer, 0, n * 4);
      }
    }
    // The segments' tile counters (ctrl's first S words) and the tile states of chained
    // segments (their slots lie anywhere in [0, totalTiles)) in one clear: they share a buffer.
    if (p.clear) enc.clearBuffer(p.ctrl, 0, p.stateAt + p.totalTiles * p.stateWordsPerTile * 4);
    const pass = rec.beginPass(call.label);
    recordSteps(rec, pass, p.steps);
    pass.end();
    if (p.tailCount > 0) {
      enc.copyBufferToBuffer(
        p.ctrl,
        2 * S * 4,
        call.output.buffer,
        (call.output.offset + n - p.tailCount) * 4,
        p.tailCount * 4,
      );
    }
    if (compaction) countRb = rec.readback(p.ctrl, (2 * S - 1) * 4, 4);
    // Outputs bound whole may be shorter than n (uniqueByKey's): their length.
    if (call.readBack)
      outRb = rec.readback(call.output.buffer, call.output.byteOffset, Math.min(n, call.output.length) * 4);
    if (call.readBack && call.keysOut) {
      keysRb = rec.readback(call.keysOut.buffer, call.keysOut.byteOffset, Math.min(n, call.keysOut.length) * 4);
    }
    if (moreRb) {
      for (let q = 0; q < more.length; q++) {
        const m = more[q] as MoreOutput;
        moreRb[q] = m.readBack ? rec.readback(m.output.buffer, m.output.byteOffset, n * 4) : undefined;
      }
    }
  };
  const result = (): RunResult => {
    const count = countRb ? countRb.word(0) : n;
    const moreBytes = moreRb?.map((b) => b?.data());
    const r: RunResult = { count, bytes: outRb?.data(), keyBytes: keysRb?.data(), moreBytes };
    // The caller's answer (`EngineCall.after`) where it has one: typed by compactDevice's overload.
    return call.after ? (call.after(r) as RunResult) : r;
  };
  // A call that reads back takes its result where the readback arrives (no promise step of its own).
  return compaction || call.readBack
    ? device.queue.submitRead(call.label, record, turn, result)
    : device.queue.enqueue(call.label, record, turn).then(result);
}

/** Builds the pipelines, bind groups and parameter buffers of a call (the cold path). */
async function buildPlan(
  device: GpuDevice,
  call: EngineCall,
  t: ScanTuning,
  input: DeviceArray,
  streams: readonly DeviceArray[],
  inPlace: boolean,
  leaves: readonly WgslFragment[],
): Promise<ScanPlan> {
  const n = call.input.length;
  const compaction = isCompaction(call.write);
  const w = t.workgroupSize;
  const k = t.itemsPerThread;
  const tile = w * k;
  const subgroups = useSubgroups(device, t.subgroups);
  const minSubgroupSize = device.info.subgroupMinSize || 4;
  // By key the keys are loaded as vec4s beside the values: they must be aligned too.
  const vec =
    k % 4 === 0 &&
    input.offset % 4 === 0 &&
    (!vecStored(call.write) || call.output.offset % 4 === 0) &&
    (!keysOf(call.gen) || (streams[0] as DeviceArray).offset % 4 === 0) &&
    // The vec4 path binds the input twice: only where the device allows the storage buffers.
    bindingsOf(call.gen, call.write, true) <= device.limits.maxStorageBuffersPerShaderStage;
  // By key: always the chained scan (its look-back carries the pairs' head flags; the tile sums of
  // reduce-then-scan hold 4-byte values).
  const byKey = keysOf(call.gen) !== undefined;
  const rts = (t.reduceThenScan || inPlace) && !byKey;
  const segments = segmentsFor(device, n, bindingLimit(device, t.maxBindingBytes), tile);
  const adjacent = neighboursOf(call.gen) !== undefined;
  const outWhole = windowOf(device, call.output, { start: 0, length: call.output.length });
  let tileOffset = 0;
  const plans: SegmentPlan[] = segments.map((seg) => {
    const tiles = Math.ceil(seg.length / tile);
    const extend = adjacent && seg.start > 0;
    const inWin = windowOf(device, input, extend ? { start: seg.start - 1, length: seg.length + 1 } : seg);
    // By key: the keys one before and one after the segment too (heads and tails at its edges).
    const stStart = byKey ? Math.max(0, seg.start - 1) : seg.start;
    const stEnd = byKey ? Math.min(n, seg.start + seg.length + 1) : seg.start + seg.length;
    const stWins = streams.map((a) => windowOf(device, a, { start: stStart, length: stEnd - stStart }));
    const plan: SegmentPlan = {
      seg,
      tiles,
      tileOffset,
      // One tile: the chained kernel needs no look-back for it, reduce-then-scan runs pass 3 alone.
      kind: rts ? (tiles === 1 ? 'direct' : 'rts') : 'chained',
      inWin,
      inBase: inWin.localBase + (extend ? 1 : 0),
      outWin: compaction ? outWhole : windowOf(device, call.output, seg),
      stWins,
      stBases: stWins.map((win) => win.localBase + (seg.start - stStart)),
    };
    tileOffset += tiles;
    return plan;
  });
  const totalTiles = tileOffset;
  // One chained tile: tile 0 never looks back, and with its tile taken from the workgroup index
  // (not the segment's atomic counter) the kernel reads nothing of ctrl's counters or the states,
  // so the call clears nothing.
  const oneTile = plans.length === 1 && (plans[0] as SegmentPlan).kind === 'chained' && totalTiles === 1;
  const base: Omit<TileKernelParams, 'phase'> = {
    inType: input.type as TileKernelParams['inType'],
    combiner: call.combiner,
    gen: call.gen,
    write: call.write,
    vec,
    inPlace,
    workgroupSize: w,
    itemsPerThread: k,
    subgroups,
    minSubgroupSize,
    maxSubgroupSize: device.info.subgroupMaxSize,
    maxSpins: Math.max(0, Math.floor(t.maxSpins)),
    atomicTileIds: t.atomicTileIds && !oneTile,
    lookbackPerLane: Math.max(1, Math.floor(t.lookbackPerLane)),
    rowItems: t.rowItems % 4 === 0 && k % t.rowItems === 0 ? t.rowItems : 4,
    reverse: n >= t.reduceReverseFrom,
  };
  const phases = new Set<TilePhase>();
  for (const p of plans) {
    if (p.kind === 'chained') phases.add('chained');
    else if (p.kind === 'rts') {
      phases.add('reduce');
      phases.add('downsweep');
    } else phases.add('downsweep');
  }
  const pipelines = new Map<TilePhase, GPUComputePipeline>();
  for (const phase of phases) {
    const params: TileKernelParams = { ...base, phase };
    pipelines.set(phase, await pipelineFor(device, tileKernelName(params), leaves, () => tileKernel(params)));
  }
  const spineParams = { combiner: call.combiner, workgroupSize: w, subgroups, minSubgroupSize };
  const spine = plans.some((p) => p.kind === 'rts')
    ? await pipelineFor(
        device,
        `scn_spine|${call.combiner.name}|${w}|${subgroups ? minSubgroupSize : 0}`,
        [call.combiner.combine],
        () => spineKernel(spineParams),
      )
    : undefined;
  const finish = call.finish;
  // Runs by key through temporaries: copies of 4-byte elements (as u32: the bits are kept).
  const runsCopyPipeline = call.runsCopy ? await finishPipelineFor(device, 'u32', 'prefix') : undefined;
  const finishPipeline = finish
    ? await finishPipelineFor(device, call.output.type as NumericType, finish.mode)
    : undefined;
  // A scatter write's outputs 1.., bound whole from obase's words, each with its finish copy.
  const moreWins = call.more.map((m) => windowOf(device, m.output, { start: 0, length: m.output.length }));
  const moreFinish = await Promise.all(
    call.more.map((m) =>
      m.finish ? finishPipelineFor(device, m.output.type as NumericType, m.finish.mode) : undefined,
    ),
  );

  const S = plans.length;
  const ctrlBytes = ctrlWords(S) * 4;
  // Two state words per tile (cleared per call).
  const stateWordsPerTile = 2;
  const stateBytes = Math.max(totalTiles, 1) * stateWordsPerTile * 4;
  const align = device.limits.minStorageBufferOffsetAlignment;
  const koutWin = call.keysOut ? windowOf(device, call.keysOut, { start: 0, length: call.keysOut.length }) : undefined;
  // ctrl and the tile states share one scratch buffer (one clear per call), the states at the
  // first offset past ctrl that a binding may start at.
  const stateAt = Math.ceil(ctrlBytes / align) * align;
  const ctrl = scratchBuffer(device, 'scan-lookback', stateAt + stateBytes);
  const ctrlEntry = { buffer: ctrl, offset: 0, size: ctrlBytes };
  const stateEntry = { buffer: ctrl, offset: stateAt, size: stateBytes };
  const chainedTiles = plans.filter((p) => p.kind === 'chained').reduce((a, p) => a + p.tiles, 0);
  // The last partial vec4 of vec4 stores goes through ctrl (the built-in scan writes).
  const tailCount = vecStored(call.write) && vec ? n % 4 : 0;
  return device.queue.guard(call.label, () => {
    const owned: GPUBuffer[] = [];
    const steps: CachedStep[] = [];
    let obase: GPUBuffer | undefined;
    if (moreWins.length > 0) {
      obase = paramsBuffer(
        device,
        Uint32Array.from([0, 1, 2, 3], (q) => moreWins[q]?.localBase ?? 0),
        `${call.label} obase`,
      );
      owned.push(obase);
    }
    plans.forEach((plan, s) => {
      const words = SCN.pack({
        n: plan.seg.length,
        in_base: plan.inBase,
        out_base: plan.outWin.localBase,
        seg_start: plan.seg.start,
        num_tiles: plan.tiles,
        tile_offset: plan.tileOffset,
        seg: s,
        num_segs: S,
        first_seg: s === 0 ? 1 : 0,
        init: call.initBits >>> 0,
        n_total: n,
        direct: plan.kind === 'direct' ? 1 : 0,
        st_base: plan.stBases[0] ?? 0,
        st1_base: plan.stBases[1] ?? 0,
        kout_base: koutWin?.localBase ?? 0,
        // 'by-key-firsts': runs at this index or beyond are not written.
        cap: call.keysOut ? Math.min(call.output.length, call.keysOut.length) : 0,
      });
      const params = paramsBuffer(device, words, `${call.label} params`);
      owned.push(params);
      // Every binding's resource by its role; each kernel variant binds the names it declares.
      const inR = windowResource(input, plan.inWin);
      const outR = windowResource(call.output, plan.outWin);
      const stR = streams.map((a, k) => windowResource(a, plan.stWins[k] as Window));
      const koutR = call.keysOut && windowResource(call.keysOut, koutWin as Window);
      const byName: Record<string, GPUBindingResource | undefined> = {
        prm: { buffer: params },
        state: stateEntry,
        sums: stateEntry,
        ctrl: ctrlEntry,
        in_v: inR,
        in_s: inR,
        out_v: outR,
        out_s: outR,
        st_v: stR[0],
        st_s: stR[0],
        st1_s: stR[1],
        kout_s: koutR,
        out1_s: call.more[0] && windowResource(call.more[0].output, moreWins[0] as Window),
        out2_s: call.more[1] && windowResource(call.more[1].output, moreWins[1] as Window),
        obase: obase && { buffer: obase },
      };
      const bind = (pipeline: GPUComputePipeline, use: ReturnType<typeof tileUse>) => {
        const resources: Record<string, GPUBindingResource | undefined> = {};
        for (const name of SCN.names(use)) resources[name] = byName[name];
        return device.gpu.createBindGroup({
          layout: pipeline.getBindGroupLayout(0),
          entries: SCN.entries(resources, use),
        });
      };
      const tileStep = (phase: TilePhase) => {
        const pipeline = pipelines.get(phase) as GPUComputePipeline;
        const group = bind(pipeline, tileUse({ phase, vec, inPlace, gen: call.gen, write: call.write }));
        steps.push({ pipeline, group, wgs: plan.tiles });
      };
      if (plan.kind === 'direct') tileStep('downsweep');
      else if (plan.kind === 'chained') tileStep('chained');
      else {
        tileStep('reduce');
        const sp = spine as GPUComputePipeline;
        steps.push({ pipeline: sp, group: bind(sp, SPINE_USE), wgs: 1 });
        tileStep('downsweep');
      }
    });
    if (finish && finishPipeline) {
      const copy = { src: call.output, srcWin: outWhole, dst: finish.dst, n, cap: finish.cap ?? finish.dst.length };
      steps.push(finishStep(device, finishPipeline, copy, 2 * S - 1, call.label, ctrl, owned));
    }
    call.more.forEach((m, q) => {
      const pipeline = moreFinish[q];
      if (!m.finish || !pipeline) return;
      const copy = {
        src: m.output,
        srcWin: moreWins[q] as Window,
        dst: m.finish.dst,
        n,
        cap: m.finish.cap ?? m.finish.dst.length,
      };
      steps.push(finishStep(device, pipeline, copy, 2 * S - 1, call.label, ctrl, owned));
    });
    const rc = call.runsCopy;
    if (rc && runsCopyPipeline && call.keysOut && koutWin) {
      // The runs' count: the compaction count.
      const slot = 2 * S - 1;
      for (const [src, srcWin, dst] of [
        [call.keysOut, koutWin, rc.keys],
        [call.output, outWhole, rc.values],
      ] as const) {
        if (!dst) continue;
        const copy = { src, srcWin, dst, n: src.length, cap: rc.cap };
        steps.push(finishStep(device, runsCopyPipeline, copy, slot, call.label, ctrl, owned));
      }
    }
    return {
      steps,
      owned,
      ctrl,
      stateAt,
      stateBytes,
      stateWordsPerTile,
      segments: S,
      totalTiles,
      clear: chainedTiles > 0 && !oneTile,
      tailCount,
      leaves,
    };
  });
}

/** The finish kernel's pipeline for 4-byte elements of `type` copied in `mode`. */
export function finishPipelineFor(device: GpuDevice, type: NumericType, mode: FinishMode): Promise<GPUComputePipeline> {
  const threads = finishThreads(device);
  return pipelineFor(device, `scn_finish|${type}|${mode}|${threads}`, [], () => finishKernel(type, mode, threads));
}

/** Threads of the finish kernel: 256 (WebGPU's core minimum), fewer where the device allows fewer. */
export function finishThreads(device: GpuDevice): number {
  return Math.min(256, maxWorkgroupThreads(device));
}

/** A copy by the finish kernel: `src` (bound as `srcWin`, `n` elements) into `dst`, up to `cap`. */
export interface FinishCopy {
  readonly src: DeviceArray;
  readonly srcWin: Window;
  readonly dst: DeviceArray;
  readonly n: number;
  readonly cap: number;
}

/**
 * The dispatch of the finish kernel (in-place algorithms copy the compacted result back; runs by
 * key copy their temporaries), with the count read from ctrl word `countSlot`.
 */
export function finishStep(
  device: GpuDevice,
  pipeline: GPUComputePipeline,
  copy: FinishCopy,
  countSlot: number,
  label: string,
  ctrl: GPUBuffer,
  owned: GPUBuffer[],
): CachedStep {
  const dst = copy.dst;
  const dstWin = windowOf(device, dst, { start: 0, length: dst.length });
  const words = SCN_FINISH.pack({
    n: copy.n,
    count_slot: countSlot,
    src_base: copy.srcWin.localBase,
    dst_base: dstWin.localBase,
    cap: copy.cap,
  });
  const params = paramsBuffer(device, words, `${label} finish params`);
  owned.push(params);
  const group = device.gpu.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: SCN_FINISH.entries({
      prm: { buffer: params },
      ctrl: { buffer: ctrl },
      src: windowResource(copy.src, copy.srcWin),
      dst: windowResource(dst, dstWin),
    }),
  });
  return { pipeline, group, wgs: Math.ceil(copy.n / finishThreads(device)) };
}
