/**
 * Backend selection: the one place that decides CPU vs GPU and fallback. Policies and backends are
 * discriminated unions; every algorithm switches on `Backend['kind']` with an exhaustive check, so a
 * new backend kind breaks each algorithm's dispatch at compile time until it is handled.
 */
import {
  ArgumentError,
  type DeviceArray,
  describe,
  type GpuDevice,
  type GpuFunction,
  gpuSelector,
  type NumericType,
  noGpuReason,
  selectDevice,
  UnsupportedOnDeviceError,
} from '@webdpl/core';
import { autoRecord, autoSide } from './auto';
import {
  type AutoPolicy,
  type DevicePolicy,
  execution,
  type HostPolicy,
  isPolicy,
  NO_TUNING,
  type Policy,
  sharedMemoryAvailable,
  type TuningOverrides,
} from './policy';
import { defaultPool, type WorkerPool } from './pool';

/** Where an algorithm call runs. */
export type Backend = (
  | { readonly kind: 'seq' }
  | {
      readonly kind: 'par';
      readonly pool: WorkerPool;
      /**
       * CPU tuning overrides from the host policy for this call (`parallelThreshold`, `minChunk`;
       * see cpu/cpu-backend.ts). Absent or empty means the defaults.
       */
      readonly tuning?: Readonly<Record<string, number | boolean>>;
    }
  | {
      readonly kind: 'gpu';
      readonly device: GpuDevice;
      /** This algorithm's tuning overrides from the policy (empty when none). */
      readonly tuning: Readonly<Record<string, number | boolean>>;
    }
) & {
  /**
   * `execution.auto` on host arrays: report the call's end-to-end time (ms) once it succeeded, so
   * auto learns the crossover (auto.ts). Absent for every other call.
   */
  readonly measure?: (ms: number) => void;
};

/** What an algorithm call needs, for deciding where it can run. */
export interface BackendRequest {
  /** Algorithm name, also the key of tuning overrides. */
  readonly algorithm: string;
  /** Engine the algorithm runs on (e.g. 'transform-reduce'); its tuning overrides apply first. */
  readonly engine?: string;
  /** Element types involved. */
  readonly types: readonly NumericType[];
  /** Functions the call runs, with the argument types each gets. */
  readonly functions?: readonly { readonly fn: GpuFunction; readonly argTypes: readonly NumericType[] }[];
  /** DeviceArray arguments: they pin the call to their device. */
  readonly deviceArrays?: readonly DeviceArray[];
  /** The argument names of `deviceArrays`, for errors (a destroyed or foreign array). */
  readonly deviceArrayNames?: readonly string[];
  /** Further check of whether `device` can run the call: a reason when it cannot. */
  readonly gpuCheck?: (device: GpuDevice) => string | undefined;
  /** Elements the call works on (auto's crossover); unknown sizes run where the GPU can run them. */
  readonly n?: number;
}

/** Throws unless `x` is a policy. */
export function checkPolicy(x: unknown): Policy {
  if (!isPolicy(x)) {
    throw new ArgumentError(
      'policy',
      'an execution policy (execution.seq, execution.par, execution.device, execution.auto, makeDevicePolicy(...))',
      describe(x),
    );
  }
  return x;
}

/** Why `device` cannot run `req`, or undefined when it can. */
export function gpuCannotRun(device: GpuDevice, req: BackendRequest): string | undefined {
  for (const fn of req.functions ?? []) {
    if (!fn.fn.supports(fn.argTypes))
      return `${fn.fn.builtin ? 'operator' : 'function'} '${fn.fn.name}' does not support ${fn.argTypes.join(', ')}`;
    try {
      fn.fn.wgsl(fn.argTypes);
    } catch (e) {
      return (e as Error).message;
    }
  }
  return req.gpuCheck?.(device);
}

/** seq for seq/unseq; par for par/parUnseq when SharedArrayBuffer is usable now, else seq. */
const SEQ: Backend = Object.freeze({ kind: 'seq' });

function hostBackend(policy: HostPolicy, req: BackendRequest): Backend {
  if ((policy.mode === 'par' || policy.mode === 'parUnseq') && sharedMemoryAvailable()) {
    return { kind: 'par', pool: policy.pool ?? defaultPool(), tuning: tuningFor(policy.tuning ?? NO_TUNING, req) };
  }
  return SEQ;
}

/**
 * `selectBackend` for a host policy, synchronously (the pattern layer's fast path: a host call
 * needs no await before its bricks run).
 */
export function selectHostBackend(policy: HostPolicy, req: BackendRequest): Backend {
  if (req.deviceArrays?.length) {
    throw new ArgumentError(
      'policy',
      `a device policy (or execution.auto) for DeviceArray arguments of ${req.algorithm}`,
      `host policy ${policy.mode}`,
    );
  }
  return hostBackend(policy, req);
}

function checkArrays(device: GpuDevice, arrays: readonly DeviceArray[], names: readonly string[] = []): void {
  for (let k = 0; k < arrays.length; k++) (arrays[k] as DeviceArray).check(device, names[k] ?? 'array');
}

/** Overrides resolved per policy's (frozen) overrides object, by engine and algorithm. */
const resolvedTunings = new WeakMap<
  TuningOverrides,
  Map<string | undefined, Map<string, Readonly<Record<string, number | boolean>>>>
>();

/**
 * Overrides for a call: the `'*'` entry, then the engine's entry, then the algorithm's own entry on
 * top. The same object for every call of a policy, engine and algorithm (the engines memoize their
 * resolved tuning by it; a fresh object per call cost a resolution per call).
 */
function tuningFor(tuning: TuningOverrides, req: BackendRequest): Readonly<Record<string, number | boolean>> {
  let byEngine = resolvedTunings.get(tuning);
  if (!byEngine) {
    byEngine = new Map();
    resolvedTunings.set(tuning, byEngine);
  }
  // By engine, then algorithm: no key string built per call (issue 12).
  let byAlgorithm = byEngine.get(req.engine);
  if (!byAlgorithm) {
    byAlgorithm = new Map();
    byEngine.set(req.engine, byAlgorithm);
  }
  let t = byAlgorithm.get(req.algorithm);
  if (!t) {
    t = Object.freeze({ ...tuning['*'], ...(req.engine ? tuning[req.engine] : undefined), ...tuning[req.algorithm] });
    byAlgorithm.set(req.algorithm, t);
  }
  return t;
}

let autoDevice: Promise<GpuDevice | undefined> | undefined;

async function bestGpu(): Promise<GpuDevice | undefined> {
  autoDevice ??= (async () => {
    if (await noGpuReason()) return undefined;
    try {
      return (await selectDevice(gpuSelector)) as GpuDevice;
    } catch {
      return undefined;
    }
  })();
  const d = await autoDevice;
  if (d?.lost) {
    autoDevice = undefined;
    return bestGpu();
  }
  return d;
}

/** A device policy's backend once its device is known (selectBackend and selectBackendNow). */
function onDevice(policy: DevicePolicy, device: GpuDevice, req: BackendRequest): Backend {
  const arrays = req.deviceArrays ?? NO_ARRAYS;
  // A lost device (a policy made from a device or queue keeps it; selector policies select a new
  // one) runs the call on the CPU when the policy falls back, else the call says so.
  if (device.lost && policy.fallback === 'cpu' && !arrays.length) {
    return hostBackend(policy.fallbackPolicy ?? execution.par, req);
  }
  device.queue.checkAlive();
  checkArrays(device, arrays, req.deviceArrayNames);
  const why = gpuCannotRun(device, req);
  if (why === undefined) return gpuBackend(device, policy.tuning, req);
  if (policy.fallback === 'error' || arrays.length) {
    throw new UnsupportedOnDeviceError(`${req.algorithm} cannot run on '${device.info.name}': ${why}`);
  }
  return hostBackend(policy.fallbackPolicy ?? execution.par, req);
}

/** execution.auto with DeviceArray arguments: their device runs the call. */
function autoOnArrays(policy: AutoPolicy, arrays: readonly DeviceArray[], req: BackendRequest): Backend {
  const device = (arrays[0] as DeviceArray).device;
  checkArrays(device, arrays, req.deviceArrayNames);
  const why = gpuCannotRun(device, req);
  if (why !== undefined)
    throw new UnsupportedOnDeviceError(`${req.algorithm} cannot run on '${device.info.name}': ${why}`);
  return gpuBackend(device, policy.tuning, req);
}

const NO_ARRAYS: readonly DeviceArray[] = [];

/** GPU backends by device, per resolved tuning object (the same object for every call of a shape). */
const gpuBackends = new WeakMap<GpuDevice, WeakMap<object, Backend>>();

/**
 * The GPU backend of `device` with the tuning of a policy, engine and algorithm: one frozen object
 * per (device, resolved tuning), so a call allocates none.
 */
function gpuBackend(device: GpuDevice, tuning: TuningOverrides, req: BackendRequest): Backend {
  const t = tuningFor(tuning, req);
  let byTuning = gpuBackends.get(device);
  if (!byTuning) {
    byTuning = new WeakMap();
    gpuBackends.set(device, byTuning);
  }
  let b = byTuning.get(t);
  if (!b) {
    b = Object.freeze({ kind: 'gpu', device, tuning: t });
    byTuning.set(t, b);
  }
  return b;
}

/**
 * `selectBackend` without a promise, where the answer needs no wait: host policies, device policies
 * whose device is resolved and not lost, execution.auto on DeviceArrays. Undefined otherwise (the
 * caller awaits `selectBackend`). Same checks, same errors, same backends as `selectBackend`: the
 * pattern layer's fast path for calls on a resolved device (issue 12: an await per call cost ~1 us
 * of host time before the submit).
 */
export function selectBackendNow(policyArg: unknown, req: BackendRequest): Backend | undefined {
  const policy = checkPolicy(policyArg);
  switch (policy.kind) {
    case 'host':
      return selectHostBackend(policy, req);
    case 'device': {
      const device = policy.device;
      return device && !device.lost ? onDevice(policy, device, req) : undefined;
    }
    case 'auto':
      return req.deviceArrays?.length ? autoOnArrays(policy, req.deviceArrays, req) : undefined;
  }
}

/** Decides where a call runs. Throws typed errors for foreign/destroyed arrays and, with fallback 'error', for requests the device cannot run. */
export async function selectBackend(policyArg: unknown, req: BackendRequest): Promise<Backend> {
  const policy = checkPolicy(policyArg);
  const arrays = req.deviceArrays ?? [];
  switch (policy.kind) {
    case 'host':
      return selectHostBackend(policy, req);
    case 'device':
      return onDevice(policy, await policy.resolve(), req);
    case 'auto': {
      if (arrays.length) return autoOnArrays(policy, arrays, req);
      const device = await bestGpu();
      if (!device || gpuCannotRun(device, req) !== undefined) return hostBackend(execution.par, req);
      if (req.n === undefined) return { kind: 'gpu', device, tuning: tuningFor(policy.tuning, req) };
      const n = req.n;
      const type = req.types[0] ?? 'u32';
      const fixed = policy.crossover?.[req.algorithm] ?? policy.crossover?.['*'];
      const side = autoSide(device, req.algorithm, type, n, fixed);
      const measure = (ms: number) => autoRecord(device, req.algorithm, type, n, side, ms);
      if (side === 'gpu') return { kind: 'gpu', device, tuning: tuningFor(policy.tuning, req), measure };
      return { ...hostBackend(execution.par, req), measure };
    }
  }
}

/**
 * The CPU backend a call falls back to when its GPU run fails in a way another device would not
 * (a kernel the device cannot link or compile, an input beyond a device limit found late, a device
 * lost during the call), or undefined when the policy does not fall back: host policies (already
 * on the CPU), device policies with `fallback: 'error'`, and any call with DeviceArray arguments
 * (their data lives on that device).
 */
export function cpuFallback(policyArg: unknown, req: BackendRequest): Backend | undefined {
  const policy = checkPolicy(policyArg);
  if ((req.deviceArrays ?? []).length) return undefined;
  switch (policy.kind) {
    case 'host':
      return undefined;
    case 'device':
      return policy.fallback === 'error' ? undefined : hostBackend(policy.fallbackPolicy ?? execution.par, req);
    case 'auto':
      return hostBackend(execution.par, req);
  }
}

/** For exhaustive switches over Backend['kind'] (and any other union). */
export function assertNever(x: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(x)}`);
}
