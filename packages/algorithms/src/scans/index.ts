/**
 * inclusiveScan, exclusiveScan, transformInclusiveScan, transformExclusiveScan (oneDPL's scans):
 * output[i] = init op v0 op ... op vi (inclusive; without init when it is not given) or
 * init op v0 op ... op v(i-1) (exclusive), where v = transformFn(input[i]) or the element itself.
 * `op` must be associative; it need not be commutative (order is kept on every backend). Results
 * have the value type's semantics (u32/i32 wrap, f32 rounding); float results depend on the order of
 * combination within a tolerance of a few ulps of the running sum of magnitudes. Integer values
 * (u32, i32, bool results as u32) may go to an output of any element type: each result is stored
 * as the output's type (between u32 and i32 the bits are kept, into f32 rounded to the nearest),
 * so counts go straight into an i32 or f32 array; f32 values need an f32 output.
 *
 * In place: `output` may be `input` itself (the same typed array, or a DeviceArray view of the same
 * elements); any other overlap is an error. In-place scans of a DeviceArray run the GPU engine's
 * reduce-then-scan strategy (about 1.5x the traffic of the chained scan).
 *
 * Strategy: CPU: cpuInclusiveScan / cpuExclusiveScan of @webdpl/policies (a loop for seq, a chunked
 * scan on the worker pool for par). GPU: the scan-scatter engine (engines/scan), single-pass chained
 * scan with decoupled look-back. Size tiers: n = 0 returns the output at once; otherwise see the
 * engine (one workgroup, chained multi-tile, segmented beyond one storage binding). Integer values
 * into an f32 output: the engine's 'scan' write hook with a converting fragment
 * (`convertingWrite`), scalar stores; a DeviceArray output over the input's own memory then reads
 * the input from a copy.
 */
import {
  ArgumentError,
  type BinaryOp,
  coerce,
  combinerOf,
  type DeviceArray,
  type GpuFunction,
  type HostArray,
  type NumericType,
  plus,
} from '@webdpl/core';
import { cpuExclusiveScan, cpuInclusiveScan } from '../bricks/scan';
import {
  type ArrayArg,
  checkArray,
  checkFunction,
  checkNoAlias,
  checkNumber,
  checkOutput,
  identityReason,
} from '../common/args';
import { sameElements } from '../common/overlap';
import { resultTypeOf, valueFragment, valueTypeOf } from '../common/predicates';
import { convertingWrite, SCAN_ENGINE, scanDevice } from '../engines/scan';
import { dispatch } from '../pattern/dispatch';

/** A binary operator argument: a built-in, a lambda `(a, b) => ...`, or a `{ js, wgsl }` pair. */
export type ScanOperatorArg = BinaryOp | GpuFunction | ((a: number, b: number) => number) | object;

/** A unary transform argument: a lambda `x => ...` or a GpuFunction. */
export type TransformArg = GpuFunction | ((x: number) => number | boolean) | object;

/** Raw bits of `x` stored as `type`. */
function bitsOf(type: NumericType, x: number): number {
  if (type === 'f32') return new Uint32Array(Float32Array.of(x).buffer)[0] as number;
  return x >>> 0;
}

/** Whether `a` and `b` are the same elements (in-place scans). */
interface ScanCall {
  readonly algorithm: string;
  readonly policy: unknown;
  readonly input: unknown;
  readonly output: unknown;
  readonly op: unknown;
  /** Undefined for the plain scans. */
  readonly transform: unknown;
  readonly hasTransform: boolean;
  readonly init: unknown;
  readonly exclusive: boolean;
}

function scanFront<O extends ArrayArg>(c: ScanCall): Promise<O> {
  return dispatch<O>(c.policy, () => {
    const inp = checkArray(c.input, 'input');
    const t = inp.type;
    const tf = c.hasTransform ? checkFunction(c.transform, 'transformFn', 1) : undefined;
    if (tf && !tf.supports([t])) {
      throw new ArgumentError('transformFn', `a function defined for ${t}`, `'${tf.name}'`);
    }
    const v: NumericType = tf ? valueTypeOf(resultTypeOf(tf, [t], 'transformFn')) : t;
    // Integer values may go to an output of any type (stored as it: u32/i32 bits kept, f32
    // rounded to nearest); f32 values to f32 outputs only.
    const out = checkOutput(c.output, 'output', inp.length, v === 'f32' ? v : undefined);
    const o = out.type;
    if (!sameElements(inp, out)) checkNoAlias(inp, out, 'input', 'output');
    const fn = c.op === undefined ? plus : checkFunction(c.op, 'op', 2);
    if (!fn.supports([v, v])) throw new ArgumentError('op', `an operator defined for ${v}`, `'${fn.name}'`);
    let init: number | undefined;
    if (c.exclusive || c.init !== undefined) init = coerce(v, checkNumber(c.init, 'init'));
    const functions = [{ fn, argTypes: [v, v] as NumericType[] }];
    if (tf) functions.push({ fn: tf, argTypes: [t] });
    const result = c.output as O;
    const n = inp.length;
    return {
      algorithm: c.algorithm,
      engine: SCAN_ENGINE,
      n,
      inputs: [inp],
      // A host scan in place runs from the uploaded copy into a separate temporary: the chained
      // scan's fallback re-reads predecessor tiles' input, so it never runs in place.
      outputs: [{ arg: out, length: n }],
      types: [v, o],
      functions,
      gpuCheck: () => identityReason(fn, v),
      empty: () => result,
      recordable: true,
      cpu: async ({ backend, inputs: [x], outputs: [y] }) => {
        const options = tf ? { transform: tf } : undefined;
        if (c.exclusive) await cpuExclusiveScan(backend, x as HostArray, y as HostArray, fn, init, options);
        else await cpuInclusiveScan(backend, x as HostArray, y as HostArray, fn, init, options);
        return result;
      },
      // No async function: the engine's promise, then the delivery (issue 12).
      gpu: ({ device, tuning, inputs: [x], outputs: [y], readBack, deliver }) => {
        const start = init ?? (fn.identity(v) as number);
        return scanDevice(device, {
          label: c.algorithm,
          input: x as DeviceArray,
          output: y as DeviceArray,
          gen: { kind: 'element', fn: tf ? valueFragment(tf, [t], v) : undefined },
          // Into f32 the values are converted at the write (the scan hook's fragment); between u32
          // and i32 the bits are the same, so the built-in write stores them.
          write:
            o === 'f32' && v !== 'f32'
              ? convertingWrite(c.exclusive, t, v, o)
              : c.exclusive
                ? 'exclusive'
                : 'inclusive',
          combiner: combinerOf(fn, v),
          initBits: bitsOf(v, start),
          tuning,
          tuningName: c.algorithm,
          readBack: readBack(0),
        }).then((bytes) => {
          deliver(0, bytes, n);
          return result;
        });
      },
    };
  });
}

/**
 * Inclusive scan: output[i] = init op input[0] op ... op input[i] (init omitted when undefined).
 * `output` may be `input` (in place); of integer inputs it may have another type (results stored
 * as it). Returns `output`.
 * @param op default: plus. GPU runs need an associative operator with an identity.
 * @param init default: none (the scan starts with input[0])
 * @throws ArgumentError naming `policy`, `input`, `output`, `op` or `init`
 */
export function inclusiveScan<O extends ArrayArg>(
  policy: unknown,
  input: ArrayArg,
  output: O,
  op?: ScanOperatorArg,
  init?: number,
): Promise<O> {
  return scanFront<O>({
    algorithm: 'inclusiveScan',
    policy,
    input,
    output,
    op,
    transform: undefined,
    hasTransform: false,
    init,
    exclusive: false,
  });
}

/**
 * Exclusive scan: output[0] = init, output[i] = init op input[0] op ... op input[i-1].
 * `output` may be `input` (in place); of integer inputs it may have another type. Returns `output`.
 * @param op default: plus
 * @throws ArgumentError naming `policy`, `input`, `output`, `init` or `op`
 */
export function exclusiveScan<O extends ArrayArg>(
  policy: unknown,
  input: ArrayArg,
  output: O,
  init: number,
  op?: ScanOperatorArg,
): Promise<O> {
  return scanFront<O>({
    algorithm: 'exclusiveScan',
    policy,
    input,
    output,
    op,
    transform: undefined,
    hasTransform: false,
    init,
    exclusive: true,
  });
}

/**
 * Inclusive scan of transformFn(input[i]). The values have transformFn's result type (a bool result
 * counts as u32 1/0); the output has that type, or for integer values any type (results stored as
 * it). `output` may be `input` (in place). Returns `output`.
 * @param init default: none
 * @throws ArgumentError naming `policy`, `input`, `output`, `op`, `transformFn` or `init`
 */
export function transformInclusiveScan<O extends ArrayArg>(
  policy: unknown,
  input: ArrayArg,
  output: O,
  op: ScanOperatorArg,
  transformFn: TransformArg,
  init?: number,
): Promise<O> {
  return scanFront<O>({
    algorithm: 'transformInclusiveScan',
    policy,
    input,
    output,
    op,
    transform: transformFn,
    hasTransform: true,
    init,
    exclusive: false,
  });
}

/**
 * Exclusive scan of transformFn(input[i]) from `init`. Output type and aliasing as for
 * transformInclusiveScan. Returns `output`.
 * @throws ArgumentError naming `policy`, `input`, `output`, `init`, `op` or `transformFn`
 */
export function transformExclusiveScan<O extends ArrayArg>(
  policy: unknown,
  input: ArrayArg,
  output: O,
  init: number,
  op: ScanOperatorArg,
  transformFn: TransformArg,
): Promise<O> {
  return scanFront<O>({
    algorithm: 'transformExclusiveScan',
    policy,
    input,
    output,
    op,
    transform: transformFn,
    hasTransform: true,
    init,
    exclusive: true,
  });
}
