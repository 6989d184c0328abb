/**
 * copyIf and removeIf over zipped arrays: `copyIf(policy, zip(a, b), zip(oa, ob), (x, y) => ...)`
 * copies the elements i whose predicate holds, every array's element i together, to
 * `oa[0, count)`, `ob[0, count)`; `removeIf(policy, zip(a, b), (x, y) => ...)` removes them in place.
 * The predicate takes one parameter per zipped array (then optionally the index, u32).
 *
 * Strategy: CPU: one generated loop testing the predicate once per element and moving every array's
 * element (bricks zip.ts; par counts per chunk, then writes at each chunk's offset; in place runs
 * seq). GPU: no new kernel: the map engine writes the predicate's 1/0 flags into a temporary, then
 * the scan engine's stencil compaction moves each array by those flags (K + 1 passes for K arrays;
 * in place through a temporary copied back, as removeIf does). Size tiers: those of the engines.
 */
import { ArgumentError, type DeviceArray, fragment, type HostArray, mangle, type NumericType } from '@webdpl/core';
import { cpuZipCompact } from '../bricks/zip';
import { type CheckedArray, checkNoAlias } from '../common/args';
import { copyInto } from '../common/gpu-io';
import { predicateFragment } from '../common/predicates';
import { checkArrays, checkZipFunction, isZip, tupleParams, type ZipFunction } from '../common/zip';
import { mapDevice } from '../engines/map/index';
import { compactDevice, compactionLimit, SCAN_ENGINE, stencilKeep } from '../engines/scan';
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
