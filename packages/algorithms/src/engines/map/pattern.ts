/**
 * The map family's common pattern (transform, forEach, fill, iota): engine 'map' (so its tuning
 * overrides apply), `n` elements written to the output (a longer output keeps the rest), and on the
 * GPU the map engine over the staged arrays: a host output that is one of the host inputs is
 * computed in place on the device copy, and host outputs are read back in the engine's own
 * submission. With the 'masked' write only the elements whose element function sets ok are
 * written: a host output is uploaded first (a host output that is an input uses that input's
 * copy), so the others keep the caller's values when it is read back.
 */
import type { WgslFragment } from '@webdpl/core';
import type { CheckedArray } from '../../common/args';
import type { CpuCall, FunctionUse, OutputSpec, Pattern } from '../../pattern/dispatch';
import { mapDeviceAll } from './index';

export interface MapPatternCall {
  readonly algorithm: string;
  /** Elements to produce. */
  readonly n: number;
  readonly inputs: readonly CheckedArray[];
  readonly output: CheckedArray;
  /** Outputs 1.. of a zip output (see MapRequest.extraOutputs). @default [] */
  readonly extraOutputs?: readonly CheckedArray[];
  readonly functions?: readonly FunctionUse[];
  /** The map engine's element function (see MapRequest.elem). */
  readonly elem: () => WgslFragment;
  /**
   * 'value': out[i] = elem(...) for every i; 'masked': only where elem sets its `ok` (see MapWrite),
   * the other elements keep their values. @default 'value'
   */
  readonly write?: 'value' | 'masked';
  /** Two u32 words handed to every element. */
  readonly constants?: readonly [number, number];
  readonly cpu: (call: CpuCall) => void | Promise<void>;
}

/** The output specs of a map call: its output, then each extra output (a loop: per call). */
function outputSpecs(c: MapPatternCall): OutputSpec[] {
  const upload = c.write === 'masked';
  const specs: OutputSpec[] = [{ arg: c.output, shareInput: true, upload, length: c.n }];
  const extras = c.extraOutputs;
  if (extras) for (const arg of extras) specs.push({ arg, shareInput: true, upload, length: c.n });
  return specs;
}

/** The pattern of a map call: `output[i] = elem(inputs[..][i], i)` for i in [0, n). */
export function mapPattern(c: MapPatternCall): Pattern<void> {
  return {
    algorithm: c.algorithm,
    engine: 'map',
    n: c.n,
    inputs: c.inputs,
    outputs: outputSpecs(c),
    functions: c.functions,
    empty: () => undefined,
    recordable: true,
    cpu: c.cpu,
    gpu: async ({ device, tuning, inputs, outputs: [output, ...extraOutputs], readBack, deliver }) => {
      const bytes = await mapDeviceAll(device, {
        label: c.algorithm,
        n: c.n,
        inputs,
        // An uploaded host output has the caller's length: the call writes its first n elements.
        output: output && output.length !== c.n ? output.view(0, c.n) : (output as NonNullable<typeof output>),
        write: c.write,
        elem: c.elem(),
        constants: c.constants,
        tuning,
        tuningName: c.algorithm,
        readBack: readBack(0),
        extraOutputs,
        readBackExtra: extraOutputs.map((_, k) => readBack(k + 1)),
      });
      for (let k = 0; k < bytes.length; k++) deliver(k, bytes[k], c.n);
    },
  };
}
