/**
 * findIf(policy, input, pred): the index of the first element for which `pred` is truthy, or -1.
 * Truthy: a bool result, or a number that is non-zero and not NaN (JS truthiness) on every backend.
 *
 * Strategy: CPU: the policies' find-first engine (seq stops at the first hit; par chunks on the
 * worker pool share the least index found so far and stop early). GPU: the transform-reduce engine
 * loading `pred(x) ? i : 0xffffffff` and folding with min over u32 (subgroupMin; vec4 loads where
 * aligned): one pass over the whole input, no early exit.
 * Size tiers: n = 0 returns -1 at once; otherwise see the engine.
 */
import { combinerOf, type GpuFunction, type HostArray, minimum, type NumericType } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuFindFirst } from '../bricks/find';
import { type ArrayArg, type CheckedArray, checkArray, checkFunction } from '../common/args';
import { decodeScalar, negatePredicate, predicateFragment } from '../common/predicates';
import { transformReduceDevice } from '../engines/transform-reduce';
import { dispatch, type Pattern } from '../pattern/dispatch';
import type { FunctionArg } from '../transform-reduce/index';
import { loadFragment, reducePattern } from '../transform-reduce/load';

/**
 * The first index where `pred` (negated when `negate`) holds, or -1; `algorithm` names the call.
 */
export function findFirstPattern(
  algorithm: string,
  input: CheckedArray,
  pred: GpuFunction,
  negate: boolean,
): Pattern<number> {
  const t: NumericType = input.type;
  return reducePattern([input], {
    algorithm,
    functions: [{ fn: pred, argTypes: [t] }],
    empty: () => -1,
    cpu: ({ backend, inputs: [x] }) => cpuFindFirst(backend, x as HostArray, negate ? negatePredicate(pred) : pred),
    gpu: async ({ device, tuning, inputs: arrays }) => {
      const pf = predicateFragment(pred, [t], negate);
      const bytes = await transformReduceDevice(device, {
        label: algorithm,
        inputs: arrays,
        load: loadFragment('load_find', [t], 'u32', `return select(0xffffffffu, i, ${pf.name}(x0));`, [pf], [pf.name]),
        combiner: combinerOf(minimum, 'u32'),
        commutative: true,
        tuning,
        tuningName: algorithm,
      });
      const i = decodeScalar('u32', bytes);
      return i === 0xffffffff ? -1 : i;
    },
  });
}

/**
 * The index of the first element of `input` for which `pred` is truthy, or -1 (oneDPL's find_if,
 * returning an index).
 * @param pred a unary function of the element type
 */
export function findIf(policy: Policy, input: ArrayArg, pred: FunctionArg): Promise<number> {
  return dispatch(policy, () =>
    findFirstPattern('findIf', checkArray(input, 'input'), checkFunction(pred, 'pred', 1), false),
  );
}
