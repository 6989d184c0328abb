/**
 * adjacentDifference(policy, input, output, op = minus): output[0] = input[0] and
 * output[i] = op(input[i], input[i - 1]) for 0 < i < n (oneDPL's adjacent_difference). The output
 * needs at least n elements of the input's type (op must return that type, or a bool stored as
 * 1/0) and must not overlap the input.
 *
 * Strategy: a binary map of the input against itself shifted by one: out[1..n) = op(in[1..n),
 * in[0..n-1)). CPU: the policies' transform engine over subarrays (par on the worker pool), plus
 * the first element. GPU: the map engine over views of one device copy of the input (the shifted
 * views are unaligned, so the scalar path runs), with the first element copied in the same command
 * buffer.
 * Size tiers: n = 0 returns at once; n = 1 copies the element; otherwise one map-engine call.
 */
import {
  ArgumentError,
  DeviceArray,
  type GpuDevice,
  type GpuFunction,
  type HostArray,
  type Readback,
  type Recorder,
} from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuTransform } from '../bricks/transform';
import { type ArrayArg, type CheckedArray, checkArray, checkFunction, checkNoAlias, checkOutput } from '../common/args';
import { copyInto, type DeviceSide, releaseTemps, toDevice } from '../common/gpu-io';
import { resultTypeOf } from '../common/predicates';
import { functionElement, identityElement } from '../engines/map/elements';
import { mapDevice } from '../engines/map/index';
import { runMapCall } from '../engines/map/run';
import type { FunctionArg } from '../transform-reduce/index';
import { minus } from './minus';

export { minus } from './minus';

async function gpuAdjacentDifference(
  device: GpuDevice,
  input: CheckedArray,
  output: CheckedArray,
  n: number,
  op: GpuFunction,
  tuning: Readonly<Record<string, number | boolean>>,
): Promise<void> {
  const t = input.type;
  let src: DeviceSide | undefined;
  let dst: DeviceSide | undefined;
  try {
    src = toDevice(device, input);
    dst =
      output.kind === 'device'
        ? { array: output.array.view(0, n), temp: false }
        : { array: DeviceArray.create(device, t, n), temp: true };
    const x = src.array;
    const y = dst.array;
    const sameBuffer = x.buffer === y.buffer;
    if (sameBuffer) {
      // WebGPU copies need distinct buffers: the first element goes through the identity kernel.
      await mapDevice(device, {
        label: 'adjacentDifference',
        n: 1,
        inputs: [x.view(0, 1)],
        output: y.view(0, 1),
        elem: identityElement(t),
        tuning,
        tuningName: 'adjacentDifference',
      });
    }
    let rb: Readback | undefined;
    const first = (rec: Recorder) => {
      if (!sameBuffer) rec.encoder.copyBufferToBuffer(x.buffer, x.byteOffset, y.buffer, y.byteOffset, 4);
    };
    const readBack = (rec: Recorder) => {
      if (output.kind === 'host') rb = rec.readback(y.buffer, y.byteOffset, n * 4);
    };
    if (n > 1) {
      await mapDevice(device, {
        label: 'adjacentDifference',
        n: n - 1,
        inputs: [x.view(1, n - 1), x.view(0, n - 1)],
        output: y.view(1, n - 1),
        elem: functionElement(op, [t, t], t),
        tuning,
        tuningName: 'adjacentDifference',
        before: first,
        after: readBack,
      });
    } else {
      await device.queue.submit('adjacentDifference', (rec) => {
        first(rec);
        readBack(rec);
      });
    }
    if (output.kind === 'host' && rb) copyInto(output.array, rb.data(), n);
  } finally {
    releaseTemps(src, dst);
  }
}

/**
 * Writes input[0] and then the differences op(input[i], input[i - 1]) to `output`.
 * @param output at least input.length elements of the input's element type, not overlapping it
 * @param op op(input[i], input[i - 1]). @default minus (a - b in the element type; u32/i32 wrap)
 */
export async function adjacentDifference(
  policy: Policy,
  input: ArrayArg,
  output: ArrayArg,
  op?: FunctionArg,
): Promise<void> {
  const a = checkArray(input, 'input');
  const f = op === undefined ? minus : checkFunction(op, 'op', 2);
  const t = a.type;
  const r = resultTypeOf(f, [t, t], 'op');
  if (r !== 'bool' && r !== t) {
    throw new ArgumentError('op', `a function returning ${t} (the element type of input)`, `one returning ${r}`);
  }
  const n = a.length;
  const out = checkOutput(output, 'output', n, t);
  checkNoAlias(a, out, 'input', 'output');
  await runMapCall(policy, {
    algorithm: 'adjacentDifference',
    n,
    inputs: [a],
    output: out,
    functions: [{ fn: f, argTypes: [t, t] }],
    cpu: async (backend, [x], y) => {
      const src = x as HostArray;
      y[0] = src[0] as number;
      if (n > 1) await cpuTransform(backend, [src.subarray(1, n), src.subarray(0, n - 1)], y.subarray(1, n), f);
    },
    gpu: (device, tuning) => gpuAdjacentDifference(device, a, out, n, f, tuning),
  });
}
