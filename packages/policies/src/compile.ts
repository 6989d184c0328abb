/**
 * The one compile-once cache for generated JS (CPU kernels, comparators, predicates), shared by the
 * calling thread and the pool's workers: `compileOnce(source)` evaluates `(source)` once per thread
 * and returns the cached value afterwards. Workers define the same function as
 * `globalThis.__webdplCompile` in their prelude (worker-source.ts), and this module installs it on the
 * calling thread, so a self-contained pool task (which runs on both sides) calls
 * `globalThis.__webdplCompile(source)` and never `new Function` itself.
 *
 * Keys are the full source text; the cache holds at most 512 entries (it is cleared past that, so a
 * program making endless distinct lambdas does not grow without bound).
 */

/** Source of the compile function: evaluated here and in the worker prelude. */
export const COMPILE_SOURCE = `function __webdplCompile(source) {
  let cache = globalThis.__webdplCompiled;
  if (cache === undefined) { cache = new Map(); globalThis.__webdplCompiled = cache; globalThis.__webdplCompileCount = 0; }
  let v = cache.get(source);
  if (v === undefined) {
    if (cache.size >= 512) cache.clear();
    v = new Function('"use strict";\\nreturn (' + source + '\\n);')();
    cache.set(source, v);
    globalThis.__webdplCompileCount++;
  }
  return v;
}`;

type CompileFn = (source: string) => unknown;
const g = globalThis as unknown as { __webdplCompile?: CompileFn; __webdplCompileCount?: number };
g.__webdplCompile ??= new Function(`return (${COMPILE_SOURCE});`)() as CompileFn;

/**
 * Evaluates the JS expression `source` (typically a function expression) once per thread; later calls
 * with the same text return the same value.
 */
export function compileOnce<T>(source: string): T {
  return (g.__webdplCompile as CompileFn)(source) as T;
}

/** How many sources this thread has compiled so far (tests: a cached call compiles nothing). */
export function compileCount(): number {
  return g.__webdplCompileCount ?? 0;
}
