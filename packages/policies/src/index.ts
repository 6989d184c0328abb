export type { AutoCrossover, AutoSide } from './auto';
export { autoCrossovers } from './auto';
export { COMPILE_SOURCE, compileCount, compileOnce } from './compile';
export type { Chunk } from './cpu/chunks';
export { CHUNKS_PER_WORKER, parallelChunks } from './cpu/chunks';
export type { CpuBackend, CpuTuning } from './cpu/cpu-backend';
export { cpuTuning, DEFAULT_MIN_CHUNK, DEFAULT_PARALLEL_THRESHOLD, planParallel } from './cpu/cpu-backend';
export type { ShareableArray } from './cpu/shared-memory';
export { allocShared, isShared, toShared } from './cpu/shared-memory';
export type {
  AutoPolicy,
  AutoPolicyOptions,
  DevicePolicy,
  DevicePolicyOptions,
  Fallback,
  HostMode,
  HostPolicy,
  HostPolicyOptions,
  Policy,
  TuningOverrides,
} from './policy';
export {
  execution,
  isPolicy,
  makeAutoPolicy,
  makeDevicePolicy,
  makeHostPolicy,
  sharedMemoryAvailable,
} from './policy';
export type { PoolOptions, WorkerPool } from './pool';
export { createPool, defaultPool, logicalCores } from './pool';
export type { Backend, BackendRequest } from './select-backend';
export {
  assertNever,
  checkPolicy,
  cpuFallback,
  gpuCannotRun,
  selectBackend,
  selectBackendNow,
  selectHostBackend,
} from './select-backend';
