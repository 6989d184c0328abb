/**
 * iota(policy, data, start = 0): data[i] = start + i in the element type: u32/i32 wrap around;
 * f32 is f32(start) + f32(i) rounded once (exact while the values stay below 2^24 in magnitude,
 * unlike std::iota's repeated increments, which stop growing at 2^24).
 *
 * Strategy: CPU: one typed-array loop (par: per-chunk loops on the worker pool when `data` lives in
 * shared memory). GPU: the map engine with no input (vec4 stores where aligned; the element index
 * counts from the start of `data` across storage-binding segments); `start` travels as uniform
 * bits, so one pipeline serves every start.
 * Size tiers: n = 0 returns at once; otherwise see the map engine.
 */

import { coerce, type HostArray } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuFill } from '../bricks/map';
import { type ArrayArg, checkArray, checkNumber } from '../common/args';
import { bitsOf, iotaElement } from '../engines/map/elements';
import { mapPattern } from '../engines/map/pattern';
import { dispatch } from '../pattern/dispatch';

/**
 * Sets `data[i] = start + i` in the element type.
 * @param start the first value, converted to the element type. @default 0
 */
export function iota(policy: Policy, data: ArrayArg, start = 0): Promise<void> {
  return dispatch(policy, () => {
    const d = checkArray(data, 'data');
    const s = coerce(d.type, checkNumber(start, 'start'));
    return mapPattern({
      algorithm: 'iota',
      n: d.length,
      inputs: [],
      output: d,
      elem: () => iotaElement(d.type),
      constants: [bitsOf(d.type, s), 0],
      cpu: ({ backend, outputs: [y] }) => cpuFill(backend, 1, y as HostArray, d.length, s, d.type),
    });
  });
}
