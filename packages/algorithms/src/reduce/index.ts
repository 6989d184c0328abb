/**
 * reduce(policy, input, init?, op?): folds `input` with `op` (default plus) starting from `init`
 * (default: the operator's identity). The result has the input's element semantics (u32/i32 wrap,
 * f32 rounding); float results depend on the order of combination within the stated tolerance.
 *
 * Strategy: CPU: the transform-reduce brick (seq loop, or per-chunk loops on the worker pool). GPU:
 * the transform-reduce engine with the identity load; `init` is combined on the host.
 * Size tiers: n = 0 returns init at once; otherwise see the engine (one workgroup, multi-pass,
 * segmented beyond one storage binding).
 */
import { type BinaryOp, coerce, combinerOf, type GpuFunction, type HostArray, lambda, plus } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuReduce } from '../bricks/reduce';
import { type ArrayArg, checkArray, checkFunction, identityReason, startValue } from '../common/args';
import { type Counting, isCounting } from '../common/counting';
import { decodeScalar } from '../common/predicates';
import { identityLoad, transformReduceDevice } from '../engines/transform-reduce';
import { dispatch } from '../pattern/dispatch';
import { transformReducePattern } from '../transform-reduce/index';
import { reducePattern } from '../transform-reduce/load';

/** The identity transform of reduce over counting(n). */
const identityU32: GpuFunction = lambda((i: number) => i);

/** A binary operator argument: a built-in, a lambda `(a, b) => ...`, or a `{ js, wgsl }` pair. */
export type OperatorArg = BinaryOp | GpuFunction | ((a: number, b: number) => number) | object;

/**
 * Reduces `input` with `op` starting from `init`.
 * @param input an array, or `counting(n)` (the indices 0..n-1 as u32; nothing is allocated)
 * @param init default: the identity of `op` for the element type (0 for plus)
 * @param op default: plus. GPU runs need an associative operator with an identity.
 */
export function reduce(policy: Policy, input: ArrayArg | Counting, init?: number, op?: OperatorArg): Promise<number> {
  return dispatch(policy, () => {
    if (isCounting(input)) {
      // The indices 0..n-1 (u32) reduced: a transform-reduce over counting(n) with the identity.
      const fn = op === undefined ? plus : checkFunction(op, 'op', 2);
      return transformReducePattern('reduce', input, init, fn, identityU32, 'op', ['input']);
    }
    const inp = checkArray(input, 'input');
    const fn = op === undefined ? plus : checkFunction(op, 'op', 2);
    const t = inp.type;
    const start = startValue(fn, t, init);
    return reducePattern([inp], {
      algorithm: 'reduce',
      functions: [{ fn, argTypes: [t, t] }],
      gpuCheck: () => identityReason(fn, t),
      empty: () => start,
      cpu: ({ backend, inputs: [x] }) => cpuReduce(backend, x as HostArray, start, fn),
      // No async function, no promise step: the fold with init runs where the readback arrives
      // (issue 12).
      gpu: ({ device, tuning, inputs }) =>
        transformReduceDevice(
          device,
          {
            label: 'reduce',
            inputs,
            load: identityLoad(t),
            combiner: combinerOf(fn, t),
            commutative: fn.commutative,
            tuning,
          },
          (bytes) => {
            const f = fn.js([t, t]) as (a: number, b: number) => number;
            return coerce(t, f(start, decodeScalar(t, bytes)));
          },
        ),
    });
  });
}
