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
 * (segmented.ts), up to maxBufferSize.
 */
import type { Policy } from '@webdpl/policies';
import type { ArrayArg } from '../common/args';
import type { ComparatorArg } from './comparator-arg';
import { runSort } from './sort-call';

export type { Comparator, ComparatorArg } from './comparator-arg';
export type { BuiltinComparator } from './comparators';
export { greater, less } from './comparators';

/**
 * Sorts `data` in place.
 * @param comp default: less (ascending, -0 before +0, NaN last); greater; or `(a, b) => boolean`
 * @throws ArgumentError naming `data` or `comp` (the data is untouched)
 */
export function sort(policy: Policy, data: ArrayArg, comp?: ComparatorArg): Promise<void> {
  return runSort('sort', policy, data, undefined, comp, { keys: 'data' });
}
