/**
 * nthElement(policy, data, n, comp?), partialSort(policy, data, k, comp?) and
 * topK(policy, input, k, output, options?): selection by the sort family's orders (`less` by
 * default: TypedArray#sort's order, -0 before +0, NaN last; `greater`; or `(a, b) => boolean`).
 *  - nthElement (std::nth_element): in place; data[n] becomes what a sort would put there, nothing
 *    before it goes after it and nothing after it goes before it.
 *  - partialSort (std::partial_sort): in place; data[0, k) becomes the k first elements in sorted
 *    order, the rest in no particular order.
 *  - topK: output[0, k) = the k smallest (`largest`: the k largest, NaN still last) of input, sorted;
 *    input untouched.
 *
 * Strategy: CPU: built-in orders from 4096 elements a radix select (bricks/radix-select.ts: three
 * digit-histogram passes over the key bits, then a stable partition around the k-th key; par on the
 * pool over shared data), other comparators and smaller inputs an introselect with the comparator
 * inlined (bricks/select.ts); then for partialSort and topK the sort family's CPU sort of the k - 1
 * before the k-th (on the pool where the sort would). GPU (built-in orders):
 * a radix select over the radix sort's order-preserving key bits (4 histogram rounds of 8-bit
 * digits, the later two over the candidates left after the top digit, then a scatter of the
 * elements below / equal / above the k-th key; one submission), then the radix sort of the k
 * selected; user comparators sort the range with the merge-sort engine, as sort does.
 * Size tiers: nothing to do (n < 2, k = 0) returns at once; up to `fullSortMax` keys (tuning) the
 * GPU sorts the whole range; beyond, the radix select.
 * Limits (GPU): the data within one storage binding (else the CPU, where the policy allows).
 */
import { ArgumentError, describe } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuNthElement, cpuPartialSort, cpuTopK } from '../bricks/select';
import type { KeyArray } from '../bricks/sort/index';
import { type ArrayArg, type CheckedArray, checkArray, checkNoAlias, checkOutput } from '../common/args';
import { dispatch, type Pattern } from '../pattern/dispatch';
import {
  type Comparator,
  type ComparatorArg,
  checkComparator,
  checkComparatorType,
  cpuComparator,
} from '../sort/comparator-arg';
import { greater } from '../sort/comparators';
import { sortGpuCheck } from '../sort/sort-call';
import { gpuSelectInPlace, gpuTopK } from './gpu';

/** Options of topK. */
export interface TopKOptions {
  /** The k largest (descending, NaN last) instead of the k smallest. @default false */
  readonly largest?: boolean;
  /** The order to take the first k of (instead of `largest`): `less`, `greater` or `(a, b) => boolean`. @default less */
  readonly comp?: ComparatorArg;
}

/** Checks an index or count argument: an integer in [0, max] (`max` inclusive). */
function checkIndex(x: unknown, argument: string, max: number, what: string): number {
  if (typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x > max) {
    throw new ArgumentError(argument, `${what} in [0, ${max}]`, typeof x === 'number' ? String(x) : describe(x));
  }
  return x;
}

/** The parts of a selection pattern every front shares. */
function selectPattern(
  algorithm: string,
  data: CheckedArray,
  c: Comparator,
): Pick<Pattern<void>, 'algorithm' | 'engine' | 'functions' | 'gpuCheck' | 'empty'> {
  checkComparatorType(c, data.type, 'comp');
  return {
    algorithm,
    engine: c.kind === 'builtin' ? 'radix-sort' : 'merge-sort',
    functions: c.kind === 'gpu' ? [{ fn: c.fn, argTypes: [data.type, data.type] }] : [],
    gpuCheck: sortGpuCheck(c, data.length),
    empty: () => undefined,
  };
}

/** The GPU form of a checked comparator (backend selection keeps host-only ones on the CPU). */
function onDevice(c: Comparator): Exclude<Comparator, { kind: 'host-only' }> {
  if (c.kind === 'host-only') throw new ArgumentError('comp', 'a comparator the GPU can run', c.why);
  return c;
}

/** In-place selection: nthElement (`sortFirst` 0) or partialSort (`sortFirst` k). */
function inPlace(
  policy: Policy,
  algorithm: 'nthElement' | 'partialSort',
  dataArg: ArrayArg,
  index: unknown,
  comp: unknown,
): Promise<void> {
  return dispatch(policy, () => {
    const data = checkArray(dataArg, 'data');
    const len = data.length;
    const nth = algorithm === 'nthElement';
    const at = nth
      ? checkIndex(index, 'n', len - 1, 'an index of data')
      : checkIndex(index, 'k', len, 'a count of elements');
    if (nth && len === 0) throw new ArgumentError('n', 'an index of data (data is empty)', String(index));
    const c = checkComparator(comp, 'comp');
    const t = data.type;
    return {
      ...selectPattern(algorithm, data, c),
      // Nothing to move: fewer than 2 elements, or no element to sort.
      n: len < 2 || (at === 0 && !nth) ? 0 : len,
      outputs: [{ arg: data, upload: true }],
      recordable: false,
      cpu: ({ backend, outputs: [d] }) =>
        nth
          ? cpuNthElement(backend, d as KeyArray, at, t, cpuComparator(c, t))
          : cpuPartialSort(backend, d as KeyArray, at, t, cpuComparator(c, t)),
      gpu: (call) => gpuSelectInPlace(call, algorithm, nth ? at : at - 1, nth ? 0 : at, onDevice(c)),
    };
  });
}

/**
 * Rearranges `data` in place so that data[n] is the element a sort by `comp` puts there, with no
 * element before it going after it and none after it going before it (std::nth_element).
 * @param n an index of data (0 <= n < data.length)
 * @param comp default: less (ascending, -0 before +0, NaN last); greater; or `(a, b) => boolean`
 * @throws ArgumentError naming `data`, `n` or `comp` (the data is untouched)
 */
export function nthElement(policy: Policy, data: ArrayArg, n: number, comp?: ComparatorArg): Promise<void> {
  return inPlace(policy, 'nthElement', data, n, comp);
}

/**
 * Rearranges `data` in place so that data[0, k) holds its k first elements by `comp` in sorted
 * order; the others follow in no particular order (std::partial_sort).
 * @param k 0 <= k <= data.length
 * @param comp default: less; greater; or `(a, b) => boolean`
 * @throws ArgumentError naming `data`, `k` or `comp` (the data is untouched)
 */
export function partialSort(policy: Policy, data: ArrayArg, k: number, comp?: ComparatorArg): Promise<void> {
  return inPlace(policy, 'partialSort', data, k, comp);
}

/**
 * Writes the k smallest elements of `input` (`largest`: the k largest) in sorted order to
 * output[0, k); input is untouched and output past k too.
 * @param k 0 <= k <= input.length
 * @param output at least k elements of input's type, not overlapping input
 * @param options `largest` (default false) or `comp` (default less), not both
 * @throws ArgumentError naming `input`, `k`, `output` or `options`
 */
export function topK(
  policy: Policy,
  input: ArrayArg,
  k: number,
  output: ArrayArg,
  options: TopKOptions = {},
): Promise<void> {
  return dispatch(policy, () => {
    const x = checkArray(input, 'input');
    const count = checkIndex(k, 'k', x.length, 'a count of elements of input');
    const out = checkOutput(output, 'output', count, x.type);
    checkNoAlias(x, out, 'input', 'output');
    if (typeof options !== 'object' || options === null) {
      throw new ArgumentError('options', '{ largest?: boolean, comp? }', describe(options));
    }
    if (options.largest !== undefined && typeof options.largest !== 'boolean') {
      throw new ArgumentError('options.largest', 'a boolean', describe(options.largest));
    }
    if (options.largest !== undefined && options.comp !== undefined) {
      throw new ArgumentError('options', 'either largest or comp, not both');
    }
    const c = checkComparator(options.largest ? greater : options.comp, 'comp');
    const t = x.type;
    return {
      ...selectPattern('topK', x, c),
      n: count === 0 ? 0 : x.length,
      inputs: [x],
      outputs: [{ arg: out, length: count }],
      cpu: ({ backend, inputs: [i], outputs: [o] }) =>
        cpuTopK(backend, i as KeyArray, count, o as KeyArray, t, cpuComparator(c, t)),
      gpu: (call) => gpuTopK(call, 'topK', count, onDevice(c)),
    };
  });
}
