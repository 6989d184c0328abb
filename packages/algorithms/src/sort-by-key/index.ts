/**
 * sortByKey(policy, keys, values, comp?): sorts `keys` in place, stably, and applies the same
 * permutation to `values` (same length; u32, i32 or f32; TypedArrays or DeviceArrays).
 *
 * Strategy: as sort (sort/index.ts) with the values moving along: GPU radix / merge engines carry a
 * value per key through every pass; the CPU radix sorts scatter key and value together. Pairs under
 * 256 elements on seq use the merge sort.
 */
import type { Policy } from '@webdpl/policies';
import type { ArrayArg } from '../common/args';
import { isZip, type Zip } from '../common/zip';
import type { ComparatorArg } from '../sort/comparator-arg';
import { runSort } from '../sort/sort-call';
import { sortByKeyZip, sortZipKeys } from './zip';

/**
 * Sorts `keys` in place, stably, permuting `values` alike. `values` may be `zip(v1, v2, ...)`:
 * every array of the zip follows the keys (sorted with their indices, then each array gathered
 * through the permutation). `keys` may be `zip(k1, k2, ...)`: a lexicographic sort, k1 first (each
 * key by `comp`, less or greater), every key array permuted too.
 * @param comp default: less (ascending, -0 before +0, NaN last); greater; or `(a, b) => boolean`
 *   (not over zipped keys)
 * @throws ArgumentError naming `keys`, `values` (length mismatch, same array) or `comp`
 */
export function sortByKey(
  policy: Policy,
  keys: ArrayArg | Zip,
  values: ArrayArg | Zip,
  comp?: ComparatorArg,
): Promise<void> {
  if (isZip(keys)) return sortZipKeys(policy, keys, values, sortByKey, comp, { keys: 'keys' });
  if (isZip(values)) return sortByKeyZip(policy, keys, values, sortByKey, comp);
  return runSort('sortByKey', policy, keys, values, comp, { keys: 'keys', values: 'values' });
}
