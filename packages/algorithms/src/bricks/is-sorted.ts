/**
 * CPU backend of isSortedUntil: seq: one loop over adjacent pairs, stopping at the first violation;
 * par (from the pool's parallel threshold, comparators with a source): chunks checked on the pool,
 * the first violating chunk in order wins (each chunk also checks the pair across its start).
 */
import type { HostArray } from '@webdpl/core';
import { type CpuBackend, planParallel, toShared } from '@webdpl/policies';
import type { CpuComparator } from './sort';

interface Job {
  readonly data: HostArray;
  readonly begin: number;
  readonly end: number;
  readonly source: string;
}

/** The worker task (self-contained). First i in [max(begin, 1), end) with comp(d[i], d[i-1]), or -1. */
const isSortedTask = function isSortedTask(job: Job): number {
  // Workers compile the comparator once per source (one function object keeps call sites monomorphic).
  const compiled = ((globalThis as { __webdplComparators?: Map<string, unknown> }).__webdplComparators ??= new Map());
  let fromSource = compiled.get(String(job.source)) as ((a: number, b: number) => boolean) | undefined;
  if (!fromSource) {
    fromSource = new Function(`return (${job.source});`)() as (a: number, b: number) => boolean;
    compiled.set(String(job.source), fromSource);
  }
  const before = fromSource as (a: number, b: number) => boolean;
  const d = job.data;
  for (let i = Math.max(job.begin, 1); i < job.end; i++) if (before(d[i] as number, d[i - 1] as number)) return i;
  return -1;
};

/** Index of the first element out of order under `comp` (data.length when sorted). */
export async function cpuIsSortedUntil(backend: CpuBackend, data: HostArray, comp: CpuComparator): Promise<number> {
  const n = data.length;
  const chunks = planParallel(backend, n);
  if (!chunks || backend.kind !== 'par' || comp.source === undefined) {
    const before = comp.before;
    for (let i = 1; i < n; i++) if (before(data[i] as number, data[i - 1] as number)) return i;
    return n;
  }
  const shared = toShared(data);
  const source = comp.source;
  const found = await backend.pool.run(
    isSortedTask,
    chunks.map((c) => ({ data: shared, begin: c.begin, end: c.end, source })),
  );
  for (const i of found) if (i >= 0) return i;
  return n;
}
