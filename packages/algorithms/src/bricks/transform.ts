/**
 * Element-wise engines: `cpuTransform` (y[i] = fn(x[i]) or fn(x[i], x2[i])) and `cpuForEach` (in place).
 * seq: one generated loop on the calling thread. par: one generated loop per chunk on the pool.
 * Memory-bound: ~n reads and n writes per input; results are stored through the output's type
 * (u32/i32 wrap, f32 rounding happens at the store).
 */
import type { GpuFunction, HostArray, NumericType } from '@webdpl/core';
import { allocShared, type CpuBackend } from '@webdpl/policies';
import { type KernelSpec, parKernelSource, seqKernel } from './kernels';
import {
  checkFn,
  checkInputs,
  checkOutput,
  type Inputs,
  memoryBoundChunks,
  plainMemoryBoundSeq,
  runPar,
} from './staging';

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
  const spec = mapSpec(fn, types, [types[0], types[1], outType]);
  if (n === 0) return;
  return runMap(backend, spec, x, x2, output, n);
}

/**
 * The map kernel of `fn` over arguments of `types` (checked: 1 or 2 of them, named `fn` in errors),
 * reading `arrays`; `indexArg` is the argument that gets the element's index instead of a load.
 */
function mapSpec(
  fn: GpuFunction,
  types: NumericType[],
  arrays: KernelSpec['arrays'],
  indexArg?: KernelSpec['indexArg'],
): KernelSpec {
  const f = checkFn(fn, types.length as 1 | 2, types, 'fn');
  return {
    kind: 'map',
    t: { fn: f, argTypes: types },
    inputs: types.length as 1 | 2,
    ...(indexArg === undefined ? {} : { indexArg }),
    bit: f.resultType(types) === 'bool',
    arrays,
  };
}

/**
 * Runs map kernel `spec` over [0, n): seq on the calling thread, par on the pool (memory-bound:
 * plain arrays below PLAIN_MEMORY_BOUND_MIN stay seq). `x` undefined: the kernel reads no input
 * (counting); the pool then gets a zero-length shared stand-in.
 */
async function runMap(
  backend: CpuBackend,
  spec: KernelSpec,
  x: HostArray | undefined,
  x2: HostArray | undefined,
  output: HostArray,
  n: number,
): Promise<void> {
  const chunks = plainMemoryBoundSeq(backend, n, [x, x2, output]) ? undefined : memoryBoundChunks(backend, n);
  if (!chunks || backend.kind !== 'par') {
    seqKernel(spec)(x ?? output, x2, output, 0, n, false, 0, undefined);
    return;
  }
  const s = parKernelSource(spec);
  const kernel = seqKernel(spec);
  const xs = x ?? unreadInput();
  await runPar(
    backend,
    chunks,
    { x: xs, x2, y: output, n },
    (c, sh) => ({ s, x: sh.x, x2: sh.x2, y: sh.y, b: c.begin, e: c.end, h: false, c: 0 }),
    (c) => kernel(xs, x2, output, c.begin, c.end, false, 0, undefined),
  );
}

/**
 * oneDPL's for_each for pure functions: replaces each element of `data` by `fn(data[i])`, in place.
 * Same costs as `cpuTransform` (a plain-ArrayBuffer `data` is copied to shared memory and back for par).
 */
export async function cpuForEach(backend: CpuBackend, data: HostArray, fn: GpuFunction): Promise<void> {
  return cpuTransform(backend, data, data, fn);
}

let noArray: HostArray | undefined;

/**
 * A zero-length shared array standing for an input that is not read (the index sequence of
 * `counting(n)`): par staging takes shared arrays as they are, so nothing is copied for it.
 * Only called where par runs, i.e. where shared memory exists.
 */
export function unreadInput(): HostArray {
  noArray ??= allocShared('u32', 0);
  return noArray;
}

/**
 * Index transforms: `output[i] = fn(input[i], i)` (an index lambda over `input`), or
 * `output[i] = fn(i)` for i < n without an input (a transform of `counting(n)`). The index is a
 * u32 argument; nothing is read for it. Same costs and par split as `cpuTransform`.
 * @param fn binary over (input type, u32), or unary over u32 without an input
 */
export async function cpuTransformIndex(
  backend: CpuBackend,
  input: HostArray | undefined,
  n: number,
  output: HostArray,
  fn: GpuFunction,
): Promise<void> {
  const outType = checkOutput(output, n);
  const types: NumericType[] = input ? [checkInputs(input).types[0] as NumericType, 'u32'] : ['u32'];
  const spec = mapSpec(fn, types, [input ? types[0] : undefined, undefined, outType], input ? 1 : 0);
  if (n === 0) return;
  return runMap(backend, spec, input, undefined, output, n);
}
