/**
 * Devices: WebGPU adapters and the host CPU. `enumerateDevices()` lists candidates without opening
 * anything; `openDevice()` opens a candidate (a GPU with the adapter's maximum limits that matter and
 * the features we use) and caches it, so every selector that picks the same adapter gets the same
 * device and queue.
 */

import { platform } from '#platform';
import { ArgumentError, DeviceLostError, describe } from './errors';
import { getGpu, gpuUnavailableReason, releaseGpu } from './gpu-instance';
import { Queue } from './queue';

/** What kind of processor a device is. `software-gpu` is a CPU-emulated GPU (lavapipe, SwiftShader). */
export type DeviceKind = 'gpu' | 'software-gpu' | 'cpu';

/** Aspects a selector can require or deny (SYCL's aspects, in WebGPU terms). */
export const ASPECTS = [
  'gpu',
  'cpu',
  'software',
  'hardware',
  'subgroups',
  'shader-f16',
  'timestamp-query',
  'subgroup-size-control',
] as const;
export type Aspect = (typeof ASPECTS)[number];

/** Everything known of a device before it is opened. */
export interface DeviceInfo {
  readonly name: string;
  readonly vendor: string;
  readonly architecture: string;
  readonly description: string;
  /** 'webgpu' for GPU adapters, 'host' for the CPU. */
  readonly backend: 'webgpu' | 'host';
  readonly kind: DeviceKind;
  /** WebGPU features (GPU) or host capabilities such as 'shared-memory' (CPU). */
  readonly features: ReadonlySet<string>;
  /** WebGPU limits (GPU); `cores` for the CPU. */
  readonly limits: Readonly<Record<string, number>>;
  /** Subgroup size range; 0 when the device has no subgroups. */
  readonly subgroupMinSize: number;
  readonly subgroupMaxSize: number;
}

/** A device not opened yet, as listed by `enumerateDevices()`. */
export interface DeviceCandidate {
  readonly info: DeviceInfo;
  /** @internal the adapter behind a GPU candidate */
  readonly adapter?: GPUAdapter;
  /** @internal how the adapter was requested (an adapter opens one device; later opens ask again) */
  readonly request?: GPURequestAdapterOptions;
}

/** An opened WebGPU device with its in-order queue. */
export interface GpuDevice {
  readonly type: 'gpu';
  readonly info: DeviceInfo;
  readonly gpu: GPUDevice;
  readonly queue: Queue;
  /** Features this device was opened with. */
  readonly features: ReadonlySet<string>;
  readonly limits: GPUSupportedLimits;
  /** Unique per opened device; used to detect foreign arrays. */
  readonly id: number;
  /** True once the device was lost or destroyed. */
  readonly lost: boolean;
  /**
   * False for a device wrapped from the caller's own GPUDevice (`fromGPUDevice`): webdpl never
   * destroys it, and leaves GPU errors outside its own calls to the caller.
   */
  readonly owned: boolean;
  /**
   * Destroys the device; later calls on it throw DeviceLostError. For a wrapped device
   * (`owned: false`) only webdpl lets go of it: the caller's GPUDevice stays usable.
   */
  destroy(): void;
}

/** The host CPU as a device. */
export interface CpuDevice {
  readonly type: 'cpu';
  readonly info: DeviceInfo;
  readonly id: number;
  /** Logical cores available to the worker pool. */
  readonly cores: number;
}

/** A device: a discriminated union on `type`, so a new kind breaks every switch that forgets it. */
export type Device = GpuDevice | CpuDevice;

/** Limits we ask for at the adapter's maximum. */
const WANTED_LIMITS = [
  'maxBufferSize',
  'maxStorageBufferBindingSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
] as const;

/** Features we use when present. */
const WANTED_FEATURES = ['subgroups', 'timestamp-query', 'shader-f16', 'subgroup-size-control'] as const;

let nextId = 1;

let cpuDevice: CpuDevice | undefined;

/** The host CPU device (one per process). */
export async function getCpuDevice(): Promise<CpuDevice> {
  if (cpuDevice) return cpuDevice;
  const cores = platform.hostCores();
  const features = new Set<string>();
  if (platform.sharedMemory()) features.add('shared-memory');
  const arch = platform.arch;
  cpuDevice = {
    type: 'cpu',
    id: nextId++,
    cores,
    info: {
      name: `host CPU (${cores} cores)`,
      vendor: 'host',
      architecture: arch,
      description: `${cores} logical cores, ${arch}`,
      backend: 'host',
      kind: 'cpu',
      features,
      limits: { cores },
      subgroupMinSize: 0,
      subgroupMaxSize: 0,
    },
  };
  return cpuDevice;
}

function adapterInfo(adapter: GPUAdapter): DeviceInfo {
  const features = new Set<string>();
  for (const f of adapter.features) features.add(f);
  return deviceInfo(adapter.info, features, adapter.limits);
}

/** DeviceInfo from an adapter's info and the features and limits of the adapter or device. */
function deviceInfo(
  adapterInfo: GPUAdapterInfo,
  features: ReadonlySet<string>,
  supported: GPUSupportedLimits,
): DeviceInfo {
  const i = adapterInfo as GPUAdapterInfo & {
    subgroupMinSize?: number;
    subgroupMaxSize?: number;
    isFallbackAdapter?: boolean;
  };
  const limits: Record<string, number> = {};
  for (const k in supported) {
    const v = (supported as unknown as Record<string, unknown>)[k];
    if (typeof v === 'number') limits[k] = v;
  }
  const text = `${i.vendor} ${i.architecture} ${i.device} ${i.description}`.toLowerCase();
  const software =
    i.isFallbackAdapter === true || /llvmpipe|lavapipe|swiftshader|software|warp|basic render/.test(text);
  const hasSubgroups = features.has('subgroups');
  return {
    name: i.description || i.device || `${i.vendor ?? ''} ${i.architecture ?? ''}`.trim() || 'WebGPU adapter',
    vendor: i.vendor ?? '',
    architecture: i.architecture ?? '',
    description: i.description ?? '',
    backend: 'webgpu',
    kind: software ? 'software-gpu' : 'gpu',
    features,
    limits,
    subgroupMinSize: hasSubgroups ? (i.subgroupMinSize ?? 4) : 0,
    subgroupMaxSize: hasSubgroups ? (i.subgroupMaxSize ?? 128) : 0,
  };
}

let adapters: Promise<DeviceCandidate[]> | undefined;

async function gpuCandidates(): Promise<DeviceCandidate[]> {
  const gpu = await getGpu();
  if (!gpu) return [];
  const found: DeviceCandidate[] = [];
  const seen = new Set<string>();
  for (const options of [
    { powerPreference: 'high-performance' },
    { powerPreference: 'low-power' },
    { forceFallbackAdapter: true },
  ] as GPURequestAdapterOptions[]) {
    let adapter: GPUAdapter | null = null;
    try {
      adapter = await gpu.requestAdapter(options);
    } catch {
      adapter = null;
    }
    if (!adapter) continue;
    const info = adapterInfo(adapter);
    const key = `${info.vendor}|${info.architecture}|${info.name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    found.push({ info, adapter, request: options });
  }
  return found;
}

/**
 * Lists every device: WebGPU adapters first (hardware before software), then the host CPU.
 * Nothing is opened. The adapter list is cached until `releaseDevices()`.
 */
export async function enumerateDevices(): Promise<DeviceCandidate[]> {
  adapters ??= gpuCandidates();
  const gpus = await adapters;
  const cpu = await getCpuDevice();
  return [...gpus, { info: cpu.info }];
}

/** Why no GPU adapter was found, if none was. */
export async function noGpuReason(): Promise<string | undefined> {
  const gpus = await (adapters ??= gpuCandidates());
  if (gpus.length > 0) return undefined;
  return gpuUnavailableReason() ?? 'WebGPU is available but returned no adapter (no Vulkan/Metal/D3D12 driver?)';
}

const opened = new Map<DeviceCandidate, Promise<GpuDevice>>();
const openDevices = new Set<GpuDevice>();

/** Options for opening a GPU device. */
export interface OpenOptions {
  /** Features not to enable even when present (tests use this to force fallback paths). @default [] */
  readonly disableFeatures?: readonly string[];
  /**
   * Upper bounds on `max*` limits (e.g. `{ maxComputeWorkgroupStorageSize: 16384 }`): the device is
   * opened with at most these and webdpl sizes its kernels as if the adapter allowed no more, also
   * below WebGPU's defaults (which the implementation still grants). For trying how webdpl runs on a
   * smaller adapter. @default {} (the adapter's maximum of the limits webdpl uses)
   */
  readonly limits?: Readonly<Record<string, number>>;
  /**
   * Subgroup sizes webdpl must assume possible, widening the adapter's range (e.g. `{ min: 4 }` on an
   * adapter of 8-wide subgroups sizes every kernel for 4-wide ones, as on SwiftShader). Kernels stay
   * correct on the real size, which lies inside the range. Powers of two in [4, 128]. @default the adapter's
   */
  readonly subgroupSizes?: { readonly min?: number; readonly max?: number };
}

/** Checks OpenOptions.limits: `max*` limits only (lower is smaller), positive integers. */
function checkLimitCaps(caps: unknown): Record<string, number> {
  if (caps === undefined) return {};
  if (typeof caps !== 'object' || caps === null) {
    throw new ArgumentError('options.limits', 'an object of max* limits', describe(caps));
  }
  for (const [k, v] of Object.entries(caps)) {
    if (!k.startsWith('max')) {
      throw new ArgumentError(`options.limits.${k}`, 'a max* limit (only upper bounds can be lowered)', k);
    }
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) {
      throw new ArgumentError(`options.limits.${k}`, 'a positive integer', describe(v));
    }
  }
  return caps as Record<string, number>;
}

function checkSubgroupSizes(sizes: unknown): { min?: number; max?: number } {
  if (sizes === undefined) return {};
  if (typeof sizes !== 'object' || sizes === null) {
    throw new ArgumentError('options.subgroupSizes', 'an object { min?, max? }', describe(sizes));
  }
  const s = sizes as { min?: unknown; max?: unknown };
  for (const k of ['min', 'max'] as const) {
    const v = s[k];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 4 || v > 128 || (v & (v - 1)) !== 0) {
      throw new ArgumentError(`options.subgroupSizes.${k}`, 'a power of two in [4, 128]', describe(v));
    }
  }
  return s as { min?: number; max?: number };
}

/**
 * The device's limits as webdpl sees them: the real ones, `max*` limits lowered to `caps`, in a
 * plain frozen object: a limit read from the implementation's GPUSupportedLimits is a native
 * getter call (~0.1 us on the VM's Dawn for Node, more on slower hosts), and calls read a few per
 * call (issue 12).
 */
function plainLimits(real: GPUSupportedLimits, caps: Readonly<Record<string, number>>): GPUSupportedLimits {
  const out: Record<string, number> = {};
  for (const k in real) {
    const v = (real as unknown as Record<string, unknown>)[k];
    if (typeof v === 'number') out[k] = caps[k] !== undefined ? Math.min(v, caps[k] as number) : v;
  }
  return Object.freeze(out) as unknown as GPUSupportedLimits;
}

const consumed = new WeakSet<GPUAdapter>();

/** The candidate's adapter if unused, else a fresh one requested the same way (an adapter opens one device). */
async function freshAdapter(candidate: DeviceCandidate): Promise<GPUAdapter> {
  const first = candidate.adapter as GPUAdapter;
  if (!consumed.has(first)) {
    consumed.add(first);
    return first;
  }
  const gpu = await getGpu();
  const again = gpu ? await gpu.requestAdapter(candidate.request) : null;
  if (!again)
    throw new DeviceLostError(`the adapter of '${candidate.info.name}' is no longer available`, 'unavailable');
  consumed.add(again);
  return again;
}

async function openGpu(candidate: DeviceCandidate, options: OpenOptions): Promise<GpuDevice> {
  const caps = checkLimitCaps(options.limits);
  const sizes = checkSubgroupSizes(options.subgroupSizes);
  const adapter = await freshAdapter(candidate);
  const requiredLimits: Record<string, number> = {};
  for (const k of WANTED_LIMITS) {
    const v = (adapter.limits as unknown as Record<string, number>)[k];
    if (typeof v === 'number') requiredLimits[k] = caps[k] !== undefined ? Math.min(v, caps[k] as number) : v;
  }
  const disabled = new Set(options.disableFeatures ?? []);
  const requiredFeatures = WANTED_FEATURES.filter(
    (f) => adapter.features.has(f) && !disabled.has(f),
  ) as GPUFeatureName[];
  const gpu = await adapter.requestDevice({ requiredFeatures, requiredLimits, label: 'webdpl' });
  // Some implementations enable features implicitly; webdpl uses only those not disabled.
  const features = new Set<string>();
  for (const f of gpu.features) if (!disabled.has(f)) features.add(f);
  const sg = features.has('subgroups');
  const info: DeviceInfo = {
    ...candidate.info,
    features,
    subgroupMinSize: sg ? Math.min(candidate.info.subgroupMinSize, sizes.min ?? 128) : 0,
    subgroupMaxSize: sg ? Math.max(candidate.info.subgroupMaxSize, sizes.max ?? 4) : 0,
  };
  const device = gpuDevice(gpu, info, features, plainLimits(gpu.limits, caps), true);
  openDevices.add(device);
  return device;
}

/**
 * The GpuDevice over `gpu`. `owned`: webdpl opened it (destroy() destroys it, uncaptured errors are
 * webdpl's); else it is the caller's (fromGPUDevice).
 */
function gpuDevice(
  gpu: GPUDevice,
  info: DeviceInfo,
  features: ReadonlySet<string>,
  limits: GPUSupportedLimits,
  owned: boolean,
): GpuDevice {
  let lostReason: string | undefined;
  const device: GpuDevice = {
    type: 'gpu',
    id: nextId++,
    info,
    gpu,
    features,
    limits,
    owned,
    get lost() {
      return lostReason !== undefined;
    },
    queue: undefined as unknown as Queue,
    destroy() {
      if (lostReason === undefined) lostReason = owned ? 'destroyed' : 'released by webdpl';
      openDevices.delete(device);
      for (const [c, p] of opened) {
        p.then((d) => d === device && opened.delete(c)).catch(() => {});
      }
      if (owned) gpu.destroy();
      else wrapped.delete(gpu);
    },
  };
  (device as { queue: Queue }).queue = new Queue(device, () => lostReason);
  gpu.lost.then((l) => {
    lostReason ??= `${l.reason}: ${l.message}`;
    openDevices.delete(device);
  });
  if (owned) {
    // Errors outside our error scopes (none expected) must not reach the console unseen nor vanish.
    gpu.onuncapturederror = (ev) => {
      device.queue.recordUncaptured((ev as GPUUncapturedErrorEvent).error);
    };
  } else {
    // The caller's device: its handler stays; webdpl takes only the errors of its own recordings.
    const listen = (gpu as { addEventListener?: GPUDevice['addEventListener'] }).addEventListener;
    const mine = (ev: Event) => {
      if (device.queue.recordUncaptured((ev as GPUUncapturedErrorEvent).error, true)) ev.preventDefault?.();
    };
    if (typeof listen === 'function') listen.call(gpu, 'uncapturederror', mine);
    else {
      const theirs = gpu.onuncapturederror;
      gpu.onuncapturederror = function (this: GPUDevice, ev) {
        mine(ev);
        if (!ev.defaultPrevented && typeof theirs === 'function') theirs.call(this, ev);
      };
    }
  }
  return device;
}

const wrapped = new WeakMap<GPUDevice, GpuDevice>();

/** Options of `fromGPUDevice`. */
export interface FromGPUDeviceOptions {
  /**
   * The adapter's info (name, vendor, subgroup sizes), when `device.adapterInfo` is not available.
   * @default device.adapterInfo
   */
  readonly adapterInfo?: GPUAdapterInfo;
}

/**
 * A webdpl device over the caller's own `GPUDevice` (bring your own device), for device policies
 * (`makeDevicePolicy(gpuDevice)` does this) and `DeviceArray`s. webdpl uses the features and limits
 * the device was created with, never destroys it (`destroy()` and `releaseDevices()` only let go of
 * it), and leaves errors of the caller's own GPU work to the caller's handlers. The same GPUDevice
 * always gives the same webdpl device (so pipelines and caches are shared).
 * @throws ArgumentError naming `device` or `options.adapterInfo`
 */
export function fromGPUDevice(device: GPUDevice, options: FromGPUDeviceOptions = {}): GpuDevice {
  const d = device as Partial<GPUDevice> | undefined;
  if (
    typeof d !== 'object' ||
    d === null ||
    typeof d.createBuffer !== 'function' ||
    typeof d.createComputePipeline !== 'function' ||
    typeof d.queue !== 'object'
  ) {
    throw new ArgumentError('device', 'a GPUDevice (from adapter.requestDevice())', describe(device));
  }
  if (typeof options !== 'object' || options === null) {
    throw new ArgumentError('options', 'an options object { adapterInfo? }', describe(options));
  }
  const known = wrapped.get(device);
  if (known && !known.lost) return known;
  const given = options.adapterInfo ?? (device as { adapterInfo?: GPUAdapterInfo }).adapterInfo;
  if (given !== undefined && (typeof given !== 'object' || given === null)) {
    throw new ArgumentError('options.adapterInfo', 'a GPUAdapterInfo (adapter.info)', describe(given));
  }
  const features = new Set<string>();
  for (const f of device.features) features.add(f);
  const info = deviceInfo(given ?? ({} as GPUAdapterInfo), features, device.limits);
  const gd = gpuDevice(device, info, features, plainLimits(device.limits, {}), false);
  wrapped.set(device, gd);
  return gd;
}
/**
 * Opens a candidate. A GPU is opened with the adapter's maximum limits that matter and the features we
 * use; the result is cached per candidate and options, so the same adapter yields the same device.
 */
export async function openDevice(candidate: DeviceCandidate, options: OpenOptions = {}): Promise<Device> {
  if (candidate.info.backend === 'host') return getCpuDevice();
  // A device opened with options is its own (the cached one is opened the default way).
  if (options.disableFeatures?.length || options.limits || options.subgroupSizes) return openGpu(candidate, options);
  let p = opened.get(candidate);
  if (!p) {
    p = openGpu(candidate, options);
    opened.set(candidate, p);
    p.catch(() => opened.delete(candidate));
  }
  const d = await p;
  if (d.lost) {
    opened.delete(candidate);
    return openDevice(candidate, options);
  }
  return d;
}

/**
 * Destroys every GPU device webdpl opened and drops the WebGPU instance, so a Node process can exit.
 * Later calls open new devices.
 */
export function releaseDevices(): void {
  for (const d of [...openDevices]) d.destroy();
  openDevices.clear();
  opened.clear();
  adapters = undefined;
  releaseGpu();
}

/** Throws DeviceLostError when `device` is lost. */
export function assertAlive(device: GpuDevice): void {
  if (device.lost) throw new DeviceLostError(`device '${device.info.name}' was lost`, 'lost');
}
