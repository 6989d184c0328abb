/** The reference loops of the by-key tests (deliberately simple). */

/** The reference reduceByKey (op) or uniqueByKey (no op): first key and fold (or first value) of each run. */
export function refRuns(
  keys: ArrayLike<number>,
  values: ArrayLike<number>,
  op: ((a: number, b: number) => number) | undefined,
  eq: (a: number, b: number) => boolean,
): { keys: number[]; values: number[] } {
  const ks: number[] = [];
  const vs: number[] = [];
  for (let i = 0; i < keys.length; i++) {
    const v = values[i] as number;
    if (i === 0 || !eq(keys[i - 1] as number, keys[i] as number)) {
      ks.push(keys[i] as number);
      vs.push(v);
    } else if (op) vs[vs.length - 1] = op(vs[vs.length - 1] as number, v);
  }
  return { keys: ks, values: vs };
}
