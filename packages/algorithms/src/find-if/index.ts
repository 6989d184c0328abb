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
import {
  combinerOf,
  type DeviceArray,
  type GpuFunction,
  type HostArray,
  minimum,
  type NumericType,
} from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuFindFirst } from '../bricks/find';
import { type ArrayArg, type CheckedArray, checkArray, checkFunction } from '../common/args';
import { decodeScalar, negatePredicate, predicateFragment } from '../common/predicates';
import { transformReduceDevice } from '../engines/transform-reduce';
import { dispatch, type Pattern } from '../pattern/dispatch';
import type { FunctionArg } from '../transform-reduce/index';
import { loadFragment } from '../transform-reduce/load';

/** The elements a find-first tests: one array, a pair of arrays, or adjacent pairs of one array. */
export type FindInput = CheckedArray | readonly [CheckedArray, CheckedArray] | { readonly adjacent: CheckedArray };

/**
 * The first index where `pred` (negated when `negate`) holds, or -1; `algorithm` names the call.
 * With two inputs (of equal length) `pred` is binary: pred(input[0][i], input[1][i]); with
 * `{ adjacent: a }` it is binary over neighbours: pred(a[i], a[i + 1]) for i < a.length - 1 (one
 * upload of `a`, two views of it on the GPU).
 */
export function findFirstPattern(
  algorithm: string,
  input: FindInput,
  pred: GpuFunction,
  negate: boolean,
): Pattern<number> {
  const adjacent = 'adjacent' in input ? input.adjacent : undefined;
  const inputs: readonly CheckedArray[] = adjacent
    ? [adjacent]
    : Array.isArray(input)
      ? input
      : [input as CheckedArray];
  const types: NumericType[] = adjacent ? [adjacent.type, adjacent.type] : inputs.map((a) => a.type);
  const n = adjacent ? Math.max(0, adjacent.length - 1) : (inputs[0] as CheckedArray).length;
  return {
    algorithm,
    engine: 'transform-reduce',
    n,
    inputs,
    functions: [{ fn: pred, argTypes: types }],
    empty: () => -1,
    cpu: ({ backend, inputs: [x, x2] }) => {
      const h = x as HostArray;
      const what: HostArray | [HostArray, HostArray] = adjacent
        ? [h.subarray(0, n), h.subarray(1, n + 1)]
        : x2
          ? [h, x2 as HostArray]
          : h;
      return cpuFindFirst(backend, what, negate ? negatePredicate(pred) : pred);
    },
    gpu: async ({ device, tuning, inputs: arrays }) => {
      const pf = predicateFragment(pred, types, negate);
      const a0 = arrays[0] as DeviceArray;
      const bytes = await transformReduceDevice(device, {
        label: algorithm,
        inputs: adjacent ? [a0.view(0, n), a0.view(1, n)] : arrays,
        load: loadFragment(
          'load_find',
          types,
          'u32',
          `return select(0xffffffffu, i, ${pf.name}(${types.map((_, k) => `x${k}`).join(', ')}));`,
          [pf],
          [pf.name],
        ),
        combiner: combinerOf(minimum, 'u32'),
        commutative: true,
        tuning,
        tuningName: algorithm,
      });
      const i = decodeScalar('u32', bytes);
      return i === 0xffffffff ? -1 : i;
    },
  };
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
