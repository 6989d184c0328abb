/**
 * The by-key family on the GPU, composed from the scan engine's 'by-key' generate hook (keys bound
 * beside the input, heads or tails from `keyEq` of neighbouring keys):
 * - scans by key: one chained scan over (head, value) pairs (`segmentedCombiner`); in place on a
 *   DeviceArray it scans into a temporary and copies it back in the same queue order;
 * - reduceByKey: reduce-then-scan with no look-back (./runs.ts): a keys-only count pass, a scan of
 *   the tile counts, the tile pass writing each run's first key and the folds of runs within a
 *   tile, and a fix-up kernel for the runs crossing tiles, into the outputs (nothing written unless
 *   the runs fit) or (outputs that share a buffer) temporaries copied on the device when they fit;
 * - uniqueByKey: one compaction of the heads writing values and keys ('by-key-firsts'), into the
 *   outputs or (outputs that may be too short, or share a buffer) temporaries copied when the runs fit.
 * The number of runs is read back in the same submission.
 */
import {
  ArgumentError,
  combinerOf,
  type DeviceArray,
  type GpuDevice,
  type GpuFunction,
  type NumericType,
  type WgslFragment,
} from '@webdpl/core';
import type { CheckedArray } from '../common/args';
import { runsByKeyDevice, scanDevice, segmentedCombiner } from '../engines/scan';
import type { GpuCall } from '../pattern/dispatch';
import { reduceByKeyDevice, runsTuning } from './runs';

/** Raw bits of `x` stored as `type`. */
export function bitsOf(type: NumericType, x: number): number {
  if (type === 'f32') return new Uint32Array(Float32Array.of(x).buffer)[0] as number;
  return x >>> 0;
}

export interface GpuByKey {
  readonly label: string;
  readonly keyType: NumericType;
  readonly valueType: NumericType;
  /** `fn(a: K, b: K) -> bool`: keys are equal. */
  readonly keyEq: WgslFragment;
}

/** Scan by key of `values` (keys `keys`) into `output` (may be `values`' view: then through a temporary). */
export async function gpuScanByKey(
  call: GpuCall,
  p: GpuByKey,
  op: GpuFunction,
  exclusive: boolean,
  init: number,
): Promise<void> {
  const { device, tuning, readBack, deliver, temp } = call;
  const [keys, values] = call.inputs as [DeviceArray, DeviceArray];
  const output = call.outputs[0] as DeviceArray;
  const n = values.length;
  const value = combinerOf(op, p.valueType);
  const inPlace = output.buffer === values.buffer && output.offset === values.offset;
  const dst = inPlace ? temp(p.valueType, n) : output;
  const bytes = await scanDevice(device, {
    label: p.label,
    input: values,
    keys,
    output: dst,
    gen: { kind: 'by-key', keyType: p.keyType, keyEq: p.keyEq, edge: 'head', scan: { op: value.combine } },
    write: exclusive ? 'exclusive' : 'inclusive',
    combiner: segmentedCombiner(value),
    initBits: bitsOf(p.valueType, init),
    tuning,
    tuningName: p.label,
    readBack: readBack(0) && !inPlace,
  });
  if (inPlace) await copyBack(device, p.label, dst, output);
  deliver(0, bytes, n);
}

/**
 * reduceByKey (`op` given) or uniqueByKey: writes each run's first key to keysOut and its fold
 * (uniqueByKey: its first value) to valuesOut; returns the number of runs. One submission
 * (reduceByKey: `reduceByKeyDevice`, which writes nothing unless the runs fit both outputs;
 * uniqueByKey: the scan engine's 'by-key-firsts', a compaction of the heads writing key and value,
 * no run at min(keysOut.length, valuesOut.length) or beyond). Host outputs are written into their staging arrays (delivered only after the count
 * is checked). A DeviceArray output is written directly when its buffer is no input's or the other
 * output's and both outputs have n or more elements (no run can fall outside them) or, for
 * reduceByKey, any length (its kernels write nothing unless the runs fit both); otherwise through a
 * temporary of min(keysOut.length, valuesOut.length) elements whose first `runs` elements are
 * copied on the device only when the runs fit both. Either way a short output is an ArgumentError
 * with both outputs untouched.
 */
export async function gpuRunsByKey(
  call: GpuCall,
  p: GpuByKey,
  op: GpuFunction | undefined,
  keysOut: CheckedArray,
  valuesOut: CheckedArray,
): Promise<number> {
  const { device, tuning, readBack, deliver, temp } = call;
  const [keys, values] = call.inputs as [DeviceArray, DeviceArray];
  const n = keys.length;
  const [kd, vd] = call.outputs as [DeviceArray, DeviceArray];
  const cap = Math.min(keysOut.length, valuesOut.length);
  // reduceByKey writes nothing unless the runs fit both outputs (runs.ts), so its outputs shorter
  // than n are written directly too (no temporaries nor finish copies); uniqueByKey's are not.
  const direct = cap >= n || (op !== undefined && cap > 0);
  const side = (o: CheckedArray, d: DeviceArray, other: DeviceArray): { array: DeviceArray; copy?: DeviceArray } => {
    if (o.kind === 'host') return { array: d };
    const b = d.buffer;
    if (direct && b !== keys.buffer && b !== values.buffer && b !== other.buffer) return { array: d };
    return { array: temp(o.type, Math.max(1, cap)), copy: d };
  };
  const ks = side(keysOut, kd, vd);
  const vs = side(valuesOut, vd, kd);
  const value = op ? combinerOf(op, p.valueType) : undefined;
  const copyTo = ks.copy || vs.copy ? { keys: ks.copy, values: vs.copy, cap } : undefined;
  const readBoth = readBack(0) || readBack(1);
  const r = value
    ? await reduceByKeyDevice(device, {
        label: p.label,
        keys,
        values,
        keyEq: p.keyEq,
        value,
        valuesOut: vs.array,
        keysOut: ks.array,
        copyTo,
        readBack: readBoth,
        tuning: runsTuning(device, p.label, tuning),
      })
    : await runsByKeyDevice(device, {
        label: p.label,
        input: values,
        keys,
        gen: { kind: 'by-key', keyType: p.keyType, keyEq: p.keyEq, edge: 'head' },
        valuesOut: vs.array,
        keysOut: ks.array,
        copyTo,
        readBack: readBoth,
        tuning,
        tuningName: p.label,
      });
  for (const o of [keysOut, valuesOut]) if (r.count > o.length) throw tooShort(o, r.count);
  deliver(0, r.keys, r.count);
  deliver(1, r.values, r.count);
  return r.count;
}

function tooShort(o: CheckedArray, runs: number): ArgumentError {
  return new ArgumentError(o.name ?? 'output', `at least ${runs} elements (the number of runs)`, `${o.length}`);
}

async function copyBack(device: GpuDevice, label: string, src: DeviceArray, dst: DeviceArray): Promise<void> {
  await device.queue.enqueue(label, (rec) => {
    rec.encoder.copyBufferToBuffer(src.buffer, src.byteOffset, dst.buffer, dst.byteOffset, src.length * 4);
  });
}
