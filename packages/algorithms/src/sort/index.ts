/**
 * sort(policy, data, comp?): sorts `data` in place (a TypedArray: uploaded, sorted and copied back
 * on GPU policies; a DeviceArray: sorted on its device), in TypedArray#sort order by default
 * (`less`: -0 before +0, NaN last) or by `greater` or a user comparator `(a, b) => boolean`.
 * Every path is stable, so sort and stableSort are the same call.
 *
 * Strategy: built-in orders: GPU: the OneSweep radix-sort engine; CPU: TypedArray#sort (seq, under
 * 2^12 keys), a single-thread LSD radix sort (seq), the parallel LSD radix sort on the worker pool
 * (par, from 2^17 keys). User comparators: GPU: the merge-sort engine; CPU: a stable merge sort
 * (par: chunk sorts and split merges on the pool).
 * Size tiers: n < 2 returns at once; the engines add one-workgroup and multi-pass tiers; beyond one
 * storage binding (GPU): segments of one binding sorted by the engine, then windowed pairwise merges
 * (segmented.ts), up to maxBufferSize. A zip of keys: sort-by-key/zip.ts (`sortZipKeys`).
 */
import type { Policy } from '@webdpl/policies';
import type { ArrayArg } from '../common/args';
import { isZip, type Zip } from '../common/zip';
import { sortByKey } from '../sort-by-key/index';
import { sortZipKeys } from '../sort-by-key/zip';
import type { ComparatorArg } from './comparator-arg';
import { runSort } from './sort-call';

export type { Comparator, ComparatorArg } from './comparator-arg';
export type { BuiltinComparator } from './comparators';
export { greater, less } from './comparators';

/**
 * Sorts `data` in place. `data` may be `zip(k1, k2, ...)`: the tuples sort lexicographically, k1
 * first (each key by `comp`: less or greater), stably, every array permuted alike.
 * @param comp default: less (ascending, -0 before +0, NaN last); greater; or `(a, b) => boolean`
 *   (not over a zip)
 * @throws ArgumentError naming `data` (`data[k]` in a zip) or `comp` (the data is untouched)
 */
export function sort(policy: Policy, data: ArrayArg | Zip, comp?: ComparatorArg): Promise<void> {
  if (isZip(data)) return sortZipKeys(policy, data, undefined, sortByKey, comp, { keys: 'data' });
  return runSort('sort', policy, data, undefined, comp, { keys: 'data' });
}
