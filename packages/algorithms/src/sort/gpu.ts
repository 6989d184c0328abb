/**
 * GPU backend of sort, stableSort and sortByKey: built-in orders go to the radix-sort engine, user
 * comparators to the merge-sort engine. Host arrays arrive uploaded (pattern/dispatch.ts), are sorted
 * and read back in the same command buffer, then delivered into the caller's arrays (which stay
 * untouched if the GPU fails).
 */
import type { DeviceArray, GpuDevice } from '@webdpl/core';
import { mergeSortDevice } from '../engines/merge-sort';
import { radixSortDevice } from '../engines/radix-sort';
import type { Comparator } from './comparator-arg';

/**
 * Sorts `keys` (with `values` along) on `device` by `comp` (a built-in or a GPU-form comparator), in
 * place; returns the sorted bytes when `readBack` (read in the same command buffer).
 */
export function gpuSort(
  device: GpuDevice,
  tuning: Readonly<Record<string, number | boolean>>,
  label: string,
  keys: DeviceArray,
  values: DeviceArray | undefined,
  comp: Exclude<Comparator, { kind: 'host-only' }>,
  readBack: boolean,
): Promise<{ readonly keys?: ArrayBuffer | undefined; readonly values?: ArrayBuffer | undefined }> {
  return comp.kind === 'builtin'
    ? radixSortDevice(device, keys, values, {
        descending: comp.descending,
        tuning,
        tuningName: 'radix-sort',
        label,
        readBack,
      })
    : mergeSortDevice(device, keys, values, {
        comparator: comp.fn,
        tuning,
        tuningName: 'merge-sort',
        label,
        readBack,
      });
}
