/**
 * Tuning is plain data: each algorithm declares defaults per device class; a policy's overrides
 * (`makeDevicePolicy(d, { tuning: { reduce: { workgroupSize: 32 } } })`) replace single fields.
 * Unknown override keys are errors, so a typo never silently tunes nothing.
 */
import { ArgumentError, type GpuDevice } from '@webdpl/core';

export type TuningValues = Record<string, number | boolean>;

/** Merges `overrides` into `defaults`, checking names and value types. */
export function resolveTuning<T extends TuningValues>(
  algorithm: string,
  defaults: T,
  overrides: Readonly<Record<string, number | boolean>>,
): T {
  const out: TuningValues = { ...defaults };
  for (const [k, v] of Object.entries(overrides)) {
    if (!(k in defaults)) {
      throw new ArgumentError(`tuning.${algorithm}.${k}`, `one of ${Object.keys(defaults).join(', ')}`, k);
    }
    if (typeof v !== typeof defaults[k]) {
      throw new ArgumentError(`tuning.${algorithm}.${k}`, `a ${typeof defaults[k]}`, typeof v);
    }
    out[k] = v;
  }
  return out as T;
}

/** Whether subgroup variants may be used on `device` given a tuning flag. */
export function useSubgroups(device: GpuDevice, flag: boolean): boolean {
  return flag && device.features.has('subgroups');
}

/**
 * Whether chained tiles on `device` take their ids from an atomic ticket (`atomicTileIds` of the
 * scan engine and the radix sort): on software adapters, whose worker threads may take workgroups
 * out of order (and a waiting workgroup can hold the thread its predecessor needs); hardware GPUs
 * start workgroups in index order, so the workgroup index serves (2-4% faster on the H100,
 * docs/benchmarks/h100-2026-11-24f.md). The look-back's fallback keeps results right either way.
 */
export function ticketTileIds(device: GpuDevice): boolean {
  return device.info.kind === 'software-gpu';
}

/** The storage binding limit in bytes, optionally lowered by a tuning override (tests). */
export function bindingLimit(device: GpuDevice, override: number): number {
  const lim = device.limits.maxStorageBufferBindingSize;
  return override > 0 ? Math.min(override, lim) : lim;
}

/**
 * The most threads a one-dimensional workgroup may have on `device`: the largest power of two within
 * maxComputeInvocationsPerWorkgroup and maxComputeWorkgroupSizeX (as webdpl sees them: a device
 * opened with lowered `limits` reports those).
 */
export function maxWorkgroupThreads(device: GpuDevice): number {
  const l = device.limits;
  const m = Math.max(1, Math.min(l.maxComputeInvocationsPerWorkgroup, l.maxComputeWorkgroupSizeX));
  return 2 ** Math.floor(Math.log2(m));
}

const threadFits = new WeakMap<GpuDevice, Map<object, object>>();

/**
 * `defaults` with its thread counts (`keys`) lowered to `maxWorkgroupThreads(device)`. One object per
 * device and defaults object (memoized: `cachedTuning` keys on the defaults object), `defaults`
 * itself when nothing needs lowering.
 */
export function fitThreads<T extends TuningValues>(
  device: GpuDevice,
  defaults: T,
  keys: readonly (keyof T & string)[] = ['workgroupSize'],
): T {
  let m = threadFits.get(device);
  if (!m) {
    m = new Map();
    threadFits.set(device, m);
  }
  let t = m.get(defaults) as T | undefined;
  if (!t) {
    const max = maxWorkgroupThreads(device);
    const lowered: TuningValues = { ...defaults };
    let changed = false;
    for (const k of keys) {
      if ((defaults[k] as number) > max) {
        lowered[k] = max;
        changed = true;
      }
    }
    t = changed ? (lowered as T) : defaults;
    m.set(defaults, t);
  }
  return t;
}

/**
 * Fits a tuning to the device's workgroup memory (maxComputeWorkgroupStorageSize): `start` when its
 * kernels fit, else the first of `smaller(start)`, `smaller(smaller(start))`, ... that fits. A
 * family's `footprint(t)` is the workgroup memory of the kernels it would link for `t`, measured on
 * the very fragments (`workgroupFootprint`), so selection and kernel cannot disagree. When nothing
 * fits, `start` is returned: linking it fails with a WgslLinkError (an UnsupportedOnDeviceError),
 * which policies that fall back run on the CPU.
 */
export function fitWorkgroupMemory<T>(
  device: GpuDevice,
  start: T,
  footprint: (t: T) => number,
  smaller: (t: T) => T | undefined,
): T {
  const max = device.limits.maxComputeWorkgroupStorageSize;
  for (let t: T | undefined = start; t !== undefined; t = smaller(t)) {
    if (footprint(t) <= max) return t;
  }
  return start;
}
