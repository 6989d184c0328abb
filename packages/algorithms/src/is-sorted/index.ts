/**
 * isSorted(policy, data, comp?) and isSortedUntil(policy, data, comp?): whether `data` is ordered by
 * `comp` (default `less`: TypedArray#sort's order, NaN last), and the index of the first element
 * that goes before its predecessor (data.length when sorted).
 *
 * Strategy: CPU: one loop stopping at the first violation (seq), chunks on the pool with the first
 * violating chunk winning (par). GPU: one kernel checking adjacent pairs, the earliest violation
 * kept by atomicMax of n - i, and a 4-byte readback.
 * Size tiers: n < 2 returns at once (sorted); otherwise one pass (one dispatch on the GPU).
 */
import type { DeviceArray, HostArray } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuIsSortedUntil } from '../bricks/is-sorted';
import { type ArrayArg, checkArray } from '../common/args';
import { dispatch } from '../pattern/dispatch';
import { type ComparatorArg, checkComparator, checkComparatorType, cpuComparator } from '../sort/comparator-arg';
import { gpuIsSortedUntil } from './gpu';

export { isSortedTuning } from './tuning';

/**
 * Index of the first element of `data` that goes before its predecessor under `comp`, or
 * data.length when `data` is sorted.
 * @param comp default: less; greater; or `(a, b) => boolean` ("a goes before b")
 * @throws ArgumentError naming `data` or `comp`
 */
export function isSortedUntil(policy: Policy, data: ArrayArg, comp?: ComparatorArg): Promise<number> {
  return dispatch(policy, () => {
    const d = checkArray(data, 'data');
    const c = checkComparator(comp, 'comp');
    const t = d.type;
    checkComparatorType(c, t, 'comp');
    return {
      algorithm: 'isSorted',
      engine: 'is-sorted',
      // Fewer than 2 elements are sorted.
      n: d.length < 2 ? 0 : d.length,
      inputs: [d],
      functions: c.kind === 'gpu' ? [{ fn: c.fn, argTypes: [t, t] }] : [],
      gpuCheck: c.kind === 'host-only' ? () => `the comparator cannot run on the GPU: ${c.why}` : undefined,
      empty: () => d.length,
      cpu: ({ backend, inputs: [x] }) => cpuIsSortedUntil(backend, x as HostArray, cpuComparator(c, t)),
      gpu: ({ device, tuning, inputs: [x] }) => {
        if (c.kind === 'host-only') throw new Error('unreachable: host-only comparator on the GPU');
        return gpuIsSortedUntil(device, tuning, x as DeviceArray, c.fn);
      },
    };
  });
}

/**
 * Whether `data` is sorted under `comp` (no element goes before its predecessor).
 * @param comp default: less; greater; or `(a, b) => boolean` ("a goes before b")
 * @throws ArgumentError naming `data` or `comp`
 */
export async function isSorted(policy: Policy, data: ArrayArg, comp?: ComparatorArg): Promise<boolean> {
  const until = await isSortedUntil(policy, data, comp);
  return until === (data as { length: number }).length;
}
