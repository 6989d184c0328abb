/**
 * Self-warming kernel sources: a generated kernel runs a few times on small synthetic arrays right
 * where it is compiled (the calling thread or a worker), before its first real call.
 *
 * Why: V8 allocates a function's feedback vector lazily (after some bytecode has run), so in a
 * kernel's first real call the code before its loop ran without feedback, and the code after the
 * loop (the tail loop, the last run's stores, the return) had none yet when V8 compiled the loop on
 * the stack (OSR) during that call. That OSR code deoptimized at the loop's exit ("insufficient type
 * feedback"), a soft deopt that leaves it cached, so every later call entered it and deoptimized
 * again; when the first full optimization also came early (no feedback for the code before the
 * loop, so it deoptimized on entry), V8 did not optimize the function again and the kernel stayed
 * that way for the rest of the process. `pnpm bench` read reduceByKey 2^20 at 2.4 ms or 0.8 ms and
 * inclusiveScanByKey at 2.5 or 0.95 ms in different processes of one binary, gather 1.9-4.9 ms
 * (`--trace-deopt`: one bailout per call at the loop's exit in the slow processes;
 * docs/benchmarks/cpu-seq-2026-11-24b.md). kernels.ts's map/reduce/scan kernels warm the same way.
 *
 * Only for self-contained sources (built-in operators and lambdas, which are pure): a bound `{ js,
 * wgsl }` function may have side effects and is never called on synthetic data.
 */
import type { NumericType } from '@webdpl/core';
import { compileOnce } from '@webdpl/policies';

/** Elements of each synthetic array. */
export const WARM_N = 64;

const CTOR: Readonly<Record<NumericType, string>> = {
  u32: 'Uint32Array',
  i32: 'Int32Array',
  f32: 'Float32Array',
};

/**
 * Default element generator of a type (source of `(i) => value`): integers cover the types' ranges
 * (u32 above 2^31, negative i32), f32 values are fractional of both signs, as real data is, so the
 * feedback is as general as a real call's and the first real call does not deoptimize on a value
 * outside it.
 */
function defaultGen(type: NumericType): string {
  return type === 'f32' ? '(i) => ((i * 0.37) % 3) - 1' : '(i) => Math.imul(i + 1, 0x9e3779b9)';
}

/** Source of a WARM_N-element array of `type` (undefined: the source `undefined`), `gen` its elements. */
export function warmArray(type: NumericType | undefined, gen?: string): string {
  if (type === undefined) return 'undefined';
  return `__warmArray(${CTOR[type]}, ${gen ?? defaultGen(type)})`;
}

/**
 * The source of kernel `kernel` (an expression) that runs `calls` (statements calling it as `k`;
 * arrays made with `warmArray`) once where it is evaluated, then yields the kernel; `tag` (a comment)
 * follows, as the compile-once cache keys on the whole text.
 */
export function warmedSource(kernel: string, calls: string, tag: string): string {
  return `(() => {
  const __warmArray = (T, g) => { const a = new T(${WARM_N}); for (let i = 0; i < ${WARM_N}; i++) a[i] = g(i); return a; };
  const k = ${kernel};
  ${calls}
  return k;
})() ${tag}`;
}

/** Kernels by the short key that determines their source (`warmedKernel`). */
const byKey = new Map<string, { readonly kernel: unknown; readonly source: string }>();

/**
 * The kernel compiled (`compileOnce`) from the source `make` builds, and that source, memoized by
 * `key`, a short text that determines the source (the functions' sources, types, kind): a warmed
 * source is a few KB, and building it and looking it up by its text in the compile-once cache on
 * every call cost 1-3 us (seq reduceByKey of 2^10 elements 6.6 -> 9.6 us). At most 512 keys (then
 * cleared, like the compile-once cache).
 */
export function warmedKernel<K>(key: string, make: () => string): { readonly kernel: K; readonly source: string } {
  let e = byKey.get(key);
  if (e === undefined) {
    if (byKey.size >= 512) byKey.clear();
    const source = make();
    e = { kernel: compileOnce<K>(source), source };
    byKey.set(key, e);
  }
  return e as { readonly kernel: K; readonly source: string };
}
