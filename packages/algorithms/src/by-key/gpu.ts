/**
 * The by-key family on the GPU, composed from the scan engine's 'by-key' generate hook (keys bound
 * beside the input, heads or tails from `keyEq` of neighbouring keys):
 * - scans by key: one chained scan over (head, value) pairs (`segmentedCombiner`); in place on a
 *   DeviceArray it scans into a temporary and copies it back in the same queue order;
 * - reduceByKey: one pass where both outputs can be bound whole beside the inputs (host outputs, or
 *   DeviceArrays of n or more elements in buffers of their own): the engine's 'by-key-runs' write, a
 *   chained scan of (head count, value) pairs writing each run's first key and fold at its head
 *   (CUB's reduce-by-key); otherwise the inclusive scan by key into a temporary, then two
 *   compactions: the scanned values at run ends (tails) and the keys at run starts (heads);
 * - uniqueByKey: one compaction of the heads writing values and keys ('by-key-firsts'), under the
 *   same condition; otherwise two compactions of the heads (values, keys).
 * Each compaction reads its count back; the counts agree (one run, one head, one tail).
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
import { compactDevice, runsByKeyDevice, scanDevice, segmentedCombiner } from '../engines/scan';
import type { GpuCall } from '../pattern/dispatch';

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
 * reduceByKey (`op`) or uniqueByKey in one pass (the engine's 'by-key-runs' write: each run's key
 * and fold written at its head; 'by-key-firsts': a compaction of the heads writing key and value),
 * when both outputs can be bound whole beside the inputs: host outputs (n-element temporaries), or
 * DeviceArrays of at least n elements in buffers of their own. Else undefined (the caller composes
 * a scan and compactions).
 */
async function fusedRunsByKey(
  call: GpuCall,
  p: GpuByKey,
  op: GpuFunction | undefined,
  keysOut: CheckedArray,
  valuesOut: CheckedArray,
): Promise<number | undefined> {
  const { device, tuning, readBack, deliver, temp } = call;
  const [keys, values] = call.inputs as [DeviceArray, DeviceArray];
  const n = keys.length;
  const side = (o: CheckedArray, k: number): DeviceArray | undefined => {
    if (o.kind === 'host') return temp(o.type, n);
    const d = call.outputs[k] as DeviceArray;
    return o.length >= n && d.buffer !== keys.buffer && d.buffer !== values.buffer ? d : undefined;
  };
  const ks = side(keysOut, 0);
  const vs = side(valuesOut, 1);
  if (!ks || !vs || ks.buffer === vs.buffer) return undefined;
  const value = op ? combinerOf(op, p.valueType) : undefined;
  const r = await runsByKeyDevice(device, {
    label: p.label,
    input: values,
    keys,
    write: value ? 'by-key-runs' : 'by-key-firsts',
    gen: {
      kind: 'by-key',
      keyType: p.keyType,
      keyEq: p.keyEq,
      edge: 'head',
      scan: value ? { op: value.combine } : undefined,
    },
    combiner: value ? segmentedCombiner(value, true) : undefined,
    valuesOut: vs,
    keysOut: ks,
    readBack: readBack(0) || readBack(1),
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

/** The device side of a reduceByKey / uniqueByKey output and how it reaches the caller. */
interface RunOutput {
  readonly arg: CheckedArray;
  readonly side: DeviceArray;
  readonly index: number;
}

/**
 * reduceByKey (`op` given) or uniqueByKey: writes each run's first key to keysOut and its fold
 * (uniqueByKey: its first value) to valuesOut; returns the number of runs. Outputs shorter than n
 * elements are written through temporaries copied only when the runs fit (else an ArgumentError,
 * the outputs untouched).
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
  const fused = await fusedRunsByKey(call, p, op, keysOut, valuesOut);
  if (fused !== undefined) return fused;
  let source = values;
  if (op) {
    const value = combinerOf(op, p.valueType);
    source = temp(p.valueType, n);
    await scanDevice(device, {
      label: p.label,
      input: values,
      keys,
      output: source,
      gen: { kind: 'by-key', keyType: p.keyType, keyEq: p.keyEq, edge: 'head', scan: { op: value.combine } },
      write: 'inclusive',
      combiner: segmentedCombiner(value),
      initBits: bitsOf(p.valueType, 0),
      tuning,
      tuningName: p.label,
    });
  }
  const outs: RunOutput[] = [
    { arg: keysOut, side: call.outputs[0] as DeviceArray, index: 0 },
    { arg: valuesOut, side: call.outputs[1] as DeviceArray, index: 1 },
  ];
  // Outputs of n elements or more are written directly; otherwise both go through temporaries, copied
  // (on the device) only when the runs fit both, so a short output leaves both untouched.
  const direct = keysOut.length >= n && valuesOut.length >= n;
  const cap = Math.min(keysOut.length, valuesOut.length);
  let runs = 0;
  const results: { bytes?: ArrayBuffer; index: number }[] = [];
  for (const o of outs) {
    const isKeys = o.index === 0;
    const r = await compactDevice(device, {
      label: p.label,
      input: isKeys ? keys : source,
      output: direct ? o.side : temp(o.arg.type, n),
      keep: { kind: 'by-key', keyType: p.keyType, keyEq: p.keyEq, edge: isKeys || !op ? 'head' : 'tail' },
      stencil: keys,
      write: 'compact',
      finish: !direct && o.arg.kind === 'device' ? { dst: o.arg.array, mode: 'prefix', cap } : undefined,
      readBack: readBack(o.index),
      tuning,
      tuningName: p.label,
    });
    runs = r.count;
    results.push({ bytes: r.bytes, index: o.index });
  }
  for (const o of outs) if (runs > o.arg.length) throw tooShort(o.arg, runs);
  for (const r of results) deliver(r.index, r.bytes, runs);
  return runs;
}
