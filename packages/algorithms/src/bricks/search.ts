/**
 * CPU backend of the vectorized searches (lowerBound, upperBound, binarySearch): a binary search per
 * query over `sorted`.
 *
 * With a comparator that has a JS source, one loop per (kind, comparator source) is generated and
 * compiled once per thread (`compileOnce`; workers: the pool's shared cache), so the comparator is
 * inlined. seq: that loop over every query (a comparator without a source: the same search calling
 * its function). par (from the pool's parallel threshold, comparators with a source): queries in
 * chunks through `runPar` (with plain arrays the calling thread answers its chunks in place while
 * workers take staged copies of theirs; results copied back as they finish); `sorted` is shared whole
 * (copied into shared memory once per call when it is a plain array). No SharedArrayBuffer on seq.
 */
import type { HostArray } from '@webdpl/core';
import { type CpuBackend, compileOnce, planParallel, sharedMemoryAvailable, toShared } from '@webdpl/policies';
import type { SearchKind } from '../binary-search/kernels';
import type { Kernel, KernelJob } from './kernels';
import type { CpuComparator } from './sort';
import { runPar } from './staging';

/** Queries per step of the interleaved searches (see `searchBody`). */
const SEARCH_LANES = 8;

/**
 * The search loop's body over `before` (a name in scope): answers of queries x[b, e) into y, the
 * sorted array in s. Queries go `SEARCH_LANES` at a time, their searches interleaved: each halving
 * step probes s once per query (lower bound over [l, l + len): l += half where the probe at
 * l + half - 1 passes), so the probes of different queries, independent loads into a large
 * sorted array, overlap their cache misses instead of waiting on each in turn (2^20 u32 queries
 * into 2^18-2^20 sorted keys, dev VM 2026-11-24: 1.5-1.75x faster; in-cache arrays about even;
 * docs/benchmarks/cpu-gather-2026-11-24.md). The tail runs the plain binary search. Both find the
 * first element where the test fails in an array partitioned by it, so the answers are the same.
 */
function searchBody(kind: SearchKind): string {
  const test = (x: string, v: string) => (kind === 'upper' ? `!before(${v}, ${x})` : `before(${x}, ${v})`);
  const answer = (l: string, v: string) => (kind === 'binary' ? `${l} < n && !before(${v}, s[${l}]) ? 1 : 0` : l);
  const ks = Array.from({ length: SEARCH_LANES }, (_, k) => k);
  const lanes = (f: (k: number) => string) => ks.map(f).join('\n          ');
  return `const n = s.length;
    let q = b;
    if (n > 0) {
      for (const lim = e - ${SEARCH_LANES - 1}; q < lim; q += ${SEARCH_LANES}) {
        const ${ks.map((k) => `v${k} = x[q + ${k}]`).join(', ')};
        let ${ks.map((k) => `l${k} = 0`).join(', ')};
        for (let len = n; len > 1; ) {
          const half = len >>> 1;
          ${lanes((k) => `if (${test(`s[l${k} + half - 1]`, `v${k}`)}) l${k} += half;`)}
          len -= half;
        }
        ${lanes((k) => `if (${test(`s[l${k}]`, `v${k}`)}) l${k}++;`)}
        ${lanes((k) => `y[q + ${k}] = ${answer(`l${k}`, `v${k}`)};`)}
      }
    }
    for (; q < e; q++) {
      const v = x[q];
      let lo = 0;
      let hi = n;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (${test('s[mid]', 'v')}) lo = mid + 1;
        else hi = mid;
      }
      y[q] = ${answer('lo', 'v')};
    }
    return 0;`;
}

/** The kernel source (a `Kernel` of kernels.ts over queries x, sorted x2) for `kind`, comparator inlined. */
export function searchSource(kind: SearchKind, comparator: string): string {
  return `(function () {
  'use strict';
  const before = ${comparator};
  return function search_${kind}(x, s, y, b, e) {
    ${searchBody(kind)}
  };
})() /* webdpl search */`;
}

const byFunction = new Map<SearchKind, (before: (a: number, b: number) => boolean) => Kernel>();

/** The search for a comparator without a source (its function called per comparison). */
function functionKernel(kind: SearchKind, before: (a: number, b: number) => boolean): Kernel {
  let make = byFunction.get(kind);
  if (!make) {
    make = compileOnce<(before: (a: number, b: number) => boolean) => Kernel>(
      `(before) => function search_${kind}_fn(x, s, y, b, e) {\n${searchBody(kind)}\n}`,
    );
    byFunction.set(kind, make);
  }
  return make(before);
}

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
  if (comp.source === undefined) {
    functionKernel(kind, comp.before)(queries, sorted, result, 0, m, false, 0, undefined);
    return;
  }
  const source = searchSource(kind, comp.source);
  const kernel = compileOnce<Kernel>(source);
  const chunks = planParallel(backend, m);
  if (!chunks || backend.kind !== 'par' || !sharedMemoryAvailable()) {
    kernel(queries, sorted, result, 0, m, false, 0, undefined);
    return;
  }
  // The sorted array goes whole to every thread: shared as it is, or copied into shared memory once
  // (runPar stages only each chunk's range of x2, so it must be shared already).
  const srt = toShared(sorted);
  await runPar(
    backend,
    chunks,
    { x: queries, x2: srt, y: result, n: m },
    (c, sh): KernelJob => ({ s: source, x: sh.x, x2: srt, y: sh.y, b: c.begin, e: c.end, h: false, c: 0 }),
    (c) => kernel(queries, sorted, result, c.begin, c.end, false, 0, undefined),
  );
}
