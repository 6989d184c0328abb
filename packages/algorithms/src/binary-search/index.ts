/**
 * Vectorized searches over a sorted input (oneDPL's lower_bound / upper_bound / binary_search with
 * many values at once): for each query, lowerBound gives the first index whose element does not go
 * before it, upperBound the first index whose element goes after it, binarySearch 1 when an
 * equivalent element exists (else 0). `sorted` must be sorted by the same `comp` (default `less`).
 * Results are u32, one per query, in `result` (created when omitted: a Uint32Array for host queries,
 * a DeviceArray<'u32'> on the device for DeviceArray queries).
 *
 * Strategy: CPU: a binary search per query (seq), chunks of queries on the pool (par). GPU: one
 * thread per query in one dispatch.
 * Size tiers: no queries return at once; an empty `sorted` fills 0 without a search.
 */
import { ArgumentError, DeviceArray, describe, type HostArray, isGpuFunction } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuSearch } from '../bricks/search';
import { type ArrayArg, type CheckedArray, checkArray, checkNoAlias, checkOutput } from '../common/args';
import { dispatch } from '../pattern/dispatch';
import { type ComparatorArg, checkComparator, checkComparatorType, cpuComparator } from '../sort/comparator-arg';
import { gpuSearch } from './gpu';
import type { SearchKind } from './kernels';

export { binarySearchTuning } from './tuning';

/** The result of a search: like the queries, host or device. */
export type SearchResult = Uint32Array | DeviceArray<'u32'>;

const NAMES: Record<SearchKind, string> = { lower: 'lowerBound', upper: 'upperBound', binary: 'binarySearch' };

function runSearch(
  kind: SearchKind,
  policy: Policy,
  sortedArg: ArrayArg,
  queriesArg: ArrayArg,
  resultArg: unknown,
  compArg: unknown,
): Promise<SearchResult> {
  return dispatch<SearchResult>(policy, () => {
    // A comparator in the result's place (result omitted) is accepted.
    let resultIn = resultArg;
    let comp = compArg;
    if (comp === undefined && (typeof resultIn === 'function' || isGpuFunction(resultIn))) {
      comp = resultIn;
      resultIn = undefined;
    }
    const sorted = checkArray(sortedArg, 'sorted');
    const queries = checkArray(queriesArg, 'queries');
    if (queries.type !== sorted.type) {
      throw new ArgumentError('queries', `an array of ${sorted.type} (the type of sorted)`, `${queries.type} elements`);
    }
    const m = queries.length;
    let result: CheckedArray;
    if (resultIn !== undefined) {
      if (!(resultIn instanceof Uint32Array) && !(resultIn instanceof DeviceArray)) {
        throw new ArgumentError('result', 'a Uint32Array or a DeviceArray of u32', describe(resultIn));
      }
      result = checkOutput(resultIn, 'result', m, 'u32');
      // The searches read sorted and queries while writing result: no shared memory.
      checkNoAlias(sorted, result, 'sorted', 'result');
      checkNoAlias(queries, result, 'queries', 'result');
    } else if (queries.kind === 'device') {
      queries.array.check(undefined, 'queries');
      const out = DeviceArray.create(queries.array.device, 'u32', m);
      result = { kind: 'device', array: out, type: 'u32', length: m };
    } else {
      result = { kind: 'host', array: new Uint32Array(m), type: 'u32', length: m };
    }
    const c = checkComparator(comp, 'comp');
    const t = sorted.type;
    checkComparatorType(c, t, 'comp');
    const out = result.array as SearchResult;
    return {
      algorithm: NAMES[kind],
      engine: 'binary-search',
      // No queries, or nothing to search in (every answer is 0: `empty` writes them).
      n: sorted.length === 0 ? 0 : m,
      inputs: [sorted, queries],
      outputs: [{ arg: result, length: m }],
      functions: c.kind === 'gpu' ? [{ fn: c.fn, argTypes: [t, t] }] : [],
      gpuCheck: c.kind === 'host-only' ? () => `the comparator cannot run on the GPU: ${c.why}` : undefined,
      recordable: true,
      empty: () => {
        if (m > 0) {
          if (result.kind === 'host') (result.array as Uint32Array).fill(0, 0, m);
          else (result.array.view(0, m) as DeviceArray<'u32'>).write(new Uint32Array(m));
        }
        return out;
      },
      cpu: async ({ backend, inputs: [s, q], outputs: [r] }) => {
        await cpuSearch(
          backend,
          kind,
          s as HostArray,
          q as HostArray,
          (r as Uint32Array).subarray(0, m),
          cpuComparator(c, t),
        );
        return out;
      },
      gpu: async ({ device, tuning, inputs: [s, q], outputs: [r], readBack, deliver }) => {
        if (c.kind === 'host-only') throw new Error('unreachable: host-only comparator on the GPU');
        const bytes = await gpuSearch(
          device,
          tuning,
          kind,
          s as DeviceArray,
          q as DeviceArray,
          r as DeviceArray,
          c.fn,
          readBack(0),
        );
        deliver(0, bytes, m);
        return out;
      },
    };
  });
}

/**
 * For each query, the first index of `sorted` whose element does not go before it.
 * @param result u32 per query (created when omitted)
 * @param comp the order `sorted` is sorted by; default less
 * @throws ArgumentError naming `sorted`, `queries`, `result` or `comp`
 */
export function lowerBound(
  policy: Policy,
  sorted: HostArray,
  queries: HostArray,
  result?: Uint32Array | ComparatorArg,
  comp?: ComparatorArg,
): Promise<Uint32Array>;
export function lowerBound(
  policy: Policy,
  sorted: ArrayArg,
  queries: ArrayArg,
  result?: SearchResult | ComparatorArg,
  comp?: ComparatorArg,
): Promise<SearchResult>;
export function lowerBound(
  policy: Policy,
  sorted: ArrayArg,
  queries: ArrayArg,
  result?: unknown,
  comp?: ComparatorArg,
): Promise<SearchResult> {
  return runSearch('lower', policy, sorted, queries, result, comp);
}

/**
 * For each query, the first index of `sorted` whose element goes after it.
 * @param result u32 per query (created when omitted)
 * @param comp the order `sorted` is sorted by; default less
 * @throws ArgumentError naming `sorted`, `queries`, `result` or `comp`
 */
export function upperBound(
  policy: Policy,
  sorted: HostArray,
  queries: HostArray,
  result?: Uint32Array | ComparatorArg,
  comp?: ComparatorArg,
): Promise<Uint32Array>;
export function upperBound(
  policy: Policy,
  sorted: ArrayArg,
  queries: ArrayArg,
  result?: SearchResult | ComparatorArg,
  comp?: ComparatorArg,
): Promise<SearchResult>;
export function upperBound(
  policy: Policy,
  sorted: ArrayArg,
  queries: ArrayArg,
  result?: unknown,
  comp?: ComparatorArg,
): Promise<SearchResult> {
  return runSearch('upper', policy, sorted, queries, result, comp);
}

/**
 * For each query, 1 when `sorted` holds an element equivalent to it (neither goes before the
 * other), else 0.
 * @param result u32 per query (created when omitted)
 * @param comp the order `sorted` is sorted by; default less
 * @throws ArgumentError naming `sorted`, `queries`, `result` or `comp`
 */
export function binarySearch(
  policy: Policy,
  sorted: HostArray,
  queries: HostArray,
  result?: Uint32Array | ComparatorArg,
  comp?: ComparatorArg,
): Promise<Uint32Array>;
export function binarySearch(
  policy: Policy,
  sorted: ArrayArg,
  queries: ArrayArg,
  result?: SearchResult | ComparatorArg,
  comp?: ComparatorArg,
): Promise<SearchResult>;
export function binarySearch(
  policy: Policy,
  sorted: ArrayArg,
  queries: ArrayArg,
  result?: unknown,
  comp?: ComparatorArg,
): Promise<SearchResult> {
  return runSearch('binary', policy, sorted, queries, result, comp);
}
