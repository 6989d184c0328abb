/**
 * Execution policies, oneDPL's model in TypeScript. Policies are a discriminated union on `kind`:
 *  - host policies (`seq`, `unseq`, `par`, `parUnseq`) run on the CPU;
 *  - device policies run on one GPU device (chosen by a queue, device, selector or another policy);
 *  - `auto` runs DeviceArray calls on their device, host-array calls on the best hardware GPU from its
 *    measured crossover size (auto.ts), else on the CPU pool.
 */
import {
  ArgumentError,
  type Device,
  defaultSelector,
  describe,
  fromGPUDevice,
  type GpuDevice,
  gpuSelector,
  platform,
  Queue,
  type Selector,
  selectDevice,
} from '@webdpl/core';
import type { WorkerPool } from './pool';

/** Per-algorithm tuning overrides, e.g. `{ reduce: { workgroupSize: 64, itemsPerThread: 1 } }`. */
export type TuningOverrides = Readonly<Record<string, Readonly<Record<string, number | boolean>>>>;

/** No overrides (one frozen object, so resolved tunings memoize by it). */
export const NO_TUNING: TuningOverrides = Object.freeze({});

/**
 * A frozen copy of a policy's overrides: later changes to the caller's object do not reach the
 * policy, so the overrides a call resolves can be memoized by the policy's object.
 */
function frozenTuning(t: TuningOverrides | undefined): TuningOverrides {
  if (t === undefined) return NO_TUNING;
  const out: Record<string, Readonly<Record<string, number | boolean>>> = {};
  for (const [k, v] of Object.entries(t)) out[k] = Object.freeze({ ...v });
  return Object.freeze(out);
}

/** What to do when the device cannot run a request (an element type, a feature, a lambda). */
export type Fallback = 'cpu' | 'error';

export type HostMode = 'seq' | 'unseq' | 'par' | 'parUnseq';

export interface HostPolicy {
  readonly kind: 'host';
  readonly mode: HostMode;
  /** Human-readable notes, e.g. that par degraded to seq without SharedArrayBuffer. */
  readonly info: string;
  /** Pool for par/parUnseq; undefined means the shared default pool. */
  readonly pool?: WorkerPool;
  /**
   * Per-algorithm CPU tuning overrides (keys as for device policies; `parallelThreshold` and
   * `minChunk` for the CPU engines, so tests can force the chunked paths at small n). @default {}
   */
  readonly tuning?: TuningOverrides;
}

/** Options of `makeHostPolicy`. */
export interface HostPolicyOptions {
  /** Pool for par/parUnseq. @default the shared default pool (one worker per logical core) */
  readonly pool?: WorkerPool;
  /** Per-algorithm CPU tuning overrides. @default {} */
  readonly tuning?: TuningOverrides;
}

export interface DevicePolicyOptions {
  /** Per-algorithm tuning overrides (tests force tiny tiles; the bench sweeps). @default {} */
  readonly tuning?: TuningOverrides;
  /** What to do when the device cannot run a request. @default 'cpu' */
  readonly fallback?: Fallback;
  /** Host policy used when falling back. @default execution.par */
  readonly fallbackPolicy?: HostPolicy;
  /**
   * The caller's command encoder: calls record their GPU work into it instead of submitting (no
   * submit, no wait; the work runs when the caller submits the encoder), for use beside a renderer
   * each frame. Only calls on DeviceArrays that return nothing (transform, scans, sort, fill, ...);
   * a host array, or a call returning data (reduce, copyIf's count, isSorted), is an ArgumentError.
   * Calls made without the encoder meanwhile are submitted at once, so before the encoder's work.
   * @default undefined (each call submits its own work)
   */
  readonly encoder?: GPUCommandEncoder;
}

export interface DevicePolicy {
  readonly kind: 'device';
  /** The device, once resolved (undefined before the first call of a lazily created policy). */
  readonly device: GpuDevice | undefined;
  /** The queue, once resolved. */
  readonly queue: Queue | undefined;
  /** Resolves (and caches) the device. */
  resolve(): Promise<GpuDevice>;
  readonly tuning: TuningOverrides;
  readonly fallback: Fallback;
  readonly fallbackPolicy: HostPolicy | undefined;
  /** The caller's encoder calls record into (DevicePolicyOptions.encoder), if any. */
  readonly encoder: GPUCommandEncoder | undefined;
  readonly info: string;
}

export interface AutoPolicy {
  readonly kind: 'auto';
  readonly info: string;
  readonly tuning: TuningOverrides;
  /**
   * Fixed crossovers (elements) by algorithm name, or `'*'` for all: host-array calls of at least
   * that many elements run on the GPU, smaller ones on the CPU pool. @default measured (auto.ts)
   */
  readonly crossover?: Readonly<Record<string, number>>;
}

export type Policy = HostPolicy | DevicePolicy | AutoPolicy;

function hostPolicy(mode: HostMode, info: string, pool?: WorkerPool, tuning?: TuningOverrides): HostPolicy {
  return Object.freeze({ kind: 'host', mode, info, pool, tuning });
}

/**
 * Whether typed arrays over SharedArrayBuffer can be shared with workers here: always in Node, and in
 * browsers only when cross-origin isolated. Read at policy creation (for `info`) and again by
 * selectBackend for every call.
 */
export function sharedMemoryAvailable(): boolean {
  return platform.sharedMemory();
}

function parallelPolicy(mode: 'par' | 'parUnseq', pool?: WorkerPool, tuning?: TuningOverrides): HostPolicy {
  if (!sharedMemoryAvailable()) {
    return hostPolicy(
      mode,
      `${mode} runs as seq: SharedArrayBuffer is unavailable (no cross-origin isolation)`,
      pool,
      tuning,
    );
  }
  return hostPolicy(mode, `${mode} on a worker pool`, pool, tuning);
}

const HOST_MODES: readonly HostMode[] = ['seq', 'unseq', 'par', 'parUnseq'];

function isWorkerPool(x: unknown): x is WorkerPool {
  const p = x as WorkerPool;
  return typeof x === 'object' && x !== null && typeof p.run === 'function' && typeof p.size === 'number';
}

/**
 * A host policy, e.g. par on a pool with a set number of workers, or with CPU tuning overrides.
 * The second argument is a pool or an options object.
 * @throws ArgumentError naming `mode`, `options`, `options.pool` or `options.tuning`
 */
export function makeHostPolicy(mode: HostMode, options?: WorkerPool | HostPolicyOptions): HostPolicy {
  if (!HOST_MODES.includes(mode)) throw new ArgumentError('mode', `one of ${HOST_MODES.join(', ')}`, describe(mode));
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new ArgumentError('options', 'a WorkerPool or an options object', describe(options));
  }
  const opts: HostPolicyOptions = isWorkerPool(options) ? { pool: options } : (options ?? {});
  if (opts.pool !== undefined && !isWorkerPool(opts.pool)) {
    throw new ArgumentError('options.pool', 'a WorkerPool (createPool())', describe(opts.pool));
  }
  if (opts.tuning !== undefined && (typeof opts.tuning !== 'object' || opts.tuning === null)) {
    throw new ArgumentError('options.tuning', 'a record of per-algorithm overrides', describe(opts.tuning));
  }
  return mode === 'par' || mode === 'parUnseq'
    ? parallelPolicy(mode, opts.pool, opts.tuning && frozenTuning(opts.tuning))
    : hostPolicy(mode, mode, opts.pool, opts.tuning && frozenTuning(opts.tuning));
}

function isQueue(x: unknown): x is Queue {
  return x instanceof Queue;
}

function isGpuDevice(x: unknown): x is GpuDevice {
  return typeof x === 'object' && x !== null && (x as Device).type === 'gpu' && 'gpu' in (x as object);
}

/** A WebGPU GPUDevice of the caller's (not a webdpl device). */
function isRawGPUDevice(x: unknown): x is GPUDevice {
  const d = x as Partial<GPUDevice> | null;
  return (
    typeof x === 'object' &&
    x !== null &&
    !isGpuDevice(x) &&
    typeof d?.createComputePipeline === 'function' &&
    typeof d?.createBuffer === 'function'
  );
}

function checkEncoder(x: unknown): GPUCommandEncoder | undefined {
  if (x === undefined) return undefined;
  const e = x as Partial<GPUCommandEncoder> | null;
  if (
    typeof x !== 'object' ||
    x === null ||
    typeof e?.beginComputePass !== 'function' ||
    typeof e?.finish !== 'function'
  ) {
    throw new ArgumentError('options.encoder', 'a GPUCommandEncoder (device.createCommandEncoder())', describe(x));
  }
  return x as GPUCommandEncoder;
}

function isPolicy(x: unknown): x is Policy {
  const k = (x as Policy | undefined)?.kind;
  return typeof x === 'object' && x !== null && (k === 'host' || k === 'device' || k === 'auto');
}

/**
 * A device policy from a queue, a webdpl GPU device, the caller's own WebGPU `GPUDevice` (wrapped by
 * core's `fromGPUDevice`: never destroyed by webdpl), a selector, or an existing device policy
 * (whose device it shares, with new options). The device is resolved lazily on first use.
 */
export function makeDevicePolicy(
  target: Queue | GpuDevice | GPUDevice | Selector | DevicePolicy = defaultGpuSelector,
  options: DevicePolicyOptions = {},
): DevicePolicy {
  if (typeof options !== 'object' || options === null) {
    throw new ArgumentError('options', 'an options object', describe(options));
  }
  const fallback = options.fallback ?? 'cpu';
  if (fallback !== 'cpu' && fallback !== 'error') {
    throw new ArgumentError('options.fallback', "'cpu' or 'error'", describe(fallback));
  }
  const encoder = checkEncoder(options.encoder);
  let resolveDevice: () => Promise<GpuDevice>;
  let device: GpuDevice | undefined;
  if (isRawGPUDevice(target)) {
    const d = fromGPUDevice(target);
    device = d;
    resolveDevice = async () => d;
  } else if (isQueue(target)) {
    device = target.device;
    resolveDevice = async () => target.device;
  } else if (isGpuDevice(target)) {
    device = target;
    resolveDevice = async () => target;
  } else if (isPolicy(target)) {
    if (target.kind !== 'device') {
      throw new ArgumentError(
        'target',
        'a device policy (host and auto policies have no device)',
        `a ${target.kind} policy`,
      );
    }
    device = target.device;
    resolveDevice = () => target.resolve();
  } else if (typeof target === 'function') {
    const selector = target as Selector;
    resolveDevice = async () => {
      const d = await selectDevice(selector);
      if (d.type !== 'gpu') {
        throw new ArgumentError(
          'selector',
          'to select a GPU for a device policy (use execution.par for the CPU)',
          d.info.name,
        );
      }
      return d;
    };
  } else {
    throw new ArgumentError(
      'target',
      'a Queue, a GPU device (webdpl or WebGPU GPUDevice), a selector function or a device policy',
      describe(target),
    );
  }
  let pending: Promise<GpuDevice> | undefined;
  const tuning = frozenTuning(options.tuning);
  const policy: DevicePolicy = {
    kind: 'device',
    get device() {
      return device;
    },
    get queue() {
      return device?.queue;
    },
    resolve: () => {
      if (device && !device.lost) return Promise.resolve(device);
      pending ??= resolveDevice().then(
        (d) => {
          device = d;
          pending = undefined;
          return d;
        },
        (e) => {
          pending = undefined;
          throw e;
        },
      );
      return pending;
    },
    tuning,
    fallback,
    fallbackPolicy: options.fallbackPolicy,
    encoder,
    get info() {
      return device
        ? `device policy on ${device.info.name} (${device.info.kind})`
        : 'device policy (device not chosen yet)';
    },
  };
  return policy;
}

const defaultGpuSelector: Selector = gpuSelector;

/** Options of `makeAutoPolicy`. */
export interface AutoPolicyOptions {
  /** Per-algorithm tuning overrides for GPU runs. @default {} */
  readonly tuning?: TuningOverrides;
  /** Fixed crossovers in elements by algorithm (or `'*'`). @default measured on first use */
  readonly crossover?: Readonly<Record<string, number>>;
}

/**
 * An auto policy: DeviceArray calls run on their device; host-array calls run on the best hardware
 * GPU from the size where it measured faster end to end than the CPU pool (auto.ts), else on the
 * CPU pool.
 */
export function makeAutoPolicy(options: AutoPolicyOptions = {}): AutoPolicy {
  if (typeof options !== 'object' || options === null) {
    throw new ArgumentError('options', 'an options object { tuning?, crossover? }', describe(options));
  }
  const crossover = options.crossover;
  if (crossover !== undefined) {
    if (typeof crossover !== 'object' || crossover === null) {
      throw new ArgumentError('options.crossover', 'an object of element counts by algorithm', describe(crossover));
    }
    for (const [k, v] of Object.entries(crossover)) {
      if (typeof v !== 'number' || Number.isNaN(v) || v < 0) {
        throw new ArgumentError(
          `options.crossover.${k}`,
          'a number of elements >= 0 (Infinity: never the GPU)',
          describe(v),
        );
      }
    }
  }
  return Object.freeze({
    kind: 'auto',
    info: 'auto: the GPU from its measured crossover size, else the CPU pool',
    tuning: frozenTuning(options.tuning),
    ...(crossover ? { crossover: Object.freeze({ ...crossover }) } : {}),
  });
}

let defaultDevicePolicy: DevicePolicy | undefined;

/** The standard policies. `execution.device` is created lazily on first access. */
export const execution = {
  seq: hostPolicy('seq', 'seq'),
  unseq: hostPolicy('unseq', 'unseq'),
  par: parallelPolicy('par'),
  parUnseq: parallelPolicy('parUnseq'),
  auto: makeAutoPolicy(),
  /** oneDPL's dpcpp_default: the default selector's GPU (hardware first, then software). */
  get device(): DevicePolicy {
    defaultDevicePolicy ??= makeDevicePolicy(defaultGpuSelector);
    return defaultDevicePolicy;
  },
};

/** The default selector, re-exported for symmetry with oneDPL. */
/** True for any policy object. */
export { defaultSelector, isPolicy };
