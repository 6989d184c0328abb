/**
 * forEach(policy, data, fn): data[i] = fn(data[i]) for every element, in place (oneDPL's for_each
 * with a function that returns the new value). It is a map: `fn` must be pure. JS side effects
 * (writing to outside variables, logging, counting calls) are not supported: the GPU runs fn's
 * WGSL translation, and the par backend runs it in worker threads.
 *
 * Strategy: CPU: the policies' transform engine in place (par: per-chunk loops on the worker pool).
 * GPU: the map engine in place (the data is read and written through one binding; vec4 where
 * aligned). A host array is uploaded and read back in the same command buffer.
 * Size tiers: n = 0 returns at once; otherwise see the map engine.
 */
import { ArgumentError, type HostArray, type NumericType } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuForEach, cpuTransformIndex } from '../bricks/transform';
import { type ArrayArg, checkArray, checkFunction, paramCount } from '../common/args';
import { resultTypeOf } from '../common/predicates';
import { functionElement, indexFunctionElement } from '../engines/map/elements';
import { mapPattern } from '../engines/map/pattern';
import { dispatch } from '../pattern/dispatch';
import type { FunctionArg } from '../transform-reduce/index';

/**
 * Replaces every element of `data` by `fn(element)`, in place; with an index lambda
 * `(x, i) => ...`, by `fn(element, i)` (i the element's index, u32).
 * @param fn a pure unary function of the element type returning that type (or a bool, stored as 1/0),
 * or such a function of the element and its index
 */
export function forEach(policy: Policy, data: ArrayArg, fn: FunctionArg): Promise<void> {
  return dispatch(policy, () => {
    const d = checkArray(data, 'data');
    const indexed = paramCount(fn) === 2;
    const f = checkFunction(fn, 'fn', indexed ? 2 : 1);
    const argTypes: NumericType[] = indexed ? [d.type, 'u32'] : [d.type];
    const r = resultTypeOf(f, argTypes, 'fn');
    if (r !== 'bool' && r !== d.type) {
      throw new ArgumentError('fn', `a function returning ${d.type} (the element type of data)`, `one returning ${r}`);
    }
    return mapPattern({
      algorithm: 'forEach',
      n: d.length,
      inputs: [d],
      output: d,
      functions: [{ fn: f, argTypes }],
      elem: () => (indexed ? indexFunctionElement(f, [d.type], d.type) : functionElement(f, [d.type], d.type)),
      cpu: ({ backend, inputs: [x] }) =>
        indexed
          ? cpuTransformIndex(backend, x as HostArray, d.length, x as HostArray, f)
          : cpuForEach(backend, x as HostArray, f),
    });
  });
}
