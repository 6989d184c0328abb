/**
 * partition, stablePartition and unique over zipped arrays, in place: every array's element i moves
 * together. `partition(policy, zip(a, b), (x, y) => ...)` puts the elements whose predicate holds
 * first (stably, both groups in input order, for partition too) and returns their number;
 * `unique(policy, zip(a, b))` removes consecutive duplicate tuples (equal when every array's
 * elements are `===`: NaNs never equal, +0 equals -0) and returns the new length.
 *
 * Strategy: no new kernel. partition is a pattern of its own (`zipPartitionPattern` in zip.ts): on
 * the CPU two compaction loops (the kept, the others) into temporaries copied back; on the GPU one
 * compaction of the scan engine for zips of 2 or 3 arrays (the predicate over every array, a
 * 'scatter' write with the rejected written from the end into one temporary per array, which the
 * finish kernel copies back in input order in the same submission), else the predicate's flags and
 * one stencil partition per array (K + 1 passes). unique is composed of public algorithms on the
 * policy's backend: per array the "differs from the previous element" flags (a binary transform of
 * the array and itself shifted by one), OR-ed together, then per array a stencil copyIf into a
 * temporary and the kept prefix copied back.
 */
import type { DeviceArray, HostArray } from '@webdpl/core';
import { checkPolicy } from '@webdpl/policies';
import type { CheckedArray } from '../common/args';
import { arrayLike, checkArrays, checkTogether, partOf, releaseLike, type Zip } from '../common/zip';
import { copy } from '../copy/index';
import { fill } from '../fill/index';
import { dispatch } from '../pattern/dispatch';
import { reduce } from '../reduce/index';
import { transform } from '../transform/index';
import { copyIf } from './index';
import { zipPartitionPattern } from './zip';

/** The zip's arrays, checked: one length, no two overlapping. */
function zipArrays(dataArg: Zip): CheckedArray[] {
  const arrays = checkArrays(dataArg, 'data');
  checkTogether(arrays.map((a, k) => [a, `data[${k}]`] as const));
  return arrays;
}

/** partition / stablePartition of a zip by `pred` (one parameter per array, then the index): see the file comment. */
export function zipPartition(policyArg: unknown, dataArg: Zip, predArg: unknown): Promise<number> {
  return dispatch(policyArg, () => zipPartitionPattern(dataArg, predArg));
}

const DIFFERS = (x: number, y: number) => x !== y;
const EITHER = (p: number, q: number) => p | q;

/** unique of a zip: see the file comment. */
export async function zipUnique(policyArg: unknown, dataArg: Zip): Promise<number> {
  const policy = checkPolicy(policyArg);
  const arrays = zipArrays(dataArg);
  const first = arrays[0] as CheckedArray;
  const n = first.length;
  if (n < 2) return n;
  const heads = arrayLike(first, 'u32');
  const temps: (HostArray | DeviceArray)[] = [heads];
  try {
    await fill(policy, partOf(heads, 0, 1), 1);
    const rest = partOf(heads, 1, n - 1);
    for (const [k, a] of arrays.entries()) {
      const next = partOf(a.array, 1, n - 1);
      const prev = partOf(a.array, 0, n - 1);
      if (k === 0) {
        await transform(policy, next, prev, rest, DIFFERS);
        continue;
      }
      const d = arrayLike(first, 'u32');
      temps.push(d);
      const dRest = partOf(d, 1, n - 1);
      await transform(policy, next, prev, dRest, DIFFERS);
      await transform(policy, rest, dRest, rest, EITHER);
    }
    const count = await reduce(policy, heads);
    for (const a of arrays) {
      const t = arrayLike(a);
      temps.push(t);
      await copyIf(policy, a.array, heads, t);
      await copy(policy, partOf(t, 0, count), partOf(a.array, 0, count));
    }
    return count;
  } finally {
    releaseLike(...temps);
  }
}
