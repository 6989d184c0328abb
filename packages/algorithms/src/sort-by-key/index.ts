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
import type { ComparatorArg } from '../sort/comparator-arg';
import { runSort } from '../sort/sort-call';

/**
 * Sorts `keys` in place, stably, permuting `values` alike.
 * @param comp default: less (ascending, -0 before +0, NaN last); greater; or `(a, b) => boolean`
 * @throws ArgumentError naming `keys`, `values` (length mismatch, same array) or `comp`
 */
export function sortByKey(policy: Policy, keys: ArrayArg, values: ArrayArg, comp?: ComparatorArg): Promise<void> {
  return runSort('sortByKey', policy, keys, values, comp, { keys: 'keys', values: 'values' });
}
