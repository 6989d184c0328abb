/**
 * CPU backend of isSortedUntil: the first i with comp(d[i], d[i - 1]).
 *
 * With a comparator that has a JS source, one loop per comparator source is generated and compiled
 * once per thread (`compileOnce`; workers: the pool's shared cache), so the comparator is inlined.
 * seq: that loop (or, without a source, the same loop calling the comparator's function), stopping at
 * the first violation. par (from the pool's parallel threshold, comparators with a source): chunks
 * through `runPar` (with plain arrays the calling thread checks its chunks in place while workers
 * take staged copies of theirs); a chunk gets the element before it as `c`, so it also checks the
 * pair across its start; the first violating chunk in order wins. No SharedArrayBuffer on seq.
 */
import type { HostArray } from '@webdpl/core';
import { type CpuBackend, compileOnce, planParallel, sharedMemoryAvailable } from '@webdpl/policies';
import type { Kernel, KernelJob } from './kernels';
import type { CpuComparator } from './sort';
import { runPar } from './staging';

/**
 * The loop over `before` (a name in scope). `guard` (built-in orders only) is a cheap numeric test
 * true whenever the pair may be out of order (ascending: `!(x[i] >= x[i - 1]) || x[i] === 0`, which
 * catches NaN and a -0 after a +0): the comparator runs only then, so sorted data (equal neighbours
 * included) costs about one comparison per element.
 */
const body = (guard?: (v: string, p: string) => string) => {
  const test = (v: string, p: string) => `${guard ? `${guard(v, p)} && ` : ''}before(${v}, ${p})`;
  // The pair across the chunk's start uses c (x[b - 1]: workers only have their chunk staged).
  return `if (b > 0 && b < e && ${test('x[b]', '+c')}) return b;
    for (let i = b > 0 ? b + 1 : 1; i < e; i++) {
      if (${test('x[i]', 'x[i - 1]')}) return i;
    }
    return -1;`;
};

/**
 * Below this many elements par checks on the calling thread unless the tuning sets a threshold (one
 * pass is too short to share: par measured 0.92x seq at 2^18, 1.25x at 2^20 on the 2-core VM).
 */
const PAR_MIN = 1 << 20;

/** The kernel source (a `Kernel` of kernels.ts): the first violating index in [max(b, 1), e), or -1. */
export function isSortedSource(comparator: string, builtin?: { readonly descending: boolean }): string {
  const guard = builtin
    ? (v: string, p: string) => `(!(${v} ${builtin.descending ? '<=' : '>='} ${p}) || ${v} === 0)`
    : undefined;
  return `(function () {
  'use strict';
  const before = ${comparator};
  return function isSortedUntil(x, x2, y, b, e, h, c) {
    ${body(guard)}
  };
})() /* webdpl isSorted */`;
}

let byFunction: ((before: (a: number, b: number) => boolean) => Kernel) | undefined;

/** Index of the first element out of order under `comp` (data.length when sorted). */
export async function cpuIsSortedUntil(backend: CpuBackend, data: HostArray, comp: CpuComparator): Promise<number> {
  const n = data.length;
  if (n < 2) return n;
  if (comp.source === undefined) {
    byFunction ??= compileOnce<(before: (a: number, b: number) => boolean) => Kernel>(
      `(before) => function isSortedUntilFn(x, x2, y, b, e, h, c) {\n${body()}\n}`,
    );
    const i = byFunction(comp.before)(data, undefined, undefined, 0, n, false, 0, undefined);
    return i < 0 ? n : i;
  }
  const source = isSortedSource(comp.source, comp.kind === 'builtin' ? comp : undefined);
  const kernel = compileOnce<Kernel>(source);
  const chunks =
    backend.kind === 'par' && backend.tuning?.parallelThreshold === undefined && n < PAR_MIN
      ? undefined
      : planParallel(backend, n);
  if (!chunks || backend.kind !== 'par' || !sharedMemoryAvailable()) {
    const i = kernel(data, undefined, undefined, 0, n, false, 0, undefined);
    return i < 0 ? n : i;
  }
  const prev = (b: number) => (b > 0 ? (data[b - 1] as number) : 0);
  const found = await runPar(
    backend,
    chunks,
    { x: data, x2: undefined, y: undefined, n },
    (c, sh): KernelJob => ({ s: source, x: sh.x, b: c.begin, e: c.end, h: c.begin > 0, c: prev(c.begin) }),
    (c) => kernel(data, undefined, undefined, c.begin, c.end, c.begin > 0, prev(c.begin), undefined),
  );
  for (const i of found) if (i >= 0) return i;
  return n;
}
