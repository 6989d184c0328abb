/**
 * fill(policy, data, value): every element of `data` becomes `value` (converted to the element
 * type: u32/i32 wrap, f32 rounding).
 *
 * Strategy: CPU: TypedArray.fill, or on shared memory a block doubled with copyWithin (bricks
 * kernels.ts 'fill'; par: per-chunk fills on the worker pool from MAP_PARALLEL_MIN elements when
 * `data` lives in shared memory). GPU: the map engine with no input (vec4 stores where aligned); the value travels
 * as uniform bits, so one pipeline serves every value. A host array is filled on the device and read
 * back, as oneDPL does for host iterators under a device policy.
 * Size tiers: n = 0 returns at once; otherwise see the map engine.
 */

import { coerce, type HostArray } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuFill } from '../bricks/map';
import { type ArrayArg, checkArray, checkNumber } from '../common/args';
import { bitsOf, constantElement } from '../engines/map/elements';
import { mapPattern } from '../engines/map/pattern';
import { dispatch } from '../pattern/dispatch';

/** Sets every element of `data` to `value` (converted to the element type). */
export function fill(policy: Policy, data: ArrayArg, value: number): Promise<void> {
  return dispatch(policy, () => {
    const d = checkArray(data, 'data');
    const v = coerce(d.type, checkNumber(value, 'value'));
    return mapPattern({
      algorithm: 'fill',
      n: d.length,
      inputs: [],
      output: d,
      elem: () => constantElement(d.type),
      constants: [bitsOf(d.type, v), 0],
      cpu: ({ backend, outputs: [y] }) => cpuFill(backend, 0, y as HostArray, d.length, v, d.type),
    });
  });
}
