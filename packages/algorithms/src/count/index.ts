/**
 * count(policy, input, value) and countIf(policy, input, pred): the number of elements equal to
 * `value` (IEEE equality for f32: -0 equals +0, NaN equals nothing) or satisfying `pred`.
 *
 * Strategy: CPU: a counting loop (count) or the policies' count-if engine (countIf), seq or per
 * chunk on the worker pool. GPU: the transform-reduce engine with a load that turns each element
 * into u32 1/0 and plus (subgroupAdd, vec4 loads where aligned).
 * Size tiers: n = 0 returns 0 at once; otherwise see the engine.
 */
import { coerce, combinerOf, type HostArray, type NumericType, plus, wgslLiteral } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuCount } from '../bricks/count';
import { cpuCountIf } from '../bricks/reduce';
import { type ArrayArg, checkArray, checkFunction, checkNumber } from '../common/args';
import { decodeScalar, predicateFragment } from '../common/predicates';
import { transformReduceDevice } from '../engines/transform-reduce';
import { dispatch } from '../pattern/dispatch';
import type { FunctionArg } from '../transform-reduce/index';
import { loadFragment, reducePattern } from '../transform-reduce/load';

/**
 * The number of elements equal to `value`, converted to the element type first (u32/i32 wrap,
 * f32 rounding). f32 uses IEEE equality: -0 equals +0 and NaN equals nothing.
 */
export function count(policy: Policy, input: ArrayArg, value: number): Promise<number> {
  return dispatch(policy, () => {
    const a = checkArray(input, 'input');
    const t: NumericType = a.type;
    const v = coerce(t, checkNumber(value, 'value'));
    return reducePattern([a], {
      algorithm: 'count',
      empty: () => 0,
      cpu: ({ backend, inputs: [x] }) => cpuCount(backend, x as HostArray, v),
      gpu: async ({ device, tuning, inputs: arrays }) => {
        if (Number.isNaN(v)) return 0;
        const lit = wgslLiteral(t, v);
        const bytes = await transformReduceDevice(device, {
          label: 'count',
          inputs: arrays,
          load: loadFragment('load_count', [t], 'u32', `return select(0u, 1u, x0 == ${lit});`, [], [lit]),
          combiner: combinerOf(plus, 'u32'),
          commutative: true,
          tuning,
          tuningName: 'count',
        });
        return decodeScalar('u32', bytes);
      },
    });
  });
}

/**
 * The number of elements for which `pred` is truthy: a bool result, or a number that is non-zero
 * and not NaN (JS truthiness) on every backend.
 * @param pred a unary function of the element type
 */
export function countIf(policy: Policy, input: ArrayArg, pred: FunctionArg): Promise<number> {
  return dispatch(policy, () => {
    const a = checkArray(input, 'input');
    const p = checkFunction(pred, 'pred', 1);
    const t: NumericType = a.type;
    return reducePattern([a], {
      algorithm: 'countIf',
      functions: [{ fn: p, argTypes: [t] }],
      empty: () => 0,
      cpu: ({ backend, inputs: [x] }) => cpuCountIf(backend, x as HostArray, p),
      gpu: async ({ device, tuning, inputs: arrays }) => {
        const pf = predicateFragment(p, [t]);
        const bytes = await transformReduceDevice(device, {
          label: 'countIf',
          inputs: arrays,
          load: loadFragment('load_count_if', [t], 'u32', `return select(0u, 1u, ${pf.name}(x0));`, [pf], [pf.name]),
          combiner: combinerOf(plus, 'u32'),
          commutative: true,
          tuning,
          tuningName: 'countIf',
        });
        return decodeScalar('u32', bytes);
      },
    });
  });
}
