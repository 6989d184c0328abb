/**
 * reduce(policy, input, init?, op?): folds `input` with `op` (default plus) starting from `init`
 * (default: the operator's identity). The result has the input's element semantics (u32/i32 wrap,
 * f32 rounding); float results depend on the order of combination within the stated tolerance.
 *
 * Strategy: CPU: a typed-array loop (seq) or per-chunk loops on the worker pool (par). GPU: the
 * transform-reduce engine with the identity load; `init` is combined on the host.
 * Size tiers: n = 0 returns init at once; otherwise see the engine (one workgroup, multi-pass,
 * segmented beyond one storage binding).
 */
import { type BinaryOp, coerce, combinerOf, type GpuFunction, plus } from '@webdpl/core';
import { assertNever, type Policy, selectBackend } from '@webdpl/policies';
import { cpuReduce } from '../bricks/reduce';
import { type ArrayArg, checkArray, checkFunction, checkNumber, deviceArraysOf, hostArrayOf } from '../common/args';
import { releaseTemps, toDevice } from '../common/gpu-io';
import { decodeScalar } from '../common/predicates';
import { identityLoad, transformReduceDevice } from '../engines/transform-reduce';

/** A binary operator argument: a built-in, a lambda `(a, b) => ...`, or a `{ js, wgsl }` pair. */
export type OperatorArg = BinaryOp | GpuFunction | ((a: number, b: number) => number) | object;

/**
 * Reduces `input` with `op` starting from `init`.
 * @param init default: the identity of `op` for the element type (0 for plus)
 * @param op default: plus. GPU runs need an associative operator with an identity.
 */
export async function reduce(policy: Policy, input: ArrayArg, init?: number, op?: OperatorArg): Promise<number> {
  const inp = checkArray(input, 'input');
  const fn = op === undefined ? plus : checkFunction(op, 'op', 2);
  const t = inp.type;
  let start: number;
  if (init === undefined) {
    const id = fn.identity(t);
    if (id === undefined)
      throw new TypeError(`reduce: init is required for operator '${fn.name}', which has no identity`);
    start = id;
  } else {
    start = coerce(t, checkNumber(init, 'init'));
  }
  const backend = await selectBackend(policy, {
    algorithm: 'reduce',
    engine: 'transform-reduce',
    types: [t],
    functions: [{ fn, argTypes: [t, t] }],
    deviceArrays: deviceArraysOf(inp),
    gpuCheck: () => (fn.identity(t) === undefined ? `operator '${fn.name}' has no identity for ${t}` : undefined),
  });
  if (inp.length === 0) return start;
  switch (backend.kind) {
    case 'seq':
    case 'par':
      return cpuReduce(backend, hostArrayOf(inp), start, fn);
    case 'gpu': {
      const { device } = backend;
      const side = toDevice(device, inp);
      try {
        const bytes = await transformReduceDevice(device, {
          label: 'reduce',
          inputs: [side.array],
          load: identityLoad(t),
          combiner: combinerOf(fn, t),
          commutative: fn.commutative,
          tuning: backend.tuning,
        });
        const total = decodeScalar(t, bytes);
        const f = fn.js([t, t]) as (a: number, b: number) => number;
        return coerce(t, f(start, total));
      } finally {
        releaseTemps(side);
      }
    }
    default:
      return assertNever(backend);
  }
}
