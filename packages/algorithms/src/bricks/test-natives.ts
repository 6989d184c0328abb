/**
 * Test support (never imported by the library): V8's natives syntax, enabled at runtime for the
 * importing test file's process, to check that a generated kernel, optimized right after it is
 * compiled (on the feedback of its warm-up calls alone, bricks/warm.ts), runs real calls without
 * deoptimizing.
 */
import v8 from 'node:v8';

v8.setFlagsFromString('--allow-natives-syntax');

/**
 * Optimizes `f` on its next call: a compile the warm-up itself started (a hot kernel) finishes
 * first, else `%OptimizeFunctionOnNextCall` does nothing while it is under way.
 */
const optimizeNext = new Function(
  'f',
  '%FinalizeOptimization(); %PrepareFunctionForOptimization(f); %OptimizeFunctionOnNextCall(f);',
) as (f: unknown) => void;
const status = new Function('f', 'return %GetOptimizationStatus(f);') as (f: unknown) => number;
/** V8's OptimizationStatus bit: the function runs optimized code. */
const OPTIMIZED = 16;

/**
 * Optimizes `kernel` on its current feedback, then makes `calls` (real data) in order; returns how
 * many ran before the kernel was found deoptimized (all of them: it stayed optimized). Checked after
 * every call: a deoptimized kernel may be optimized again later.
 */
export function callsOptimized(kernel: unknown, calls: readonly (() => unknown)[]): number {
  optimizeNext(kernel);
  let ran = 0;
  for (const call of calls) {
    call();
    if ((status(kernel) & OPTIMIZED) === 0) break;
    ran++;
  }
  return ran;
}
