/**
 * The common skeleton of the transform-reduce family: backend selection (engine
 * 'transform-reduce', so its tuning overrides apply), n = 0 answered at once, CPU backends given the
 * host arrays, the GPU backend given device arrays (host inputs uploaded, released afterwards).
 */
import {
  type DeviceArray,
  fragment,
  type GpuDevice,
  type GpuFunction,
  type HostArray,
  mangle,
  type NumericType,
  type WgslFragment,
} from '@webdpl/core';
import { assertNever, type CpuBackend, selectBackend } from '@webdpl/policies';
import { type CheckedArray, deviceArraysOf, hostArrayOf } from '../common/args';
import { type DeviceSide, releaseTemps, toDevice } from '../common/gpu-io';

export interface TransformReduceCall<R> {
  /** Algorithm name: tuning key, labels and error messages. */
  readonly algorithm: string;
  /** 1 or 2 checked inputs of equal length. */
  readonly inputs: readonly CheckedArray[];
  /** Functions the call runs, with their argument types (checked by backend selection). */
  readonly functions?: readonly { readonly fn: GpuFunction; readonly argTypes: readonly NumericType[] }[];
  /** Why a GPU cannot run the call (e.g. an operator without identity), if it cannot. */
  readonly gpuCheck?: (device: GpuDevice) => string | undefined;
  /** The answer for empty inputs. */
  readonly empty: () => R;
  readonly cpu: (backend: CpuBackend, inputs: HostArray[]) => Promise<R>;
  readonly gpu: (
    device: GpuDevice,
    inputs: DeviceArray[],
    tuning: Readonly<Record<string, number | boolean>>,
  ) => Promise<R>;
}

/** Runs one call of the family under `policy`. */
export async function runTransformReduce<R>(policy: unknown, call: TransformReduceCall<R>): Promise<R> {
  const backend = await selectBackend(policy, {
    algorithm: call.algorithm,
    engine: 'transform-reduce',
    types: call.inputs.map((a) => a.type),
    functions: call.functions ?? [],
    deviceArrays: deviceArraysOf(...call.inputs),
    ...(call.gpuCheck ? { gpuCheck: call.gpuCheck } : {}),
  });
  if ((call.inputs[0] as CheckedArray).length === 0) return call.empty();
  switch (backend.kind) {
    case 'seq':
    case 'par':
      return call.cpu(backend, call.inputs.map(hostArrayOf));
    case 'gpu': {
      const sides: DeviceSide[] = [];
      try {
        for (const a of call.inputs) sides.push(toDevice(backend.device, a));
        return await call.gpu(
          backend.device,
          sides.map((s) => s.array),
          backend.tuning,
        );
      } finally {
        releaseTemps(...sides);
      }
    }
    default:
      return assertNever(backend);
  }
}

/**
 * `fn NAME(x0: T0[, x1: T1], i: u32) -> Acc { BODY }`: a load of the transform-reduce engine.
 * `body` may call the fragments in `deps`; `key` must name everything the body depends on.
 */
export function loadFragment(
  prefix: string,
  inTypes: readonly NumericType[],
  acc: string,
  body: string,
  deps: readonly (WgslFragment | undefined)[],
  key: readonly (string | number)[],
): WgslFragment {
  const name = mangle(prefix, ...inTypes, ...key);
  const params = inTypes.map((t, k) => `x${k}: ${t}`).join(', ');
  return fragment({ name, deps, code: `fn ${name}(${params}, i: u32) -> ${acc} {\n  ${body}\n}` });
}
