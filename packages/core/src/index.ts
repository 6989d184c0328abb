export {
  ArgumentError,
  DestroyedArrayError,
  DeviceLostError,
  DeviceNotFoundError,
  ForeignArrayError,
  GpuInternalError,
  GpuOutOfMemoryError,
  GpuValidationError,
  LambdaError,
  UnsupportedOnDeviceError,
  UnsupportedTypeError,
  WebdplError,
  describe,
} from './errors';
export type { ElementType, HostArray, NumericType, TypedArrayOf } from './types';
export {
  ELEMENT_TYPES,
  allocHost,
  byteSize,
  coerce,
  elementTypeOf,
  isElementType,
  isIntegerType,
  viewHost,
  wgslType,
} from './types';
export type {
  Aspect,
  CpuDevice,
  Device,
  DeviceCandidate,
  DeviceInfo,
  DeviceKind,
  GpuDevice,
  OpenOptions,
} from './device';
export {
  ASPECTS,
  assertAlive,
  enumerateDevices,
  getCpuDevice,
  noGpuReason,
  openDevice,
  releaseDevices,
} from './device';
export { getGpu, gpuUnavailableReason, releaseGpu } from './gpu-instance';
export type { Selector } from './selectors';
export {
  aspectSelector,
  cpuSelector,
  defaultSelector,
  gpuSelector,
  hasAspect,
  selectCandidate,
  selectDevice,
} from './selectors';
export type { Readback, Recorder } from './queue';
export { Queue, gridFor } from './queue';
export { DEVICE_ARRAY_USAGE, DeviceArray } from './device-array';
export type { BinaryOp, GpuFunction, ResultType, SubgroupOp } from './operators';
export {
  BUILTIN_OPERATORS,
  bitAnd,
  bitOr,
  bitXor,
  isGpuFunction,
  logicalAnd,
  logicalOr,
  maximum,
  minimum,
  multiplies,
  plus,
  wgslLiteral,
} from './operators';
export type { LinkedModule, WgslFragment } from './wgsl/fragment';
export { WgslLinkError, fragment, link, mangle } from './wgsl/fragment';
export { entryParams, entryPrologue, threadIds } from './wgsl/ids';
export type { OpParams } from './wgsl/subgroup';
export { identityLiteral, subgroupExclusiveScan, subgroupInclusiveScan, subgroupReduce } from './wgsl/subgroup';
export type { WorkgroupParams } from './wgsl/workgroup';
export { workgroupExclusiveScan, workgroupInclusiveScan, workgroupReduce } from './wgsl/workgroup';
export { getPipeline, pipelineCount } from './pipeline-cache';
export { gpuForTests, gpuRequired } from './testing/gpu';
