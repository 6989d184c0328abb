/**
 * setUnion, setIntersection, setDifference, setSymmetricDifference(policy, a, b, output, comp?):
 * std's set operations on sorted ranges, with multiplicities, returning the number of elements
 * written to output[0, count). Among m equivalent elements of a and n of b: union writes the m of a
 * and then the last max(n - m, 0) of b; intersection the first min(m, n) of a; difference the last
 * max(m - n, 0) of a; symmetric difference the last |m - n| of the range that has more. Outputs are
 * sorted (stable: at equivalent elements a's come first). `comp` is the order a and b are sorted by:
 * `less` (default, TypedArray#sort's order: -0 before +0, NaN last; NaNs are equivalent), `greater`,
 * or `(x, y) => boolean`.
 *
 * Strategy: CPU: one merge-like loop with the comparator inlined (par: pieces cut at merge-path
 * splits moved to class boundaries, on the pool). GPU: per element, binary searches give its rank
 * among its equivalents and their count in the other range (one kernel); the scan engine compacts
 * the elements kept; union and symmetric difference merge the kept parts with the merge sort
 * engine's merge path (../merge).
 * Size tiers: n = 0 returns 0 at once; otherwise a few submissions.
 * Limits (GPU): each range within one storage binding (else the CPU, where the policy allows).
 */
import type { DeviceArray, GpuDevice } from '@webdpl/core';
import { ArgumentError } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuSetOp, type SetOp } from '../bricks/set-ops';
import type { KeyArray } from '../bricks/sort/index';
import { type ArrayArg, checkArray, checkNoAlias, checkOutput } from '../common/args';
import { compactionLimit, SCAN_ENGINE } from '../engines/scan';
import { dispatch } from '../pattern/dispatch';
import { type ComparatorArg, checkComparator, checkComparatorType, cpuComparator } from '../sort/comparator-arg';
import { gpuSetOp } from './gpu';

/** Most elements `op` can write for inputs of na and nb elements: the output's required length. */
function capacity(op: SetOp, na: number, nb: number): number {
  switch (op) {
    case 'union':
    case 'symmetricDifference':
      return na + nb;
    case 'intersection':
      return Math.min(na, nb);
    case 'difference':
      return na;
  }
}

function setOp(
  policy: Policy,
  algorithm: string,
  op: SetOp,
  aArg: ArrayArg,
  bArg: ArrayArg,
  output: ArrayArg,
  comp: ComparatorArg | undefined,
): Promise<number> {
  return dispatch(policy, () => {
    const a = checkArray(aArg, 'a');
    const b = checkArray(bArg, 'b');
    const t = a.type;
    if (b.type !== t) throw new ArgumentError('b', `an array of ${t} elements (the type of a)`, `${b.type} elements`);
    const c = checkComparator(comp, 'comp');
    checkComparatorType(c, t, 'comp');
    const cap = capacity(op, a.length, b.length);
    const out = checkOutput(output, 'output', cap, t);
    checkNoAlias(a, out, 'a', 'output');
    checkNoAlias(b, out, 'b', 'output');
    return {
      algorithm,
      engine: SCAN_ENGINE,
      n: a.length + b.length,
      inputs: [a, b],
      outputs: [{ arg: out, length: Math.max(cap, 1) }],
      functions: c.kind === 'host-only' ? [] : [{ fn: c.fn, argTypes: [t, t] }],
      gpuCheck: (device: GpuDevice) =>
        c.kind === 'host-only'
          ? `the comparator cannot run on the GPU: ${c.why}`
          : compactionLimit(device, a.length + b.length),
      empty: () => 0,
      cpu: ({ backend, inputs: [x, y], outputs: [o] }) =>
        cpuSetOp(backend, op, x as KeyArray, y as KeyArray, o as KeyArray, cpuComparator(c, t)),
      gpu: (call) => {
        if (c.kind === 'host-only') throw new Error('unreachable: host-only comparator on the GPU');
        const [x, y] = call.inputs as DeviceArray[];
        return gpuSetOp(call, algorithm, op, x as DeviceArray, y as DeviceArray, call.outputs[0] as DeviceArray, c.fn);
      },
    };
  });
}

/**
 * std::set_union of sorted a and b into output; returns the number of elements written.
 * @param output at least a.length + b.length elements of a's type, not overlapping a or b
 * @param comp the order of a and b: `less` (default), `greater` or `(x, y) => boolean`
 */
export function setUnion(
  policy: Policy,
  a: ArrayArg,
  b: ArrayArg,
  output: ArrayArg,
  comp?: ComparatorArg,
): Promise<number> {
  return setOp(policy, 'setUnion', 'union', a, b, output, comp);
}

/**
 * std::set_intersection of sorted a and b (elements taken from a); returns the count written.
 * @param output at least min(a.length, b.length) elements of a's type, not overlapping a or b
 */
export function setIntersection(
  policy: Policy,
  a: ArrayArg,
  b: ArrayArg,
  output: ArrayArg,
  comp?: ComparatorArg,
): Promise<number> {
  return setOp(policy, 'setIntersection', 'intersection', a, b, output, comp);
}

/**
 * std::set_difference: the elements of sorted a not matched in sorted b; returns the count written.
 * @param output at least a.length elements of a's type, not overlapping a or b
 */
export function setDifference(
  policy: Policy,
  a: ArrayArg,
  b: ArrayArg,
  output: ArrayArg,
  comp?: ComparatorArg,
): Promise<number> {
  return setOp(policy, 'setDifference', 'difference', a, b, output, comp);
}

/**
 * std::set_symmetric_difference of sorted a and b; returns the count written.
 * @param output at least a.length + b.length elements of a's type, not overlapping a or b
 */
export function setSymmetricDifference(
  policy: Policy,
  a: ArrayArg,
  b: ArrayArg,
  output: ArrayArg,
  comp?: ComparatorArg,
): Promise<number> {
  return setOp(policy, 'setSymmetricDifference', 'symmetricDifference', a, b, output, comp);
}
