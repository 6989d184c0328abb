/**
 * The pattern layer (oneDPL's policy -> pattern -> bricks): the one dispatch every algorithm front
 * calls. A front checks its arguments and declares the call as a `Pattern`; `dispatch` does the rest
 * in one place for every algorithm:
 *
 * 1. the policy is checked first (a forgotten policy is named as such, not as a bad array);
 * 2. the front's argument checks run (they throw before anything is touched);
 * 3. the backend is selected (policies' `selectBackend`: CPU or GPU, fallback, tuning overrides,
 *    DeviceArrays pinning the call to their device);
 * 4. n = 0 is answered at once (after the checks, so bad input is an error at every size);
 * 5. CPU backends get the host arrays and run the front's bricks;
 * 6. the GPU backend gets device-side arrays: host inputs uploaded once (the same host array given
 *    twice is uploaded once), host outputs backed by temporaries that the front's engine reads back
 *    in its own submission and hands to `deliver`, DeviceArrays passed through; temporaries are
 *    released whatever happens;
 * 7. `execution.auto` on host arrays reports each call's end-to-end time, from which it learns where
 *    the GPU wins (policies' auto.ts);
 * 8. a GPU run that fails in a way the CPU would not (UnsupportedOnDeviceError, a WGSL link error, a
 *    device lost during the call) finishes on the CPU when the policy allows it (`execution.auto`,
 *    device policies with `fallback: 'cpu'`, host arrays only): host outputs are written only once
 *    a run succeeded, so the caller's data is untouched by the failed attempt.
 *
 * 9. a device policy with the caller's `encoder` records the GPU part into that encoder (no submit,
 *    no wait): only `recordable` patterns on DeviceArrays; anything else is an ArgumentError before
 *    anything runs.
 *
 * A new backend kind is handled here, not in every front.
 */
import {
  ArgumentError,
  DeviceArray,
  DeviceLostError,
  describe,
  type GpuDevice,
  type GpuFunction,
  type HostArray,
  type NumericType,
  UnsupportedOnDeviceError,
} from '@webdpl/core';
import {
  assertNever,
  type Backend,
  type BackendRequest,
  type CpuBackend,
  checkPolicy,
  cpuFallback,
  type HostPolicy,
  type Policy,
  selectBackend,
  selectBackendNow,
  selectHostBackend,
} from '@webdpl/policies';
import type { CheckedArray } from '../common/args';
import { copyInto } from '../common/gpu-io';
import { sameElements } from '../common/overlap';

/** Tuning overrides of a GPU call (the policy's, for this algorithm and engine). */
export type Tuning = Readonly<Record<string, number | boolean>>;

/** A function the call runs and the argument types it gets (checked by backend selection). */
export interface FunctionUse {
  readonly fn: GpuFunction;
  readonly argTypes: readonly NumericType[];
}

/** How an output is backed on the GPU when the caller passed a host array. */
export interface OutputSpec {
  readonly arg: CheckedArray;
  /**
   * Upload the host output's current contents (in-place algorithms read their data).
   * @default false (a fresh temporary)
   */
  readonly upload?: boolean;
  /**
   * A host output that is exactly one of the host inputs (same memory and length) uses that input's
   * device copy, so the engine computes in place (maps). Engines that cannot run in place leave it
   * off. @default false
   */
  readonly shareInput?: boolean;
  /**
   * Elements the call writes: a longer DeviceArray output is viewed to its first `length` elements,
   * a host output gets a temporary of that length. @default the output's length
   */
  readonly length?: number;
}

/** What the GPU part of a pattern gets. */
export interface GpuCall {
  readonly device: GpuDevice;
  readonly tuning: Tuning;
  /** The device side of each input, in the pattern's order. */
  readonly inputs: readonly DeviceArray[];
  /** The device side of each output (the caller's DeviceArray, or a temporary for a host output). */
  readonly outputs: readonly DeviceArray[];
  /** Whether output k is a host array, so the engine must read it back and `deliver` it. */
  readBack(k: number): boolean;
  /** Copies `count` elements read back for output k into the caller's host array. */
  deliver(k: number, bytes: ArrayBuffer | undefined, count: number): void;
  /**
   * A temporary device array of exactly `n` elements, released after the call (its contents are
   * undefined: a reused buffer).
   */
  temp(type: NumericType, n: number): DeviceArray;
}

/** What the CPU part of a pattern gets: the host arrays of the inputs and outputs. */
export interface CpuCall {
  readonly backend: CpuBackend;
  readonly inputs: readonly HostArray[];
  readonly outputs: readonly HostArray[];
}

/** One algorithm call, declared by its front after checking the arguments. */
export interface Pattern<R> {
  /** Algorithm name: tuning key, labels and error messages. */
  readonly algorithm: string;
  /** Engine the call runs on; its tuning overrides apply under the algorithm's own. */
  readonly engine?: string;
  /** Number of elements the call works on: 0 answers `empty()` without running. */
  readonly n: number;
  /** Checked inputs (host arrays are uploaded for the GPU). */
  readonly inputs?: readonly CheckedArray[];
  /** Checked outputs. */
  readonly outputs?: readonly OutputSpec[];
  /** Element types beyond those of the arrays (e.g. a transform's result type). */
  readonly types?: readonly NumericType[];
  readonly functions?: readonly FunctionUse[];
  /**
   * Whether dispatch stages the arrays for the GPU part (uploads, temporaries, deliveries). A front
   * with special paths (copy: a queue write straight into a DeviceArray output) turns it off and
   * works on its checked arrays itself. @default true
   */
  readonly stage?: boolean;
  /** Why `device` cannot run the call (an operator without identity, a size limit), if it cannot. */
  readonly gpuCheck?: (device: GpuDevice) => string | undefined;
  /** The answer for n = 0. */
  readonly empty: () => R;
  /**
   * Whether the GPU part on DeviceArrays reads nothing back (its results stay in its outputs), so it
   * may be recorded into a caller's command encoder (DevicePolicyOptions.encoder). @default false
   */
  readonly recordable?: boolean;
  readonly cpu: (call: CpuCall) => R | Promise<R>;
  readonly gpu: (call: GpuCall) => Promise<R>;
}

function hostOf(a: CheckedArray, what: string): HostArray {
  if (a.kind !== 'host') throw new Error(`unreachable: DeviceArray ${what} on a CPU backend`);
  return a.array;
}

/** Whether `a` is a host array and `b` the same elements (one upload serves both). */
function sameHostArray(a: CheckedArray, b: CheckedArray): boolean {
  return a.kind === 'host' && sameElements(a, b);
}

const NO_TYPES: readonly NumericType[] = [];

function hasDeviceArrays<R>(p: Pattern<R>): boolean {
  if (p.inputs) for (const a of p.inputs) if (a.kind === 'device') return true;
  if (p.outputs) for (const o of p.outputs) if (o.arg.kind === 'device') return true;
  return false;
}

/** What a host policy needs of a call without DeviceArrays: its names (tuning overrides). */
function hostRequest<R>(p: Pattern<R>): BackendRequest {
  return { algorithm: p.algorithm, engine: p.engine, types: NO_TYPES };
}

const NO_FUNCTIONS: readonly FunctionUse[] = [];

/** Notes array `a`'s type and, for a DeviceArray, the array and its name (once each). */
function noteArray(a: CheckedArray, types: NumericType[], arrays: DeviceArray[], names: string[]): void {
  if (!types.includes(a.type)) types.push(a.type);
  if (a.kind === 'device' && !arrays.includes(a.array)) {
    arrays.push(a.array);
    names.push(a.name ?? 'array');
  }
}

function requestOf<R>(p: Pattern<R>): BackendRequest {
  const deviceArrays: DeviceArray[] = [];
  const deviceArrayNames: string[] = [];
  const types: NumericType[] = [];
  const ins = p.inputs;
  if (ins)
    for (let k = 0; k < ins.length; k++) noteArray(ins[k] as CheckedArray, types, deviceArrays, deviceArrayNames);
  const outs = p.outputs;
  if (outs)
    for (let k = 0; k < outs.length; k++) noteArray((outs[k] as OutputSpec).arg, types, deviceArrays, deviceArrayNames);
  if (p.types) for (const t of p.types) if (!types.includes(t)) types.push(t);
  return {
    algorithm: p.algorithm,
    engine: p.engine,
    types,
    functions: p.functions ?? NO_FUNCTIONS,
    deviceArrays,
    deviceArrayNames,
    gpuCheck: p.gpuCheck,
    n: p.n,
  };
}

function runCpu<R>(p: Pattern<R>, backend: CpuBackend): R | Promise<R> {
  return p.cpu({
    backend,
    inputs: (p.inputs ?? []).map((a) => hostOf(a, 'input')),
    outputs: (p.outputs ?? []).map((o) => hostOf(o.arg, 'output')),
  });
}

/** Bytes a device's staging pool may keep free at most, and the largest array it keeps. */
const POOL_MAX_BYTES = 128 << 20;
const POOL_MAX_ARRAY = 32 << 20;

/**
 * Device memory for host arrays' device side, reused across calls: whole buffers by element type and
 * power-of-two size, handed out as views of the exact length. Reuse makes a repeated call on host
 * arrays bind the same buffers, so the engines' caches of built calls (pipelines, bind groups,
 * parameters) hit, and no buffer is created per call. Reuse is safe without waiting: uploads into a
 * reused buffer are queue writes, ordered after the work submitted before them.
 */
class StagingPool {
  private free = new Map<string, DeviceArray[]>();
  private bytes = 0;

  constructor(private readonly device: GpuDevice) {}

  /** Free buffers kept, and their bytes. */
  kept(): { readonly buffers: number; readonly bytes: number } {
    let buffers = 0;
    for (const l of this.free.values()) buffers += l.length;
    return { buffers, bytes: this.bytes };
  }

  take(type: NumericType, n: number): { readonly array: DeviceArray; release(): void } {
    const size = Math.max(64, 2 ** Math.ceil(Math.log2(Math.max(1, n))));
    if (size * 4 > POOL_MAX_ARRAY) {
      const a = DeviceArray.create(this.device, type, n);
      return { array: a, release: () => a.discard() };
    }
    const key = `${type}:${size}`;
    const list = this.free.get(key);
    let parent = list?.pop();
    if (parent?.destroyed) parent = undefined;
    if (parent) this.bytes -= size * 4;
    parent ??= DeviceArray.create(this.device, type, size);
    const whole = parent;
    return {
      array: whole.view(0, n),
      release: () => {
        if (whole.destroyed || this.device.lost) return;
        if (this.bytes + size * 4 > POOL_MAX_BYTES) {
          whole.discard();
          return;
        }
        this.bytes += size * 4;
        const l = this.free.get(key) ?? [];
        l.push(whole);
        this.free.set(key, l);
      },
    };
  }
}

const pools = new WeakMap<GpuDevice, StagingPool>();

function poolOf(device: GpuDevice): StagingPool {
  let p = pools.get(device);
  if (!p) {
    p = new StagingPool(device);
    pools.set(device, p);
  }
  return p;
}

/**
 * The buffers the staging pool of `device` keeps free for reuse and their bytes (at most
 * POOL_MAX_BYTES): the soak tells them from leaked buffers.
 */
export function stagingPoolSize(device: GpuDevice): { readonly buffers: number; readonly bytes: number } {
  return pools.get(device)?.kept() ?? { buffers: 0, bytes: 0 };
}

const NO_READBACK = (): boolean => false;
const NO_DELIVERY = (): void => {};

/**
 * The device side of a pattern whose arrays are all DeviceArrays (the per-call hot path, issue 12):
 * inputs as given, outputs viewed to their written length; undefined when an array is a host array.
 */
function deviceSides<R>(p: Pattern<R>): { inputs: DeviceArray[]; outputs: DeviceArray[] } | undefined {
  const ins = p.inputs;
  const outs = p.outputs;
  const inputs: DeviceArray[] = [];
  if (ins) {
    for (let k = 0; k < ins.length; k++) {
      const a = ins[k] as CheckedArray;
      if (a.kind !== 'device') return undefined;
      inputs.push(a.array);
    }
  }
  const outputs: DeviceArray[] = [];
  if (outs) {
    for (let k = 0; k < outs.length; k++) {
      const o = outs[k] as OutputSpec;
      const a = o.arg;
      if (a.kind !== 'device') return undefined;
      const len = o.length ?? a.length;
      outputs.push(len < a.length ? a.array.view(0, len) : a.array);
    }
  }
  return { inputs, outputs };
}

/**
 * The temporaries a GPU part takes from the staging pool (`GpuCall.temp`: host arrays' device
 * sides and the engines' own), released once the part settled.
 */
class Temps {
  private releases: (() => void)[] | undefined = undefined;

  constructor(private readonly pool: StagingPool) {}

  /** `GpuCall.temp` (a property: fronts destructure it). */
  readonly take = (type: NumericType, n: number): DeviceArray => {
    const t = this.pool.take(type, n);
    (this.releases ??= []).push(t.release);
    return t.array;
  };

  /**
   * Released last-taken first, so the next call of the same shape takes the same buffers for the
   * same arguments (the pool hands out the most recently released first).
   */
  release(): void {
    const releases = this.releases;
    if (!releases) return;
    this.releases = undefined;
    for (let k = releases.length - 1; k >= 0; k--) (releases[k] as () => void)();
  }
}

/**
 * What the GPU part of `p` gets: DeviceArrays as given; host inputs uploaded into temporaries
 * (once per host array), host outputs backed by temporaries that `deliver` copies out.
 */
function gpuCall<R>(p: Pattern<R>, device: GpuDevice, tuning: Tuning, temps: Temps): GpuCall {
  const temp = temps.take;
  const stage = p.stage ?? true;
  // DeviceArrays only: nothing to upload, read back or deliver.
  const sides = stage ? deviceSides(p) : undefined;
  if (sides) {
    return {
      device,
      tuning,
      inputs: sides.inputs,
      outputs: sides.outputs,
      readBack: NO_READBACK,
      deliver: NO_DELIVERY,
      temp,
    };
  }
  const upload = (a: CheckedArray): DeviceArray => {
    const d = temp(a.type, a.length);
    if (a.length) (d as DeviceArray<'u32'>).write(a.array as Uint32Array);
    return d;
  };
  const ins = stage ? (p.inputs ?? []) : [];
  const inputs: DeviceArray[] = [];
  for (const [k, a] of ins.entries()) {
    if (a.kind === 'device') {
      inputs.push(a.array);
      continue;
    }
    const twin = ins.findIndex((b) => sameHostArray(a, b));
    if (twin < k) {
      inputs.push(inputs[twin] as DeviceArray);
      continue;
    }
    inputs.push(upload(a));
  }
  const outs = stage ? (p.outputs ?? []) : [];
  const outputs = outs.map((o): DeviceArray => {
    const a = o.arg;
    const len = o.length ?? a.length;
    if (a.kind === 'device') return len < a.length ? a.array.view(0, len) : a.array;
    const shared = o.shareInput ? ins.findIndex((b) => sameHostArray(a, b)) : -1;
    if (shared >= 0) return inputs[shared] as DeviceArray;
    if (o.upload) return upload(a);
    return temp(a.type, len);
  });
  return {
    device,
    tuning,
    inputs,
    outputs,
    readBack: (k) => outs[k]?.arg.kind === 'host',
    deliver: (k, bytes, count) => {
      const o = outs[k]?.arg;
      if (o?.kind === 'host' && bytes && count > 0) copyInto(o.array, bytes, count);
    },
    temp,
  };
}

/** Runs the GPU part of `p` on `device` (a call recorded into a caller's encoder). */
async function runGpu<R>(p: Pattern<R>, device: GpuDevice, tuning: Tuning): Promise<R> {
  const temps = new Temps(poolOf(device));
  try {
    return await p.gpu(gpuCall(p, device, tuning, temps));
  } finally {
    temps.release();
  }
}

/** Names of the errors deviceSpecific() accepts, also from another copy of @webdpl/core in a bundle. */
const DEVICE_SPECIFIC = new Set(['UnsupportedOnDeviceError', 'WgslLinkError', 'DeviceLostError']);

/**
 * Failures of a GPU run that the CPU would not have: the policy's CPU fallback may take over.
 * WgslLinkError (a kernel over the device's limits) is an UnsupportedOnDeviceError.
 */
function deviceSpecific(e: unknown): boolean {
  return (
    e instanceof UnsupportedOnDeviceError ||
    e instanceof DeviceLostError ||
    (e instanceof Error && DEVICE_SPECIFIC.has(e.name))
  );
}

/**
 * Runs one algorithm call under `policy`. `declare` checks the front's arguments and returns the
 * call's pattern; it runs after the policy check, so every error names the argument at fault.
 */
export function dispatch<R>(policy: unknown, declare: () => Pattern<R>): Promise<R> {
  let pol: Policy;
  try {
    pol = checkPolicy(policy);
  } catch (e) {
    return Promise.reject(e);
  }
  // Host policies: no GPU part to order and nothing to await before the bricks run.
  if (pol.kind === 'host') return dispatchHost(pol, declare);
  // Take this call's place in the order of GPU parts now, synchronously (see `order`).
  const ticket = order.take();
  let p: Pattern<R>;
  let req: BackendRequest;
  let now: Backend | undefined;
  let encoder: GPUCommandEncoder | undefined;
  try {
    p = declare();
    encoder = pol.kind === 'device' ? pol.encoder : undefined;
    if (encoder) checkRecordable(p);
    req = requestOf(p);
    // Without a promise where the device is known (the per-call fast path); else awaited.
    now = selectBackendNow(pol, req);
  } catch (e) {
    order.release(ticket);
    return Promise.reject(e);
  }
  // The per-call hot path (issue 12): a GPU part on a known device whose turn has come, neither
  // recorded into an encoder nor measured, runs with no async function of dispatch's own (each was
  // a frame and promise steps per call); everything else in `dispatchRest`, in the same order.
  if (now?.kind === 'gpu' && !encoder && !now.measure && p.n !== 0 && order.isNext(ticket)) {
    return runOnGpu(p, policy, req, now.device, now.tuning, ticket);
  }
  return dispatchRest(p, pol, policy, req, now, encoder, ticket);
}

/** `dispatch` under a host policy. */
async function dispatchHost<R>(pol: HostPolicy, declare: () => Pattern<R>): Promise<R> {
  const p = declare();
  const backend = selectHostBackend(pol, hasDeviceArrays(p) ? requestOf(p) : hostRequest(p));
  if (p.n === 0) return p.empty();
  return runCpu(p, backend as CpuBackend);
}

/**
 * The rest of `dispatch` where the backend is not known yet (`now` undefined), the call waits for
 * its turn, runs on the CPU, is measured (execution.auto on host arrays) or recorded into an
 * encoder, or has no elements. Releases `ticket` once the call settled.
 */
async function dispatchRest<R>(
  p: Pattern<R>,
  pol: Policy,
  policy: unknown,
  req: BackendRequest,
  now: Backend | undefined,
  encoder: GPUCommandEncoder | undefined,
  ticket: number,
): Promise<R> {
  try {
    const backend: Backend = now ?? (await selectBackend(pol, req));
    if (p.n === 0) return p.empty();
    if (backend.kind !== 'gpu') order.release(ticket);
    else {
      const turn = order.turn(ticket);
      if (turn) await turn;
    }
    if (encoder && backend.kind === 'gpu') {
      return await backend.device.queue.recordInto(encoder, () => runGpu(p, backend.device, backend.tuning));
    }
    // execution.auto on host arrays learns its crossover from the calls' end-to-end times.
    const t0 = backend.measure ? performance.now() : 0;
    let r: R;
    switch (backend.kind) {
      case 'seq':
      case 'par':
        r = await runCpu(p, backend);
        break;
      case 'gpu':
        r = await runOnGpu(p, policy, req, backend.device, backend.tuning);
        break;
      default:
        return assertNever(backend);
    }
    backend.measure?.(performance.now() - t0);
    return r;
  } finally {
    order.release(ticket);
  }
}

/**
 * Runs the GPU part of `p` on `device`: its temporaries released once it settled, a failure the
 * CPU would not have run on the CPU where the policy falls back (`gpuFailed`), and then `ticket`
 * released when one is given.
 */
function runOnGpu<R>(
  p: Pattern<R>,
  policy: unknown,
  req: BackendRequest,
  device: GpuDevice,
  tuning: Tuning,
  ticket?: number,
): Promise<R> {
  const temps = new Temps(poolOf(device));
  let part: Promise<R>;
  try {
    part = p.gpu(gpuCall(p, device, tuning, temps));
  } catch (e) {
    part = Promise.reject(e);
  }
  return part.then(
    (r) => {
      temps.release();
      if (ticket !== undefined) order.release(ticket);
      return r;
    },
    (e) => {
      temps.release();
      return failedOnGpu(p, policy, req, device, e, ticket);
    },
  );
}

/** `gpuFailed`, then `ticket` released (when given) whatever happens. */
async function failedOnGpu<R>(
  p: Pattern<R>,
  policy: unknown,
  req: BackendRequest,
  device: GpuDevice,
  e: unknown,
  ticket: number | undefined,
): Promise<R> {
  try {
    return await gpuFailed(p, policy, req, device, e);
  } finally {
    if (ticket !== undefined) order.release(ticket);
  }
}

/**
 * Throws unless `p` can be recorded into a caller's encoder: DeviceArray arguments only (a host
 * array needs an upload or a readback, which recording cannot wait for) and a GPU part that reads
 * nothing back (`recordable`).
 */
function checkRecordable<R>(p: Pattern<R>): void {
  const arrays = [...(p.inputs ?? []), ...(p.outputs ?? []).map((o) => o.arg)];
  for (const a of arrays) {
    if (a.kind === 'host') {
      throw new ArgumentError(
        a.name ?? 'array',
        'a DeviceArray (a call recorded into options.encoder keeps its data on the device)',
        describe(a.array),
      );
    }
  }
  if (!p.recordable) {
    throw new ArgumentError(
      'policy',
      `a policy without an encoder for ${p.algorithm} (it returns a result, which a call recorded into a command encoder cannot read back)`,
      'a device policy with options.encoder',
    );
  }
}

/**
 * The GPU parts of calls run one after another in call order (across all devices): a GPU part starts
 * once the GPU parts of earlier calls have settled, which for a call whose outputs stay on the device
 * is as soon as its work is submitted (the queue does not wait for the GPU), and for a call that
 * reads back, once its results arrived. So a chain of calls on DeviceArrays made without awaiting in
 * between runs in call order whatever each call does before submitting (compiling pipelines, several
 * submissions, selecting a device), and the queue's own turns keep the submissions of each GPU part
 * in order. CPU parts do not wait (their tickets are released as soon as they know where they run).
 */
class CallOrder {
  private next = 0;
  /** The lowest ticket not released yet. */
  private low = 0;
  private released = new Set<number>();
  private waiters = new Map<number, () => void>();

  /** A ticket, in call order. */
  take(): number {
    return this.next++;
  }

  /** Whether every earlier ticket was released (`turn` would not wait). */
  isNext(ticket: number): boolean {
    return this.low >= ticket;
  }

  /** Resolves once every earlier ticket was released (at once, with no promise, when they were). */
  turn(ticket: number): Promise<void> | undefined {
    if (this.low >= ticket) return undefined;
    return new Promise((resolve) => this.waiters.set(ticket, resolve));
  }

  /** Releases `ticket` (idempotent). */
  release(ticket: number): void {
    if (ticket < this.low) return;
    if (ticket > this.low) {
      this.released.add(ticket);
      return;
    }
    // The lowest ticket (every call's, when calls do not overlap): no set touched (issue 12).
    this.low++;
    this.wake();
    while (this.released.size > 0 && this.released.delete(this.low)) {
      this.low++;
      this.wake();
    }
  }

  /** Lets the call waiting for the lowest ticket go on, if one waits. */
  private wake(): void {
    if (this.waiters.size === 0) return;
    const w = this.waiters.get(this.low);
    if (w) {
      this.waiters.delete(this.low);
      w();
    }
  }
}

const order = new CallOrder();

/**
 * A GPU part failed with `e`: rethrown, unless it failed in a way the CPU would not (see
 * `deviceSpecific`) and the policy falls back, then the call runs on the CPU.
 */
function gpuFailed<R>(
  p: Pattern<R>,
  policy: unknown,
  req: BackendRequest,
  device: GpuDevice,
  e: unknown,
): R | Promise<R> {
  // Whatever a call saw while its device went away (a rejected pipeline, a failed map) is the
  // device loss.
  const err =
    device.lost && !(e instanceof DeviceLostError)
      ? new DeviceLostError(
          `${p.algorithm}: device '${device.info.name}' was lost during the call (${(e as Error)?.message ?? e})`,
          'lost',
        )
      : e;
  if (!deviceSpecific(err)) throw err;
  const fallback = cpuFallback(policy, req);
  if (fallback === undefined || fallback.kind === 'gpu') throw err;
  return runCpu(p, fallback);
}
