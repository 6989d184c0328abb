/**
 * Reductions: `cpuTransformReduce` (the engine), `cpuReduce` and `cpuCountIf` on top of it.
 * seq: one generated loop folding from `init`. par: each chunk folds from its own first element on the
 * pool (no identity needed), then the calling thread combines `init` and the chunk results in chunk
 * order, so a non-commutative operator keeps its order. Integer results are exact (wrapping). f32
 * results keep the bound of kernels.ts (`summation`): the built-in plus sums in f64 and rounds once,
 * |result - exact| <= 2^-24 |exact| + n 2^-53 sum |x_i|; other f32 operators fold blockwise and
 * pairwise, within (SUM_BLOCK + 2 ceil(log2 n) + 2) 2^-24 sum |x_i| for sums; seq and par alike.
 */
import { ArgumentError, coerce, type GpuFunction, type HostArray, type NumericType, plus } from '@webdpl/core';
import type { CpuBackend } from '@webdpl/policies';
import { combineInOrder, type KernelSpec, parKernelSource, seqKernel } from './kernels';
import {
  checkFn,
  checkInputs,
  checkNumber,
  type Inputs,
  memoryBoundChunks,
  plainMemoryBoundSeq,
  runPar,
} from './staging';
import { unreadInput } from './transform';

/** What a counting kernel gets for the array it does not read (seq). */
const NO_INPUT = new Uint32Array(0);

/**
 * Folds `reduceOp` over `transformFn(input[i])` (or `transformFn(input[0][i], input[1][i])`; the plain
 * elements when `transformFn` is undefined), starting from `init`: `((init op t0) op t1) ...`.
 * The accumulator has the transform's result type (a 'bool' result counts as u32 1/0); the result is
 * coerced to it. Costs one pass over the inputs; par adds one pool run and, for plain-ArrayBuffer
 * inputs, their copy into shared memory.
 * @throws ArgumentError naming `input`, `init`, `reduceOp` or `transformFn`
 */
export async function cpuTransformReduce(
  backend: CpuBackend,
  input: Inputs,
  init: number,
  reduceOp: GpuFunction,
  transformFn?: GpuFunction,
): Promise<number> {
  const { x, x2, types } = checkInputs(input);
  checkNumber(init, 'init');
  let accType: NumericType = types[0] as NumericType;
  let bit = false;
  let t: GpuFunction | undefined;
  if (transformFn !== undefined) {
    t = checkFn(transformFn, types.length as 1 | 2, types, 'transformFn');
    const rt = t.resultType(types);
    bit = rt === 'bool';
    accType = rt === 'bool' ? 'u32' : rt;
  } else if (types.length === 2) {
    throw new ArgumentError('transformFn', 'a binary function combining the two inputs', 'undefined');
  }
  return foldAll(backend, x, x2, types, init, reduceOp, t, bit, accType);
}

/**
 * `cpuTransformReduce` over `counting(n)`: folds `reduceOp` over `transformFn(i)` (or the plain
 * indices, as u32) for i < n, starting from `init`. Nothing is allocated for the indices.
 * @throws ArgumentError naming `init`, `reduceOp` or `transformFn`
 */
export async function cpuTransformReduceCounting(
  backend: CpuBackend,
  n: number,
  init: number,
  reduceOp: GpuFunction,
  transformFn?: GpuFunction,
): Promise<number> {
  checkNumber(init, 'init');
  const types: NumericType[] = ['u32'];
  let accType: NumericType = 'u32';
  let bit = false;
  let t: GpuFunction | undefined;
  if (transformFn !== undefined) {
    t = checkFn(transformFn, 1, types, 'transformFn');
    const rt = t.resultType(types);
    bit = rt === 'bool';
    accType = rt === 'bool' ? 'u32' : rt;
  }
  return foldAll(backend, undefined, undefined, types, init, reduceOp, t, bit, accType, n);
}

/**
 * `cpuTransformReduce` with an index lambda: folds `reduceOp` over `transformFn(input[i], i)` (i a
 * u32) for i < input.length, starting from `init`.
 * @throws ArgumentError naming `input`, `init`, `reduceOp` or `transformFn`
 */
export async function cpuTransformReduceIndexed(
  backend: CpuBackend,
  input: HostArray,
  init: number,
  reduceOp: GpuFunction,
  transformFn: GpuFunction,
): Promise<number> {
  const { x, types } = checkInputs(input);
  checkNumber(init, 'init');
  const argTypes: NumericType[] = [types[0] as NumericType, 'u32'];
  const t = checkFn(transformFn, 2, argTypes, 'transformFn');
  const rt = t.resultType(argTypes);
  const accType = rt === 'bool' ? 'u32' : rt;
  return foldAll(backend, x, undefined, argTypes, init, reduceOp, t, rt === 'bool', accType, 0, 1);
}

/**
 * Folds over x (and x2), or over the indices 0..n-1 when `x` is undefined (counting); `indexArg` 1:
 * the transform's second argument is the index (index lambdas; x2 undefined).
 */
async function foldAll(
  backend: CpuBackend,
  x: HostArray | undefined,
  x2: HostArray | undefined,
  types: NumericType[],
  init: number,
  reduceOp: GpuFunction,
  t: GpuFunction | undefined,
  bit: boolean,
  accType: NumericType,
  count = 0,
  indexArg: 1 | undefined = undefined,
): Promise<number> {
  const rTypes = [accType, accType];
  const r = checkFn(reduceOp, 2, rTypes, t ? 'reduceOp' : 'op');
  const n = x ? x.length : count;
  const start = coerce(accType, init);
  if (n === 0) return start;
  const spec: KernelSpec = {
    kind: 'reduce',
    t: t ? { fn: t, argTypes: types } : undefined,
    r: { fn: r, argTypes: rTypes },
    inputs: types.length as 1 | 2,
    indexArg: x ? indexArg : 0,
    bit,
    arrays: [x ? types[0] : undefined, types[1], undefined],
  };
  // A plain reduce (no transform) is memory-bound: on plain arrays the pool pays from large n only.
  const chunks = !t && plainMemoryBoundSeq(backend, n, [x, x2]) ? undefined : memoryBoundChunks(backend, n);
  if (!chunks || backend.kind !== 'par') {
    return coerce(accType, seqKernel(spec)(x ?? NO_INPUT, x2, undefined, 0, n, true, start, undefined));
  }
  const s = parKernelSource(spec);
  const kernel = seqKernel(spec);
  const xs = x ?? unreadInput();
  const partials = await runPar(
    backend,
    chunks,
    { x: xs, x2, y: undefined, n },
    (c, sh) => ({ s, x: sh.x, x2: sh.x2, b: c.begin, e: c.end, h: false, c: 0 }),
    (c) => kernel(xs, x2, undefined, c.begin, c.end, false, 0, undefined),
  );
  return coerce(accType, combineInOrder(spec, [start, ...partials]));
}

/**
 * Folds `op` over `input` starting from `init` (oneDPL's reduce): `((init op x0) op x1) ...`,
 * in the input's element type. See `cpuTransformReduce` for costs.
 * @throws ArgumentError naming `input`, `init` or `op`
 */
export async function cpuReduce(backend: CpuBackend, input: HostArray, init: number, op: GpuFunction): Promise<number> {
  const { x, types } = checkInputs(input);
  checkNumber(init, 'init');
  return foldAll(backend, x, undefined, types, init, op, undefined, false, types[0] as NumericType);
}

/**
 * Number of elements for which `pred(input[i])` is truthy (or `pred(input[0][i], input[1][i])`).
 * A transform-reduce with plus over 1/0.
 * @throws ArgumentError naming `input` or `pred`
 */
export async function cpuCountIf(backend: CpuBackend, input: Inputs, pred: GpuFunction): Promise<number> {
  const { x, x2, types } = checkInputs(input);
  const p = checkFn(pred, types.length as 1 | 2, types, 'pred');
  return foldAll(backend, x, x2, types, 0, plus, p, true, 'u32');
}
