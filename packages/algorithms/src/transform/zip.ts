/**
 * transform over zipped arrays: `transform(policy, zip(a, b, c), output, (x, y, z) => ...)`, and into
 * a zip of outputs with a tuple result, `transform(policy, input, zip(o1, o2), x => [x + 1, x * 2])`.
 * An index lambda takes the element's index (u32) after the zipped elements.
 *
 * Strategy: CPU: one generated loop computing every element of the result before storing any (bricks
 * zip.ts). GPU: the map engine with up to 4 streamed inputs and up to 4 outputs; its element function
 * returns the result's bits as a `vecK<u32>` that the engine stores into each output (vec4 loads and
 * stores where every array is 16-byte aligned). Size tiers: those of the map engine.
 */
import { ArgumentError, fragment, mangle, type NumericType, type WgslFragment } from '@webdpl/core';
import { cpuZipTransform } from '../bricks/zip';
import { type CheckedArray, checkNoAlias } from '../common/args';
import { checkInPlaceOrDisjoint } from '../common/overlap';
import { valueFragment } from '../common/predicates';
import { checkArrays, checkZipFunction, isZip, tupleParams, type ZipFunction } from '../common/zip';
import { mapPattern } from '../engines/map/pattern';
import type { Pattern } from '../pattern/dispatch';

/**
 * The map engine's element function of a zip transform: `fn(x0.., i, c) -> O` for one output,
 * `-> vecK<u32>` (each output's element bits) for K outputs.
 */
function zipElement(z: ZipFunction, inTypes: readonly NumericType[], outTypes: readonly NumericType[]): WgslFragment {
  const vals = z.parts.map((p, k) => valueFragment(p, z.argTypes, outTypes[k] as NumericType));
  const args = z.argTypes.map((_, k) => (k < inTypes.length ? `x${k}` : 'i')).join(', ');
  const name = mangle('elem_zip', inTypes.length, ...vals.map((v) => v.name));
  const params = inTypes.map((t, k) => `x${k}: ${t}, `).join('');
  const calls = vals.map((v) => `${v.name}(${args})`);
  const [result, body] =
    outTypes.length === 1
      ? [outTypes[0] as string, calls[0] as string]
      : [
          `vec${outTypes.length}<u32>`,
          `vec${outTypes.length}<u32>(${calls.map((c) => `bitcast<u32>(${c})`).join(', ')})`,
        ];
  return fragment({
    name,
    deps: vals,
    code: `fn ${name}(${params}i: u32, c: vec2<u32>) -> ${result} { return ${body}; }`,
  });
}

/** The pattern of transform with a zip as its input or output (see the file comment). */
export function zipTransformPattern(inputArg: unknown, outputArg: unknown, fn: unknown): Pattern<void> {
  const inputs = checkArrays(inputArg, 'input');
  const n = (inputs[0] as CheckedArray).length;
  const zipOut = isZip(outputArg);
  const outputs = checkArrays(outputArg, 'output');
  const inTypes = inputs.map((a) => a.type);
  const { shape, argTypes, indexed, what } = tupleParams(fn, inTypes, isZip(inputArg));
  const z = checkZipFunction(fn, 'fn', shape, argTypes, zipOut ? outputs.length : 0, what);
  const names = (base: string, list: readonly CheckedArray[], zipped: boolean) =>
    list.map((_, k) => (zipped ? `${base}[${k}]` : base));
  const inNames = names('input', inputs, isZip(inputArg));
  const outNames = names('output', outputs, zipOut);
  outputs.forEach((o, k) => {
    const r = z.resultTypes[k];
    if (o.length < n) throw new ArgumentError(outNames[k] as string, `at least ${n} elements`, `${o.length}`);
    if (r !== 'bool' && o.type !== r) {
      throw new ArgumentError(
        outNames[k] as string,
        `an array of ${r} elements (fn's result [${k}])`,
        `${o.type} elements`,
      );
    }
    for (let j = 0; j < k; j++)
      checkNoAlias(outputs[j] as CheckedArray, o, outNames[j] as string, outNames[k] as string);
    inputs.forEach((a, j) => {
      checkInPlaceOrDisjoint(a, o, inNames[j] as string, outNames[k] as string);
    });
  });
  const outTypes = outputs.map((o) => o.type);
  return mapPattern({
    algorithm: 'transform',
    n,
    inputs,
    output: outputs[0] as CheckedArray,
    extraOutputs: outputs.slice(1),
    functions: z.parts.map((p) => ({ fn: p, argTypes })),
    elem: () => zipElement(z, inTypes, outTypes),
    cpu: ({ backend, inputs: hosts, outputs: outs }) =>
      cpuZipTransform(backend, hosts, outs, z.parts, argTypes, indexed, n),
  });
}
