/**
 * GPU backend of sort, stableSort and sortByKey: built-in orders go to the radix-sort engine, user
 * comparators to the merge-sort engine; more keys than one storage binding holds are sorted in
 * segments and merged (segmented.ts). Host arrays arrive uploaded (pattern/dispatch.ts), are sorted
 * and read back in the same command buffer, then delivered into the caller's arrays (which stay
 * untouched if the GPU fails).
 */
import type { DeviceArray, GpuDevice } from '@webdpl/core';
import { mergeSortDevice } from '../engines/merge-sort';
import { radixSortDevice } from '../engines/radix-sort';
import type { Comparator } from './comparator-arg';
import { segmentedSort } from './segmented';

/** The sorted bytes a GPU sort read back (when asked). */
export interface SortedBytes {
  readonly keys?: ArrayBuffer | undefined;
  readonly values?: ArrayBuffer | undefined;
}

/**
 * Sorts `keys` (with `values` along) on `device` by `comp` (a built-in or a GPU-form comparator), in
 * place; returns the sorted bytes when `readBack` (read in the same command buffer, or after the
 * last merge beyond one storage binding).
 */
export function gpuSort(
  device: GpuDevice,
  tuning: Readonly<Record<string, number | boolean>>,
  label: string,
  keys: DeviceArray,
  values: DeviceArray | undefined,
  comp: Exclude<Comparator, { kind: 'host-only' }>,
  readBack: boolean,
): Promise<SortedBytes> {
  const within = (k: DeviceArray, v: DeviceArray | undefined, back: boolean): Promise<SortedBytes> =>
    comp.kind === 'builtin'
      ? radixSortDevice(device, k, v, {
          descending: comp.descending,
          tuning,
          tuningName: 'radix-sort',
          label,
          readBack: back,
        })
      : mergeSortDevice(device, k, v, {
          comparator: comp.fn,
          tuning,
          tuningName: 'merge-sort',
          label,
          readBack: back,
        });
  if (keys.length * 4 > device.limits.maxStorageBufferBindingSize) {
    return segmentedSort(device, keys, values, comp, { tuning, label, readBack }, (k, v) => within(k, v, false));
  }
  return within(keys, values, readBack);
}
