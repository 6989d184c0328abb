/**
 * equal(policy, a, b, pred?) and mismatch(policy, a, b, pred?): std::equal and std::mismatch over
 * two ranges (the four-iterator forms), with `pred(a[i], b[i])` (default `===`: IEEE equality,
 * -0 equals +0, NaN equals nothing; u32/i32/f32 values compared as numbers).
 *
 * mismatch returns the first index i < min(a.length, b.length) where pred(a[i], b[i]) is falsy, or
 * min(a.length, b.length) when there is none (oneDPL returns the pair of iterators at that position;
 * the index is the same for both ranges). equal is true when the lengths are equal and there is no
 * mismatch.
 *
 * Strategy: a find-first over pairs (../find-if): CPU stops at the first difference (par: chunks on
 * the pool sharing the least index found); GPU: the transform-reduce engine over the two inputs,
 * loading `differs ? i : 0xffffffff` and folding with min (one pass, no early exit).
 * Size tiers: an empty common prefix (or, for equal, different lengths) answers at once; otherwise
 * see the transform-reduce engine.
 */
import { type GpuFunction, lambda } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { type ArrayArg, type CheckedArray, checkArray, checkFunction } from '../common/args';
import { checkBuiltinArgTypes, resultTypeOf } from '../common/predicates';
import { findFirstPattern } from '../find-if/index';
import { dispatch } from '../pattern/dispatch';
import type { FunctionArg } from '../transform-reduce/index';

let differs: GpuFunction | undefined;

/** `(a, b) => a !== b`: the default test of a difference (IEEE: NaN differs from everything). */
function defaultDiffers(): GpuFunction {
  differs ??= lambda((a: number, b: number) => a !== b);
  return differs;
}

/** The first `m` elements of a checked array (the array itself when it has exactly `m`). */
export function prefixOf(a: CheckedArray, m: number): CheckedArray {
  if (a.length === m) return a;
  return a.kind === 'host'
    ? { kind: 'host', array: a.array.subarray(0, m), type: a.type, length: m }
    : { kind: 'device', array: a.array.view(0, m), type: a.type, length: m, name: a.name };
}

/**
 * The checked find-first of the first difference between a and b over their common length
 * (`sameLength`: over nothing when the lengths differ, for equal).
 */
function firstDifference(
  algorithm: string,
  a: ArrayArg,
  b: ArrayArg,
  pred: FunctionArg | undefined,
  sameLength: boolean,
) {
  const x = checkArray(a, 'a');
  const y = checkArray(b, 'b');
  const types = [x.type, y.type];
  let fn: GpuFunction | undefined;
  if (pred !== undefined) {
    fn = checkFunction(pred, 'pred', 2);
    checkBuiltinArgTypes(fn, types, 'b');
    resultTypeOf(fn, types, 'pred');
  }
  const len = !sameLength ? Math.min(x.length, y.length) : x.length === y.length ? x.length : 0;
  return {
    len,
    same: x.length === y.length,
    pattern: findFirstPattern(
      algorithm,
      [prefixOf(x, len), prefixOf(y, len)],
      fn ?? defaultDiffers(),
      fn !== undefined,
    ),
  };
}

/**
 * The first index where `pred(a[i], b[i])` is falsy, or min(a.length, b.length) when the common
 * prefix matches (std::mismatch, as an index).
 * @param pred a binary function of the two element types, truthy when the elements match.
 *   @default `(x, y) => x === y`
 * @throws ArgumentError naming `a`, `b` or `pred`
 */
export async function mismatch(policy: Policy, a: ArrayArg, b: ArrayArg, pred?: FunctionArg): Promise<number> {
  let len = 0;
  const i = await dispatch(policy, () => {
    const f = firstDifference('mismatch', a, b, pred, false);
    len = f.len;
    return f.pattern;
  });
  return i < 0 ? len : i;
}

/**
 * Whether `a` and `b` have the same length and `pred(a[i], b[i])` is truthy for every i
 * (std::equal over two ranges).
 * @param pred a binary function of the two element types. @default `(x, y) => x === y`
 * @throws ArgumentError naming `a`, `b` or `pred`
 */
export async function equal(policy: Policy, a: ArrayArg, b: ArrayArg, pred?: FunctionArg): Promise<boolean> {
  let same = false;
  const i = await dispatch(policy, () => {
    const f = firstDifference('equal', a, b, pred, true);
    same = f.same;
    return f.pattern;
  });
  return same && i < 0;
}
