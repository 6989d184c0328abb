/**
 * The one implementation behind sort, stableSort and sortByKey: argument checks and the pattern
 * that dispatch runs on the CPU sorts (bricks/sort) or the GPU engines (gpu.ts). Every path is stable.
 */
import { ArgumentError, type DeviceArray, type GpuDevice, type HostArray, type NumericType } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuSort } from '../bricks/sort';
import { type ArrayArg, type CheckedArray, checkArray, checkNoAlias, checkSameLength } from '../common/args';
import { bindingAlignment } from '../common/segments';
import { dispatch } from '../pattern/dispatch';
import { type Comparator, checkComparator, checkComparatorType, cpuComparator } from './comparator-arg';
import { gpuSort } from './gpu';

/**
 * Why a sort of `n` keys by `c` cannot run on a device, if it cannot. Without `segments` (the
 * selection family's engines): the keys must fit one storage binding. With it (the sorts): beyond one
 * binding they run in segments (segmented.ts) up to the device's maxBufferSize, but not when
 * recorded into a caller's command encoder (`segments.recording`: the merges read splits back).
 */
export function sortGpuCheck(
  c: Comparator,
  n: number,
  segments?: { readonly recording: boolean },
): (device: GpuDevice) => string | undefined {
  return (device) => {
    if (c.kind === 'host-only') return `the comparator cannot run on the GPU: ${c.why}`;
    const limit = device.limits.maxStorageBufferBindingSize;
    if (n * 4 <= limit) return undefined;
    const beyond = `${n} keys exceed one storage binding (${limit} bytes)`;
    if (!segments) return beyond;
    if (segments.recording) {
      return `${beyond}: sorting them in segments reads merge split points back, which a call recorded into a command encoder cannot`;
    }
    // The merges ping-pong with a scratch buffer of n keys.
    if (n * 4 > device.limits.maxBufferSize) {
      return `${n} keys exceed the device's largest buffer (${device.limits.maxBufferSize} bytes)`;
    }
    if (limit < 2 * bindingAlignment(device)) return `${beyond}, too small to sort in segments`;
    return undefined;
  };
}

/** Sorts `keysArg` (and `valuesArg` along, for sortByKey) by `comp`. */
export function runSort(
  algorithm: 'sort' | 'stableSort' | 'sortByKey',
  policy: Policy,
  keysArg: ArrayArg,
  valuesArg: ArrayArg | undefined,
  comp: unknown,
  names: { readonly keys: string; readonly values?: string },
): Promise<void> {
  // A device policy recording into the caller's encoder (checked by dispatch itself).
  const recording =
    typeof policy === 'object' && policy !== null && (policy as { encoder?: unknown }).encoder !== undefined;
  return dispatch(policy, () => {
    const keys = checkArray(keysArg, names.keys);
    let values: CheckedArray | undefined;
    if (valuesArg !== undefined || names.values) {
      const vName = names.values ?? 'values';
      if (valuesArg === undefined) throw new ArgumentError(vName, 'an array of values (one per key)', 'undefined');
      values = checkArray(valuesArg, vName);
      checkSameLength(keys, values, names.keys, vName);
      checkNoAlias(keys, values, names.keys, vName);
    }
    const c = checkComparator(comp, 'comp');
    const t: NumericType = keys.type;
    checkComparatorType(c, t, 'comp');
    return {
      algorithm,
      engine: c.kind === 'builtin' ? 'radix-sort' : 'merge-sort',
      // Nothing to sort below 2 elements.
      n: keys.length < 2 ? 0 : keys.length,
      // Sorted in place: host arrays are uploaded, sorted on the device and delivered back.
      outputs: values
        ? [
            { arg: keys, upload: true },
            { arg: values, upload: true },
          ]
        : [{ arg: keys, upload: true }],
      functions: c.kind === 'gpu' ? [{ fn: c.fn, argTypes: [t, t] }] : [],
      gpuCheck: sortGpuCheck(c, keys.length, { recording }),
      empty: () => undefined,
      recordable: true,
      cpu: ({ backend, outputs: [k, v] }) => cpuSort(backend, k as HostArray, v, t, cpuComparator(c, t)),
      gpu: async ({ device, tuning, outputs: [k, v], readBack, deliver }) => {
        if (c.kind === 'host-only') throw new ArgumentError('comp', 'a comparator the GPU can run', c.why);
        const n = keys.length;
        const r = await gpuSort(device, tuning, algorithm, k as DeviceArray, v, c, readBack(0) || readBack(1));
        deliver(0, r.keys, n);
        deliver(1, r.values, n);
      },
    };
  });
}
