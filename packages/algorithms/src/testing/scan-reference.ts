/**
 * Reference loops and checks for the scan-scatter family (scans and compaction), deliberately simple.
 */
import { expect } from 'vitest';
import { floatTolerance } from './matrix';

export type Op = (a: number, b: number) => number;

/** Inclusive (or exclusive) scan of `data` with `op` from `init` (none: inclusive from data[0]). */
export function refScan(data: ArrayLike<number>, op: Op, init: number | undefined, exclusive: boolean): number[] {
  const out: number[] = new Array(data.length);
  let acc = init;
  for (let i = 0; i < data.length; i++) {
    const x = data[i] as number;
    if (exclusive) {
      out[i] = acc as number;
      acc = op(acc as number, x);
    } else {
      acc = acc === undefined ? x : op(acc, x);
      out[i] = acc;
    }
  }
  return out;
}

/**
 * Checks an f32 plus scan against exact (double) running sums: element i within floatTolerance of
 * the sum of magnitudes so far (the order of combination differs between backends).
 */
export function expectFloatSumScan(
  got: ArrayLike<number>,
  data: ArrayLike<number>,
  init: number,
  exclusive: boolean,
  label: string,
): void {
  let acc = init;
  let mag = Math.abs(init);
  for (let i = 0; i < data.length; i++) {
    const x = data[i] as number;
    if (!exclusive) {
      acc += x;
      mag += Math.abs(x);
    }
    const g = got[i] as number;
    if (!(Math.abs(g - acc) <= floatTolerance(i + 1, mag))) {
      expect.fail(`${label}: element ${i} is ${g}, expected ${acc} (tolerance ${floatTolerance(i + 1, mag)})`);
    }
    if (exclusive) {
      acc += x;
      mag += Math.abs(x);
    }
  }
}

/** Checks exact equality element by element, naming the first difference (fast on large arrays). */
export function expectSameArray(got: ArrayLike<number>, want: ArrayLike<number>, label: string): void {
  if (got.length !== want.length) expect.fail(`${label}: length ${got.length}, expected ${want.length}`);
  for (let i = 0; i < want.length; i++) {
    if (!Object.is(got[i], want[i]) && !(Number.isNaN(got[i] as number) && Number.isNaN(want[i] as number))) {
      expect.fail(`${label}: element ${i} is ${got[i]}, expected ${want[i]}`);
    }
  }
}

/** Kept elements of `data` in order, and the rejected ones in order. */
export function refSplit(data: ArrayLike<number>, keep: (x: number, i: number) => boolean): [number[], number[]] {
  const yes: number[] = [];
  const no: number[] = [];
  for (let i = 0; i < data.length; i++) (keep(data[i] as number, i) ? yes : no).push(data[i] as number);
  return [yes, no];
}

/** unique's keep rule: the first element, and every element !== its predecessor. */
export function uniqueKeep(data: ArrayLike<number>): (x: number, i: number) => boolean {
  return (x, i) => i === 0 || x !== data[i - 1];
}

/** Sorted copy (for comparing multisets, NaN last). */
export function sortedNumbers(xs: ArrayLike<number>): number[] {
  const negZero = (x: number) => (Object.is(x, -0) ? 0 : 1);
  return Array.from(xs).sort((a, b) => {
    if (Number.isNaN(a) || Number.isNaN(b)) return Number(Number.isNaN(a)) - Number(Number.isNaN(b));
    return a - b || negZero(a) - negZero(b);
  });
}
