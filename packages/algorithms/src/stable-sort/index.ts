/**
 * stableSort(policy, data, comp?): sorts `data` in place keeping equal elements in their input
 * order. Every sort path of webdpl is stable (LSD radix sorts and merge sorts), so this is sort()
 * under its oneDPL name; see sort/index.ts for the strategy and size tiers.
 */
import type { Policy } from '@webdpl/policies';
import type { ArrayArg } from '../common/args';
import type { ComparatorArg } from '../sort/comparator-arg';
import { runSort } from '../sort/sort-call';

/**
 * Sorts `data` in place, stably.
 * @param comp default: less (ascending, -0 before +0, NaN last); greater; or `(a, b) => boolean`
 * @throws ArgumentError naming `data` or `comp` (the data is untouched)
 */
export function stableSort(policy: Policy, data: ArrayArg, comp?: ComparatorArg): Promise<void> {
  return runSort('stableSort', policy, data, undefined, comp, { keys: 'data' });
}
