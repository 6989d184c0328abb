/**
 * copy(policy, input, output): output[i] = input[i] for i < input.length. The output needs at least
 * input.length elements of the input's type and must not overlap the input.
 *
 * Strategy: CPU: TypedArray.set (par: per-chunk copies on the worker pool when both arrays live in
 * shared memory). GPU: see gpu.ts (copyBufferToBuffer between DeviceArrays, the map engine's
 * identity kernel within one GPU buffer, queue writes and readbacks for host arrays).
 * Size tiers: n = 0 returns at once; otherwise one copy command or one map-engine call.
 */
import type { Policy } from '@webdpl/policies';
import { cpuFill } from '../bricks/map';
import { type ArrayArg, checkArray, checkNoAlias, checkOutput } from '../common/args';
import { runMapCall } from '../engines/map/run';
import { gpuCopy } from './gpu';

/**
 * Copies `input` into the first input.length elements of `output`.
 * @param output at least input.length elements of the input's element type, not overlapping it
 */
export async function copy(policy: Policy, input: ArrayArg, output: ArrayArg): Promise<void> {
  const a = checkArray(input, 'input');
  const out = checkOutput(output, 'output', a.length, a.type);
  checkNoAlias(a, out, 'input', 'output');
  await runMapCall(policy, {
    algorithm: 'copy',
    n: a.length,
    inputs: [a],
    output: out,
    cpu: (backend, [x], y) => cpuFill(backend, 2, y, a.length, 0, a.type, x),
    gpu: (device, tuning) => gpuCopy(device, a, out, a.length, tuning),
  });
}
