/**
 * sortByKey with zipped values: `sortByKey(policy, keys, zip(v1, v2, ...), comp?)` sorts the keys
 * (stably) and applies the same permutation to every value array (Thrust's sort_by_key with a zip of
 * values). Composed of existing algorithms, no new kernel: the keys are sorted with the indices
 * 0..n-1 as values (iota), then each value array is gathered through that permutation into a
 * temporary and copied back. Each step runs on the policy's backend. On a device where the arrays
 * exceed one storage binding (the gather reads its input at any index, bound whole), the value
 * arrays are instead sorted one by one with a copy of the original keys (a stable sort applies the
 * same permutation every time), the last with the keys themselves: nothing needs one binding.
 */
import { ArgumentError, type DeviceArray, type HostArray } from '@webdpl/core';
import { checkPolicy, type Policy } from '@webdpl/policies';
import { type CheckedArray, checkArray } from '../common/args';
import { checkArrays, checkTogether, isZip, arrayLike as like, releaseLike, type Zip } from '../common/zip';
import { copy } from '../copy/index';
import { gather } from '../gather/index';
import { iota } from '../iota/index';
import { type ComparatorArg, checkComparator } from '../sort/comparator-arg';

/** A sort of keys with u32 values (sortByKey), the step the zip sorts are made of. */
type SortPairs = (
  policy: Policy,
  keys: HostArray | DeviceArray,
  values: HostArray | DeviceArray,
  comp?: ComparatorArg,
) => Promise<void>;

/**
 * Sorts `keys` in place, stably, permuting each array of the `values` zip alike.
 * @throws ArgumentError naming `keys`, `values[k]` (length, overlap) or `comp`, before any data moves
 */
export async function sortByKeyZip(
  policy: Policy,
  keysArg: unknown,
  valuesArg: unknown,
  sort: SortPairs,
  comp?: ComparatorArg,
): Promise<void> {
  checkPolicy(policy);
  const keys = checkArray(keysArg, 'keys');
  const values = checkArrays(valuesArg, 'values');
  checkTogether([[keys, 'keys'], ...values.map((v, k) => [v, `values[${k}]`] as const)]);
  if (keys.length === 0) return;
  const device =
    keys.kind === 'device' ? keys.array.device : policy.kind === 'device' ? await policy.resolve() : undefined;
  if (device && keys.length * 4 + 256 > device.limits.maxStorageBufferBindingSize) {
    const original = like(keys);
    const work = like(keys);
    try {
      await copy(policy, keys.array, original);
      for (const v of values.slice(0, -1)) {
        await copy(policy, original, work);
        await sort(policy, work, v.array, comp);
      }
      await sort(policy, keys.array, (values[values.length - 1] as CheckedArray).array, comp);
    } finally {
      releaseLike(original, work);
    }
    return;
  }
  const perm = like(keys, 'u32');
  try {
    await iota(policy, perm);
    // Checks `comp` before the keys move.
    await sort(policy, keys.array, perm, comp);
    for (const v of values) await permute(policy, perm, v);
  } finally {
    releaseLike(perm);
  }
}

/** Moves `a`'s elements into the order `perm` (a[i] = old a[perm[i]]): a gather into a temporary, copied back. */
async function permute(policy: Policy, perm: HostArray | DeviceArray, a: CheckedArray): Promise<void> {
  const t = like(a);
  try {
    await gather(policy, perm, a.array, t);
    await copy(policy, t, a.array);
  } finally {
    releaseLike(t);
  }
}

/**
 * Lexicographic sorts over zipped keys: `sort(policy, zip(k1, k2, ...), comp?)` and
 * `sortByKey(policy, zip(k1, ...), values | zip(v1, ...), comp?)` (Thrust's sorts over a zip of
 * keys). Tuples compare key by key, k1 first, each key by `comp` (less: TypedArray#sort's order;
 * greater: its reverse); stable. Least significant key first: the indices 0..n-1 are sorted stably
 * by the last key, then by each earlier key read through the permutation so far (a gather), then
 * every key and value array is gathered through the final permutation and copied back: K pair
 * sorts and K + A gathers and copies over the data, each on the policy's backend.
 * @throws ArgumentError naming the keys (`names.keys[k]`), `values` or `comp` before any data moves
 */
export async function sortZipKeys(
  policy: Policy,
  keysArg: Zip,
  valuesArg: unknown,
  sort: SortPairs,
  comp: ComparatorArg | undefined,
  names: { readonly keys: string },
): Promise<void> {
  checkPolicy(policy);
  const keys = checkArrays(keysArg, names.keys);
  const named: [CheckedArray, string][] = keys.map((k, i) => [k, `${names.keys}[${i}]`]);
  if (valuesArg !== undefined) {
    if (isZip(valuesArg)) {
      for (const [k, v] of checkArrays(valuesArg, 'values').entries()) named.push([v, `values[${k}]`]);
    } else named.push([checkArray(valuesArg, 'values'), 'values']);
  }
  checkTogether(named);
  const first = (named[0] as [CheckedArray, string])[0];
  const c = checkComparator(comp, 'comp');
  if (c.kind !== 'builtin') {
    throw new ArgumentError('comp', 'less or greater (zipped keys compare key by key)', 'a comparator function');
  }
  const n = first.length;
  if (n < 2) return;
  const perm = like(first, 'u32');
  try {
    await iota(policy, perm);
    for (let j = keys.length - 1; j >= 0; j--) {
      const key = keys[j] as CheckedArray;
      const kj = like(key);
      try {
        await gather(policy, perm, key.array, kj);
        await sort(policy, kj, perm, comp);
      } finally {
        releaseLike(kj);
      }
    }
    for (const [a] of named) await permute(policy, perm, a);
  } finally {
    releaseLike(perm);
  }
}
