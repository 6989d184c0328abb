/**
 * transform(policy, input, output, fn) and transform(policy, input1, input2, output, fn):
 * output[i] = fn(input[i]) or fn(input1[i], input2[i]) for i < n (the inputs' length).
 * The output's element type must be fn's result type (a bool result may go to any type, as 1/0) and
 * it needs at least n elements; it may be one of the inputs (in place) but must not otherwise
 * overlap them.
 *
 * Strategy: CPU: the policies' transform engine (one generated loop; par: per-chunk loops on the
 * worker pool). GPU: the map engine (vec4 loads and stores where every array is 16-byte aligned,
 * several per thread, no bounds checks on full tiles). Host arrays are uploaded and the output read
 * back in the same command buffer; DeviceArrays stay on the device, so calls chain.
 * Size tiers: n = 0 returns at once; otherwise see the map engine (vec4 + scalar tail, or scalar;
 * segmented beyond one storage binding).
 */
import { ArgumentError, describe, type GpuFunction, type HostArray, type NumericType } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuTransform, cpuTransformIndex } from '../bricks/transform';
import {
  type ArrayArg,
  type CheckedArray,
  checkArray,
  checkFunction,
  checkOutput,
  checkSameLength,
  isArrayArg,
  paramCount,
} from '../common/args';
import { type Counting, isCounting } from '../common/counting';
import { checkInPlaceOrDisjoint } from '../common/overlap';
import { checkBuiltinArgTypes, resultTypeOf } from '../common/predicates';
import { isZip, type Zip } from '../common/zip';
import { functionElement, indexFunctionElement } from '../engines/map/elements';
import { mapPattern } from '../engines/map/pattern';
import { dispatch } from '../pattern/dispatch';
import type { FunctionArg } from '../transform-reduce/index';
import { zipTransformPattern } from './zip';

/** transform over checked inputs, with `names` of the inputs for errors. */
function transformPattern(inputs: CheckedArray[], names: readonly string[], outputArg: unknown, fn: GpuFunction) {
  const inTypes: NumericType[] = [];
  for (const a of inputs) inTypes.push(a.type);
  checkBuiltinArgTypes(fn, inTypes, names[1] ?? 'input2');
  const r = resultTypeOf(fn, inTypes, 'fn');
  const n = (inputs[0] as CheckedArray).length;
  const output = checkOutput(outputArg, 'output', n, r === 'bool' ? undefined : r);
  for (let k = 0; k < inputs.length; k++) {
    checkInPlaceOrDisjoint(inputs[k] as CheckedArray, output, names[k] as string, 'output');
  }
  return mapPattern({
    algorithm: 'transform',
    n,
    inputs,
    output,
    functions: [{ fn, argTypes: inTypes }],
    elem: () => functionElement(fn, inTypes, output.type),
    cpu: ({ backend, inputs: hosts, outputs: [out] }) =>
      cpuTransform(
        backend,
        hosts.length === 2 ? [hosts[0] as HostArray, hosts[1] as HostArray] : (hosts[0] as HostArray),
        out as HostArray,
        fn,
      ),
  });
}

/**
 * An index transform: `fn(input[i], i)` for an index lambda `(x, i) => ...` over an input, or
 * `fn(i)` over `counting(n)`; the index is a u32 argument.
 */
function indexPattern(input: CheckedArray | Counting, outputArg: unknown, fn: GpuFunction) {
  const array = isCounting(input) ? undefined : input;
  const inTypes = array ? [array.type] : [];
  const argTypes: NumericType[] = [...inTypes, 'u32'];
  const r = resultTypeOf(fn, argTypes, 'fn');
  const n = input.length;
  const output = checkOutput(outputArg, 'output', n, r === 'bool' ? undefined : r);
  if (array) checkInPlaceOrDisjoint(array, output, 'input', 'output');
  return mapPattern({
    algorithm: 'transform',
    n,
    inputs: array ? [array] : [],
    output,
    functions: [{ fn, argTypes }],
    elem: () => indexFunctionElement(fn, inTypes, output.type),
    cpu: ({ backend, inputs: hosts, outputs: [out] }) => cpuTransformIndex(backend, hosts[0], n, out as HostArray, fn),
  });
}

/**
 * Writes `fn(input[i])` to `output[i]` for every i < input.length; with an index lambda
 * `(x, i) => ...`, `fn(input[i], i)` (i a u32); over `counting(n)`, `fn(i)`.
 * @param input an array, or `counting(n)` (then fn takes the index)
 * @param output at least input.length elements of fn's result type (a bool result may go to any
 * type, as 1/0); may be the input itself
 */
export function transform(policy: Policy, input: ArrayArg | Counting, output: ArrayArg, fn: FunctionArg): Promise<void>;
/**
 * transform over zipped arrays (see `zip`): `fn` takes one parameter per zipped input array
 * (`(x, y, z) => ...`, then optionally the element's index as u32), and into a zip of outputs returns
 * a tuple `[a, b, ...]` with one element per output array, each of that output's element type (a
 * bool goes to any type as 1/0). Every output needs at least input.length elements; an output may be
 * one of the inputs (in place) but must not otherwise overlap an input or another output.
 */
export function transform(
  policy: Policy,
  input: ArrayArg | Zip,
  output: ArrayArg | Zip,
  fn: FunctionArg,
): Promise<void>;
/**
 * Writes `fn(input1[i], input2[i])` to `output[i]` for every i < input1.length (oneDPL's binary
 * transform). `input2` must have the length of `input1`.
 * @param output at least input1.length elements of fn's result type; may be one of the inputs
 * @param fn a binary function of the two element types
 */
export function transform(
  policy: Policy,
  input1: ArrayArg,
  input2: ArrayArg,
  output: ArrayArg,
  fn: FunctionArg,
): Promise<void>;
export function transform(policy: Policy, ...args: unknown[]): Promise<void> {
  return dispatch(policy, () => {
    if (isZip(args[0]) || isZip(args[1])) {
      if (args[3] !== undefined) {
        throw new ArgumentError('fn', 'the last argument: transform(policy, input, output, fn)', describe(args[3]));
      }
      return zipTransformPattern(args[0], args[1], args[2]);
    }
    if (isArrayArg(args[2])) {
      const [input1, input2, output, fn] = args;
      const a = checkArray(input1, 'input1');
      const b = checkArray(input2, 'input2');
      checkSameLength(a, b, 'input1', 'input2');
      const f = checkFunction(fn, 'fn', 2);
      return transformPattern([a, b], ['input1', 'input2'], output, f);
    }
    const [input, output, fn, extra] = args;
    // A fourth argument means the binary form, whose output (third) is not an array: say so rather
    // than run the unary form into the second input.
    if (extra !== undefined) {
      throw new ArgumentError('output', 'a Uint32Array, Int32Array, Float32Array or DeviceArray', describe(output));
    }
    if (isCounting(input)) return indexPattern(input, output, checkFunction(fn, 'fn', 1));
    const a = checkArray(input, 'input');
    if (paramCount(fn) === 2) return indexPattern(a, output, checkFunction(fn, 'fn', 2));
    const f = checkFunction(fn, 'fn', 1);
    return transformPattern([a], ['input'], output, f);
  });
}
