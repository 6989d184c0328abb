/**
 * Inputs beyond one storage binding: a range of elements is split into segments whose binding
 * windows each fit the device's maxStorageBufferBindingSize (or a lower tuning override, which is
 * how tests prove this path on small arrays). Windows start at an aligned byte offset; the kernel
 * gets the element index of the range's start inside its window (`localBase`).
 */
import type { DeviceArray, GpuDevice } from '@webdpl/core';

export interface Segment {
  /** First element of the segment, relative to the range. */
  readonly start: number;
  /** Elements in the segment. */
  readonly length: number;
}

export interface Window {
  readonly offset: number;
  readonly size: number;
  /** Index of the segment's first element within the window. */
  readonly localBase: number;
}

/** Byte alignment of binding offsets (at least 256, a multiple of every device's requirement). */
export function bindingAlignment(device: GpuDevice): number {
  return Math.max(256, device.limits.minStorageBufferOffsetAlignment);
}

/**
 * Splits `n` elements into segments of at most `limitBytes` per binding, each a multiple of
 * `granule` elements (except the last) so tiles and vec4 alignment stay intact.
 */
export function segmentsFor(device: GpuDevice, n: number, limitBytes: number, granule = 1024): Segment[] {
  const align = bindingAlignment(device);
  const usable = Math.floor((limitBytes - align - 16) / 4);
  const per = Math.max(granule, Math.floor(usable / granule) * granule);
  const out: Segment[] = [];
  for (let s = 0; s < n || (n === 0 && out.length === 0); s += per) {
    out.push({ start: s, length: Math.min(per, n - s) });
    if (n === 0) break;
  }
  return out;
}

/** The binding window of `segment` of `array` (elements [start, start+length) of the array). */
export function windowOf(device: GpuDevice, array: DeviceArray, segment: Segment): Window {
  const align = bindingAlignment(device);
  const first = array.offset + segment.start;
  const offset = Math.floor((first * 4) / align) * align;
  const localBase = first - offset / 4;
  const size = Math.min(Math.ceil(((localBase + segment.length) * 4) / 16) * 16 || 16, array.buffer.size - offset);
  return { offset, size, localBase };
}

/** The binding of `window` of `array`. */
export function windowResource(array: DeviceArray, w: Window): GPUBufferBinding {
  return { buffer: array.buffer, offset: w.offset, size: w.size };
}
