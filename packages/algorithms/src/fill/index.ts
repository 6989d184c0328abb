/**
 * fill(policy, data, value): every element of `data` becomes `value` (converted to the element
 * type: u32/i32 wrap, f32 rounding).
 *
 * Strategy: CPU: TypedArray.fill (par: per-chunk fills on the worker pool when `data` lives in
 * shared memory). GPU: the map engine with no input (vec4 stores where aligned); the value travels
 * as uniform bits, so one pipeline serves every value. A host array is filled on the device and read
 * back, as oneDPL does for host iterators under a device policy.
 * Size tiers: n = 0 returns at once; otherwise see the map engine.
 */

import { coerce } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuFill } from '../bricks/map';
import { type ArrayArg, checkArray, checkNumber } from '../common/args';
import { bitsOf, constantElement } from '../engines/map/elements';
import { runMap, runMapCall } from '../engines/map/run';

/** Sets every element of `data` to `value` (converted to the element type). */
export async function fill(policy: Policy, data: ArrayArg, value: number): Promise<void> {
  const d = checkArray(data, 'data');
  const v = coerce(d.type, checkNumber(value, 'value'));
  await runMapCall(policy, {
    algorithm: 'fill',
    n: d.length,
    inputs: [],
    output: d,
    cpu: (backend, _, y) => cpuFill(backend, 0, y, d.length, v, d.type),
    gpu: (device, tuning) =>
      runMap(device, {
        label: 'fill',
        n: d.length,
        inputs: [],
        output: d,
        elem: constantElement(d.type),
        constants: [bitsOf(d.type, v), 0],
        tuning,
        tuningName: 'fill',
      }),
  });
}
