/**
 * transformReduce(policy, input, init, reduceOp, transformFn) and the binary form
 * transformReduce(policy, input1, input2, init, reduceOp, transformFn2): folds `reduceOp` over
 * `transformFn` of each element (or pair of elements), starting from `init`.
 *
 * Strategy: CPU: the policies' transform-reduce engine (one generated loop; par: per-chunk loops on
 * the worker pool). GPU: the transform-reduce engine with a load that applies the transform (bool
 * results count as u32 1/0); `init` is combined on the host.
 * Size tiers: n = 0 returns init at once; otherwise see the engine (one workgroup, multi-pass,
 * segmented beyond one storage binding).
 */
import {
  ArgumentError,
  coerce,
  combinerOf,
  describe,
  type GpuFunction,
  type HostArray,
  type NumericType,
} from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuTransformReduce, cpuTransformReduceCounting, cpuTransformReduceIndexed } from '../bricks/reduce';
import {
  type ArrayArg,
  type CheckedArray,
  checkArray,
  checkFunction,
  checkNumber,
  checkSameLength,
  identityReason,
  isArrayArg,
  paramCount,
  startValue,
} from '../common/args';
import { type Counting, isCounting } from '../common/counting';
import { checkBuiltinArgTypes, decodeScalar, resultTypeOf, valueFragment, valueTypeOf } from '../common/predicates';
import { isZip, type Zip } from '../common/zip';
import { transformReduceDevice } from '../engines/transform-reduce';
import { dispatch, type Pattern } from '../pattern/dispatch';
import { loadFragment, reducePattern } from './load';
import { zipTransformReducePattern } from './zip';

/** A function argument: a GpuFunction (built-in operator or lambda) or an arrow function. */
export type FunctionArg = GpuFunction | ((...args: number[]) => number | boolean) | object;

/**
 * The shared implementation of transformReduce and innerProduct: checked inputs, `init` (undefined:
 * the identity of `reduceOp` for the accumulator type), checked functions; `transformName` and
 * `inputNames` name arguments in errors.
 */
/**
 * The pattern of a transform-reduce over checked inputs (transformReduce, innerProduct): folds
 * `reduceOp` over `transformFn` of each element (or pair of elements) from `init` (default: the
 * operator's identity for the transform's result type).
 */
export function transformReducePattern(
  algorithm: string,
  input: readonly CheckedArray[] | Counting,
  init: number | undefined,
  reduceOp: GpuFunction,
  transformFn: GpuFunction,
  transformName: string,
  inputNames: readonly string[],
  indexed = false,
): Pattern<number> {
  // counting(n): no array; the transform takes the index (u32) and the GPU load computes from it.
  // `indexed`: an index lambda (x, i) => ... over one input.
  const counted = isCounting(input) ? input : undefined;
  const inputs = counted ? [] : (input as readonly CheckedArray[]);
  const arrayTypes = inputs.map((a) => a.type);
  const inTypes: NumericType[] = counted ? ['u32'] : indexed ? [...arrayTypes, 'u32'] : arrayTypes;
  checkBuiltinArgTypes(transformFn, inTypes, inputNames[1] ?? 'input2');
  const acc: NumericType = valueTypeOf(resultTypeOf(transformFn, inTypes, transformName));
  const start = startValue(reduceOp, acc, init);
  return reducePattern(
    inputs,
    {
      algorithm,
      functions: [
        { fn: transformFn, argTypes: inTypes },
        { fn: reduceOp, argTypes: [acc, acc] },
      ],
      gpuCheck: () => identityReason(reduceOp, acc),
      types: counted ? ['u32'] : undefined,
      empty: () => start,
      cpu: ({ backend, inputs: hosts }) =>
        counted
          ? cpuTransformReduceCounting(backend, counted.length, start, reduceOp, transformFn)
          : indexed
            ? cpuTransformReduceIndexed(backend, hosts[0] as HostArray, start, reduceOp, transformFn)
            : cpuTransformReduce(
                backend,
                hosts.length === 2 ? [hosts[0] as HostArray, hosts[1] as HostArray] : (hosts[0] as HostArray),
                start,
                reduceOp,
                transformFn,
              ),
      gpu: async ({ device, tuning, inputs: arrays }) => {
        const val = valueFragment(transformFn, inTypes, acc);
        const loadTypes = counted ? [] : arrayTypes;
        const args = [...loadTypes.map((_, k) => `x${k}`), ...(counted || indexed ? ['i'] : [])].join(', ');
        const bytes = await transformReduceDevice(device, {
          label: algorithm,
          inputs: arrays,
          n: counted?.length,
          load: loadFragment('load_tr', loadTypes, acc, `return ${val.name}(${args});`, [val], [val.name]),
          combiner: combinerOf(reduceOp, acc),
          commutative: reduceOp.commutative,
          tuning,
          tuningName: algorithm,
        });
        const f = reduceOp.js([acc, acc]) as (a: number, b: number) => number;
        return coerce(acc, f(start, decodeScalar(acc, bytes)));
      },
    },
    counted?.length,
  );
}

/**
 * Folds `reduceOp` over `transformFn(input[i])`, starting from `init`: oneDPL's transform_reduce.
 * `input` may be `counting(n)` (then `transformFn` gets the index i as u32; nothing is allocated),
 * and `transformFn` an index lambda `(x, i) => ...` over an array (i the element's index, u32).
 * The accumulator has the transform's result type (a bool result counts as u32 1/0); `init` is
 * converted to it. GPU runs need `reduceOp` to be associative with an identity; the order of
 * combination is unspecified (float results vary within rounding), unless `reduceOp` is not
 * commutative, in which case elements are combined in order.
 * `input` may also be `zip(a, b, ...)` (see `zip`): `transformFn` then takes one parameter per
 * zipped array (then optionally the index), and on the GPU `reduceOp` needs no identity.
 * @param transformFn a unary function of the element type
 */
export function transformReduce(
  policy: Policy,
  input: ArrayArg | Counting | Zip,
  init: number,
  reduceOp: FunctionArg,
  transformFn: FunctionArg,
): Promise<number>;
/**
 * Folds `reduceOp` over `transformFn2(input1[i], input2[i])`, starting from `init`: the binary form
 * of oneDPL's transform_reduce. `input2` must have the length of `input1`.
 */
export function transformReduce(
  policy: Policy,
  input1: ArrayArg,
  input2: ArrayArg,
  init: number,
  reduceOp: FunctionArg,
  transformFn2: FunctionArg,
): Promise<number>;
/**
 * transformReduce with a tuple accumulator (bounding boxes, min + max + sum in one pass): `init` is
 * an array of 1 to 4 numbers, `transformFn` returns a tuple of that length from each element (one
 * parameter per zipped array), `reduceOp` folds two tuples into one, `(a, b) => [Math.min(a[0],
 * b[0]), a[1] + b[1]]`. Each accumulator element has the type of transformFn's element (bool: u32);
 * `init` is converted to it. Folded in order on the CPU; on the GPU in an unspecified order (the
 * operator must be associative; it need not commute nor have an identity).
 * @returns the folded tuple as an array
 */
export function transformReduce(
  policy: Policy,
  input: ArrayArg | Zip,
  init: readonly number[],
  reduceOp: FunctionArg,
  transformFn: FunctionArg,
): Promise<number[]>;
export function transformReduce(policy: Policy, ...args: unknown[]): Promise<number | number[]> {
  // A tuple init (an array second, no sixth argument: the binary form's input2 is an array too).
  if (isZip(args[0]) || (Array.isArray(args[1]) && args[4] === undefined)) {
    return dispatch(policy, () => {
      if (args[4] !== undefined) {
        throw new ArgumentError('transformFn', 'the last argument', describe(args[4]));
      }
      return zipTransformReducePattern(args[0], args[1], args[2], args[3]);
    });
  }
  return dispatch(policy, (): Pattern<number> => {
    if (isArrayArg(args[1])) {
      const [input1, input2, init, reduceOp, transformFn2] = args;
      const a = checkArray(input1, 'input1');
      const b = checkArray(input2, 'input2');
      checkSameLength(a, b, 'input1', 'input2');
      const start = checkNumber(init, 'init');
      const r = checkFunction(reduceOp, 'reduceOp', 2);
      const t = checkFunction(transformFn2, 'transformFn2', 2);
      return transformReducePattern('transformReduce', [a, b], start, r, t, 'transformFn2', ['input1', 'input2']);
    }
    const [input, init, reduceOp, transformFn, extra] = args;
    // A fifth argument means the binary form, whose input2 (second) is not an array: say so.
    if (extra !== undefined) {
      throw new ArgumentError('input2', 'a Uint32Array, Int32Array, Float32Array or DeviceArray', describe(init));
    }
    const a = isCounting(input) ? input : [checkArray(input, 'input')];
    const start = checkNumber(init, 'init');
    const r = checkFunction(reduceOp, 'reduceOp', 2);
    // An index lambda (x, i) => ... over an array gets the element's index as a u32.
    const indexed = !isCounting(input) && paramCount(transformFn) === 2;
    const t = checkFunction(transformFn, 'transformFn', indexed ? 2 : 1);
    return transformReducePattern('transformReduce', a, start, r, t, 'transformFn', ['input'], indexed);
  });
}
