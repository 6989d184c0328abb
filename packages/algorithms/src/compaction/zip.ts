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
 * temporary, then the scan engine's stencil compaction moves each array by those flags. Size tiers:
 * those of the engines.
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
import { checkArrays, checkZipFunction, isZip, tupleParams, type ZipFunction } from '../common/zip';
import { mapDevice } from '../engines/map/index';
import {
  type CompactFinish,
  type CompactResult,
  compactDevice,
  compactionFits,
  compactionLimit,
  type ElementHook,
  SCAN_ENGINE,
  SCAN_MAX_INPUTS,
  type ScatterWrite,
  stencilKeep,
} from '../engines/scan';
import type { Pattern } from '../pattern/dispatch';
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

/**
 * The scatter write of a zip: `fn(at, x, s0[, s1], i)` stores every array's element at `at`
 * (`scn_store<k>`: output k).
 */
function zipStore(types: readonly NumericType[]): ScatterWrite {
  const name = mangle('zip_store', ...types);
  const params = types.map((t, k) => (k === 0 ? `x: ${t}` : `s${k - 1}: ${t}`)).join(', ');
  const stores = types.map((_, k) => `scn_store${k}(at, ${k === 0 ? 'x' : `s${k - 1}`});`).join(' ');
  const fn: WgslFragment = fragment({ name, code: `fn ${name}(at: u32, ${params}, i: u32) { ${stores} }` });
  return { kind: 'scatter', fn, outputs: types };
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
): { keep: ElementHook; write: ScatterWrite } | undefined {
  if (inTypes.length - 1 > SCAN_MAX_INPUTS) return undefined;
  const pred = predicateFragment(z.parts[0] as ZipFunction['parts'][number], z.argTypes, negate);
  const keep: ElementHook = { kind: 'element', fn: pred, inputs: inTypes.slice(1), index: indexed };
  const write = zipStore(inTypes);
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

/** removeIf in place over a zip: every array keeps the elements whose predicate is falsy. */
export function zipRemovePattern(dataArg: unknown, predArg: unknown): Pattern<number> {
  const inputs = checkArrays(dataArg, 'data');
  const { inTypes, z, indexed, n } = zipPredicate(inputs, predArg);
  for (const [k, a] of inputs.entries()) {
    for (let j = 0; j < k; j++) checkNoAlias(inputs[j] as CheckedArray, a, `data[${j}]`, `data[${k}]`);
  }
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
    gpu: async ({ device, tuning, inputs: sides, temp }) => {
      const once = onePass(device, z, inTypes, indexed, true);
      if (once) {
        const r = await compactOnce(
          device,
          'removeIf',
          sides,
          once,
          inputs.map((data, k) => ({
            output: temp(inTypes[k] as NumericType, n),
            finish: data.kind === 'device' ? { dst: data.array, mode: 'prefix' } : undefined,
            readBack: data.kind === 'host',
          })),
          tuning,
        );
        // Host arrays change only once the compaction succeeded.
        inputs.forEach((data, k) => {
          const bytes = bytesOf(r, k);
          if (data.kind === 'host' && bytes) copyInto(data.array as HostArray, bytes, r.count);
        });
        return r.count;
      }
      const flags = temp('u32', n);
      await mapDevice(device, {
        label: 'removeIf',
        n,
        inputs: sides,
        output: flags,
        elem: flagElement(z, inTypes, true),
      });
      let count = 0;
      const delivers: (() => void)[] = [];
      for (const [k, side] of sides.entries()) {
        const data = inputs[k] as CheckedArray;
        const r = await compactDevice(device, {
          label: 'removeIf',
          input: side,
          output: temp(inTypes[k] as NumericType, n),
          inputs: [flags],
          keep: stencilKeep(predicateFragment(stencilTruthy, ['u32']), 'u32'),
          write: 'compact',
          finish: data.kind === 'device' ? { dst: data.array, mode: 'prefix' } : undefined,
          readBack: data.kind === 'host',
          tuning,
          tuningName: 'removeIf',
        });
        if (data.kind === 'host' && r.bytes) {
          const bytes = r.bytes;
          delivers.push(() => copyInto(data.array as HostArray, bytes, r.count));
        }
        count = r.count;
      }
      // Host arrays change only once every array's compaction succeeded.
      for (const d of delivers) d();
      return count;
    },
  };
}
