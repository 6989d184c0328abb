/**
 * Devices: WebGPU adapters and the host CPU. `enumerateDevices()` lists candidates without opening
 * anything; `openDevice()` opens a candidate (a GPU with the adapter's maximum limits that matter and
 * the features we use) and caches it, so every selector that picks the same adapter gets the same
 * device and queue.
 */

import { platform } from '#platform';
import { DeviceLostError } from './errors';
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
  /** Destroys the device; later calls on it throw DeviceLostError. */
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
  const i = adapter.info as GPUAdapterInfo & {
    subgroupMinSize?: number;
    subgroupMaxSize?: number;
    isFallbackAdapter?: boolean;
  };
  const features = new Set<string>();
  for (const f of adapter.features) features.add(f);
  const limits: Record<string, number> = {};
  for (const k in adapter.limits) {
    const v = (adapter.limits as unknown as Record<string, unknown>)[k];
    if (typeof v === 'number') limits[k] = v;
  }
  const text = `${i.vendor} ${i.architecture} ${i.device} ${i.description}`.toLowerCase();
  const software =
    i.isFallbackAdapter === true || /llvmpipe|lavapipe|swiftshader|software|warp|basic render/.test(text);
  const hasSubgroups = features.has('subgroups');
  return {
    name: i.description || i.device || `${i.vendor} ${i.architecture}`.trim() || 'WebGPU adapter',
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
  const adapter = await freshAdapter(candidate);
  const requiredLimits: Record<string, number> = {};
  for (const k of WANTED_LIMITS) {
    const v = (adapter.limits as unknown as Record<string, number>)[k];
    if (typeof v === 'number') requiredLimits[k] = v;
  }
  const disabled = new Set(options.disableFeatures ?? []);
  const requiredFeatures = WANTED_FEATURES.filter(
    (f) => adapter.features.has(f) && !disabled.has(f),
  ) as GPUFeatureName[];
  const gpu = await adapter.requestDevice({ requiredFeatures, requiredLimits, label: 'webdpl' });
  // Some implementations enable features implicitly; webdpl uses only those not disabled.
  const features = new Set<string>();
  for (const f of gpu.features) if (!disabled.has(f)) features.add(f);
  const info: DeviceInfo = {
    ...candidate.info,
    features,
    subgroupMinSize: features.has('subgroups') ? candidate.info.subgroupMinSize : 0,
    subgroupMaxSize: features.has('subgroups') ? candidate.info.subgroupMaxSize : 0,
  };
  let lostReason: string | undefined;
  const device: GpuDevice = {
    type: 'gpu',
    id: nextId++,
    info,
    gpu,
    features,
    limits: gpu.limits,
    get lost() {
      return lostReason !== undefined;
    },
    queue: undefined as unknown as Queue,
    destroy() {
      if (lostReason === undefined) lostReason = 'destroyed';
      openDevices.delete(device);
      for (const [c, p] of opened) {
        p.then((d) => d === device && opened.delete(c)).catch(() => {});
      }
      gpu.destroy();
    },
  };
  (device as { queue: Queue }).queue = new Queue(device, () => lostReason);
  gpu.lost.then((l) => {
    lostReason ??= `${l.reason}: ${l.message}`;
    openDevices.delete(device);
  });
  // Errors outside our error scopes (none expected) must not reach the console unseen nor vanish.
  gpu.onuncapturederror = (ev) => {
    device.queue.recordUncaptured((ev as GPUUncapturedErrorEvent).error);
  };
  openDevices.add(device);
  return device;
}

/**
 * Opens a candidate. A GPU is opened with the adapter's maximum limits that matter and the features we
 * use; the result is cached per candidate and options, so the same adapter yields the same device.
 */
export async function openDevice(candidate: DeviceCandidate, options: OpenOptions = {}): Promise<Device> {
  if (candidate.info.backend === 'host') return getCpuDevice();
  if (options.disableFeatures?.length) return openGpu(candidate, options);
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
