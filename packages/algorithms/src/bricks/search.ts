/**
 * CPU backend of the vectorized searches: seq: a binary search per query; par (from the pool's
 * parallel threshold, comparators with a source): chunks of queries on the pool over shared memory.
 */
import type { HostArray } from '@webdpl/core';
import { type CpuBackend, planParallel, toShared } from '@webdpl/policies';
import type { SearchKind } from '../binary-search/kernels';
import type { CpuComparator } from './sort';

interface Job {
  readonly kind: SearchKind;
  readonly sorted: HostArray;
  readonly queries: HostArray;
  readonly result: Uint32Array;
  readonly begin: number;
  readonly end: number;
  readonly source?: string;
  readonly before?: (a: number, b: number) => boolean;
}

/** The task (self-contained: shipped to workers as source; also run on the calling thread). */
const searchTask = function searchTask(job: Job): number {
  // Workers compile the comparator once per source (one function object keeps call sites monomorphic).
  const compiled = ((globalThis as { __webdplComparators?: Map<string, unknown> }).__webdplComparators ??= new Map());
  let fromSource = compiled.get(String(job.source)) as ((a: number, b: number) => boolean) | undefined;
  if (!job.before && !fromSource) {
    fromSource = new Function(`return (${job.source});`)() as (a: number, b: number) => boolean;
    compiled.set(String(job.source), fromSource);
  }
  const before = (job.before ?? fromSource) as (a: number, b: number) => boolean;
  const s = job.sorted;
  const n = s.length;
  const upper = job.kind === 'upper';
  for (let q = job.begin; q < job.end; q++) {
    const x = job.queries[q] as number;
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (upper ? !before(x, s[mid] as number) : before(s[mid] as number, x)) lo = mid + 1;
      else hi = mid;
    }
    if (job.kind === 'binary') job.result[q] = lo < n && !before(x, s[lo] as number) ? 1 : 0;
    else job.result[q] = lo;
  }
  return 0;
};

/** Writes the search results of every query into `result`. */
export async function cpuSearch(
  backend: CpuBackend,
  kind: SearchKind,
  sorted: HostArray,
  queries: HostArray,
  result: Uint32Array,
  comp: CpuComparator,
): Promise<void> {
  const m = queries.length;
  const chunks = planParallel(backend, m);
  if (!chunks || backend.kind !== 'par' || comp.source === undefined) {
    searchTask({ kind, sorted, queries, result, begin: 0, end: m, before: comp.before });
    return;
  }
  const s = toShared(sorted);
  const q = toShared(queries);
  const r = toShared(result);
  const source = comp.source;
  await backend.pool.run(
    searchTask,
    chunks.map((c) => ({ kind, sorted: s, queries: q, result: r, begin: c.begin, end: c.end, source })),
  );
  if (r !== result) result.set(r.subarray(0, result.length));
}
