/**
 * Typed errors thrown by webdpl. Every error names what went wrong; argument errors name the argument
 * and what was expected, so a caller can fix the call without reading our source.
 */

/** Base class of every error webdpl throws. */
export class WebdplError extends Error {
  override name = 'WebdplError';
}

/** An argument had the wrong type, shape or value. `argument` names it. */
export class ArgumentError extends WebdplError {
  override name = 'ArgumentError';
  constructor(
    readonly argument: string,
    readonly expected: string,
    readonly got?: string,
  ) {
    super(`${argument}: expected ${expected}${got === undefined ? '' : `, got ${got}`}`);
  }
}

/** An element type is not supported by a device or algorithm (e.g. f16 without shader-f16). */
export class UnsupportedTypeError extends WebdplError {
  override name = 'UnsupportedTypeError';
}

/** No device matched a selector. The message lists what was found. */
export class DeviceNotFoundError extends WebdplError {
  override name = 'DeviceNotFoundError';
}

/** A DeviceArray was used after destroy(). */
export class DestroyedArrayError extends WebdplError {
  override name = 'DestroyedArrayError';
}

/** A DeviceArray of one device was passed to a call running on another. */
export class ForeignArrayError extends WebdplError {
  override name = 'ForeignArrayError';
}

/** A GPU validation error raised by commands a webdpl call issued. */
export class GpuValidationError extends WebdplError {
  override name = 'GpuValidationError';
}

/** The GPU could not allocate memory for a call. */
export class GpuOutOfMemoryError extends WebdplError {
  override name = 'GpuOutOfMemoryError';
}

/** An internal GPU error (driver or implementation failure) during a call. */
export class GpuInternalError extends WebdplError {
  override name = 'GpuInternalError';
}

/** The device was lost (destroyed, reset, or the driver gave up). Every later call on it throws this. */
export class DeviceLostError extends WebdplError {
  override name = 'DeviceLostError';
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
  }
}

/** A user lambda cannot be run on the GPU (or at all). Names the construct and its position. */
export class LambdaError extends WebdplError {
  override name = 'LambdaError';
  constructor(
    message: string,
    readonly source?: string,
    readonly position?: number,
  ) {
    super(message);
  }
}

/** A request the chosen device cannot run (a missing feature, a limit) while fallback is 'error'. */
export class UnsupportedOnDeviceError extends WebdplError {
  override name = 'UnsupportedOnDeviceError';
}

/** Describes a value for an error message: its constructor name or typeof, never its contents. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'object') {
    const ctor = (value as { constructor?: { name?: string } }).constructor?.name;
    return ctor ? ctor : 'object';
  }
  if (typeof value === 'function') return 'function';
  if (typeof value === 'string')
    return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)}`;
  return `${typeof value} ${String(value)}`;
}
