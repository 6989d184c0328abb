export { platform } from '#platform';
export type {
  Aspect,
  CpuDevice,
  Device,
  DeviceCandidate,
  DeviceInfo,
  DeviceKind,
  FromGPUDeviceOptions,
  GpuDevice,
  OpenOptions,
} from './device';
export {
  ASPECTS,
  assertAlive,
  enumerateDevices,
  fromGPUDevice,
  getCpuDevice,
  noGpuReason,
  openDevice,
  releaseDevices,
} from './device';
export { DEVICE_ARRAY_USAGE, DeviceArray } from './device-array';
export type { Owned } from './dispatch-cache';
export {
  bufferId,
  DISPATCH_CACHE_CAPACITY,
  DISPATCH_CACHE_MAX_BUFFERS,
  dispatchCache,
  dispatchCacheBuffers,
  LruCache,
  objectId,
  paramsBuffer,
} from './dispatch-cache';
export {
  ArgumentError,
  DestroyedArrayError,
  DeviceLostError,
  DeviceNotFoundError,
  describe,
  ForeignArrayError,
  GpuInternalError,
  GpuOutOfMemoryError,
  GpuValidationError,
  LambdaError,
  UnsupportedOnDeviceError,
  UnsupportedTypeError,
  WebdplError,
} from './errors';
export { getGpu, gpuUnavailableReason, releaseGpu } from './gpu-instance';
export type { ExplicitFunction, LambdaFn, LambdaOptions } from './lambda/lambda';
export { lambda, toGpuFunction } from './lambda/lambda';
export type { TupleFunction, TupleLambdaOptions } from './lambda/tuple';
export { isTupleFunction, tupleFunction, tupleLambda } from './lambda/tuple';
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
export { getPipeline, linkLimits, pipelineCount, pipelineFor } from './pipeline-cache';
export type { CorePlatform, GpuLoad } from './platform-types';
export type { Readback, Recorder, Turn } from './queue';
export { gridFor, Queue } from './queue';
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
export { dawnCallsOf } from './testing/dawn-calls';
export { gpuForTests, gpuRequired } from './testing/gpu';
export { lastNonZero } from './testing/ops';
export type { ElementType, HostArray, NumericType, TypedArrayOf } from './types';
export {
  allocHost,
  byteSize,
  coerce,
  ELEMENT_TYPES,
  elementTypeOf,
  isElementType,
  isIntegerType,
  viewHost,
  wgslType,
} from './types';
export type { LinkedModule, LinkLimits, WgslFragment } from './wgsl/fragment';
export { fragment, fragmentCount, link, mangle, WgslLinkError, workgroupFootprint } from './wgsl/fragment';
export { entryParams, entryPrologue, threadIds } from './wgsl/ids';
export type {
  BindingAccess,
  BindingName,
  BindingSpec,
  InterfaceParams,
  InterfaceResources,
  InterfaceSpec,
  InterfaceTypes,
  InterfaceUse,
  OptionalName,
  ParamName,
  ParamsSpec,
  ParamType,
} from './wgsl/interface';
export { KernelInterface, kernelInterface } from './wgsl/interface';
export type { Combiner, OpParams } from './wgsl/subgroup';
export { combinerOf, subgroupExclusiveScan, subgroupInclusiveScan, subgroupReduce } from './wgsl/subgroup';
export type {
  DiscontinuityParams,
  LookbackLayout,
  RunLoadParams,
  SlotLookback,
  SlotLookbackParams,
  TileLoadParams,
  WindowedLookback,
  WindowedLookbackParams,
} from './wgsl/tile';
export {
  headFlags,
  LOOKBACK_AGGREGATE,
  LOOKBACK_INCLUSIVE,
  LOOKBACK_NOT_READY,
  loadRun,
  loadStaged,
  loadStriped,
  lookbackFlags,
  slotLookback,
  tailFlags,
  unrolled,
  windowedLookback,
} from './wgsl/tile';
export type { WorkgroupParams } from './wgsl/workgroup';
export {
  workgroupExclusiveScan,
  workgroupExclusiveScanRows,
  workgroupInclusiveScan,
  workgroupReduce,
} from './wgsl/workgroup';
