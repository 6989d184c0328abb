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
 * truthiness on every backend (non-zero and not NaN). Zips are not accepted yet.
 *
 * Strategy: CPU: one generated loop with a conditional store (bricks/transform-if.ts; par on the
 * pool where other maps go there). GPU: the map engine's 'masked' write, the element function
 * setting `ok = pred(..)` and returning fn's value: a vec4 store where four in a row pass, the
 * passing components otherwise, nothing where none does. Host outputs are uploaded before the
 * kernel (a host output that is the input or the stencil uses its device copy), so what is read
 * back holds the caller's values where pred failed. Size tiers: n = 0 returns at once; otherwise
 * those of the map engine (vec4 + scalar tail where every array is 16-byte aligned, segmented
 * beyond one storage binding).
 */
import { ArgumentError, fragment, type GpuFunction, type HostArray, mangle, type NumericType } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuTransformIf } from '../bricks/transform-if';
import {
  type ArrayArg,
  type CheckedArray,
  checkArray,
  checkFunction,
  checkOutput,
  isArrayArg,
  paramCount,
} from '../common/args';
import { type Counting, isCounting } from '../common/counting';
import { checkInPlaceOrDisjoint } from '../common/overlap';
import { memoFragment, predicateFragment, resultTypeOf, valueFragment } from '../common/predicates';
import { checkPredicate, type PredicateArg, stencilTruthy } from '../compaction/index';
import { mapPattern } from '../engines/map/pattern';
import { dispatch, type Pattern } from '../pattern/dispatch';
import type { FunctionArg } from '../transform-reduce/index';

/** Where the element function's arguments come from: a streamed input `x<k>`, or the index. */
interface Layout {
  /** Whether the input is streamed (as x0); else counting(n). */
  readonly input: boolean;
  /** The stencil: streamed (after the input), 'index' (counting), or none (pred tests the input). */
  readonly stencil: 'streamed' | 'index' | 'none';
}

/**
 * The map engine's 'masked' element: `fn([x0: T,] [x1: S,] i, c, ok) -> O { ok = pred(s); fn(..) }`,
 * fn's value computed only where pred holds.
 */
function transformIfElement(
  fn: GpuFunction,
  fnTypes: readonly NumericType[],
  out: NumericType,
  pred: GpuFunction,
  predType: NumericType,
  inType: NumericType | undefined,
  layout: Layout,
) {
  const pf = predicateFragment(pred, [predType]);
  const key = `tif|${out}|${fnTypes.join(',')}|${pf.name}|${layout.input}|${layout.stencil}`;
  return memoFragment(fn, key, () => {
    const val = valueFragment(fn, fnTypes, out);
    const params: string[] = [];
    if (layout.input) params.push(`x0: ${inType}`);
    const s = `x${params.length}`;
    if (layout.stencil === 'streamed') params.push(`${s}: ${predType}`);
    const test = layout.stencil === 'streamed' ? s : layout.stencil === 'index' ? 'i' : layout.input ? 'x0' : 'i';
    const args = layout.input ? (fnTypes.length === 2 ? 'x0, i' : 'x0') : 'i';
    const name = mangle('elem_tif', val.name, pf.name, layout.input ? 'in' : 'count', layout.stencil);
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
  const input = counted ? undefined : checkArray(inputArg, 'input');
  const n = counted ? counted.length : (input as CheckedArray).length;
  const stCounted = stenciled && isCounting(stencilArg) ? (stencilArg as Counting) : undefined;
  let stencil: CheckedArray | undefined;
  if (stenciled) {
    const st = stCounted ?? checkArray(stencilArg, 'stencil');
    if (st.length !== n) throw new ArgumentError('stencil', `${n} elements (the length of input)`, `${st.length}`);
    if (!stCounted) stencil = st as CheckedArray;
  }
  // fn: over counting(n) the index; an index lambda (x, i); else the element.
  const fnTypes: NumericType[] = !input ? ['u32'] : paramCount(fnArg) === 2 ? [input.type, 'u32'] : [input.type];
  const fn = checkFunction(fnArg, 'fn', fnTypes.length as 1 | 2);
  const r = resultTypeOf(fn, fnTypes, 'fn');
  const output = checkOutput(outputArg, 'output', n, r === 'bool' ? undefined : r);
  if (input) checkInPlaceOrDisjoint(input, output, 'input', 'output');
  if (stencil) checkInPlaceOrDisjoint(stencil, output, 'stencil', 'output');
  const predType: NumericType = stencil ? stencil.type : stenciled || !input ? 'u32' : input.type;
  const pred = stenciled && predArg === undefined ? stencilTruthy : checkPredicate(predArg, predType);
  const layout: Layout = { input: input !== undefined, stencil: stencil ? 'streamed' : stenciled ? 'index' : 'none' };
  return mapPattern({
    algorithm: 'transformIf',
    n,
    inputs: [...(input ? [input] : []), ...(stencil ? [stencil] : [])],
    output,
    write: 'masked',
    functions: [
      { fn, argTypes: fnTypes },
      { fn: pred, argTypes: [predType] },
    ],
    elem: () => transformIfElement(fn, fnTypes, output.type, pred, predType, input?.type, layout),
    cpu: ({ backend, inputs: hosts, outputs: [out] }) =>
      cpuTransformIf(backend, {
        input: input ? hosts[0] : undefined,
        stencil: stencil ? hosts[input ? 1 : 0] : stenciled ? 'counting' : undefined,
        output: out as HostArray,
        n,
        fn,
        fnTypes,
        pred,
        predType,
      }),
  });
}

/**
 * Writes `fn(input[i])` to `output[i]` for every i < input.length where `pred(input[i])` is truthy;
 * the other elements of `output` keep their values (Thrust's transform_if).
 * @param input an array, or `counting(n)` (then fn and pred take the index)
 * @param output at least input.length elements of fn's result type (a bool result may go to any
 *   type, as 1/0); the input itself (in place) or not overlapping it
 * @param fn a unary function of the element type, or an index lambda `(x, i) => ...`
 * @param pred a predicate over the element type
 * @throws ArgumentError naming `policy`, `input`, `output`, `fn` or `pred`
 */
export function transformIf(
  policy: Policy,
  input: ArrayArg | Counting,
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
  input: ArrayArg | Counting,
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
