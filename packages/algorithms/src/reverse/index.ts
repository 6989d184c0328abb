/**
 * reverse(policy, input, output?) and rotate(policy, input, middle, output?): permuting copies.
 * reverse: output[i] = input[n - 1 - i]. rotate: the element at `middle` becomes the first,
 * output = input[middle..n) followed by input[0..middle) (std::rotate), returning n - middle, the new
 * index of the first element. Without an output both work in place; with one the input is left as
 * it is (std::reverse_copy / std::rotate_copy), and the output (at least n elements of the input's
 * type) must be the input itself or not overlap it.
 *
 * Strategy: CPU: TypedArray#reverse / #set / #copyWithin (memory speed on one core; par runs them
 * on the calling thread, as copy does for plain arrays). GPU: reverse is one kernel moving element
 * bits from the mirrored index (coalesced reads and writes; segments of the output beyond one
 * storage binding, each reading the mirrored segment of the input); rotate is two buffer copies.
 * An output in the input's GPU buffer reads from a copy of the input.
 * Size tiers: n = 0 returns at once; otherwise one submission.
 */
import type { DeviceArray, HostArray } from '@webdpl/core';
import { ArgumentError, describe } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { type ArrayArg, type CheckedArray, checkArray, checkOutput } from '../common/args';
import { checkInPlaceOrDisjoint } from '../common/overlap';
import { dispatch, type GpuCall, type Pattern } from '../pattern/dispatch';
import { gpuReverse, gpuRotate } from './gpu';

export { reverseTuning } from './tuning';

/** A permuting copy of `a` into `output` (or in place), with its CPU and GPU parts. */
function permutePattern(
  algorithm: string,
  a: CheckedArray,
  output: ArrayArg | undefined,
  cpu: (x: HostArray, y: HostArray, n: number) => void,
  gpu: (call: GpuCall, x: DeviceArray, y: DeviceArray, n: number) => Promise<void>,
): Pattern<void> {
  const n = a.length;
  let out = a;
  if (output !== undefined) {
    out = checkOutput(output, 'output', n, a.type);
    checkInPlaceOrDisjoint(a, out, 'input', 'output');
  }
  return {
    algorithm,
    engine: 'reverse',
    n,
    inputs: [a],
    outputs: [{ arg: out, length: n }],
    empty: () => undefined,
    cpu: ({ inputs: [x], outputs: [y] }) => cpu(x as HostArray, y as HostArray, n),
    gpu: (call) => gpu(call, call.inputs[0] as DeviceArray, call.outputs[0] as DeviceArray, n),
  };
}

/**
 * Reverses the order of the elements: in place, or into `output` (the input then stays as it is).
 * @param output at least input.length elements of the input's type; the input itself or not
 *   overlapping it. @default input (in place)
 * @throws ArgumentError naming `input` or `output`
 */
export function reverse(policy: Policy, input: ArrayArg, output?: ArrayArg): Promise<void> {
  return dispatch(policy, () =>
    permutePattern(
      'reverse',
      checkArray(input, 'input'),
      output,
      (x, y, n) => {
        if (y !== x) y.set(x);
        y.subarray(0, n).reverse();
      },
      gpuReverse,
    ),
  );
}

/**
 * Rotates left by `middle`: the element at index `middle` becomes the first (std::rotate), in
 * place or into `output`.
 * @param middle an integer in [0, input.length]
 * @param output as for reverse. @default input (in place)
 * @returns input.length - middle: the new index of the element that was first
 * @throws ArgumentError naming `input`, `middle` or `output`
 */
export async function rotate(policy: Policy, input: ArrayArg, middle: number, output?: ArrayArg): Promise<number> {
  let n = 0;
  await dispatch(policy, () => {
    const a = checkArray(input, 'input');
    n = a.length;
    if (typeof middle !== 'number' || !Number.isInteger(middle) || middle < 0 || middle > n) {
      throw new ArgumentError('middle', `an integer in [0, ${n}] (input.length)`, describe(middle));
    }
    const m = middle;
    return permutePattern(
      'rotate',
      a,
      output,
      (x, y) => {
        if (y === x) {
          const head = x.slice(0, m);
          x.copyWithin(0, m, n);
          x.set(head, n - m);
        } else {
          y.set(x.subarray(m, n), 0);
          y.set(x.subarray(0, m), n - m);
        }
      },
      (call, x, y) => gpuRotate(call, x, y, n, m),
    );
  });
  return n - middle;
}
