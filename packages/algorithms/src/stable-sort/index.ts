/**
 * stableSort(policy, data, comp?): sorts `data` in place keeping equal elements in their input
 * order. Every sort path of webdpl is stable (LSD radix sorts and merge sorts), so this is sort()
 * under its oneDPL name; see sort/index.ts for the strategy and size tiers.
 */
import type { Policy } from '@webdpl/policies';
import type { ArrayArg } from '../common/args';
import { isZip, type Zip } from '../common/zip';
import type { ComparatorArg } from '../sort/comparator-arg';
import { runSort } from '../sort/sort-call';
import { sortByKey } from '../sort-by-key/index';
import { sortZipKeys } from '../sort-by-key/zip';

/**
 * Sorts `data` in place, stably; a zip of keys lexicographically (see sort).
 * @param comp default: less (ascending, -0 before +0, NaN last); greater; or `(a, b) => boolean`
 * @throws ArgumentError naming `data` or `comp` (the data is untouched)
 */
export function stableSort(policy: Policy, data: ArrayArg | Zip, comp?: ComparatorArg): Promise<void> {
  if (isZip(data)) return sortZipKeys(policy, data, undefined, sortByKey, comp, { keys: 'data' });
  return runSort('stableSort', policy, data, undefined, comp, { keys: 'data' });
}
