/**
 * Moving arguments to and from the device: host arrays become temporary DeviceArrays (uploaded with
 * queue.writeBuffer, which lands before the call's one command buffer), DeviceArrays pass through.
 */
import { DeviceArray, type GpuDevice, type HostArray } from '@webdpl/core';
import type { CheckedArray } from './args';

/** A device-side view of an argument; `temp` arrays are destroyed by `releaseTemps`. */
export interface DeviceSide {
  readonly array: DeviceArray;
  readonly temp: boolean;
}

/** The argument on `device`: uploads host arrays (`upload: false` allocates without copying, for outputs). */
export function toDevice(device: GpuDevice, a: CheckedArray, upload = true): DeviceSide {
  if (a.kind === 'device') return { array: a.array, temp: false };
  const array = upload
    ? DeviceArray.from(device, a.array as Uint32Array)
    : DeviceArray.create(device, a.type, a.length);
  return { array, temp: true };
}

/** Destroys the temporary arrays among `sides`. */
export function releaseTemps(...sides: (DeviceSide | undefined)[]): void {
  for (const s of sides) if (s?.temp) s.array.destroy();
}

/** Copies raw bytes read back from the device into a host array. */
export function copyInto(target: HostArray, bytes: ArrayBuffer, count = target.length): void {
  new Uint8Array(target.buffer, target.byteOffset, count * 4).set(new Uint8Array(bytes, 0, count * 4));
}
