/**
 * isPartitioned(policy, input, pred): whether every element for which `pred` is truthy comes
 * before every element for which it is falsy (std::is_partitioned; true for empty input). Truthy:
 * a bool result, or a number that is non-zero and not NaN (JS truthiness) on every backend.
 *
 * Strategy: the input is partitioned exactly when no neighbouring pair (a, b) has pred(a) falsy and
 * pred(b) truthy, so one find-first over neighbours (../find-if, `{ adjacent }`) with
 * `(a, b) => !pred(a) && pred(b)` answers it: CPU stops at the first such pair (par: chunks on the
 * pool); GPU: one transform-reduce pass over two views of one device copy.
 * Size tiers: fewer than 2 elements answer true at once; otherwise see the transform-reduce engine.
 */
import { fragment, type GpuFunction, mangle, type NumericType } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { type ArrayArg, checkArray, checkFunction } from '../common/args';
import { predicateFragment, resultTypeOf } from '../common/predicates';
import { findFirstPattern } from '../find-if/index';
import { dispatch } from '../pattern/dispatch';
import type { FunctionArg } from '../transform-reduce/index';

const boundaries = new WeakMap<GpuFunction, GpuFunction>();

/**
 * `(a, b) => !pred(a) && pred(b)` (JS truthiness) as a GpuFunction with JS, worker-source and WGSL
 * forms: a falsy element followed by a truthy one. One object per predicate (cached), so CPU
 * kernels compiled for it are reused across calls.
 */
function outOfPartition(pred: GpuFunction): GpuFunction {
  let f = boundaries.get(pred);
  if (f) return f;
  f = {
    kind: 'function',
    arity: 2,
    name: `out_of_partition_${pred.name}`,
    builtin: false,
    commutative: false,
    supports: (t) => pred.supports(t.slice(0, 1)),
    resultType: () => 'bool',
    identity: () => undefined,
    js: (t) => {
      const p = pred.js(t.slice(0, 1));
      return (a: number, b: number) => !p(a) && !!p(b);
    },
    jsSource: (t) => `((p) => (a, b) => !p(a) && !!p(b))(${pred.jsSource(t.slice(0, 1))})`,
    wgsl: (t) => {
      const pf = predicateFragment(pred, t.slice(0, 1) as NumericType[]);
      const name = mangle('out_of_partition', pf.name);
      const ty = t[0] as NumericType;
      return fragment({
        name,
        deps: [pf],
        code: `fn ${name}(a: ${ty}, b: ${ty}) -> bool { return !${pf.name}(a) && ${pf.name}(b); }`,
      });
    },
    subgroupOp: () => undefined,
  };
  boundaries.set(pred, f);
  return f;
}

/**
 * Whether all elements satisfying `pred` precede all that do not.
 * @param pred a unary function of the element type
 * @throws ArgumentError naming `input` or `pred`
 */
export async function isPartitioned(policy: Policy, input: ArrayArg, pred: FunctionArg): Promise<boolean> {
  const i = await dispatch(policy, () => {
    const a = checkArray(input, 'input');
    const p = checkFunction(pred, 'pred', 1);
    resultTypeOf(p, [a.type], 'pred');
    return findFirstPattern('isPartitioned', { adjacent: a }, outOfPartition(p), false);
  });
  return i < 0;
}
