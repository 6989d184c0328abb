/**
 * The radix sort's kernel warms itself (radix-kernel.ts `warmCalls`, bricks/warm.ts): optimized by
 * V8 right after it is compiled (on the feedback of its warm-up alone), it runs whole sorts (the
 * 'hist', 'scatter' and 'buckets' jobs of radix-seq.ts, and par's structured-cloned jobs with a
 * claim counter) of keys that take each of its paths without deoptimizing: random keys of several
 * sizes (buckets of 1, up to INSERTION_MAX, up to SMALL_MAX and above), keys differing only in the
 * low 21 bits (the mid digit leads) or the low 10 (copies), a bucket above LOCAL_MAX, f32 specials.
 * Without the warm-up the optimized code deoptimizes on the first call (mutation-checked).
 *
 * Uses V8's natives syntax (test-natives.ts). Each case compiles its kernel here (a tagged source).
 */
import type { NumericType } from '@webdpl/core';
import { compileOnce } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { rng } from '../test-data';
import { callsOptimized } from '../test-natives';
import {
  callRadix,
  HIST_WORDS,
  LOCAL_MAX,
  levelDigit,
  type RadixJob,
  type RadixKernel,
  radixJob,
  radixSource,
} from './radix-kernel';
import { bucketStarts } from './radix-seq';

/** The jobs of one sort of `bits` (as radix-seq.ts runs them; `cloned`: as a worker receives par's). */
function sortCalls(kernel: RadixKernel, bits: Uint32Array, pairs: boolean, cloned: boolean): () => void {
  const run = (j: RadixJob) => callRadix(kernel, cloned ? structuredClone(j) : j);
  return () => {
    const n = bits.length;
    const k = bits.slice();
    const v = pairs ? Uint32Array.from({ length: n }, (_, i) => i) : undefined;
    const h = new Int32Array(HIST_WORDS);
    run(radixJob({ op: 0, s: '', k, b: 0, e: n, h, ho: 0, a: k }));
    const dg = levelDigit(n, (g, d) => h[g * 2048 + d] as number);
    if (dg < 0) return;
    const st = bucketStarts(dg, (d) => h[dg * 2048 + d] as number);
    const a = new Uint32Array(n);
    const va = pairs ? new Uint32Array(n) : undefined;
    run(radixJob({ op: 1, s: '', k, v, b: 0, e: n, h: st.slice(), ho: 0, dg, a, va }));
    const c = cloned ? new Int32Array(new SharedArrayBuffer(4)) : undefined;
    run(radixJob({ op: 2, s: '', a, va, o: k, vo: v, st, lv: 2 - dg, c }));
  };
}

/** Key bits of each shape (see the file comment). */
function shapes(): Uint32Array[] {
  const r = rng(11);
  const of = (n: number, f: (x: number, i: number) => number) => Uint32Array.from({ length: n }, (_, i) => f(r(), i));
  return [
    of(5000, (x) => x),
    of(70_001, (x) => x),
    of(600_003, (x) => x),
    of(300_001, (x) => x & 0x1fffff),
    of(20_003, (x) => x & 0x3ff),
    // Most keys in one top digit (a bucket above LOCAL_MAX), skewed below it.
    of(LOCAL_MAX + 40_000, (x) =>
      x % 10 === 0 ? x : x % 3 === 0 ? 0x40000000 | (x & 0x3ff) : 0x40000000 | (x & 0x1fffff),
    ),
    // f32 specials: NaN, infinities, -0 among random bits.
    of(9001, (x, i) => (i % 7 === 0 ? ([0x7fc00000, 0xff800000, 0x80000000, 0x7f800001][i % 4] as number) : x)),
  ];
}

describe('the radix sort kernel warms itself and stays optimized on real sorts', () => {
  const data = shapes();
  for (const type of ['u32', 'i32', 'f32'] as const satisfies readonly NumericType[]) {
    for (const descending of [false, true]) {
      for (const pairs of [false, true]) {
        it(`${type} ${descending ? 'descending' : 'ascending'}${pairs ? ' pairs' : ''}`, () => {
          const tag = ` /* radix-warm.test ${type} ${descending} ${pairs} */`;
          const kernel = compileOnce<RadixKernel>(radixSource(type, descending, pairs) + tag);
          const calls = data.flatMap((bits) => [false, true].map((cloned) => sortCalls(kernel, bits, pairs, cloned)));
          expect(callsOptimized(kernel, calls)).toBe(calls.length);
        });
      }
    }
  }
});
