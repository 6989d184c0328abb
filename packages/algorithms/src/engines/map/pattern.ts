/**
 * The map engine over checked arguments: host inputs are uploaded, a host output gets a temporary
 * device array that is read back in the same command buffer and copied into it, DeviceArrays pass
 * through (an output longer than `n` is written in its first `n` elements only). A host output that
 * is one of the host inputs (same memory) is computed in place on the device side.
 */
import { DeviceArray, type GpuDevice, type GpuFunction, type HostArray, type NumericType } from '@webdpl/core';
import { assertNever, type CpuBackend, selectBackend } from '@webdpl/policies';
import { type CheckedArray, deviceArraysOf, hostArrayOf } from '../../common/args';
import { copyInto, type DeviceSide, releaseTemps, toDevice } from '../../common/gpu-io';
import { type MapRequest, mapDevice } from './index';

/** A MapRequest over checked host or device arguments: the output may be longer than `n`. */
export interface RunMapRequest
  extends Pick<MapRequest, 'label' | 'n' | 'elem' | 'constants' | 'tuning' | 'tuningName'> {
  readonly inputs: readonly CheckedArray[];
  readonly output: CheckedArray;
}

function sameHostMemory(a: CheckedArray, b: CheckedArray): boolean {
  return (
    a.kind === 'host' &&
    b.kind === 'host' &&
    a.array.buffer === b.array.buffer &&
    a.array.byteOffset === b.array.byteOffset
  );
}

/** Runs the map engine on `device` for checked host or device arguments. */
export async function runMap(device: GpuDevice, req: RunMapRequest): Promise<void> {
  const { n, output } = req;
  const inSides: DeviceSide[] = [];
  let outSide: DeviceSide | undefined;
  try {
    for (const a of req.inputs) {
      // The same host array given twice is uploaded once.
      const twin = req.inputs.findIndex((b) => sameHostMemory(a, b) && b.length === a.length);
      const prior = twin < inSides.length ? inSides[twin] : undefined;
      inSides.push(prior ? { array: prior.array, temp: false } : toDevice(device, a));
    }
    const inPlace = req.inputs.findIndex((a) => sameHostMemory(a, output));
    if (output.kind === 'device') {
      outSide = { array: output.length > n ? output.array.view(0, n) : output.array, temp: false };
    } else if (inPlace >= 0) {
      outSide = { array: (inSides[inPlace] as DeviceSide).array, temp: false };
    } else {
      outSide = { array: DeviceArray.create(device, output.type, n), temp: true };
    }
    const bytes = await mapDevice(device, {
      label: req.label,
      n,
      inputs: inSides.map((s) => s.array),
      output: outSide.array,
      elem: req.elem,
      constants: req.constants,
      tuning: req.tuning,
      tuningName: req.tuningName,
      readBack: output.kind === 'host',
    });
    if (output.kind === 'host' && bytes) copyInto(output.array, bytes, n);
  } finally {
    releaseTemps(...inSides, outSide);
  }
}

export interface MapCall {
  /** Algorithm name: tuning key, labels and error messages. */
  readonly algorithm: string;
  /** Elements to produce. */
  readonly n: number;
  /** Checked inputs (their DeviceArrays pin the call to their device). */
  readonly inputs: readonly CheckedArray[];
  readonly output: CheckedArray;
  /** Functions the call runs, with their argument types (checked by backend selection). */
  readonly functions?: readonly { readonly fn: GpuFunction; readonly argTypes: readonly NumericType[] }[];
  readonly cpu: (backend: CpuBackend, inputs: HostArray[], output: HostArray) => Promise<void>;
  readonly gpu: (device: GpuDevice, tuning: Readonly<Record<string, number | boolean>>) => Promise<void>;
}

/**
 * The common skeleton of the map family: backend selection (engine 'map', so its tuning overrides
 * apply), n = 0 answered at once, CPU backends given the host arrays, the GPU backend its device.
 */
export async function runMapCall(policy: unknown, call: MapCall): Promise<void> {
  const types = [...call.inputs.map((a) => a.type), call.output.type];
  const backend = await selectBackend(policy, {
    algorithm: call.algorithm,
    engine: 'map',
    types: [...new Set(types)],
    functions: call.functions ?? [],
    deviceArrays: deviceArraysOf(...call.inputs, call.output),
  });
  if (call.n === 0) return;
  switch (backend.kind) {
    case 'seq':
    case 'par':
      return call.cpu(backend, call.inputs.map(hostArrayOf), hostArrayOf(call.output));
    case 'gpu':
      return call.gpu(backend.device, backend.tuning);
    default:
      return assertNever(backend);
  }
}
