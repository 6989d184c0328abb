export type {
  AutoPolicy,
  DevicePolicy,
  DevicePolicyOptions,
  Fallback,
  HostMode,
  HostPolicy,
  Policy,
  TuningOverrides,
} from './policy';
export { execution, isPolicy, makeAutoPolicy, makeDevicePolicy, makeHostPolicy } from './policy';
export type { PoolOptions, WorkerPool } from './pool';
export { createPool, defaultPool } from './pool';
export type { Backend, BackendRequest } from './select-backend';
export { assertNever, checkPolicy, gpuCannotRun, selectBackend } from './select-backend';
