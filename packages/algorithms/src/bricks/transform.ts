/**
 * Element-wise engines: `cpuTransform` (y[i] = fn(x[i]) or fn(x[i], x2[i])) and `cpuForEach` (in place).
 * seq: one generated loop on the calling thread. par: one generated loop per chunk on the pool.
 * Memory-bound: ~n reads and n writes per input; results are stored through the output's type
 * (u32/i32 wrap, f32 rounding happens at the store).
 */
import type { GpuFunction, HostArray } from '@webdpl/core';
import { type CpuBackend, planParallel } from '@webdpl/policies';
import { type KernelSpec, parKernelSource, seqKernel } from './kernels';
import { checkFn, checkInputs, checkOutput, type Inputs, plainMemoryBoundSeq, runPar } from './staging';

/**
 * Writes `fn(input[i])` (or `fn(input[0][i], input[1][i])` for a pair of inputs) into `output[i]`
 * for i < input length. `output` may be the input itself, but must not otherwise overlap it.
 * par with plain-ArrayBuffer arrays: the calling thread transforms its share in place and only the
 * workers' share is copied into shared memory and back (`runSplit`); arrays from `allocShared`
 * need no copy at all.
 * @param fn a unary function, or a binary one with two inputs; `fn.supports(input types)` must hold
 * @throws ArgumentError naming `input`, `output` or `fn`
 */
export async function cpuTransform(
  backend: CpuBackend,
  input: Inputs,
  output: HostArray,
  fn: GpuFunction,
): Promise<void> {
  const { x, x2, types, n } = checkInputs(input);
  const outType = checkOutput(output, n);
  const f = checkFn(fn, types.length as 1 | 2, types, 'fn');
  if (n === 0) return;
  const spec: KernelSpec = {
    kind: 'map',
    t: { fn: f, argTypes: types },
    inputs: types.length as 1 | 2,
    bit: f.resultType(types) === 'bool',
    arrays: [types[0], types[1], outType],
  };
  const chunks = plainMemoryBoundSeq(backend, n, [x, x2, output]) ? undefined : planParallel(backend, n);
  if (!chunks || backend.kind !== 'par') {
    seqKernel(spec)(x, x2, output, 0, n, false, 0, undefined);
    return;
  }
  const s = parKernelSource(spec);
  const kernel = seqKernel(spec);
  await runPar(
    backend,
    chunks,
    { x, x2, y: output, n },
    (c, sh) => ({ s, x: sh.x, x2: sh.x2, y: sh.y, b: c.begin, e: c.end, h: false, c: 0 }),
    (c) => kernel(x, x2, output, c.begin, c.end, false, 0, undefined),
  );
}

/**
 * oneDPL's for_each for pure functions: replaces each element of `data` by `fn(data[i])`, in place.
 * Same costs as `cpuTransform` (a plain-ArrayBuffer `data` is copied to shared memory and back for par).
 */
export async function cpuForEach(backend: CpuBackend, data: HostArray, fn: GpuFunction): Promise<void> {
  return cpuTransform(backend, data, data, fn);
}
