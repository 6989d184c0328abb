/**
 * GPU backend of sort, stableSort and sortByKey: built-in orders go to the radix-sort engine, user
 * comparators to the merge-sort engine. Host arrays are uploaded, sorted and read back in the same
 * command buffer, then copied into the caller's arrays (which stay untouched if the GPU fails).
 */
import type { GpuDevice } from '@webdpl/core';
import type { CheckedArray } from '../common/args';
import { copyInto, releaseTemps, toDevice } from '../common/gpu-io';
import { mergeSortDevice } from '../engines/merge-sort';
import { radixSortDevice } from '../engines/radix-sort';
import type { Comparator } from './comparator-arg';

/** Sorts `keys` (with `values` along) on `device` by `comp` (a built-in or a GPU-form comparator). */
export async function gpuSort(
  device: GpuDevice,
  tuning: Readonly<Record<string, number | boolean>>,
  label: string,
  keys: CheckedArray,
  values: CheckedArray | undefined,
  comp: Exclude<Comparator, { kind: 'host-only' }>,
): Promise<void> {
  const k = toDevice(device, keys);
  let v: ReturnType<typeof toDevice> | undefined;
  try {
    v = values ? toDevice(device, values) : undefined;
    const readBack = keys.kind === 'host' || values?.kind === 'host';
    const result =
      comp.kind === 'builtin'
        ? await radixSortDevice(device, k.array, v?.array, {
            descending: comp.descending,
            tuning,
            tuningName: 'radix-sort',
            label,
            readBack,
          })
        : await mergeSortDevice(device, k.array, v?.array, {
            comparator: comp.fn,
            tuning,
            tuningName: 'merge-sort',
            label,
            readBack,
          });
    if (keys.kind === 'host' && result.keys) copyInto(keys.array, result.keys);
    if (values?.kind === 'host' && result.values) copyInto(values.array, result.values);
  } finally {
    releaseTemps(k, v);
  }
}
