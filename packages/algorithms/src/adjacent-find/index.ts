/**
 * adjacentFind(policy, input, pred?): the first index i with pred(input[i], input[i + 1]) truthy
 * (default `===`: IEEE equality, so -0 and +0 match and NaN matches nothing), or -1 when there is
 * none (oneDPL's adjacent_find returns `last` then; webdpl's find family returns -1).
 *
 * Strategy: a find-first over neighbouring pairs (../find-if, `{ adjacent }`): CPU over two
 * overlapping subarrays, stopping at the first hit (par: chunks on the pool sharing the least index
 * found); GPU: the transform-reduce engine over two views of one device copy, offset by one element
 * (unaligned, so the strided path runs), folding the index with min.
 * Size tiers: fewer than 2 elements answer -1 at once; otherwise see the transform-reduce engine.
 */
import { type GpuFunction, lambda } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { type ArrayArg, checkArray, checkFunction } from '../common/args';
import { resultTypeOf } from '../common/predicates';
import { findFirstPattern } from '../find-if/index';
import { dispatch } from '../pattern/dispatch';
import type { FunctionArg } from '../transform-reduce/index';

let same: GpuFunction | undefined;

/**
 * The index of the first element equal to its successor under `pred`, or -1.
 * @param pred a binary function of the element type, truthy for a match. @default `(a, b) => a === b`
 * @throws ArgumentError naming `input` or `pred`
 */
export function adjacentFind(policy: Policy, input: ArrayArg, pred?: FunctionArg): Promise<number> {
  return dispatch(policy, () => {
    const a = checkArray(input, 'input');
    let fn: GpuFunction;
    if (pred === undefined) {
      same ??= lambda((x: number, y: number) => x === y);
      fn = same;
    } else {
      fn = checkFunction(pred, 'pred', 2);
      resultTypeOf(fn, [a.type, a.type], 'pred');
    }
    return findFirstPattern('adjacentFind', { adjacent: a }, fn, false);
  });
}
