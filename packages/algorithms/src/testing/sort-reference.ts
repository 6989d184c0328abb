/** The sort order every webdpl sort follows, as a reference for tests and benchmark checks. */

export type SortKeys = Uint32Array | Int32Array | Float32Array;

/**
 * TypedArray#sort's order (numbers ascending, -0 before +0, NaN last); descending reverses the
 * numbers and keeps NaN last. Returns a sorted copy.
 */
export function sortReference(keys: SortKeys, descending: boolean): SortKeys {
  const s = keys.slice().sort();
  if (!descending) return s;
  let end = s.length;
  while (end > 0 && Number.isNaN(s[end - 1] as number)) end--;
  s.subarray(0, end).reverse();
  return s;
}
