/**
 * The by-key family (oneDPL's reduce_by_segment family, Thrust's *_by_key): inclusiveScanByKey,
 * exclusiveScanByKey, reduceByKey and uniqueByKey over runs of consecutive equal keys.
 *
 * A run is a maximal range of consecutive elements whose neighbouring keys are equal under `keyEq`
 * (default `keyEqual`: equivalence in TypedArray#sort's order, i.e. `Object.is`: -0 and +0 are
 * different keys, every NaN is the same key). Keys and values are any of u32/i32/f32, the values'
 * type may differ from the keys'; `op` is associative (not necessarily commutative: values are
 * combined in order within each run) and defaults to plus.
 *
 * Strategy: CPU: bricks/by-key.ts (a generated loop; par: chunks with carries that flow into the next
 * chunk only while its first run continues). GPU (./gpu.ts): scans by key are the scan engine's
 * 'by-key' hook, a chained scan over (head, value) pairs; reduceByKey is reduce-then-scan with no
 * look-back (./runs.ts: a keys-only count pass, a scan of the tile counts, the tile pass, a fix-up
 * of the runs crossing tiles); uniqueByKey one compaction of the heads writing keys and values
 * (DeviceArray outputs shorter than n or sharing a buffer are written through temporaries, copied
 * on the device when the runs fit).
 * Size tiers: n = 0 returns at once; one tile: reduceByKey's tile pass alone; otherwise multi-tile,
 * segments beyond one storage binding; outputs bound whole, so reduceByKey and
 * uniqueByKey are limited to one storage binding on the GPU, beyond which policies that allow it
 * fall back to the CPU).
 */
import { ArgumentError, coerce, type GpuFunction, type HostArray, type NumericType, plus } from '@webdpl/core';
import { cpuRunsByKey, cpuScanByKey } from '../bricks/by-key';
import {
  type ArrayArg,
  type CheckedArray,
  checkArray,
  checkFunction,
  checkNoAlias,
  checkNumber,
  checkOutput,
  checkSameLength,
  identityReason,
} from '../common/args';
import { sameElements } from '../common/overlap';
import { predicateFragment, resultTypeOf } from '../common/predicates';
import { compactionLimit, SCAN_ENGINE } from '../engines/scan';
import { dispatch } from '../pattern/dispatch';
import type { ScanOperatorArg } from '../scans/index';
import { type GpuByKey, gpuRunsByKey, gpuScanByKey } from './gpu';
import { keyEqual } from './key-equal';

export { keyEqual } from './key-equal';

/** A key equality argument: `keyEqual`, a lambda `(a, b) => boolean`, or a GpuFunction / `{ js, wgsl }`. */
export type KeyEqualArg = GpuFunction | ((a: number, b: number) => boolean | number) | object;

interface Checked {
  readonly keys: CheckedArray;
  readonly values: CheckedArray;
  readonly keyEq: GpuFunction;
  readonly op: GpuFunction | undefined;
  readonly gpu: GpuByKey;
  readonly functions: { fn: GpuFunction; argTypes: NumericType[] }[];
}

function checkCommon(
  algorithm: string,
  keysArg: unknown,
  valuesArg: unknown,
  opArg: unknown,
  eqArg: unknown,
  withOp: boolean,
): Checked {
  const keys = checkArray(keysArg, 'keys');
  const values = checkArray(valuesArg, 'values');
  checkSameLength(keys, values, 'keys', 'values');
  const kt = keys.type;
  const vt = values.type;
  let op: GpuFunction | undefined;
  if (withOp) {
    op = opArg === undefined ? plus : checkFunction(opArg, 'op', 2);
    if (!op.supports([vt, vt])) throw new ArgumentError('op', `an operator defined for ${vt}`, `'${op.name}'`);
  }
  const keyEq = eqArg === undefined ? keyEqual : checkFunction(eqArg, 'keyEq', 2);
  if (!keyEq.supports([kt, kt])) {
    throw new ArgumentError('keyEq', `a key equality (a, b) => boolean defined for ${kt}`, `'${keyEq.name}'`);
  }
  resultTypeOf(keyEq, [kt, kt], 'keyEq');
  const functions = [{ fn: keyEq, argTypes: [kt, kt] }];
  if (op) functions.push({ fn: op, argTypes: [vt, vt] });
  return {
    keys,
    values,
    keyEq,
    op,
    functions,
    gpu: { label: algorithm, keyType: kt, valueType: vt, keyEq: predicateFragment(keyEq, [kt, kt]) },
  };
}

function scanByKey<O extends ArrayArg>(
  algorithm: string,
  policy: unknown,
  keysArg: unknown,
  valuesArg: unknown,
  outputArg: O,
  exclusive: boolean,
  initArg: unknown,
  opArg: unknown,
  eqArg: unknown,
): Promise<O> {
  return dispatch<O>(policy, () => {
    const c = checkCommon(algorithm, keysArg, valuesArg, opArg, eqArg, true);
    const { keys, values } = c;
    const vt = values.type;
    const n = keys.length;
    const out = checkOutput(outputArg, 'output', n, vt);
    if (!sameElements(values, out)) checkNoAlias(values, out, 'values', 'output');
    checkNoAlias(keys, out, 'keys', 'output');
    const init = exclusive ? coerce(vt, initArg === undefined ? 0 : checkNumber(initArg, 'init')) : 0;
    const op = c.op as GpuFunction;
    return {
      algorithm,
      engine: SCAN_ENGINE,
      n,
      inputs: [keys, values],
      outputs: [{ arg: out, length: n }],
      functions: c.functions,
      gpuCheck: () => identityReason(op, vt),
      empty: () => outputArg,
      recordable: true,
      cpu: async ({ backend, inputs: [k, v], outputs: [y] }) => {
        await cpuScanByKey(
          backend,
          k as HostArray,
          v as HostArray,
          y as HostArray,
          { op, keyEq: c.keyEq, keyType: keys.type, valueType: vt },
          exclusive,
          init,
        );
        return outputArg;
      },
      gpu: async (call) => {
        await gpuScanByKey(call, c.gpu, op, exclusive, exclusive ? init : (op.identity(vt) as number));
        return outputArg;
      },
    };
  });
}

function runsByKey(
  algorithm: string,
  policy: unknown,
  keysArg: unknown,
  valuesArg: unknown,
  keysOutArg: unknown,
  valuesOutArg: unknown,
  opArg: unknown,
  eqArg: unknown,
  reduce: boolean,
): Promise<number> {
  return dispatch(policy, () => {
    const c = checkCommon(algorithm, keysArg, valuesArg, opArg, eqArg, reduce);
    const { keys, values } = c;
    const n = keys.length;
    const keysOut = checkOutput(keysOutArg, 'keysOut', 0, keys.type);
    const valuesOut = checkOutput(valuesOutArg, 'valuesOut', 0, values.type);
    for (const [a, an] of [
      [keys, 'keys'],
      [values, 'values'],
    ] as const) {
      checkNoAlias(a, keysOut, an, 'keysOut');
      checkNoAlias(a, valuesOut, an, 'valuesOut');
    }
    checkNoAlias(keysOut, valuesOut, 'keysOut', 'valuesOut');
    const tooShort = (o: CheckedArray, runs: number) =>
      new ArgumentError(o.name ?? 'output', `at least ${runs} elements (the number of runs)`, `${o.length}`);
    const op = c.op;
    return {
      algorithm,
      engine: SCAN_ENGINE,
      n,
      inputs: [keys, values],
      outputs: [
        { arg: keysOut, length: Math.max(1, Math.min(n, keysOut.length)) },
        { arg: valuesOut, length: Math.max(1, Math.min(n, valuesOut.length)) },
      ],
      functions: c.functions,
      gpuCheck: (device) => (op ? identityReason(op, values.type) : undefined) ?? compactionLimit(device, n),
      empty: () => 0,
      cpu: ({ backend, inputs: [k, v], outputs: [ko, vo] }) =>
        cpuRunsByKey(
          backend,
          k as HostArray,
          v as HostArray,
          ko as HostArray,
          vo as HostArray,
          { op, keyEq: c.keyEq, keyType: keys.type, valueType: values.type },
          reduce,
          (runs) => tooShort(runs > keysOut.length ? keysOut : valuesOut, runs),
        ),
      gpu: (call) => gpuRunsByKey(call, c.gpu, op, keysOut, valuesOut),
    };
  });
}

/**
 * Inclusive scan by key (oneDPL's inclusive_scan_by_segment, Thrust's inclusive_scan_by_key):
 * output[i] = values[s] op ... op values[i], where s is the first element of i's run of equal keys.
 * `output` (the values' type) may be `values` itself (in place); it must not otherwise overlap the
 * inputs. Returns `output`.
 * @param op default: plus. GPU runs need an associative operator with an identity.
 * @param keyEq default: `keyEqual` (Object.is: -0 and +0 differ, NaNs are one key)
 * @throws ArgumentError naming `policy`, `keys`, `values`, `output`, `op` or `keyEq`
 */
export function inclusiveScanByKey<O extends ArrayArg>(
  policy: unknown,
  keys: ArrayArg,
  values: ArrayArg,
  output: O,
  op?: ScanOperatorArg,
  keyEq?: KeyEqualArg,
): Promise<O> {
  return scanByKey('inclusiveScanByKey', policy, keys, values, output, false, undefined, op, keyEq);
}

/**
 * Exclusive scan by key (oneDPL's exclusive_scan_by_segment): output[i] = init op values[s] op ...
 * op values[i - 1] for s the first element of i's run (output[s] = init). Same rules as
 * inclusiveScanByKey. Returns `output`.
 * @param init default: 0
 * @throws ArgumentError naming `policy`, `keys`, `values`, `output`, `init`, `op` or `keyEq`
 */
export function exclusiveScanByKey<O extends ArrayArg>(
  policy: unknown,
  keys: ArrayArg,
  values: ArrayArg,
  output: O,
  init?: number,
  op?: ScanOperatorArg,
  keyEq?: KeyEqualArg,
): Promise<O> {
  return scanByKey('exclusiveScanByKey', policy, keys, values, output, true, init, op, keyEq);
}

/**
 * reduceByKey (oneDPL's reduce_by_segment, Thrust's reduce_by_key): for each run r of equal keys,
 * keysOut[r] = the run's first key and valuesOut[r] = the fold with `op` of its values in order;
 * returns the number of runs. The outputs need at least that many elements (checked once it is
 * known: a short output is an error and both are left untouched) and must not overlap the inputs or
 * each other.
 * @param op default: plus
 * @throws ArgumentError naming `policy`, `keys`, `values`, `keysOut`, `valuesOut`, `op` or `keyEq`
 */
export function reduceByKey(
  policy: unknown,
  keys: ArrayArg,
  values: ArrayArg,
  keysOut: ArrayArg,
  valuesOut: ArrayArg,
  op?: ScanOperatorArg,
  keyEq?: KeyEqualArg,
): Promise<number> {
  return runsByKey('reduceByKey', policy, keys, values, keysOut, valuesOut, op, keyEq, true);
}

/**
 * uniqueByKey (Thrust's unique_by_key_copy): the first key and value of each run of equal keys to
 * keysOut[r] and valuesOut[r]; returns the number of runs. Output rules as reduceByKey.
 * @throws ArgumentError naming `policy`, `keys`, `values`, `keysOut`, `valuesOut` or `keyEq`
 */
export function uniqueByKey(
  policy: unknown,
  keys: ArrayArg,
  values: ArrayArg,
  keysOut: ArrayArg,
  valuesOut: ArrayArg,
  keyEq?: KeyEqualArg,
): Promise<number> {
  return runsByKey('uniqueByKey', policy, keys, values, keysOut, valuesOut, undefined, keyEq, false);
}
