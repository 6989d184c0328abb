/**
 * copy(policy, input, output): output[i] = input[i] for i < input.length. The output needs at least
 * input.length elements of the input's type and must not overlap the input.
 *
 * Strategy: CPU: TypedArray.set (par: per-chunk copies on the worker pool when both arrays live in
 * shared memory). GPU: see gpu.ts (copyBufferToBuffer between DeviceArrays, the map engine's
 * identity kernel within one GPU buffer, queue writes and readbacks for host arrays).
 * Size tiers: n = 0 returns at once; otherwise one copy command or one map-engine call.
 */
import type { HostArray } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuFill } from '../bricks/map';
import { type ArrayArg, checkArray, checkNoAlias, checkOutput } from '../common/args';
import { dispatch } from '../pattern/dispatch';
import { gpuCopy } from './gpu';

/**
 * Copies `input` into the first input.length elements of `output`.
 * @param output at least input.length elements of the input's element type, not overlapping it
 */
export function copy(policy: Policy, input: ArrayArg, output: ArrayArg): Promise<void> {
  return dispatch(policy, () => {
    const a = checkArray(input, 'input');
    const out = checkOutput(output, 'output', a.length, a.type);
    checkNoAlias(a, out, 'input', 'output');
    return {
      algorithm: 'copy',
      engine: 'map',
      n: a.length,
      inputs: [a],
      outputs: [{ arg: out }],
      // copy moves host data straight into a DeviceArray output and reads straight back (gpu.ts).
      stage: false,
      empty: () => undefined,
      recordable: true,
      cpu: ({ backend, inputs: [x], outputs: [y] }) => cpuFill(backend, 2, y as HostArray, a.length, 0, a.type, x),
      gpu: ({ device, tuning }) => gpuCopy(device, a, out, a.length, tuning),
    };
  });
}
