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
import { ArgumentError, type HostArray } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuForEach } from '../bricks/transform';
import { type ArrayArg, checkArray, checkFunction } from '../common/args';
import { resultTypeOf } from '../common/predicates';
import { functionElement } from '../engines/map/elements';
import { mapPattern } from '../engines/map/pattern';
import { dispatch } from '../pattern/dispatch';
import type { FunctionArg } from '../transform-reduce/index';

/**
 * Replaces every element of `data` by `fn(element)`, in place.
 * @param fn a pure unary function of the element type returning that type (or a bool, stored as 1/0)
 */
export function forEach(policy: Policy, data: ArrayArg, fn: FunctionArg): Promise<void> {
  return dispatch(policy, () => {
    const d = checkArray(data, 'data');
    const f = checkFunction(fn, 'fn', 1);
    const r = resultTypeOf(f, [d.type], 'fn');
    if (r !== 'bool' && r !== d.type) {
      throw new ArgumentError('fn', `a function returning ${d.type} (the element type of data)`, `one returning ${r}`);
    }
    return mapPattern({
      algorithm: 'forEach',
      n: d.length,
      inputs: [d],
      output: d,
      functions: [{ fn: f, argTypes: [d.type] }],
      elem: () => functionElement(f, [d.type], d.type),
      cpu: ({ backend, inputs: [x] }) => cpuForEach(backend, x as HostArray, f),
    });
  });
}
