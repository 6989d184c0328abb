/**
 * The one implementation behind sort, stableSort and sortByKey: argument checks, backend selection,
 * and the dispatch to the CPU sorts (bricks/sort) or the GPU engines (gpu.ts). Every path is stable.
 */
import { ArgumentError, type NumericType } from '@webdpl/core';
import { assertNever, type Policy, selectBackend } from '@webdpl/policies';
import { cpuSort } from '../bricks/sort';
import {
  type ArrayArg,
  type CheckedArray,
  checkArray,
  checkNoAlias,
  checkSameLength,
  deviceArraysOf,
  hostArrayOf,
} from '../common/args';
import { checkComparator, checkComparatorType, cpuComparator } from './comparator-arg';
import { gpuSort } from './gpu';

/** Sorts `keysArg` (and `valuesArg` along, for sortByKey) by `comp`. */
export async function runSort(
  algorithm: 'sort' | 'stableSort' | 'sortByKey',
  policy: Policy,
  keysArg: ArrayArg,
  valuesArg: ArrayArg | undefined,
  comp: unknown,
  names: { readonly keys: string; readonly values?: string },
): Promise<void> {
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
  const backend = await selectBackend(policy, {
    algorithm,
    engine: c.kind === 'builtin' ? 'radix-sort' : 'merge-sort',
    types: values ? [t, values.type] : [t],
    functions: c.kind === 'gpu' ? [{ fn: c.fn, argTypes: [t, t] }] : [],
    deviceArrays: deviceArraysOf(keys, values),
    gpuCheck: c.kind === 'host-only' ? () => `the comparator cannot run on the GPU: ${c.why}` : undefined,
  });
  if (keys.length < 2) return;
  switch (backend.kind) {
    case 'seq':
    case 'par': {
      const k = hostArrayOf(keys);
      const v = values ? hostArrayOf(values) : undefined;
      await cpuSort(backend, k, v, t, cpuComparator(c, t));
      return;
    }
    case 'gpu': {
      if (c.kind === 'host-only') throw new ArgumentError('comp', 'a comparator the GPU can run', c.why);
      await gpuSort(backend.device, backend.tuning, algorithm, keys, values, c);
      return;
    }
    default:
      return assertNever(backend);
  }
}
