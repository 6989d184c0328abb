/**
 * anyOf, allOf, noneOf: whether `pred` is truthy for some, every, or no element. Empty input:
 * anyOf false, allOf true, noneOf true. Truthy: a bool result, or a number that is non-zero and not
 * NaN (JS truthiness).
 *
 * Strategy: a find-first (see ../find-if): anyOf = a match exists, noneOf = none does, allOf = no
 * element fails `pred` (the negated predicate). CPU stops early on a hit; the GPU makes one pass.
 * Size tiers: n = 0 answers at once; otherwise see the transform-reduce engine.
 */
import type { Policy } from '@webdpl/policies';
import { type ArrayArg, checkArray, checkFunction } from '../common/args';
import { findFirstPattern } from '../find-if/index';
import { dispatch } from '../pattern/dispatch';
import type { FunctionArg } from '../transform-reduce/index';

function findFirst(policy: Policy, algorithm: string, input: ArrayArg, pred: FunctionArg, negate: boolean) {
  return dispatch(policy, () =>
    findFirstPattern(algorithm, checkArray(input, 'input'), checkFunction(pred, 'pred', 1), negate),
  );
}

/**
 * True when `pred` is truthy for at least one element (false for empty input).
 * @param pred a unary function of the element type
 */
export async function anyOf(policy: Policy, input: ArrayArg, pred: FunctionArg): Promise<boolean> {
  return (await findFirst(policy, 'anyOf', input, pred, false)) >= 0;
}

/**
 * True when `pred` is truthy for every element (true for empty input).
 * @param pred a unary function of the element type
 */
export async function allOf(policy: Policy, input: ArrayArg, pred: FunctionArg): Promise<boolean> {
  return (await findFirst(policy, 'allOf', input, pred, true)) < 0;
}

/**
 * True when `pred` is truthy for no element (true for empty input).
 * @param pred a unary function of the element type
 */
export async function noneOf(policy: Policy, input: ArrayArg, pred: FunctionArg): Promise<boolean> {
  return (await findFirst(policy, 'noneOf', input, pred, false)) < 0;
}
