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
  type DeviceArray,
  type GpuDevice,
  type GpuFunction,
  type HostArray,
  type NumericType,
  type Readback,
  type Recorder,
} from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuTransform } from '../bricks/transform';
import { type ArrayArg, checkArray, checkFunction, checkNoAlias, checkOutput } from '../common/args';
import { resultTypeOf } from '../common/predicates';
import { functionElement, identityElement } from '../engines/map/elements';
import { mapDevice } from '../engines/map/index';
import { dispatch } from '../pattern/dispatch';
import type { FunctionArg } from '../transform-reduce/index';
import { minus } from './minus';

export { minus } from './minus';

/** The GPU part: `y[0] = x[0]`, `y[i] = op(x[i], x[i - 1])`; returns y's bytes when `readBack`. */
async function gpuAdjacentDifference(
  device: GpuDevice,
  x: DeviceArray,
  y: DeviceArray,
  n: number,
  op: GpuFunction,
  tuning: Readonly<Record<string, number | boolean>>,
  readBack: boolean,
): Promise<ArrayBuffer | undefined> {
  const t = x.type as NumericType;
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
  const after = (rec: Recorder) => {
    if (readBack) rb = rec.readback(y.buffer, y.byteOffset, n * 4);
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
      after,
    });
  } else {
    await device.queue.submit('adjacentDifference', (rec) => {
      first(rec);
      after(rec);
    });
  }
  return rb?.data();
}

/**
 * Writes input[0] and then the differences op(input[i], input[i - 1]) to `output`.
 * @param output at least input.length elements of the input's element type, not overlapping it
 * @param op op(input[i], input[i - 1]). @default minus (a - b in the element type; u32/i32 wrap)
 */
export function adjacentDifference(policy: Policy, input: ArrayArg, output: ArrayArg, op?: FunctionArg): Promise<void> {
  return dispatch(policy, () => {
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
    return {
      algorithm: 'adjacentDifference',
      engine: 'map',
      n,
      inputs: [a],
      outputs: [{ arg: out, length: n }],
      functions: [{ fn: f, argTypes: [t, t] }],
      empty: () => undefined,
      recordable: true,
      cpu: async ({ backend, inputs: [x], outputs: [y] }) => {
        const src = x as HostArray;
        const dst = y as HostArray;
        dst[0] = src[0] as number;
        if (n > 1) await cpuTransform(backend, [src.subarray(1, n), src.subarray(0, n - 1)], dst.subarray(1, n), f);
      },
      gpu: async ({ device, tuning, inputs: [x], outputs: [y], readBack, deliver }) => {
        const bytes = await gpuAdjacentDifference(
          device,
          x as DeviceArray,
          y as DeviceArray,
          n,
          f,
          tuning,
          readBack(0),
        );
        deliver(0, bytes, n);
      },
    };
  });
}
