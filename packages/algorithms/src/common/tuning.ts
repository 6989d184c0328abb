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

/** The storage binding limit in bytes, optionally lowered by a tuning override (tests). */
export function bindingLimit(device: GpuDevice, override: number): number {
  const lim = device.limits.maxStorageBufferBindingSize;
  return override > 0 ? Math.min(override, lim) : lim;
}
