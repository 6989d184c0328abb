/**
 * The browser suite's page script (bundled by esbuild with defaults, browser platform): sets up the
 * policies and exposes `globalThis.webdplSuite` for the Node side (browser.test.ts) to call through
 * playwright's `page.evaluate`.
 */
import { reduce, sort, transform } from '@webdpl/algorithms';
import { DeviceArray, fromGPUDevice, type GpuDevice, gpuSelector, selectDevice } from '@webdpl/core';
import {
  autoCrossovers,
  defaultPool,
  execution,
  makeDevicePolicy,
  makeHostPolicy,
  type Policy,
  type WorkerPool,
} from '@webdpl/policies';
import { TINY_SORT_TUNING, TINY_TUNING } from '../../packages/algorithms/src/testing/matrix';
import { FAMILIES, type PolicyName, SIZES } from './cases';

export interface PageInfo {
  readonly adapter: string;
  readonly kind: string;
  readonly subgroups: readonly [number, number];
  readonly workgroupStorage: number;
  readonly crossOriginIsolated: boolean;
  readonly parInfo: string;
  readonly families: readonly string[];
}

export interface CaseResult {
  readonly failures: readonly string[];
  readonly ms: number;
}

let gpu: GpuDevice | undefined;

/** The default pool, counting the runs that reach it (the Node side checks par used Web Workers). */
let poolRuns = 0;
const countingPool: WorkerPool = {
  get size() {
    return defaultPool().size;
  },
  run(task, jobs) {
    poolRuns++;
    return defaultPool().run(task, jobs);
  },
  close: () => defaultPool().close(),
};
const policies = new Map<PolicyName, Policy>();

async function setup(): Promise<GpuDevice> {
  if (gpu) return gpu;
  gpu = (await selectDevice(gpuSelector)) as GpuDevice;
  policies.set('seq', execution.seq);
  // par from 1000 elements in chunks of 256 (by default it stays seq below 2^16, and below 2^23 for
  // memory-bound steps on plain arrays), so the workers run at the suite's sizes
  policies.set(
    'par',
    makeHostPolicy('par', { pool: countingPool, tuning: { '*': { parallelThreshold: 1000, minChunk: 256 } } }),
  );
  // fallback 'error': a call the GPU cannot run fails here instead of passing on the CPU
  policies.set('device', makeDevicePolicy(gpu, { fallback: 'error' }));
  policies.set(
    'device-tiny',
    makeDevicePolicy(gpu, { fallback: 'error', tuning: { ...TINY_TUNING, ...TINY_SORT_TUNING } }),
  );
  policies.set('auto', execution.auto);
  return gpu;
}

async function info(): Promise<PageInfo> {
  const g = await setup();
  return {
    adapter: g.info.name,
    kind: g.info.kind,
    subgroups: [g.info.subgroupMinSize, g.info.subgroupMaxSize],
    workgroupStorage: g.info.limits.maxComputeWorkgroupStorageSize ?? 0,
    crossOriginIsolated: (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true,
    parInfo: execution.par.info,
    families: FAMILIES.map((f) => f.name),
  };
}

/** Runs one family under one policy at every size; a failure per size that went wrong. */
async function run(family: string, policyName: PolicyName): Promise<CaseResult> {
  const g = await setup();
  const f = FAMILIES.find((x) => x.name === family);
  const policy = policies.get(policyName);
  if (!f || !policy) return { failures: [`no family '${family}' or policy '${policyName}' in the page`], ms: 0 };
  const t0 = performance.now();
  const failures: string[] = [];
  for (const n of SIZES) {
    try {
      await f.run({ policy, name: policyName, gpu: g }, n);
    } catch (e) {
      const err = e as Error;
      failures.push(`n=${n}: ${err?.name ?? 'Error'}: ${err?.message ?? String(e)}`);
    }
  }
  return { failures, ms: performance.now() - t0 };
}

/**
 * webdpl beside the page's own WebGPU code: a GPUDevice made by the page with the default limits
 * (16 KiB of workgroup memory, below SwiftShader's 32), a DeviceArray adopting the page's buffer at
 * an offset, calls recorded into the page's encoder and run by its submit; the page reads the buffer
 * back itself. Returns what went wrong (empty when all is well).
 */
async function byo(n: number): Promise<string[]> {
  const problems: string[] = [];
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) return ['no adapter'];
  const device = await adapter.requestDevice();
  const policy = makeDevicePolicy(device, { fallback: 'error' });
  const pad = 4; // elements before and after the array, which nothing may write
  const bytes = 4 * (n + 2 * pad);
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const buffer = device.createBuffer({ size: bytes, usage, mappedAtCreation: true });
  const init = new Uint32Array(buffer.getMappedRange());
  init.fill(0xdeadbeef);
  for (let i = 0; i < n; i++) init[pad + i] = (i * 7919) % n;
  buffer.unmap();
  const keys = DeviceArray.fromBuffer(device, buffer, 'u32', 4 * pad, n);
  const encoder = device.createCommandEncoder();
  const frame = makeDevicePolicy(policy, { encoder });
  await transform(frame, keys, keys, (x: number) => x * 3 + 1); // recorded, not run
  await sort(frame, keys);
  device.queue.submit([encoder.finish()]);
  const total = await reduce(policy, keys); // runs after the page's submission
  let want = 0;
  for (let i = 0; i < n; i++) want = (want + ((i * 7919) % n) * 3 + 1) >>> 0;
  if (total !== want) problems.push(`reduce after the recorded calls: got ${total}, want ${want}`);
  const read = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const copy = device.createCommandEncoder();
  copy.copyBufferToBuffer(buffer, 0, read, 0, bytes);
  device.queue.submit([copy.finish()]);
  await read.mapAsync(GPUMapMode.READ);
  const got = new Uint32Array(read.getMappedRange().slice(0));
  read.unmap();
  for (let i = 0; i < pad; i++) {
    if (got[i] !== 0xdeadbeef || got[pad + n + i] !== 0xdeadbeef) problems.push(`padding written at ${i}`);
  }
  for (let i = 1; i < n; i++) {
    if (got[pad + i - 1] > got[pad + i]) {
      problems.push(`not sorted at ${i}: ${got[pad + i - 1]} > ${got[pad + i]}`);
      break;
    }
  }
  if (fromGPUDevice(device) !== keys.device) problems.push('the GPUDevice gave two webdpl devices');
  keys.destroy();
  buffer.destroy();
  device.destroy();
  return problems;
}

/** Algorithms for which auto sent host arrays to the GPU from some size on (none on a software GPU). */
function autoOnGpu(): string[] {
  return gpu
    ? autoCrossovers(gpu)
        .filter((c) => c.fromLog2 !== undefined)
        .map((c) => `${c.algorithm}:${c.type}`)
    : [];
}

(globalThis as { webdplSuite?: unknown }).webdplSuite = { info, run, poolRuns: () => poolRuns, autoOnGpu, byo };
