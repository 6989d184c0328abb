/**
 * The map family's common pattern (transform, forEach, fill, iota): engine 'map' (so its tuning
 * overrides apply), `n` elements written to the output (a longer output keeps the rest), and on the
 * GPU the map engine over the staged arrays: a host output that is one of the host inputs is
 * computed in place on the device copy, and host outputs are read back in the engine's own
 * submission.
 */
import type { WgslFragment } from '@webdpl/core';
import type { CheckedArray } from '../../common/args';
import type { CpuCall, FunctionUse, Pattern } from '../../pattern/dispatch';
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
  /** Two u32 words handed to every element. */
  readonly constants?: readonly [number, number];
  readonly cpu: (call: CpuCall) => void | Promise<void>;
}

/** The pattern of a map call: `output[i] = elem(inputs[..][i], i)` for i in [0, n). */
export function mapPattern(c: MapPatternCall): Pattern<void> {
  return {
    algorithm: c.algorithm,
    engine: 'map',
    n: c.n,
    inputs: c.inputs,
    outputs: [c.output, ...(c.extraOutputs ?? [])].map((arg) => ({ arg, shareInput: true, length: c.n })),
    functions: c.functions,
    empty: () => undefined,
    recordable: true,
    cpu: c.cpu,
    gpu: async ({ device, tuning, inputs, outputs: [output, ...extraOutputs], readBack, deliver }) => {
      const bytes = await mapDeviceAll(device, {
        label: c.algorithm,
        n: c.n,
        inputs,
        output: output as NonNullable<typeof output>,
        elem: c.elem(),
        constants: c.constants,
        tuning,
        tuningName: c.algorithm,
        readBack: readBack(0),
        extraOutputs,
        readBackExtra: extraOutputs.map((_, k) => readBack(k + 1)),
      });
      bytes.forEach((b, k) => {
        deliver(k, b, c.n);
      });
    },
  };
}
