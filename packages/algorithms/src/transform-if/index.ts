/**
 * transformIf (Thrust's transform_if), both forms:
 *
 *   transformIf(policy, input, output, fn, pred):            output[i] = fn(input[i]) where pred(input[i])
 *   transformIf(policy, input, stencil, output, fn, pred?):  output[i] = fn(input[i]) where pred(stencil[i])
 *
 * for i < n (the input's length); output[i] is not written where pred fails, so it keeps exactly
 * the value it had (every bit, NaN payloads included). Thrust's argument order, with the policy
 * first as everywhere: inputs (input, stencil), the output, then the functions. As for transform:
 * `fn` may be an index lambda `(x, i) => ...` (i the element's index as u32), `input` may be
 * `counting(n)` (then `fn(i)`), the output's element type is fn's result type (a bool result goes to
 * any type as 1/0) and it needs at least n elements (the rest is not touched). As for copyIf's
 * stencil form: the stencil has the input's length and any element type, or is `counting(n)` (pred
 * gets the index), and `pred` defaults to the stencil's truthiness there. The output may be the
 * input or the stencil itself (in place) but must not otherwise overlap them. Predicates follow JS
 * truthiness on every backend (non-zero and not NaN). The input may be a zip (`zip(a, b, ...)`): fn
 * takes one parameter per zipped array (then optionally the index) and so does pred in the form
 * without a stencil; zips of outputs are not accepted yet (the map engine's masked write stores one
 * output).
 *
 * Strategy: CPU: one generated loop with a conditional store (bricks/transform-if.ts; par on the
 * pool where other maps go there). GPU: the map engine's 'masked' write, the element function
 * setting `ok = pred(..)` and returning fn's value: a vec4 store where four in a row pass, the
 * passing components otherwise, nothing where none does. Host outputs are uploaded before the
 * kernel (a host output that is the input or the stencil uses its device copy), so what is read
 * back holds the caller's values where pred failed. Size tiers: n = 0 returns at once; otherwise
 * those of the map engine (vec4 + scalar tail where every array is 16-byte aligned, segmented
 * beyond one storage binding). The engine streams 4 arrays: a zip of 4 with a stencil runs on the
 * CPU (an UnsupportedOnDeviceError for a device policy without a CPU fallback).
 */
import {
  ArgumentError,
  describe,
  fragment,
  type GpuFunction,
  type HostArray,
  mangle,
  type NumericType,
} from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuTransformIf } from '../bricks/transform-if';
import { type ArrayArg, type CheckedArray, checkFunction, checkOutput, isArrayArg, paramCount } from '../common/args';
import { type Counting, checkStencilArg, isCounting } from '../common/counting';
import { checkInPlaceOrDisjoint } from '../common/overlap';
import { memoFragment, predicateFragment, resultTypeOf, valueFragment } from '../common/predicates';
import { checkArrays, checkZipFunction, isZip, tupleParams, type Zip } from '../common/zip';
import { checkPredicate, type PredicateArg, stencilTruthy } from '../compaction/index';
import { MAP_MAX_INPUTS } from '../engines/map/kernels';
import { mapPattern } from '../engines/map/pattern';
import { dispatch, type Pattern } from '../pattern/dispatch';
import type { FunctionArg } from '../transform-reduce/index';

/** Where the element function's arguments come from: streamed inputs `x<k>`, or the index. */
interface Layout {
  /** The input's arrays (streamed as x0, x1, ..): 1, a zip's 2 to 4, or 0 for counting(n). */
  readonly inputs: number;
  /** The stencil: streamed (after the input), 'index' (counting), or none (pred tests the input). */
  readonly stencil: 'streamed' | 'index' | 'none';
}

/**
 * The map engine's 'masked' element: `fn([x0: T0, ..,] [xk: S,] i, c, ok) -> O { ok = pred(..);
 * fn(..) }`, fn's value computed only where pred holds.
 */
function transformIfElement(
  fn: GpuFunction,
  fnTypes: readonly NumericType[],
  out: NumericType,
  pred: GpuFunction,
  predTypes: readonly NumericType[],
  layout: Layout,
) {
  const pf = predicateFragment(pred, predTypes);
  const key = `tif|${out}|${fnTypes.join(',')}|${pf.name}|${layout.inputs}|${layout.stencil}`;
  return memoFragment(fn, key, () => {
    const val = valueFragment(fn, fnTypes, out);
    const xs = fnTypes.slice(0, layout.inputs).map((_, k) => `x${k}`);
    const params = fnTypes.slice(0, layout.inputs).map((t, k) => `x${k}: ${t}`);
    const s = `x${layout.inputs}`;
    if (layout.stencil === 'streamed') params.push(`${s}: ${predTypes[0]}`);
    const test =
      layout.stencil === 'streamed' ? s : layout.stencil === 'index' || xs.length === 0 ? 'i' : xs.join(', ');
    const args = [...xs, ...(fnTypes.length > xs.length ? ['i'] : [])].join(', ');
    const name = mangle('elem_tif', val.name, pf.name, layout.inputs, layout.stencil);
    return fragment({
      name,
      deps: [val, pf],
      code: `fn ${name}(${params.map((p) => `${p}, `).join('')}i: u32, c: vec2<u32>, ok: ptr<function, bool>) -> ${out} {
  *ok = ${pf.name}(${test});
  if (*ok) { return ${val.name}(${args}); }
  return ${out}();
}`,
    });
  });
}

/** The pattern of transformIf over checked arguments (see the file comment). */
function transformIfPattern(
  inputArg: unknown,
  stencilArg: unknown,
  stenciled: boolean,
  outputArg: unknown,
  fnArg: unknown,
  predArg: unknown,
): Pattern<void> {
  const counted = isCounting(inputArg) ? (inputArg as Counting) : undefined;
  const zipped = isZip(inputArg);
  const inputs = counted ? [] : checkArrays(inputArg, 'input');
  const n = counted ? counted.length : (inputs[0] as CheckedArray).length;
  const inNames = inputs.map((_, k) => (zipped ? `input[${k}]` : 'input'));
  const stencil = stenciled ? checkStencilArg(stencilArg, n, 'input').array : undefined;
  const inTypes = inputs.map((a) => a.type);
  // fn: over counting(n) the index; over a zip one argument per array; an index lambda (x.., i).
  let fn: GpuFunction;
  let fnTypes: NumericType[];
  if (zipped) {
    const { shape, argTypes, what } = tupleParams(fnArg, inTypes, true);
    fn = checkZipFunction(fnArg, 'fn', shape, argTypes, 0, what).parts[0] as GpuFunction;
    fnTypes = argTypes;
  } else {
    fnTypes = counted ? ['u32'] : paramCount(fnArg) === 2 ? [...inTypes, 'u32'] : inTypes;
    fn = checkFunction(fnArg, 'fn', fnTypes.length as 1 | 2);
  }
  const r = resultTypeOf(fn, fnTypes, 'fn');
  if (isZip(outputArg)) {
    throw new ArgumentError('output', 'one array (transformIf writes no zip of outputs yet)', describe(outputArg));
  }
  const output = checkOutput(outputArg, 'output', n, r === 'bool' ? undefined : r);
  inputs.forEach((a, k) => {
    checkInPlaceOrDisjoint(a, output, inNames[k] as string, 'output');
  });
  if (stencil) checkInPlaceOrDisjoint(stencil, output, 'stencil', 'output');
  // pred: over the stencil's elements (the index for counting), else over the input's elements.
  let pred: GpuFunction;
  let predTypes: NumericType[];
  if (zipped && !stenciled) {
    const shape = inTypes.map(() => 0);
    pred = checkZipFunction(predArg, 'pred', shape, inTypes, 0, 'one per zipped array').parts[0] as GpuFunction;
    predTypes = inTypes;
  } else {
    const t: NumericType = stencil ? stencil.type : stenciled || counted ? 'u32' : (inTypes[0] as NumericType);
    pred = stenciled && predArg === undefined ? stencilTruthy : checkPredicate(predArg, t);
    predTypes = [t];
  }
  const layout: Layout = { inputs: inputs.length, stencil: stencil ? 'streamed' : stenciled ? 'index' : 'none' };
  const streamed = [...inputs, ...(stencil ? [stencil] : [])];
  const pattern = mapPattern({
    algorithm: 'transformIf',
    n,
    inputs: streamed,
    output,
    write: 'masked',
    functions: [
      { fn, argTypes: fnTypes },
      { fn: pred, argTypes: predTypes },
    ],
    elem: () => transformIfElement(fn, fnTypes, output.type, pred, predTypes, layout),
    cpu: ({ backend, inputs: hosts, outputs: [out] }) =>
      cpuTransformIf(backend, {
        input: counted ? undefined : zipped ? hosts.slice(0, inputs.length) : hosts[0],
        stencil: stencil ? hosts[inputs.length] : stenciled ? 'counting' : undefined,
        output: out as HostArray,
        n,
        fn,
        fnTypes,
        pred,
        predTypes,
      }),
  });
  if (streamed.length <= MAP_MAX_INPUTS) return pattern;
  return {
    ...pattern,
    gpuCheck: () =>
      `transformIf streams ${streamed.length} arrays (a zip of ${inputs.length} and a stencil); the map engine streams ${MAP_MAX_INPUTS}`,
  };
}

/**
 * Writes `fn(input[i])` to `output[i]` for every i < input.length where `pred(input[i])` is truthy;
 * the other elements of `output` keep their values (Thrust's transform_if).
 * @param input an array, `counting(n)` (then fn and pred take the index), or a zip of arrays (fn and
 *   pred take one parameter per array)
 * @param output at least input.length elements of fn's result type (a bool result may go to any
 *   type, as 1/0); the input itself (in place) or not overlapping it
 * @param fn a unary function of the element type, or an index lambda `(x, i) => ...` (over a zip:
 *   `(x, y, ..[, i]) => ...`)
 * @param pred a predicate over the element type
 * @throws ArgumentError naming `policy`, `input`, `output`, `fn` or `pred`
 */
export function transformIf(
  policy: Policy,
  input: ArrayArg | Counting | Zip,
  output: ArrayArg,
  fn: FunctionArg,
  pred: PredicateArg,
): Promise<void>;
/**
 * Writes `fn(input[i])` to `output[i]` for every i < input.length where `pred(stencil[i])` is
 * truthy; the other elements of `output` keep their values (Thrust's transform_if with a stencil).
 * @param stencil input.length elements of any type, or `counting(n)` (pred gets the index)
 * @param output as for the other form; may also be the stencil itself, but must not otherwise overlap it
 * @param pred a predicate over the stencil's type @default the stencil's truthiness
 * @throws ArgumentError naming `policy`, `input`, `stencil`, `output`, `fn` or `pred`
 */
export function transformIf(
  policy: Policy,
  input: ArrayArg | Counting | Zip,
  stencil: ArrayArg | Counting,
  output: ArrayArg,
  fn: FunctionArg,
  pred?: PredicateArg,
): Promise<void>;
export function transformIf(policy: Policy, ...args: unknown[]): Promise<void> {
  return dispatch(policy, () => {
    // The stencil form: a counting stencil, an array where the other form has fn, or a sixth argument.
    const stenciled = isCounting(args[1]) || isArrayArg(args[2]) || args[4] !== undefined;
    if (stenciled) return transformIfPattern(args[0], args[1], true, args[2], args[3], args[4]);
    return transformIfPattern(args[0], undefined, false, args[1], args[2], args[3]);
  });
}
