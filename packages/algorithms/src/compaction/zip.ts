/**
 * copyIf and removeIf over zipped arrays: `copyIf(policy, zip(a, b), zip(oa, ob), (x, y) => ...)`
 * copies the elements i whose predicate holds, every array's element i together, to
 * `oa[0, count)`, `ob[0, count)`; `removeIf(policy, zip(a, b), (x, y) => ...)` removes them in place.
 * The predicate takes one parameter per zipped array (then optionally the index, u32).
 *
 * Strategy: CPU: one generated loop testing the predicate once per element and moving every array's
 * element (bricks zip.ts; par counts per chunk, then writes at each chunk's offset; in place runs
 * seq). GPU: one pass of the scan engine's compaction for zips of 2 or 3 arrays: the first array is
 * the input, the others its 'element' hook's streamed inputs (the predicate, negated for removeIf,
 * sees every array's element and the index), and a 'scatter' write hook stores every array's
 * element at the kept rank into its output (`zipStore`: one output binding per array). Outputs
 * shorter than n and in-place removeIf go through temporaries that the engine's finish kernel copies
 * back in the same submission. Zips of 4 arrays (3 streamed inputs: the engine streams 2) and
 * devices whose `maxStorageBuffersPerShaderStage` is below the kernel's bindings (3 arrays: 8 on
 * the scalar path) keep the K + 1 passes: the map engine writes the predicate's 1/0 flags into a
 * temporary, then the scan engine's stencil compaction moves each array by those flags. partition
 * and stablePartition over zips (`zipPartitionPattern`, both stable) take the same paths with the
 * rejected elements written too, from the end, and copied back in input order. Size tiers: those of
 * the engines.
 */
import {
  ArgumentError,
  type DeviceArray,
  fragment,
  type GpuDevice,
  type HostArray,
  mangle,
  type NumericType,
  type WgslFragment,
} from '@webdpl/core';
import { cpuZipCompact } from '../bricks/zip';
import { type CheckedArray, checkNoAlias } from '../common/args';
import { copyInto } from '../common/gpu-io';
import { predicateFragment } from '../common/predicates';
import { checkArrays, checkTogether, checkZipFunction, isZip, tupleParams, type ZipFunction } from '../common/zip';
import { mapDevice } from '../engines/map/index';
import {
  type CompactFinish,
  type CompactResult,
  compactDevice,
  compactionFits,
  compactionLimit,
  type ElementHook,
  type FinishMode,
  SCAN_ENGINE,
  SCAN_MAX_INPUTS,
  type ScatterWrite,
  stencilKeep,
} from '../engines/scan';
import type { GpuCall, Pattern } from '../pattern/dispatch';
import { stencilTruthy } from './index';

/** The map element writing the predicate's keep flag (1/0, negated for removeIf). */
function flagElement(z: ZipFunction, inTypes: readonly NumericType[], negate: boolean) {
  const pred = predicateFragment(z.parts[0] as ZipFunction['parts'][number], z.argTypes, negate);
  const name = mangle('elem_zflag', inTypes.length, pred.name);
  const params = inTypes.map((t, k) => `x${k}: ${t}, `).join('');
  const args = z.argTypes.map((_, k) => (k < inTypes.length ? `x${k}` : 'i')).join(', ');
  return fragment({
    name,
    deps: [pred],
    code: `fn ${name}(${params}i: u32, c: vec2<u32>) -> u32 { return select(0u, 1u, ${pred.name}(${args})); }`,
  });
}

/** zipStore's writes by types (built once: no WGSL text on the hot path). */
const storeWrites = new Map<string, ScatterWrite>();

/**
 * The scatter write of a zip: `fn(at, x, s0[, s1], i)` stores every array's element at `at`
 * (`scn_store<k>`: output k).
 */
function zipStore(types: readonly NumericType[], rejected: boolean): ScatterWrite {
  const key = `${types.join(',')}${rejected ? '|rejected' : ''}`;
  const hit = storeWrites.get(key);
  if (hit) return hit;
  const name = mangle('zip_store', ...types);
  const params = types.map((t, k) => (k === 0 ? `x: ${t}` : `s${k - 1}: ${t}`)).join(', ');
  const stores = types.map((_, k) => `scn_store${k}(at, ${k === 0 ? 'x' : `s${k - 1}`});`).join(' ');
  const fn: WgslFragment = fragment({ name, code: `fn ${name}(at: u32, ${params}, i: u32) { ${stores} }` });
  const write: ScatterWrite = { kind: 'scatter', fn, outputs: types, rejected };
  storeWrites.set(key, write);
  return write;
}

/**
 * The one-pass compaction of a zip when the engine can run it on `device`: the predicate as the
 * 'element' hook over the first array and the others streamed, the `zipStore` write.
 */
function onePass(
  device: GpuDevice,
  z: ZipFunction,
  inTypes: readonly NumericType[],
  indexed: boolean,
  negate: boolean,
  rejected = false,
): { keep: ElementHook; write: ScatterWrite } | undefined {
  if (inTypes.length - 1 > SCAN_MAX_INPUTS) return undefined;
  const pred = predicateFragment(z.parts[0] as ZipFunction['parts'][number], z.argTypes, negate);
  const keep: ElementHook = { kind: 'element', fn: pred, inputs: inTypes.slice(1), index: indexed };
  const write = zipStore(inTypes, rejected);
  return compactionFits(device, keep, write) ? { keep, write } : undefined;
}

/** One output of a one-pass zip compaction: where the kernel writes, and its finish copy. */
interface ZipOut {
  readonly output: DeviceArray;
  readonly finish?: CompactFinish;
  readonly readBack: boolean;
}

/** Runs the one-pass compaction of the zip `sides` into `outs` (one per array). */
function compactOnce(
  device: GpuDevice,
  label: string,
  sides: readonly DeviceArray[],
  how: { keep: ElementHook; write: ScatterWrite },
  outs: readonly ZipOut[],
  tuning: Readonly<Record<string, number | boolean>> | undefined,
): Promise<CompactResult> {
  const first = outs[0] as ZipOut;
  return compactDevice(device, {
    label,
    input: sides[0] as DeviceArray,
    inputs: sides.slice(1),
    output: first.output,
    keep: how.keep,
    write: how.write,
    finish: first.finish,
    readBack: first.readBack,
    more: outs.slice(1),
    tuning,
    tuningName: label,
  });
}

/** Output k's bytes of a one-pass compaction. */
function bytesOf(r: CompactResult, k: number): ArrayBuffer | undefined {
  return k === 0 ? r.bytes : r.moreBytes?.[k - 1];
}

/** Checks the predicate over checked zipped `inputs`. */
export function zipPredicate(inputs: CheckedArray[], predArg: unknown) {
  const inTypes = inputs.map((a) => a.type);
  const { shape, argTypes, indexed, what } = tupleParams(predArg, inTypes, true);
  const z = checkZipFunction(predArg, 'pred', shape, argTypes, 0, what);
  return { inputs, inTypes, z, indexed, n: (inputs[0] as CheckedArray).length };
}

/** copyIf / removeIf (copying form) over a zip into a zip of outputs. */
export function zipCopyPattern(
  algorithm: string,
  inputArg: unknown,
  outputArg: unknown,
  predArg: unknown,
  negate: boolean,
): Pattern<number> {
  const inputs = checkArrays(inputArg, 'input');
  if (!isZip(outputArg)) {
    throw new ArgumentError('output', `zip(...) of ${inputs.length} arrays (the input is a zip)`, 'one array');
  }
  const outputs = checkArrays(outputArg, 'output');
  if (outputs.length !== inputs.length) {
    throw new ArgumentError('output', `zip(...) of ${inputs.length} arrays (as the input)`, `${outputs.length}`);
  }
  outputs.forEach((o, k) => {
    const t = (inputs[k] as CheckedArray).type;
    if (o.type !== t) {
      throw new ArgumentError(`output[${k}]`, `an array of ${t} elements (input[${k}]'s type)`, `${o.type} elements`);
    }
    inputs.forEach((a, j) => {
      checkNoAlias(a, o, `input[${j}]`, `output[${k}]`);
    });
    for (let j = 0; j < k; j++) checkNoAlias(outputs[j] as CheckedArray, o, `output[${j}]`, `output[${k}]`);
  });
  const { inTypes, z, indexed, n } = zipPredicate(inputs, predArg);
  const minOut = Math.min(...outputs.map((o) => o.length));
  const tooShort = (count: number) =>
    new ArgumentError('output', `arrays of at least ${count} elements (the number of elements kept)`, `${minOut}`);
  return {
    algorithm,
    engine: SCAN_ENGINE,
    n,
    inputs,
    outputs: outputs.map((arg) => ({ arg, length: Math.min(n, arg.length) })),
    functions: [{ fn: z.parts[0] as ZipFunction['parts'][number], argTypes: z.argTypes }],
    gpuCheck: (device) => compactionLimit(device, n),
    empty: () => 0,
    cpu: ({ backend, inputs: hosts, outputs: outs }) =>
      cpuZipCompact(
        backend,
        hosts,
        outs,
        z.parts[0] as ZipFunction['parts'][number],
        z.argTypes,
        indexed,
        negate,
        n,
        tooShort,
      ),
    gpu: async ({ device, tuning, inputs: sides, outputs: outs, readBack, deliver, temp }) => {
      const once = onePass(device, z, inTypes, indexed, negate);
      if (once) {
        const r = await compactOnce(
          device,
          algorithm,
          sides,
          once,
          outputs.map((out, k) => {
            const direct = out.length >= n;
            return {
              output: direct ? (outs[k] as DeviceArray) : temp(inTypes[k] as NumericType, n),
              finish:
                !direct && out.kind === 'device' ? { dst: out.array, mode: 'prefix', cap: out.length } : undefined,
              readBack: readBack(k),
            };
          }),
          tuning,
        );
        if (r.count > minOut) throw tooShort(r.count);
        outputs.forEach((_, k) => {
          deliver(k, bytesOf(r, k), r.count);
        });
        return r.count;
      }
      const results: { count: number; bytes?: ArrayBuffer }[] = [];
      const flags = temp('u32', n);
      await mapDevice(device, {
        label: algorithm,
        n,
        inputs: sides,
        output: flags,
        elem: flagElement(z, inTypes, negate),
      });
      for (const [k, side] of sides.entries()) {
        const out = outputs[k] as CheckedArray;
        const direct = out.length >= n;
        const r = await compactDevice(device, {
          label: algorithm,
          input: side,
          output: direct ? (outs[k] as DeviceArray) : temp(inTypes[k] as NumericType, n),
          inputs: [flags],
          keep: stencilKeep(predicateFragment(stencilTruthy, ['u32']), 'u32'),
          write: 'compact',
          finish: !direct && out.kind === 'device' ? { dst: out.array, mode: 'prefix', cap: out.length } : undefined,
          readBack: readBack(k),
          tuning,
          tuningName: algorithm,
        });
        results.push(r);
      }
      const count = results[0]?.count ?? 0;
      if (count > minOut) throw tooShort(count);
      results.forEach((r, k) => {
        deliver(k, r.bytes, count);
      });
      return count;
    },
  };
}

/** The elements of an in-place call that the GPU computed into a temporary: see `zipInPlaceGpu`. */
interface InPlace {
  readonly label: string;
  readonly data: readonly CheckedArray[];
  readonly z: ZipFunction;
  readonly inTypes: readonly NumericType[];
  readonly indexed: boolean;
  /** removeIf: keep the elements whose predicate is falsy. */
  readonly negate: boolean;
  /** stablePartition (the rejected after the kept, in order) instead of removeIf's kept prefix. */
  readonly partition: boolean;
}

/**
 * removeIf in place (the kept prefix) or stablePartition (the kept first, then the others, both in
 * input order) of the zip `c.data` on the GPU: each array into a temporary, copied back by the
 * finish kernel (DeviceArrays) or read back (host arrays, changed only once every array is done).
 * One compaction when the engine can run it (`onePass`), else the predicate's flags and one stencil
 * compaction per array. Returns the count kept.
 */
async function zipInPlaceGpu(c: InPlace, call: GpuCall): Promise<number> {
  const { device, tuning, inputs: sides, temp } = call;
  const n = (c.data[0] as CheckedArray).length;
  const mode: FinishMode = c.partition ? 'stable-partition' : 'prefix';
  const outs = c.data.map((d, k) => ({
    output: temp(c.inTypes[k] as NumericType, n),
    finish: d.kind === 'device' ? { dst: d.array, mode } : undefined,
    readBack: d.kind === 'host',
  }));
  const once = onePass(device, c.z, c.inTypes, c.indexed, c.negate, c.partition);
  let count = 0;
  const bytes: (ArrayBuffer | undefined)[] = [];
  if (once) {
    const r = await compactOnce(device, c.label, sides, once, outs, tuning);
    count = r.count;
    for (const k of outs.keys()) bytes.push(bytesOf(r, k));
  } else {
    const flags = temp('u32', n);
    await mapDevice(device, {
      label: c.label,
      n,
      inputs: sides,
      output: flags,
      elem: flagElement(c.z, c.inTypes, c.negate),
    });
    for (const [k, side] of sides.entries()) {
      const out = outs[k] as ZipOut;
      const r = await compactDevice(device, {
        label: c.label,
        input: side,
        output: out.output,
        inputs: [flags],
        keep: stencilKeep(predicateFragment(stencilTruthy, ['u32']), 'u32'),
        write: c.partition ? 'partition' : 'compact',
        finish: out.finish,
        readBack: out.readBack,
        tuning,
        tuningName: c.label,
      });
      bytes.push(r.bytes);
      count = r.count;
    }
  }
  c.data.forEach((d, k) => {
    const b = bytes[k];
    if (d.kind !== 'host' || !b) return;
    if (!c.partition) copyInto(d.array, b, count);
    else {
      // The rejected were written from the end: back into input order.
      const host = d.array;
      const src = new (host.constructor as Uint32ArrayConstructor)(b, 0, n);
      host.set(src.subarray(0, count));
      for (let q = 0; q < n - count; q++) host[count + q] = src[n - 1 - q] as number;
    }
  });
  return count;
}

/** The zip `dataArg` for an in-place call: one length, no two arrays overlapping, and its predicate. */
function inPlaceArgs(dataArg: unknown, predArg: unknown) {
  const inputs = checkArrays(dataArg, 'data');
  checkTogether(inputs.map((a, k) => [a, `data[${k}]`] as const));
  return zipPredicate(inputs, predArg);
}

/** removeIf in place over a zip: every array keeps the elements whose predicate is falsy. */
export function zipRemovePattern(dataArg: unknown, predArg: unknown): Pattern<number> {
  const { inputs, inTypes, z, indexed, n } = inPlaceArgs(dataArg, predArg);
  return {
    algorithm: 'removeIf',
    engine: SCAN_ENGINE,
    n,
    inputs,
    functions: [{ fn: z.parts[0] as ZipFunction['parts'][number], argTypes: z.argTypes }],
    gpuCheck: (device) => compactionLimit(device, n),
    empty: () => 0,
    cpu: ({ backend, inputs: hosts }) =>
      cpuZipCompact(
        backend,
        hosts,
        hosts,
        z.parts[0] as ZipFunction['parts'][number],
        z.argTypes,
        indexed,
        true,
        n,
        () => new Error('unreachable'),
      ),
    gpu: (call) =>
      zipInPlaceGpu({ label: 'removeIf', data: inputs, z, inTypes, indexed, negate: true, partition: false }, call),
  };
}

/**
 * partition / stablePartition over a zip, in place: the elements whose predicate holds first, then
 * the others, both groups in input order. CPU: the two groups by two compaction loops into
 * temporaries, copied back; GPU: `zipInPlaceGpu`.
 */
export function zipPartitionPattern(dataArg: unknown, predArg: unknown): Pattern<number> {
  const { inputs, inTypes, z, indexed, n } = inPlaceArgs(dataArg, predArg);
  const fn = z.parts[0] as ZipFunction['parts'][number];
  return {
    algorithm: 'partition',
    engine: SCAN_ENGINE,
    n,
    inputs,
    functions: [{ fn, argTypes: z.argTypes }],
    gpuCheck: (device) => compactionLimit(device, n),
    empty: () => 0,
    cpu: async ({ backend, inputs: hosts }) => {
      const like = (h: HostArray) => new (h.constructor as Uint32ArrayConstructor)(n);
      const kept = hosts.map(like);
      const rest = hosts.map(like);
      const never = () => new Error('unreachable');
      const count = await cpuZipCompact(backend, hosts, kept, fn, z.argTypes, indexed, false, n, never);
      await cpuZipCompact(backend, hosts, rest, fn, z.argTypes, indexed, true, n, never);
      hosts.forEach((h, k) => {
        h.set((kept[k] as HostArray).subarray(0, count));
        h.set((rest[k] as HostArray).subarray(0, n - count), count);
      });
      return count;
    },
    gpu: (call) =>
      zipInPlaceGpu({ label: 'partition', data: inputs, z, inTypes, indexed, negate: false, partition: true }, call),
  };
}
