/**
 * The transform-reduce family's common pattern: engine 'transform-reduce' (so its tuning overrides
 * apply), the inputs as the call's arrays, and the load fragment the GPU engine runs per element.
 */
import { fragment, mangle, type NumericType, type WgslFragment } from '@webdpl/core';
import type { CheckedArray } from '../common/args';
import type { Pattern } from '../pattern/dispatch';

/**
 * A transform-reduce pattern over `inputs` (1 or 2 checked arrays of equal length), or over no
 * array and `n` elements (counting(n): the load computes from the index).
 */
export function reducePattern<R>(
  inputs: readonly CheckedArray[],
  p: Omit<Pattern<R>, 'engine' | 'n' | 'inputs' | 'outputs'>,
  n?: number,
): Pattern<R> {
  // Field by field, not a spread: spreading objects of many shapes is a slow path on the per-call
  // hot path (a quarter of a host call at 2^10).
  return {
    algorithm: p.algorithm,
    engine: 'transform-reduce',
    n: n ?? (inputs[0] as CheckedArray).length,
    inputs,
    types: p.types,
    functions: p.functions,
    stage: p.stage,
    gpuCheck: p.gpuCheck,
    empty: p.empty,
    cpu: p.cpu,
    gpu: p.gpu,
  };
}

/**
 * `fn NAME([x0: T0, [x1: T1,]] i: u32) -> Acc { BODY }`: a load of the transform-reduce engine.
 * `body` may call the fragments in `deps`; `key` must name everything the body depends on.
 */
export function loadFragment(
  prefix: string,
  inTypes: readonly NumericType[],
  acc: string,
  body: string,
  deps: readonly (WgslFragment | undefined)[],
  key: readonly (string | number)[],
): WgslFragment {
  const name = mangle(prefix, ...inTypes, ...key);
  const params = [...inTypes.map((t, k) => `x${k}: ${t}`), 'i: u32'].join(', ');
  return fragment({ name, deps, code: `fn ${name}(${params}) -> ${acc} {\n  ${body}\n}` });
}
