/**
 * merge(policy, a, b, output, comp?) and mergeByKey(policy, keysA, keysB, valuesA, valuesB,
 * keysOut, valuesOut, comp?): the stable merge of two sorted ranges (std::merge, Thrust's
 * merge_by_key). Output element i of the a.length + b.length written is the merged order; between
 * equivalent elements a's come first, each range's in their order. `comp` is the order the inputs are
 * sorted by: `less` by default (TypedArray#sort's order: -0 before +0, NaN last), `greater`, or a
 * strict weak order `(x, y) => boolean`. Values are any 4-byte elements, moved as bits.
 *
 * Strategy: CPU: the merge sort's merge over the two ranges end to end (par: merge-path pieces on
 * the pool). GPU: the merge sort engine's merge-path partition and tile merge, reading a and b as
 * one range (one pair of runs): 1 read + 1 write of the data, two dispatches.
 * Size tiers: n = 0 returns at once; one empty input is a copy of the other; otherwise one pass.
 * Beyond one storage binding (GPU): the output in windows of one binding, each merged from the input
 * ranges that merge-path searches (host-driven, a few round trips) find for it.
 */
import { ArgumentError, type DeviceArray } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuMerge } from '../bricks/merge';
import type { KeyArray } from '../bricks/sort/index';
import {
  type ArrayArg,
  type CheckedArray,
  checkArray,
  checkNoAlias,
  checkOutput,
  checkSameLength,
} from '../common/args';
import { dispatch, type Pattern } from '../pattern/dispatch';
import { type ComparatorArg, checkComparator, checkComparatorType, cpuComparator } from '../sort/comparator-arg';
import { gpuMerge } from './gpu';

/** Checks that `b` holds elements of a's type. */
function checkSameType(a: CheckedArray, b: CheckedArray, nameA: string, nameB: string): void {
  if (a.type !== b.type) {
    throw new ArgumentError(nameB, `an array of ${a.type} elements (the type of ${nameA})`, `${b.type} elements`);
  }
}

function mergePattern(
  algorithm: string,
  a: CheckedArray,
  b: CheckedArray,
  outArg: ArrayArg,
  comp: ComparatorArg | undefined,
  values?: { readonly a: CheckedArray; readonly b: CheckedArray; readonly out: ArrayArg },
): Pattern<void> {
  const names = values ? ['keysA', 'keysB', 'keysOut'] : ['a', 'b', 'output'];
  checkSameType(a, b, names[0] as string, names[1] as string);
  const n = a.length + b.length;
  const c = checkComparator(comp, 'comp');
  const t = a.type;
  checkComparatorType(c, t, 'comp');
  const out = checkOutput(outArg, names[2] as string, n, t);
  for (const [x, nm] of [
    [a, names[0]],
    [b, names[1]],
  ] as const) {
    checkNoAlias(x, out, nm as string, names[2] as string);
  }
  const inputs = [a, b];
  const outputs = [{ arg: out, length: n }];
  if (values) {
    checkSameLength(a, values.a, 'keysA', 'valuesA');
    checkSameLength(b, values.b, 'keysB', 'valuesB');
    checkSameType(values.a, values.b, 'valuesA', 'valuesB');
    const vout = checkOutput(values.out, 'valuesOut', n, values.a.type);
    for (const [x, nm] of [
      [a, 'keysA'],
      [b, 'keysB'],
      [values.a, 'valuesA'],
      [values.b, 'valuesB'],
      [out, 'keysOut'],
    ] as const) {
      checkNoAlias(x, vout, nm, 'valuesOut');
    }
    inputs.push(values.a, values.b);
    outputs.push({ arg: vout, length: n });
  }
  return {
    algorithm,
    engine: 'merge-sort',
    n,
    inputs,
    outputs,
    functions: c.kind === 'host-only' ? [] : [{ fn: c.fn, argTypes: [t, t] }],
    gpuCheck: c.kind === 'host-only' ? () => `the comparator cannot run on the GPU: ${c.why}` : undefined,
    empty: () => undefined,
    cpu: ({ backend, inputs: [x, y, vx, vy], outputs: [o, vo] }) =>
      cpuMerge(
        backend,
        x as KeyArray,
        y as KeyArray,
        o as KeyArray,
        t,
        cpuComparator(c, t),
        vx && vy && vo ? { a: vx as KeyArray, b: vy as KeyArray, out: vo as KeyArray } : undefined,
      ),
    gpu: (call) => {
      if (c.kind === 'host-only') throw new Error('unreachable: host-only comparator on the GPU');
      const [x, y, vx, vy] = call.inputs as DeviceArray[];
      const [o, vo] = call.outputs as DeviceArray[];
      return gpuMerge(
        call,
        algorithm,
        {
          a: x as DeviceArray,
          b: y as DeviceArray,
          out: o as DeviceArray,
          values: vx && vy && vo ? { a: vx, b: vy, out: vo } : undefined,
        },
        c.fn,
      );
    },
  };
}

/**
 * Merges sorted `a` and `b` into `output` (a.length + b.length elements written, stable).
 * @param output at least a.length + b.length elements of a's type, not overlapping a or b
 * @param comp the order of a and b: `less` (default), `greater` or `(x, y) => boolean`
 * @throws ArgumentError naming `a`, `b`, `output` or `comp`
 */
export function merge(policy: Policy, a: ArrayArg, b: ArrayArg, output: ArrayArg, comp?: ComparatorArg): Promise<void> {
  return dispatch(policy, () => mergePattern('merge', checkArray(a, 'a'), checkArray(b, 'b'), output, comp));
}

/**
 * Merges sorted `keysA` and `keysB` into `keysOut` (stable), moving `valuesA` / `valuesB` along into
 * `valuesOut` (Thrust's merge_by_key).
 * @param valuesA, valuesB as many elements as their keys, of one 4-byte type
 * @param keysOut, valuesOut at least keysA.length + keysB.length elements (keys' and values' types),
 *   overlapping no other argument
 * @param comp the order of the keys: `less` (default), `greater` or `(x, y) => boolean`
 * @throws ArgumentError naming the argument at fault
 */
export function mergeByKey(
  policy: Policy,
  keysA: ArrayArg,
  keysB: ArrayArg,
  valuesA: ArrayArg,
  valuesB: ArrayArg,
  keysOut: ArrayArg,
  valuesOut: ArrayArg,
  comp?: ComparatorArg,
): Promise<void> {
  return dispatch(policy, () =>
    mergePattern('mergeByKey', checkArray(keysA, 'keysA'), checkArray(keysB, 'keysB'), keysOut, comp, {
      a: checkArray(valuesA, 'valuesA'),
      b: checkArray(valuesB, 'valuesB'),
      out: valuesOut,
    }),
  );
}
