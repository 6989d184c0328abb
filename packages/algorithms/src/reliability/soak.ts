/**
 * The soak (issue 13): many mixed algorithm calls, several in flight at once, over random sizes,
 * element types, policies (seq, par, device, device with tiny tuning, auto) and array kinds (host
 * arrays and DeviceArrays), each result checked against a simple reference loop. It counts the
 * GPU buffers alive on the test device (createBuffer minus destroy; and which of them webdpl's
 * bounded caches and pools hold), the pipelines compiled (and by which call), and the process
 * memory (RSS, V8 heap, array buffers, bytes of GPU buffers) after a warm-up and at the end, so
 * leaks show as growth. Every call's inputs come from a PRNG seeded by (seed, call index), so a run
 * repeats whatever order the calls finish in.
 *
 * Used by `soak.test.ts` (a short form in the test suite) and `scripts/soak.ts` (`pnpm test:soak`,
 * the full 20,000 calls).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import {
  DeviceArray,
  dispatchCacheBuffers,
  type GpuDevice,
  type HostArray,
  lambda,
  maximum,
  minimum,
  pipelineCount,
  plus,
} from '@webdpl/core';
import { defaultPool, execution, makeDevicePolicy, type Policy } from '@webdpl/policies';
import { adjacentDifference } from '../adjacent-difference/index';
import { allOf, anyOf, noneOf } from '../any-of/index';
import { binarySearch, lowerBound, upperBound } from '../binary-search/index';
import { copyIf, partition, removeIf, stablePartition, unique } from '../compaction/index';
import { copy } from '../copy/index';
import { count, countIf } from '../count/index';
import { mismatch } from '../equal/index';
import { fill } from '../fill/index';
import { findIf } from '../find-if/index';
import { forEach } from '../for-each/index';
import { histogram } from '../histogram/index';
import { innerProduct } from '../inner-product/index';
import { iota } from '../iota/index';
import { isSorted, isSortedUntil } from '../is-sorted/index';
import { merge, mergeByKey } from '../merge/index';
import { maxElement, minElement, minmaxElement } from '../min-element/index';
import { stagingPoolSize } from '../pattern/dispatch';
import { reduce } from '../reduce/index';
import { reverse, rotate } from '../reverse/index';
import { exclusiveScan, inclusiveScan, transformInclusiveScan } from '../scans/index';
import { setDifference, setIntersection, setSymmetricDifference, setUnion } from '../set-ops/index';
import { greater, sort } from '../sort/index';
import { sortByKey } from '../sort-by-key/index';
import { stableSort } from '../stable-sort/index';
import { TINY_SORT_TUNING, TINY_TUNING } from '../testing/matrix';
import { sortReference } from '../testing/sort-reference';
import { transform } from '../transform/index';
import { transformReduce } from '../transform-reduce/index';

export type SoakType = 'u32' | 'i32' | 'f32';

export interface SoakOptions {
  /** Calls after the warm-up. */
  readonly calls: number;
  readonly seed: number;
  /** Calls in flight at once. @default 16 */
  readonly inFlight?: number;
  /** Largest size is 2^maxLog2 (sizes are skewed toward small ones). @default 20 */
  readonly maxLog2?: number;
  /** The GPU the device policies use (and whose buffers are counted); CPU policies only without one. */
  readonly device?: GpuDevice;
  /** Element types drawn from. @default ['u32', 'i32', 'f32'] */
  readonly types?: readonly SoakType[];
  /**
   * Warm-up before the figures are taken: every (operation, type, policy, array kind) once in each
   * size class (`sizeClasses`), on GPU policies once per variant of the call's code paths (VARIANTS),
   * so the pipelines the measured phase needs are compiled and pools have met every size. @default true
   */
  readonly warmUp?: boolean;
  /** Random calls in the warm-up after the combinations (as the measured phase makes them). @default 0 */
  readonly warmUpCalls?: number;
  /**
   * Measure a repeat: the measured phase runs the warm-up's calls again (same seeds), so no new
   * pipeline is needed and any growth of buffers or memory is a leak. `calls` is then ignored.
   * @default false
   */
  readonly repeat?: boolean;
  /** Called every `progressEvery` calls (the script prints figures). */
  readonly onProgress?: (done: number, report: SoakReport) => void;
  readonly progressEvery?: number;
  /** Test hook: corrupt every measured call's result before it is checked (the checks must catch it). */
  readonly plant?: boolean;
}

export interface SoakFailure {
  readonly call: number;
  readonly what: string;
  readonly error: string;
}

export interface SoakReport {
  readonly device: string;
  readonly warmUpCalls: number;
  readonly calls: number;
  readonly failures: readonly SoakFailure[];
  /** Live GPU buffers of the device before anything ran, after the warm-up, at the end. */
  readonly buffersStart: number;
  readonly buffersWarm: number;
  readonly buffersEnd: number;
  /**
   * Live buffers kept by webdpl's bounded caches and pools after the warm-up and at the end (their
   * number may move within the bounds), and the rest: buffers nothing is meant to keep, which must
   * not grow (a leak cannot hide behind a cache that happens to hold fewer at the end).
   */
  readonly keptWarm: KeptBuffers;
  readonly keptEnd: KeptBuffers;
  readonly unownedWarm: number;
  readonly unownedEnd: number;
  /** Process RSS in bytes (after a garbage collection) after the warm-up and at the end. */
  readonly rssWarm: number;
  readonly rssEnd: number;
  /** Where the memory is (after a garbage collection), after the warm-up and at the end. */
  readonly memoryWarm: SoakMemory;
  readonly memoryEnd: SoakMemory;
  /** Pipelines compiled on the device after the warm-up and at the end. */
  readonly pipelinesWarm: number;
  readonly pipelinesEnd: number;
  readonly durationMs: number;
  /** Pipelines first compiled after the warm-up: the kernel's label and the call that compiled it. */
  readonly newPipelines: readonly string[];
  /** Calls per operation (after the warm-up). */
  readonly perOperation: Readonly<Record<string, number>>;
  /** Live buffers by label that grew after the warm-up: label -> [after warm-up, end]. */
  readonly grownLabels: Readonly<Record<string, readonly [number, number]>>;
}

/** Buffers kept by the bounded caches and pools of a device. */
export interface KeptBuffers {
  /** Parameter buffers owned by the engines' caches of built calls (core/src/dispatch-cache.ts). */
  readonly dispatchCaches: number;
  /** The queue's pooled uniform and readback buffers (core/src/queue.ts). */
  readonly queuePools: number;
  /** Free device arrays of the host-array staging pool (pattern/dispatch.ts), and their bytes. */
  readonly staging: number;
  readonly stagingBytes: number;
}

function keptBuffers(device: GpuDevice | undefined): KeptBuffers {
  if (!device) return { dispatchCaches: 0, queuePools: 0, staging: 0, stagingBytes: 0 };
  const staging = stagingPoolSize(device);
  return {
    dispatchCaches: dispatchCacheBuffers(device),
    queuePools: device.queue.pooledBuffers,
    staging: staging.buffers,
    stagingBytes: staging.bytes,
  };
}

function keptTotal(k: KeptBuffers): number {
  return k.dispatchCaches + k.queuePools + k.staging;
}

/** The process's memory by kind, in bytes. */
export interface SoakMemory {
  readonly rss: number;
  /**
   * V8's heap in use; memory outside it that this thread's V8 tracks (external); and Node's array
   * buffers (arrayBuffers: also shared memory that only a worker still holds).
   */
  readonly heapUsed: number;
  readonly external: number;
  readonly arrayBuffers: number;
  /** Bytes of the live GPU buffers of the device (process memory on a software GPU). */
  readonly gpuBuffers: number;
}

/** A seeded PRNG (mulberry32): u32 values. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

let gcFn: (() => void) | undefined;

/**
 * Exposes `gc` to this thread and to the worker threads started from now on (V8 flags are
 * process-wide; a worker's context gets `gc` when the flag is set before it starts).
 */
function exposeGc(): () => void {
  if (!gcFn) {
    v8.setFlagsFromString('--expose-gc');
    gcFn = vm.runInNewContext('gc') as () => void;
  }
  return gcFn;
}

/** A full garbage collection (exposing gc on demand), so RSS figures compare like with like. */
export function collectGarbage(): void {
  const gc = exposeGc();
  gc();
  gc();
}

/**
 * A full collection in each worker of the CPU pool (started after `exposeGc`). Shared memory that a
 * call handed to the workers is freed only once every thread let go of it, and a worker's own heap
 * grows too little to collect often: without this, buffers long dead held tens of MiB of RSS at a
 * measurement, more or less by chance. Each job waits 20 ms so that every worker takes one.
 */
async function collectWorkerGarbage(): Promise<void> {
  const pool = defaultPool();
  await pool.run(
    () => {
      const g = globalThis as { gc?: () => void };
      g.gc?.();
      g.gc?.();
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
      return 0;
    },
    Array.from({ length: pool.size }, () => 0),
  );
}

/**
 * Lets memory freed by finished calls go before it is measured: waits for the device's submitted work
 * (destroyed buffers are freed once the work using them is done), collects in the CPU pool's
 * workers, and waits for the finalizers of dead GPU objects (they run after a collection, not in
 * it) between two full collections.
 */
export async function settle(device: GpuDevice | undefined): Promise<void> {
  if (device) await device.queue.finish().catch(() => undefined);
  await collectWorkerGarbage();
  collectGarbage();
  await new Promise((resolve) => setTimeout(resolve, 50));
  collectGarbage();
}

/** Counts the live GPU buffers of a device: createBuffer wrapped, destroy (first call) subtracted. */
export interface BufferCounter {
  readonly live: () => number;
  /** Bytes of the live buffers (on a software GPU such as lavapipe, process memory). */
  readonly liveBytes: () => number;
  /** Live buffers by label (the label's digits dropped, so sizes group together). */
  readonly byLabel: () => Map<string, number>;
  /** The compute pipelines created so far, in order: label (the kernel's root fragment) and the call that made it. */
  readonly pipelines: () => readonly string[];
  readonly restore: () => void;
}

/** The call being run (its description), for naming the call that compiled a pipeline. */
const currentCall = new AsyncLocalStorage<string>();

export function countBuffers(device: GpuDevice): BufferCounter {
  const gpu = device.gpu as GPUDevice & { createBuffer: GPUDevice['createBuffer'] };
  const own = Object.hasOwn(gpu, 'createBuffer');
  const original = gpu.createBuffer;
  const live = new Map<GPUBuffer, string>();
  let bytes = 0;
  const ownPipeline = Object.hasOwn(gpu, 'createComputePipeline');
  const originalPipeline = gpu.createComputePipeline;
  const pipelines: string[] = [];
  gpu.createComputePipeline = function createComputePipeline(
    this: GPUDevice,
    desc: GPUComputePipelineDescriptor,
  ): GPUComputePipeline {
    const by = currentCall.getStore();
    pipelines.push(`${desc.label ?? ''}${by ? ` (${by})` : ''}`);
    return originalPipeline.call(gpu, desc);
  };
  gpu.createBuffer = function createBuffer(this: GPUDevice, desc: GPUBufferDescriptor): GPUBuffer {
    const b = original.call(gpu, desc);
    live.set(b, (desc.label ?? '').replace(/\d+/g, '#'));
    bytes += b.size;
    const destroy = b.destroy;
    b.destroy = function destroyCounted(this: GPUBuffer): undefined {
      if (live.delete(b)) bytes -= b.size;
      return destroy.call(b);
    };
    return b;
  };
  return {
    live: () => live.size,
    liveBytes: () => bytes,
    byLabel: () => {
      const m = new Map<string, number>();
      for (const l of live.values()) m.set(l, (m.get(l) ?? 0) + 1);
      return m;
    },
    pipelines: () => pipelines,
    restore: () => {
      if (own) gpu.createBuffer = original;
      else delete (gpu as { createBuffer?: unknown }).createBuffer;
      if (ownPipeline) gpu.createComputePipeline = originalPipeline;
      else delete (gpu as { createComputePipeline?: unknown }).createComputePipeline;
    },
  };
}

// ---- the calls --------------------------------------------------------------------------------

interface PolicyChoice {
  readonly name: string;
  readonly policy: Policy;
  readonly gpu: boolean;
}

const TINY_SOAK = { ...TINY_TUNING, ...TINY_SORT_TUNING };

function policiesFor(device: GpuDevice | undefined): PolicyChoice[] {
  const list: PolicyChoice[] = [
    { name: 'seq', policy: execution.seq, gpu: false },
    { name: 'par', policy: execution.par, gpu: false },
  ];
  if (device) {
    list.push(
      { name: 'device', policy: makeDevicePolicy(device, { fallback: 'error' }), gpu: true },
      { name: 'device tiny', policy: makeDevicePolicy(device, { fallback: 'error', tuning: TINY_SOAK }), gpu: true },
      { name: 'auto', policy: execution.auto, gpu: true },
    );
  }
  return list;
}

// Fixed functions: one pipeline each per type (captures and literals are compiled into kernels).
const isMultipleOf3 = lambda((x: number) => x % 3 === 0);
const isRare = lambda((x: number) => x % 7 === 6);
const twice = lambda((x: number) => x * 2);
const twicePlusOne = lambda((x: number) => x * 2 + 1);
const sum2 = lambda((a: number, b: number) => a + b, { identity: 0, commutative: true });
const COUNT_VALUES = [0, 5, 7] as const;

/** Wraps a number to the element type's semantics. */
function wrap(t: SoakType, x: number): number {
  if (t === 'u32') return x >>> 0;
  if (t === 'i32') return x | 0;
  return Math.fround(x);
}

function mul(t: SoakType, a: number, b: number): number {
  if (t === 'u32') return Math.imul(a, b) >>> 0;
  if (t === 'i32') return Math.imul(a, b);
  return Math.fround(a * b);
}

function newHost(t: SoakType, n: number): HostArray {
  return t === 'u32' ? new Uint32Array(n) : t === 'i32' ? new Int32Array(n) : new Float32Array(n);
}

/** Data of `t`: u32 mixes full 32-bit and small values, i32 full range, f32 small integers (exact sums). */
function makeHost(t: SoakType, n: number, r: () => number): HostArray {
  const a = newHost(t, n);
  for (let i = 0; i < n; i++) {
    const x = r();
    if (t === 'u32') a[i] = x & 1 ? x : x % 64;
    else if (t === 'i32') a[i] = x & 1 ? x | 0 : (x % 64) - 32;
    else a[i] = (x % 17) - 8;
  }
  return a;
}

class Mismatch extends Error {}

function expectEq(got: unknown, want: unknown, what: string): void {
  if (!Object.is(got, want)) throw new Mismatch(`${what}: got ${String(got)}, want ${String(want)}`);
}

function expectArray(got: ArrayLike<number>, want: ArrayLike<number>, what: string, len = want.length): void {
  if (got.length < len) throw new Mismatch(`${what}: length ${got.length}, want at least ${len}`);
  for (let i = 0; i < len; i++) {
    if (!Object.is(got[i], want[i])) throw new Mismatch(`${what}: at ${i} of ${len}: got ${got[i]}, want ${want[i]}`);
  }
}

function expectClose(got: number, want: number, scale: number, n: number, what: string): void {
  const tol = Math.max(1e-6, 2 ** -22 * Math.sqrt(Math.max(n, 1)) * 4) * Math.max(1, scale);
  if (!(Math.abs(got - want) <= tol)) throw new Mismatch(`${what}: got ${got}, want ${want} (tolerance ${tol})`);
}

/** What one call gets: its PRNG, type, size, policy and whether its arrays live on the device. */
interface Ctx {
  readonly r: () => number;
  readonly t: SoakType;
  readonly n: number;
  readonly p: PolicyChoice;
  /** DeviceArray arguments (GPU policies only). */
  readonly dev: GpuDevice | undefined;
  /** Arrays to destroy after the call. */
  readonly owned: DeviceArray[];
  /** The plant hook: corrupts a value before the check when set. */
  readonly plant: boolean;
  /**
   * A choice among `k` code paths (operator, in place or not, which function of a family): drawn
   * from `r`, or, in the warm-up, the next digit of the call's variant number, so the warm-up can
   * run every path.
   */
  readonly choose: (k: number) => number;
  /** A path taken one time in `m` (drawn from `r`); in the warm-up, the next binary digit. */
  readonly oneIn: (m: number) => boolean;
}

/** An array argument: the host data, and what is passed (the host array or a DeviceArray of it). */
function arg(c: Ctx, host: HostArray): HostArray | DeviceArray {
  if (!c.dev) return host;
  const d = DeviceArray.from(c.dev, host as Uint32Array);
  c.owned.push(d);
  return d;
}

/** Reads an argument back (the host array itself, or a DeviceArray's contents). */
async function contents(x: HostArray | DeviceArray): Promise<HostArray> {
  return x instanceof DeviceArray ? ((await x.read()) as HostArray) : x;
}

/** Corrupts a scalar result when the plant is on (so a test can show the checks fail). */
function planted(c: Ctx, x: number): number {
  return c.plant ? x + 1 : x;
}

function plantedArray(c: Ctx, x: HostArray): HostArray {
  if (c.plant && x.length > 0) {
    const y = x.slice();
    y[0] = (y[0] as number) + 1;
    return y;
  }
  return x;
}

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[r() % xs.length] as T;
}

/** Reference fold with the element type's wrap-around. */
function refReduce(t: SoakType, x: HostArray, init: number, op: 'plus' | 'max' | 'min'): number {
  let acc = init;
  for (let i = 0; i < x.length; i++) {
    const v = x[i] as number;
    acc = op === 'plus' ? wrap(t, acc + v) : op === 'max' ? Math.max(acc, v) : Math.min(acc, v);
  }
  return acc;
}

function truthy(f: (x: number) => boolean, x: number): boolean {
  return f(x);
}

const mult3 = (x: number) => x % 3 === 0;
const rare = (x: number) => x % 7 === 6;

type Operation = (c: Ctx) => Promise<void>;

async function checkScan(c: Ctx, exclusive: boolean): Promise<void> {
  const { r, t, n } = c;
  const x = makeHost(t, n, r);
  const opName = (['plus', 'max'] as const)[c.choose(2)] as 'plus' | 'max';
  const op = opName === 'plus' ? plus : maximum;
  const init = r() % 10;
  const withInit = exclusive || c.choose(2) === 0;
  const inPlace = c.oneIn(4);
  const input = arg(c, x.slice());
  const output = inPlace ? input : arg(c, newHost(t, n));
  if (exclusive) await exclusiveScan(c.p.policy, input, output, init, op);
  else if (withInit) await inclusiveScan(c.p.policy, input, output, op, init);
  else await inclusiveScan(c.p.policy, input, output, op);
  const want = newHost(t, n);
  let acc = withInit ? init : undefined;
  for (let i = 0; i < n; i++) {
    const v = x[i] as number;
    if (exclusive) want[i] = acc as number;
    acc = acc === undefined ? v : refReduce(t, x.subarray(i, i + 1), acc, opName);
    if (!exclusive) want[i] = acc;
  }
  const name = `${exclusive ? 'exclusiveScan' : 'inclusiveScan'} ${opName}${withInit ? ` init ${init}` : ''}${inPlace ? ' in place' : ''}`;
  expectArray(plantedArray(c, await contents(output)), want, name);
}

/** The operations, by name. */
const OPERATIONS: Record<string, Operation> = {
  reduce: async (c) => {
    const x = makeHost(c.t, c.n, c.r);
    const opName = (['plus', 'max', 'min'] as const)[c.choose(3)] as 'plus' | 'max' | 'min';
    const op = opName === 'plus' ? plus : opName === 'max' ? maximum : minimum;
    const init = c.r() % 10;
    const got = await reduce(c.p.policy, arg(c, x), init, op);
    expectEq(planted(c, got), refReduce(c.t, x, init, opName), `reduce ${opName}`);
  },
  transformReduce: async (c) => {
    const x = makeHost(c.t, c.n, c.r);
    const got = await transformReduce(c.p.policy, arg(c, x), 1, plus, twice);
    let want = 1;
    for (let i = 0; i < x.length; i++) want = wrap(c.t, want + mul(c.t, x[i] as number, 2));
    expectEq(planted(c, got), want, 'transformReduce x * 2');
  },
  innerProduct: async (c) => {
    const a = makeHost(c.t, c.n, c.r);
    const b = makeHost(c.t, c.n, c.r);
    const got = await innerProduct(c.p.policy, arg(c, a), arg(c, b));
    let want = 0;
    let scale = 0;
    for (let i = 0; i < c.n; i++) {
      const p = mul(c.t, a[i] as number, b[i] as number);
      want = c.t === 'f32' ? want + p : wrap(c.t, want + p);
      scale += Math.abs(p);
    }
    if (c.t === 'f32') expectClose(planted(c, got), want, scale, c.n, 'innerProduct');
    else expectEq(planted(c, got), want, 'innerProduct');
  },
  count: async (c) => {
    const x = makeHost(c.t, c.n, c.r);
    const v = COUNT_VALUES[c.choose(COUNT_VALUES.length)] as number;
    const got = await count(c.p.policy, arg(c, x), v);
    let want = 0;
    for (let i = 0; i < x.length; i++) if (x[i] === v) want++;
    expectEq(planted(c, got), want, `count ${v}`);
  },
  countIf: async (c) => {
    const x = makeHost(c.t, c.n, c.r);
    const got = await countIf(c.p.policy, arg(c, x), isMultipleOf3);
    let want = 0;
    for (let i = 0; i < x.length; i++) if (mult3(x[i] as number)) want++;
    expectEq(planted(c, got), want, 'countIf x % 3 === 0');
  },
  minmax: async (c) => {
    const x = makeHost(c.t, c.n, c.r);
    const which = (['min', 'max', 'minmax'] as const)[c.choose(3)];
    const a = arg(c, x);
    let mi = -1;
    let ma = -1;
    for (let i = 0; i < x.length; i++) {
      if (mi < 0 || (x[i] as number) < (x[mi] as number)) mi = i;
      if (ma < 0 || (x[i] as number) > (x[ma] as number)) ma = i;
    }
    if (which === 'min') expectEq(planted(c, (await minElement(c.p.policy, a)).index), mi, 'minElement index');
    else if (which === 'max') expectEq(planted(c, (await maxElement(c.p.policy, a)).index), ma, 'maxElement index');
    else {
      const got = await minmaxElement(c.p.policy, a);
      expectEq(planted(c, got.min.index), mi, 'minmaxElement min index');
      expectEq(got.max.index, ma, 'minmaxElement max index');
      expectEq(got.max.value, ma < 0 ? undefined : x[ma], 'minmaxElement max value');
    }
  },
  find: async (c) => {
    const x = makeHost(c.t, c.n, c.r);
    const which = (['findIf', 'anyOf', 'allOf', 'noneOf'] as const)[c.choose(4)];
    const a = arg(c, x);
    let first = -1;
    for (let i = 0; i < x.length && first < 0; i++) if (truthy(rare, x[i] as number)) first = i;
    let firstNot = -1;
    for (let i = 0; i < x.length && firstNot < 0; i++) if (!truthy(rare, x[i] as number)) firstNot = i;
    if (which === 'findIf') expectEq(planted(c, await findIf(c.p.policy, a, isRare)), first, 'findIf');
    else if (which === 'anyOf') expectEq(await anyOf(c.p.policy, a, isRare), c.plant ? first < 0 : first >= 0, 'anyOf');
    else if (which === 'allOf')
      expectEq(await allOf(c.p.policy, a, isRare), c.plant ? firstNot >= 0 : firstNot < 0, 'allOf');
    else expectEq(await noneOf(c.p.policy, a, isRare), c.plant ? first >= 0 : first < 0, 'noneOf');
  },
  inclusiveScan: (c) => checkScan(c, false),
  exclusiveScan: (c) => checkScan(c, true),
  transformInclusiveScan: async (c) => {
    const x = makeHost(c.t, c.n, c.r);
    const out = arg(c, newHost(c.t, c.n));
    await transformInclusiveScan(c.p.policy, arg(c, x), out, plus, twice);
    const want = newHost(c.t, c.n);
    let acc = 0;
    for (let i = 0; i < c.n; i++) {
      acc = wrap(c.t, acc + mul(c.t, x[i] as number, 2));
      want[i] = acc;
    }
    expectArray(plantedArray(c, await contents(out)), want, 'transformInclusiveScan');
  },
  copyIf: async (c) => {
    const x = makeHost(c.t, c.n, c.r);
    const out = arg(c, newHost(c.t, c.n));
    const k = await copyIf(c.p.policy, arg(c, x), out, isMultipleOf3);
    const want = x.filter(mult3);
    expectEq(planted(c, k), want.length, 'copyIf count');
    expectArray(await contents(out), want, 'copyIf output');
  },
  removeIf: async (c) => {
    const x = makeHost(c.t, c.n, c.r);
    const d = arg(c, x.slice());
    const k = await removeIf(c.p.policy, d, isMultipleOf3);
    const want = x.filter((v) => !mult3(v));
    expectEq(planted(c, k), want.length, 'removeIf length');
    expectArray(await contents(d), want, 'removeIf data');
  },
  partition: async (c) => {
    const x = makeHost(c.t, c.n, c.r);
    const stable = c.choose(2) === 0;
    const d = arg(c, x.slice());
    const k = await (stable ? stablePartition : partition)(c.p.policy, d, isMultipleOf3);
    const yes = x.filter(mult3);
    const no = x.filter((v) => !mult3(v));
    const got = await contents(d);
    expectEq(planted(c, k), yes.length, 'partition split');
    if (stable) {
      expectArray(got.subarray(0, k), yes, 'stablePartition first group');
      expectArray(got.subarray(k), no, 'stablePartition second group');
    } else {
      // Each group holds the same elements, in some order.
      const first = got.slice(0, k).sort();
      const second = got.slice(k).sort();
      expectArray(first, yes.slice().sort(), 'partition first group (as a multiset)');
      expectArray(second, no.slice().sort(), 'partition second group (as a multiset)');
    }
  },
  unique: async (c) => {
    // Runs of repeated values, so there is something to remove.
    const x = makeHost(c.t, c.n, c.r);
    for (let i = 1; i < c.n; i++) if (c.r() % 3 !== 0) x[i] = x[i - 1] as number;
    const d = arg(c, x.slice());
    const k = await unique(c.p.policy, d);
    const want = x.filter((v, i) => i === 0 || v !== x[i - 1]);
    expectEq(planted(c, k), want.length, 'unique length');
    expectArray(await contents(d), want, 'unique data');
  },
  transform: async (c) => {
    const x = makeHost(c.t, c.n, c.r);
    const binary = c.choose(2) === 0;
    const inPlace = c.oneIn(4);
    const input = arg(c, x.slice());
    const out = inPlace ? input : arg(c, newHost(c.t, c.n));
    const want = newHost(c.t, c.n);
    if (binary) {
      const y = makeHost(c.t, c.n, c.r);
      await transform(c.p.policy, input, arg(c, y), out, sum2);
      for (let i = 0; i < c.n; i++) want[i] = wrap(c.t, (x[i] as number) + (y[i] as number));
    } else {
      await transform(c.p.policy, input, out, twicePlusOne);
      for (let i = 0; i < c.n; i++) want[i] = wrap(c.t, mul(c.t, x[i] as number, 2) + 1);
    }
    expectArray(plantedArray(c, await contents(out)), want, binary ? 'transform a + b' : 'transform x * 2 + 1');
  },
  forEach: async (c) => {
    const x = makeHost(c.t, c.n, c.r);
    const d = arg(c, x.slice());
    await forEach(c.p.policy, d, twicePlusOne);
    const want = x.map((v) => wrap(c.t, mul(c.t, v, 2) + 1));
    expectArray(plantedArray(c, await contents(d)), want, 'forEach x * 2 + 1');
  },
  fill: async (c) => {
    const v = (c.r() % 1000) - 500;
    const d = arg(c, makeHost(c.t, c.n, c.r));
    await fill(c.p.policy, d, v);
    const want = newHost(c.t, c.n).fill(wrap(c.t, v));
    expectArray(plantedArray(c, await contents(d)), want, `fill ${v}`);
  },
  iota: async (c) => {
    const s = c.r() % 1000;
    const d = arg(c, makeHost(c.t, c.n, c.r));
    await iota(c.p.policy, d, s);
    const want = newHost(c.t, c.n);
    for (let i = 0; i < c.n; i++) want[i] = wrap(c.t, s + i);
    expectArray(plantedArray(c, await contents(d)), want, `iota ${s}`);
  },
  copy: async (c) => {
    const x = makeHost(c.t, c.n, c.r);
    const out = arg(c, newHost(c.t, c.n + (c.r() % 3)));
    await copy(c.p.policy, arg(c, x), out);
    expectArray(plantedArray(c, await contents(out)), x, 'copy');
  },
  adjacentDifference: async (c) => {
    const x = makeHost(c.t, c.n, c.r);
    const out = arg(c, newHost(c.t, c.n));
    await adjacentDifference(c.p.policy, arg(c, x), out);
    const want = x.map((v, i) => (i === 0 ? v : wrap(c.t, v - (x[i - 1] as number))));
    expectArray(plantedArray(c, await contents(out)), want, 'adjacentDifference');
  },
  sort: async (c) => {
    const x = makeHost(c.t, c.n, c.r);
    const desc = c.choose(2) === 0;
    const stable = c.choose(2) === 0;
    const d = arg(c, x.slice());
    await (stable ? stableSort : sort)(c.p.policy, d, desc ? greater : undefined);
    expectArray(
      plantedArray(c, await contents(d)),
      sortReference(x, desc),
      `${stable ? 'stableSort' : 'sort'}${desc ? ' greater' : ''}`,
    );
  },
  sortByKey: async (c) => {
    const x = makeHost(c.t, c.n, c.r);
    const desc = c.choose(2) === 0;
    const idx = new Uint32Array(c.n);
    for (let i = 0; i < c.n; i++) idx[i] = i;
    const k = arg(c, x.slice());
    const v = arg(c, idx);
    await sortByKey(c.p.policy, k, v, desc ? greater : undefined);
    const keys = plantedArray(c, await contents(k));
    const vals = await contents(v);
    expectArray(keys, sortReference(x, desc), 'sortByKey keys');
    // Values: a permutation carrying each key's index, ascending within equal keys (stable).
    const seen = new Uint8Array(c.n);
    for (let i = 0; i < c.n; i++) {
      const j = vals[i] as number;
      if (j >= c.n || seen[j]) throw new Mismatch(`sortByKey values: ${j} at ${i} is not a permutation`);
      seen[j] = 1;
      expectEq(x[j], keys[i], `sortByKey: key of value ${j} at ${i}`);
      if (i > 0 && keys[i] === keys[i - 1] && j < (vals[i - 1] as number)) {
        throw new Mismatch(`sortByKey not stable at ${i}: ${vals[i - 1]} before ${j}`);
      }
    }
  },
  isSorted: async (c) => {
    const x = makeHost(c.t, c.n, c.r);
    const sorted = c.r() % 2 === 0;
    const data = sorted ? sortReference(x, false) : x;
    // A sorted input sometimes gets one element out of place.
    if (sorted && c.n > 2 && c.r() % 2 === 0) data[c.r() % c.n] = c.t === 'u32' ? 0xffffffff : 2 ** 31 - 1;
    let until = data.length;
    for (let i = 1; i < data.length; i++) {
      if ((data[i] as number) < (data[i - 1] as number)) {
        until = i;
        break;
      }
    }
    const a = arg(c, data);
    if (c.choose(2)) expectEq(planted(c, await isSortedUntil(c.p.policy, a)), until, 'isSortedUntil');
    else expectEq(await isSorted(c.p.policy, a), c.plant ? until !== data.length : until === data.length, 'isSorted');
  },
  search: async (c) => {
    const which = (['lower', 'upper', 'binary'] as const)[c.choose(3)] as 'lower' | 'upper' | 'binary';
    const sorted = sortReference(makeHost(c.t, c.n, c.r), false);
    const m = Math.min(c.n + 1, 1 + (c.r() % 5000));
    const q = makeHost(c.t, m, c.r);
    for (let i = 0; i < m; i++) if (c.n > 0 && c.r() % 2) q[i] = sorted[c.r() % c.n] as number;
    const fn = which === 'lower' ? lowerBound : which === 'upper' ? upperBound : binarySearch;
    const qa = arg(c, q);
    const res = await fn(c.p.policy, arg(c, sorted), qa);
    if (res instanceof DeviceArray) c.owned.push(res);
    const got = await contents(res);
    const want = new Uint32Array(m);
    for (let i = 0; i < m; i++) {
      const v = q[i] as number;
      let lo = 0;
      let hi = sorted.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const s = sorted[mid] as number;
        if (which === 'upper' ? s <= v : s < v) lo = mid + 1;
        else hi = mid;
      }
      want[i] = which === 'binary' ? (lo < sorted.length && sorted[lo] === v ? 1 : 0) : lo;
    }
    expectArray(plantedArray(c, got), want, `${which} search of ${m} queries`);
  },
  // Issue 16's algorithms.
  mismatch: async (c) => {
    const x = makeHost(c.t, c.n, c.r);
    const y = x.slice();
    if (c.n > 0 && c.r() % 2) {
      const k = c.r() % c.n;
      y[k] = wrap(c.t, (y[k] as number) + 1);
    }
    let want = c.n;
    for (let i = 0; i < c.n; i++) {
      if (x[i] !== y[i]) {
        want = i;
        break;
      }
    }
    expectEq(planted(c, await mismatch(c.p.policy, arg(c, x), arg(c, y))), want, 'mismatch');
  },
  reverseRotate: async (c) => {
    const x = makeHost(c.t, c.n, c.r);
    const d = arg(c, x.slice());
    let want: HostArray;
    if (c.choose(2)) {
      await reverse(c.p.policy, d);
      want = x.slice().reverse();
    } else {
      const m = c.r() % (c.n + 1);
      expectEq(planted(c, await rotate(c.p.policy, d, m)), c.n - m, 'rotate result');
      want = newHost(c.t, c.n);
      want.set(x.subarray(m));
      want.set(x.subarray(0, m), c.n - m);
    }
    expectArray(plantedArray(c, await contents(d)), want, 'reverse / rotate');
  },
  histogram: async (c) => {
    const x = makeHost(c.t, c.n, c.r);
    const even = c.choose(2) === 1;
    const edges = even ? Array.from({ length: 17 }, (_, k) => k - 8) : [-5, -1, 0, 3, 40];
    const bins = even ? { bins: 16, lo: -8, hi: 8 } : { boundaries: edges };
    const want = new Uint32Array(edges.length - 1);
    for (let i = 0; i < c.n; i++) {
      const v = x[i] as number;
      if (!(v >= (edges[0] as number) && v < (edges[edges.length - 1] as number))) continue;
      let k = edges.length - 2;
      while ((edges[k] as number) > v) k--;
      want[k] = (want[k] as number) + 1;
    }
    expectArray(plantedArray(c, await histogram(c.p.policy, arg(c, x), bins)), want, 'histogram');
  },
  merge: async (c) => {
    const a = sortReference(makeHost(c.t, c.n, c.r), false);
    const m = c.r() % (c.n + 1);
    const b = sortReference(makeHost(c.t, m, c.r), false);
    const out = arg(c, newHost(c.t, c.n + m));
    // The stable merge's keys and origins (a's index, or 2^31 + b's index).
    const want = newHost(c.t, c.n + m);
    const from = new Uint32Array(c.n + m);
    for (let i = 0, j = 0, k = 0; k < c.n + m; k++) {
      const takeB = j < m && (i >= c.n || (b[j] as number) < (a[i] as number));
      want[k] = takeB ? (b[j] as number) : (a[i] as number);
      from[k] = takeB ? 2 ** 31 + j++ : i++;
    }
    if (c.choose(2)) {
      const va = Uint32Array.from({ length: c.n }, (_, i) => i);
      const vb = Uint32Array.from({ length: m }, (_, j) => 2 ** 31 + j);
      const vo = arg(c, new Uint32Array(c.n + m));
      await mergeByKey(c.p.policy, arg(c, a), arg(c, b), arg(c, va), arg(c, vb), out, vo);
      expectArray(plantedArray(c, await contents(vo)), from, 'mergeByKey values');
    } else await merge(c.p.policy, arg(c, a), arg(c, b), out);
    expectArray(plantedArray(c, await contents(out)), want, 'merge keys');
  },
  setOps: async (c) => {
    const op = (['union', 'intersection', 'difference', 'symmetricDifference'] as const)[c.choose(4)] as
      | 'union'
      | 'intersection'
      | 'difference'
      | 'symmetricDifference';
    // Few distinct values, so equivalent runs meet in both ranges.
    const few = (n: number) =>
      sortReference(
        makeHost(c.t, n, c.r).map((v) => wrap(c.t, v % 9)),
        false,
      );
    const a = few(c.n);
    const b = few(c.r() % (c.n + 1));
    const want: number[] = [];
    for (let i = 0, j = 0; i < a.length || j < b.length; ) {
      const v = j >= b.length || (i < a.length && (a[i] as number) <= (b[j] as number)) ? a[i] : b[j];
      const i0 = i;
      const j0 = j;
      while (i < a.length && a[i] === v) i++;
      while (j < b.length && b[j] === v) j++;
      const [ma, nb] = [i - i0, j - j0];
      const n =
        op === 'union'
          ? Math.max(ma, nb)
          : op === 'intersection'
            ? Math.min(ma, nb)
            : op === 'difference'
              ? Math.max(ma - nb, 0)
              : Math.abs(ma - nb);
      for (let q = 0; q < n; q++) want.push(v as number);
    }
    const out = arg(c, newHost(c.t, a.length + b.length));
    const f = {
      union: setUnion,
      intersection: setIntersection,
      difference: setDifference,
      symmetricDifference: setSymmetricDifference,
    }[op];
    expectEq(planted(c, await f(c.p.policy, arg(c, a), arg(c, b), out)), want.length, `${op} count`);
    expectArray(await contents(out), want, op);
  },
};

export const OPERATION_NAMES: readonly string[] = Object.keys(OPERATIONS);

/**
 * How many variants (combinations of Ctx.choose / oneIn digits) each operation has: the warm-up runs
 * each of them, so every code path, and every kernel it needs, is met before the measured phase.
 */
const VARIANTS: Readonly<Record<string, number>> = {
  reduce: 3,
  count: COUNT_VALUES.length,
  minmax: 3,
  find: 4,
  inclusiveScan: 8,
  exclusiveScan: 4,
  partition: 2,
  transform: 4,
  sort: 4,
  sortByKey: 2,
  isSorted: 2,
  search: 3,
  reverseRotate: 2,
  histogram: 2,
  merge: 2,
  setOps: 4,
};

/** A size skewed toward small ones: 2^(maxLog2 * u^2), sometimes 0 or tiny. */
function drawSize(r: () => number, maxLog2: number): number {
  const k = r() % 16;
  if (k === 0) return r() % 3;
  if (k === 1) return r() % 17;
  const u = r() / 2 ** 32;
  return Math.min(2 ** maxLog2, Math.floor(2 ** (maxLog2 * u * u)) + (r() % 8));
}

/**
 * The warm-up's size classes, as ranges of log2 sizes [lo, hi] (sizes 2^lo to 2^(hi+1) - 1): small
 * ones, one-workgroup and one-tile sizes, multi-tile and multi-level sizes, up to 2^maxLog2.
 */
export function sizeClasses(maxLog2: number): [number, number][] {
  const bounds: [number, number][] = [
    [0, 4],
    [5, 8],
    [9, 12],
    [13, 15],
    [16, 17],
    [18, 30],
  ];
  return bounds.filter(([lo]) => lo <= maxLog2).map(([lo, hi]) => [lo, Math.min(hi, maxLog2)]);
}

interface Spec {
  readonly op: string;
  readonly t: SoakType;
  readonly p: PolicyChoice;
  readonly deviceArrays: boolean;
  readonly n: number;
  readonly seed: number;
  /** The warm-up's choice of code paths (see Ctx.choose); undefined: drawn from the seed. */
  readonly variant?: number;
}

function describeSpec(s: Spec): string {
  const v = s.variant === undefined ? '' : ` variant ${s.variant}`;
  return `${s.op}${v} ${s.t} n=${s.n} on ${s.p.name}${s.deviceArrays ? ' (DeviceArrays)' : ''}`;
}

async function runOne(s: Spec, device: GpuDevice | undefined, plant: boolean): Promise<void> {
  const owned: DeviceArray[] = [];
  const r = prng(s.seed);
  let digits = s.variant ?? 0;
  const digit = (k: number): number => {
    const d = digits % k;
    digits = Math.floor(digits / k);
    return d;
  };
  const ctx: Ctx = {
    r,
    choose: s.variant === undefined ? (k) => r() % k : digit,
    oneIn: s.variant === undefined ? (m) => r() % m === 0 : () => digit(2) === 1,
    t: s.t,
    n: s.n,
    p: s.p,
    dev: s.deviceArrays ? device : undefined,
    owned,
    plant,
  };
  try {
    await (OPERATIONS[s.op] as Operation)(ctx);
  } finally {
    for (const a of owned) a.destroy();
  }
}

/** Runs the soak and returns its figures (failures are reported, not thrown). */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const device = options.device;
  const policies = policiesFor(device);
  const types = options.types ?? ['u32', 'i32', 'f32'];
  const maxLog2 = options.maxLog2 ?? 20;
  const inFlight = options.inFlight ?? 16;
  const failures: SoakFailure[] = [];
  const perOperation: Record<string, number> = {};
  const counter = device ? countBuffers(device) : undefined;
  exposeGc();
  const t0 = performance.now();
  try {
    const buffersStart = counter?.live() ?? 0;
    const rnd = prng(options.seed);
    // The warm-up: every combination in every size class, in a seeded order; on GPU policies every
    // variant of the call's code paths (operator, in place or not, unary or binary, ...). Kernels
    // depend on all of these (vector or scalar loads, one pass or a spine, a final reduction over
    // many partials), so the measured phase should need no new one; pools fill to the sizes used.
    const warm: Spec[] = [];
    if (options.warmUp ?? true) {
      for (const op of OPERATION_NAMES)
        for (const t of types)
          for (const p of policies)
            for (const deviceArrays of p.gpu ? [false, true] : [false]) {
              for (const [lo, hi] of sizeClasses(maxLog2)) {
                const variants = p.gpu ? (VARIANTS[op] ?? 1) : 1;
                for (let v = 0; v < variants; v++) {
                  const e = lo + (rnd() % (hi - lo + 1));
                  const n = Math.min(2 ** maxLog2, 2 ** e + (rnd() % 2 ** e));
                  warm.push({ op, t, p, deviceArrays, n, seed: rnd(), variant: p.gpu ? v : undefined });
                }
              }
            }
      for (let i = warm.length - 1; i > 0; i--) {
        const j = rnd() % (i + 1);
        [warm[i], warm[j]] = [warm[j] as Spec, warm[i] as Spec];
      }
    }
    const randomSpecs = (k: number): Spec[] =>
      Array.from({ length: k }, () => {
        const p = pick(rnd, policies);
        return {
          op: pick(rnd, OPERATION_NAMES),
          t: pick(rnd, types),
          p,
          deviceArrays: p.gpu && rnd() % 3 === 0,
          n: drawSize(rnd, maxLog2),
          seed: rnd(),
        };
      });
    warm.push(...randomSpecs(options.warmUpCalls ?? 0));
    const main = options.repeat ? warm : randomSpecs(options.calls);

    const runAll = async (specs: readonly Spec[], offset: number, counted: boolean): Promise<void> => {
      let next = 0;
      let done = 0;
      const worker = async () => {
        while (next < specs.length) {
          const k = next++;
          const s = specs[k] as Spec;
          const call = offset + k;
          try {
            await currentCall.run(describeSpec(s), () => runOne(s, device, counted && options.plant === true));
          } catch (e) {
            const error =
              e instanceof Mismatch
                ? `wrong answer: ${e.message}`
                : e instanceof Error
                  ? `${e.name}: ${e.message}`
                  : String(e);
            failures.push({ call, what: describeSpec(s), error });
          }
          if (counted) perOperation[s.op] = (perOperation[s.op] ?? 0) + 1;
          done++;
          if (counted && options.onProgress && done % (options.progressEvery ?? 1000) === 0) {
            options.onProgress(done, report());
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(inFlight, specs.length) }, worker));
    };

    let buffersWarm = 0;
    let rssWarm = 0;
    let pipelinesWarm = 0;
    let labelsWarm = new Map<string, number>();
    const memory = (): SoakMemory => {
      const m = process.memoryUsage();
      return {
        rss: m.rss,
        heapUsed: m.heapUsed,
        external: m.external,
        arrayBuffers: m.arrayBuffers,
        gpuBuffers: counter?.liveBytes() ?? 0,
      };
    };
    let memoryWarm: SoakMemory | undefined;
    let keptWarm = keptBuffers(device);
    let createdWarm = 0;
    const report = (): SoakReport => {
      collectGarbage();
      const memoryEnd = memory();
      const keptEnd = keptBuffers(device);
      const liveEnd = counter?.live() ?? 0;
      const grownLabels: Record<string, readonly [number, number]> = {};
      for (const [l, k] of counter?.byLabel() ?? []) {
        const w = labelsWarm.get(l) ?? 0;
        if (k > w) grownLabels[l] = [w, k];
      }
      return {
        device: device?.info.name ?? 'none (CPU policies only)',
        warmUpCalls: warm.length,
        calls: main.length,
        failures,
        buffersStart,
        buffersWarm,
        buffersEnd: liveEnd,
        keptWarm,
        keptEnd,
        unownedWarm: buffersWarm - keptTotal(keptWarm),
        unownedEnd: liveEnd - keptTotal(keptEnd),
        rssWarm,
        rssEnd: memoryEnd.rss,
        memoryWarm: memoryWarm ?? memoryEnd,
        memoryEnd,
        pipelinesWarm,
        pipelinesEnd: device ? pipelineCount(device) : 0,
        durationMs: performance.now() - t0,
        newPipelines: counter?.pipelines().slice(createdWarm) ?? [],
        perOperation,
        grownLabels,
      };
    };
    await runAll(warm, 0, false);
    await settle(device);
    buffersWarm = counter?.live() ?? 0;
    keptWarm = keptBuffers(device);
    labelsWarm = counter?.byLabel() ?? new Map();
    memoryWarm = memory();
    rssWarm = memoryWarm.rss;
    pipelinesWarm = device ? pipelineCount(device) : 0;
    createdWarm = counter?.pipelines().length ?? 0;
    await runAll(main, warm.length, true);
    await settle(device);
    return report();
  } finally {
    counter?.restore();
  }
}
