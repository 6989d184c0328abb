/**
 * generate(policy, output, gen): output[i] = gen(i) for every element (oneDPL's generate with an
 * index lambda). `gen` takes one argument, the index in the output's element type (u32 and i32
 * exactly; f32 rounded to nearest, exact below 2^24), and returns that type or a bool (stored as
 * 1/0): `generate(p, f32, (i) => Math.sin(i * 0.01))`, `generate(p, i32, (i) => -i)`.
 *
 * Strategy: CPU: one generated loop with `gen` inlined (par: per-chunk loops on the worker pool).
 * GPU: the map engine with no input (vec4 stores where aligned; the index counts from the start of
 * `output` across storage-binding segments).
 * Size tiers: n = 0 returns at once; otherwise see the map engine.
 */
import {
  ArgumentError,
  fragment,
  type GpuFunction,
  type HostArray,
  mangle,
  type NumericType,
  type WgslFragment,
} from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuGenerate } from '../bricks/generate';
import { type ArrayArg, checkArray, checkFunction } from '../common/args';
import { resultTypeOf, valueFragment } from '../common/predicates';
import { mapPattern } from '../engines/map/pattern';
import { dispatch } from '../pattern/dispatch';
import type { FunctionArg } from '../transform-reduce/index';

/** `fn(i: u32, c) -> T`: gen(T(i)) (bool results as 1/0). */
function generateElement(gen: GpuFunction, type: NumericType): WgslFragment {
  const val = valueFragment(gen, [type], type);
  const name = mangle('elem_gen', val.name);
  return fragment({
    name,
    deps: [val],
    code: `fn ${name}(i: u32, c: vec2<u32>) -> ${type} { return ${val.name}(${type}(i)); }`,
  });
}

/**
 * Sets `output[i] = gen(i)` for every element.
 * @param gen a function of the index (in the output's element type) returning that type or a bool
 * @throws ArgumentError naming `output` or `gen`
 */
export function generate(policy: Policy, output: ArrayArg, gen: FunctionArg): Promise<void> {
  return dispatch(policy, () => {
    const out = checkArray(output, 'output');
    const t = out.type;
    const fn = checkFunction(gen, 'gen', 1);
    const r = resultTypeOf(fn, [t], 'gen');
    if (r !== 'bool' && r !== t) {
      throw new ArgumentError(
        'gen',
        `a function of the index returning ${t} (the element type of output) or a boolean`,
        `one returning ${r}`,
      );
    }
    return mapPattern({
      algorithm: 'generate',
      n: out.length,
      inputs: [],
      output: out,
      functions: [{ fn, argTypes: [t] }],
      elem: () => generateElement(fn, t),
      cpu: ({ backend, outputs: [y] }) => cpuGenerate(backend, y as HostArray, out.length, fn, t),
    });
  });
}
