/** Argument checks and shared-memory staging common to the CPU engines. */
import {
  ArgumentError,
  describe,
  elementTypeOf,
  type GpuFunction,
  type HostArray,
  type NumericType,
} from '@webdpl/core';
import type { Chunk, WorkerPool } from '@webdpl/policies';
import { type CpuBackend, cpuTuning, isShared, planParallel } from '@webdpl/policies';
import { batchJobs, type KernelBatch, type KernelJob, runKernelBatch } from './kernels';
import { acquireScratch, releaseScratch } from './scratch';

/** One input array, or two for binary transforms. */
export type Inputs = HostArray | readonly [HostArray, HostArray];

export interface CheckedInputs {
  readonly x: HostArray;
  readonly x2: HostArray | undefined;
  readonly types: NumericType[];
  readonly n: number;
}

/** Checks one or two input arrays; the second must be at least as long as the first. */
export function checkInputs(input: Inputs, argument = 'input'): CheckedInputs {
  if (Array.isArray(input)) {
    if (input.length !== 2)
      throw new ArgumentError(argument, 'one typed array or a pair of them', `${input.length} arrays`);
    const [x, x2] = input as readonly [HostArray, HostArray];
    const types = [elementTypeOf(x, `${argument}[0]`), elementTypeOf(x2, `${argument}[1]`)];
    if (x2.length < x.length) {
      throw new ArgumentError(
        `${argument}[1]`,
        `at least ${x.length} elements (the length of ${argument}[0])`,
        `${x2.length}`,
      );
    }
    return { x, x2, types, n: x.length };
  }
  const x = input as HostArray;
  return { x, x2: undefined, types: [elementTypeOf(x, argument)], n: x.length };
}

/** Checks an output array of at least `n` elements. */
export function checkOutput(output: unknown, n: number, argument = 'output'): NumericType {
  const type = elementTypeOf(output, argument);
  if ((output as HostArray).length < n) {
    throw new ArgumentError(argument, `at least ${n} elements`, `${(output as HostArray).length}`);
  }
  return type;
}

/** Checks a GpuFunction of the given arity (1 or 2) that supports `argTypes`. */
export function checkFn(fn: unknown, arity: 1 | 2, argTypes: readonly NumericType[], argument: string): GpuFunction {
  const f = fn as GpuFunction;
  if (typeof fn !== 'object' || fn === null || f.kind !== 'function') {
    throw new ArgumentError(argument, 'a GpuFunction (a built-in operator or a lambda)', describe(fn));
  }
  if (f.arity !== arity)
    throw new ArgumentError(argument, `a function of ${arity} argument(s)`, `'${f.name}' of ${f.arity}`);
  if (!f.supports(argTypes)) {
    throw new ArgumentError(argument, `a function defined for ${argTypes.join(', ')}`, `'${f.name}'`);
  }
  return f;
}

/** Checks a number argument. */
export function checkNumber(x: unknown, argument: string): number {
  if (typeof x !== 'number') throw new ArgumentError(argument, 'a number', describe(x));
  return x;
}

/**
 * Elements from which a memory-bound par step (a plain reduce, a map, a scan) on plain
 * (non-shared) arrays runs on the pool. Below it, copying the workers' chunks into shared memory
 * costs about as much as the loop saves: measured on the 2-core VM (`pnpm bench`, 2026-11-23),
 * plain-array par ran 0.8-0.95x seq for u32 reduce at 2^20-2^22 and for transform at 2^22, and
 * 1.36x / 1.34x at 2^24. Scans read their input twice on the pool, so plain-array scans stay seq
 * (`plainArraysSeq`). An explicit `parallelThreshold` tuning overrides both.
 */
export const PLAIN_MEMORY_BOUND_MIN = 1 << 23;

/**
 * Elements from which a memory-bound par step (reduce, transformReduce, transform, transformIf,
 * count, find, generate, the compactions, gather, the scans; histogram: HISTOGRAM_PAR_MIN) runs on
 * the pool under the default tuning, on any arrays. Below it the pool's round trip costs more than
 * the second core saves: on the 2-core VM with allocShared u32 arrays (medians of 200 calls, par then
 * seq each round, docs/benchmarks/cpu-par-minimum-2026-11-25.md) par took 1.6-2.2x seq's time at
 * 2^16, 1.1-1.6x at 2^17, and at 2^18 still 1.1-1.2x for copyIf, transformReduce and the scans
 * (0.8-1.0x for the rest); from 2^19 0.6-0.95x for every one. An explicit `parallelThreshold`
 * tuning decides instead. (Compute-bound steps, the binary searches, keep DEFAULT_PARALLEL_THRESHOLD:
 * lowerBound par took 0.55-0.68x seq's time from 2^16.)
 */
export const MEMORY_BOUND_PAR_MIN = 1 << 19;

/** The chunks of a memory-bound par step over `n` elements, or undefined where it runs seq (MEMORY_BOUND_PAR_MIN). */
export function memoryBoundChunks(backend: CpuBackend, n: number): Chunk[] | undefined {
  return belowParMin(backend, n, MEMORY_BOUND_PAR_MIN) ? undefined : planParallel(backend, n);
}

/** Whether a par backend's tuning sets `parallelThreshold` (which then overrides the plain-array minimums). */
export function explicitThreshold(backend: CpuBackend): boolean {
  return backend.kind === 'par' && typeof backend.tuning?.parallelThreshold === 'number';
}

/**
 * Whether a par step over `n` elements runs seq because `n` is below its family's measured minimum
 * `min` (where the pool's round trip costs more than the second thread saves); an explicit
 * `parallelThreshold` tuning decides instead.
 */
export function belowParMin(backend: CpuBackend, n: number, min: number): boolean {
  return backend.kind === 'par' && !explicitThreshold(backend) && n < min;
}

function anyPlain(arrays: readonly (HostArray | undefined)[]): boolean {
  return arrays.some((a) => a !== undefined && !isShared(a));
}

/**
 * Whether a memory-bound par step over `n` elements of these arrays should run seq: a plain array
 * among them and n below `min` (default PLAIN_MEMORY_BOUND_MIN, see above; other steps pass their
 * own measured minimum).
 */
export function plainMemoryBoundSeq(
  backend: CpuBackend,
  n: number,
  arrays: readonly (HostArray | undefined)[],
  min = PLAIN_MEMORY_BOUND_MIN,
): boolean {
  if (backend.kind !== 'par' || explicitThreshold(backend) || n >= min) return false;
  return anyPlain(arrays);
}

/**
 * Whether a par step over these arrays should run seq: any plain array (see above). Scans, scans by
 * key, uniqueByKey and set operations, whose plain-array staging copies about what the
 * second thread saves on two cores (docs/benchmarks/cpu-catalogue-par-2026-11-24.md).
 */
export function plainArraysSeq(backend: CpuBackend, arrays: readonly (HostArray | undefined)[]): boolean {
  if (backend.kind !== 'par' || explicitThreshold(backend)) return false;
  return anyPlain(arrays);
}

/** Arrays of a par call, in shared memory, and how to copy the output back to the caller's. */
export interface Staged {
  readonly x: HostArray;
  readonly x2: HostArray | undefined;
  readonly y: HostArray | undefined;
  /**
   * After a successful run: copies the first `n` outputs back into the caller's output when it was
   * staged, and keeps the staging buffers for reuse. Not called after a failed run, whose other
   * jobs may still be running in workers: those buffers are left to the garbage collector.
   */
  finish(): void;
}

function view(type: NumericType, buffer: SharedArrayBuffer, length: number): HostArray {
  switch (type) {
    case 'u32':
      return new Uint32Array(buffer, 0, length);
    case 'i32':
      return new Int32Array(buffer, 0, length);
    case 'f32':
      return new Float32Array(buffer, 0, length);
  }
}

/** A par call's arrays as the workers see them (all over SharedArrayBuffers). */
type SharedArgs = Pick<SharedStandIns, 'x' | 'x2' | 'y'>;

interface SharedStandIns {
  readonly x: HostArray;
  readonly x2: HostArray | undefined;
  readonly y: HostArray | undefined;
  /** The scratch buffers taken (give them back with releaseScratch). */
  readonly scratch: SharedArrayBuffer[];
}

/**
 * Shared stand-ins for the first `n` elements of a call's arrays: shared arrays as they are, plain
 * ones as views of reusable shared scratch (see scratch.ts); an output that is an input gets that
 * input's stand-in. `input(standIn, plain)` is called for each plain input (to copy it now or later).
 */
function standIns(
  x: HostArray,
  x2: HostArray | undefined,
  y: HostArray | undefined,
  n: number,
  input: (standIn: HostArray, plain: HostArray) => void,
): SharedStandIns {
  const scratch: SharedArrayBuffer[] = [];
  const share = (a: HostArray, isInput: boolean): HostArray => {
    if (isShared(a)) return a;
    const buf = acquireScratch(n * 4);
    scratch.push(buf);
    const v = view(elementTypeOf(a), buf, n);
    if (isInput) input(v, a);
    return v;
  };
  const sx = share(x, true);
  const sx2 = x2 === undefined ? undefined : x2 === x ? sx : share(x2, true);
  let sy: HostArray | undefined;
  if (y === undefined || isShared(y)) sy = y;
  else if (y === x) sy = sx;
  else if (y === x2) sy = sx2;
  else sy = share(y, false);
  return { x: sx, x2: sx2, y: sy, scratch };
}

/**
 * Moves a par call's arrays into shared memory: shared arrays as they are; plain-ArrayBuffer inputs
 * copied into reusable shared scratch (see scratch.ts; the copy is ~n * 4 bytes of memcpy); a plain
 * output replaced by scratch (the input's copy when the output is the input itself) that `finish()`
 * copies back. An output must be the input itself or not overlap it.
 */
export function stage(x: HostArray, x2: HostArray | undefined, y: HostArray | undefined, n: number): Staged {
  const sh = standIns(x, x2, y, n, (v, a) => v.set(a.length === n ? a : a.subarray(0, n)));
  const sy = sh.y;
  return {
    x: sh.x,
    x2: sh.x2,
    y: sy,
    finish: () => {
      if (y !== undefined && sy !== undefined && sy !== y) y.set(sy);
      for (const buf of sh.scratch) releaseScratch(buf);
    },
  };
}

type WaitAsync = (
  array: Int32Array,
  index: number,
  value: number,
) => { async: false; value: string } | { async: true; value: Promise<string> };

/**
 * Resolves once `ctl[1]` (chunks completed) reaches `target`, without blocking the calling thread
 * (Atomics.waitAsync, or the workers' replies where it is missing); throws the first worker error.
 */
async function waitForCount(
  ctl: Int32Array,
  target: number,
  settled: Promise<void>,
  failed: () => { error: unknown } | undefined,
): Promise<void> {
  const waitAsync = (Atomics as unknown as { waitAsync?: WaitAsync }).waitAsync;
  for (;;) {
    const f = failed();
    if (f) throw f.error;
    const done = Atomics.load(ctl, 1);
    if (done >= target) return;
    if (!waitAsync) {
      await settled;
      continue;
    }
    const w = waitAsync(ctl, 1, done);
    if (w.async) await Promise.race([w.value, settled]);
  }
}

/**
 * Runs one kernel job per chunk and resolves with the results in chunk order. The chunks are claimed
 * dynamically (see `KernelBatch`) by `pool.size - 1` workers (at least 1) and, unless the tuning
 * turns it off, by the calling thread itself: so a par step costs one message per worker, never
 * waits for a worker the OS has not woken up yet when the caller can do the work, and keeps
 * `pool.size` threads busy. Resolves once every chunk is done (workers that wake up later find no
 * chunk left and touch nothing). Rejects with the first error of any thread.
 */
export async function runChunks(
  backend: CpuBackend & { kind: 'par' },
  chunks: readonly Chunk[],
  job: (chunk: Chunk, index: number) => KernelJob,
): Promise<number[]> {
  const { src, jobs } = batchJobs(chunks.map(job));
  const total = jobs.length;
  const batch: KernelBatch = {
    ctl: new Int32Array(new SharedArrayBuffer(8)),
    out: new Float64Array(new SharedArrayBuffer(8 * total)),
    src,
    jobs,
  };
  const { callerWorks, settled, failed } = startWorkers(backend, runKernelBatch, batch, total);
  if (callerWorks) runKernelBatch(batch);
  await waitForCount(batch.ctl, total, settled, failed);
  // Wait for the workers' replies too: until the pool has them it counts those workers as busy and
  // queues the next call's jobs instead of posting them, and the caller then takes every chunk
  // itself (par ran as seq, 1.00x, before this).
  await settled;
  const f = failed();
  if (f) throw f.error;
  return Array.from(batch.out);
}

/** Spins for at most `ms` until `ctl[at]` reaches `target`; whether it did. */
export function spinUntil(ctl: Int32Array, at: number, target: number, ms: number): boolean {
  if (Atomics.load(ctl, at) >= target) return true;
  const t0 = performance.now();
  while (performance.now() - t0 < ms) if (Atomics.load(ctl, at) >= target) return true;
  return false;
}

/** Workers started on one par step's job (see `startWorkers`). */
export interface StartedWorkers {
  /** Whether the calling thread is to run the task too (the `callerWorks` tuning). */
  readonly callerWorks: boolean;
  /** Workers the job was posted to. */
  readonly workers: number;
  /**
   * Lets the pool give those workers new jobs before their replies arrive (`WorkerPool.returned`),
   * for a caller that has seen every one of them return normally through shared memory; false
   * when the pool cannot (then the caller waits for `settled`).
   */
  readonly returned: () => boolean;
  /** Settles once every worker's run has returned (never rejects). */
  readonly settled: Promise<void>;
  /** The first error of a worker, once there is one. */
  readonly failed: () => { error: unknown } | undefined;
}

/**
 * Posts `task(job)` to as many workers as the step uses (`pool.size - 1` when the calling thread
 * works too, else `pool.size`; at most `most`), before returning, so the calling thread can go on
 * to run the task itself at once.
 */
export function startWorkers<J>(
  backend: CpuBackend & { kind: 'par' },
  task: (job: J) => unknown,
  job: J,
  most: number,
): StartedWorkers {
  const callerWorks = cpuTuning(backend).callerWorks;
  const workers = Math.min(most, callerWorks ? Math.max(1, backend.pool.size - 1) : backend.pool.size);
  let failure: { error: unknown } | undefined;
  const pool = backend.pool;
  const run = pool.run(task, new Array<J>(workers).fill(job));
  const settled = run.then(
    () => undefined,
    (error: unknown) => {
      failure ??= { error };
    },
  );
  const returned = () => {
    if (pool.returned === undefined) return false;
    pool.returned(run);
    return true;
  };
  return { callerWorks, workers, settled, failed: () => failure, returned };
}

/**
 * Runs `task(job)` on `pool.size - 1` workers (at least one) and on the calling thread, which claim
 * the work through a shared counter; resolves once every thread is done (`callerWorks` false: on
 * `pool.size` workers, the calling thread waiting). When the calling thread throws, `stop()` leaves
 * the workers nothing more to claim and the error follows once they are done. `callerJob`: the job
 * as the calling thread runs it (with what cannot be posted to a worker, such as a function).
 * With the workers alone (the calling thread waiting), the second worker to wake up shared a core with
 * the first in about a third of the 2^20-key sorts on the 2-core VM: a step then took twice as long
 * (docs/benchmarks/cpu-par-2026-11-25.md). Used by the par radix sort's steps and the par merge
 * sort's rounds.
 */
export async function withCaller<J>(
  pool: WorkerPool,
  task: (job: J) => number,
  job: J,
  stop: () => void,
  callerWorks: boolean,
  callerJob: J = job,
): Promise<void> {
  const run = pool.run(task, new Array<J>(callerWorks ? Math.max(1, pool.size - 1) : pool.size).fill(job));
  if (!callerWorks) {
    await run;
    return;
  }
  try {
    task(callerJob);
  } catch (error) {
    stop();
    await run.catch(() => {});
    throw error;
  }
  await run;
}

/** The arrays of a split par call (see `runSplit`). */
export interface SplitArrays {
  readonly x: HostArray;
  readonly x2: HostArray | undefined;
  /** The output (map kernels), or undefined (reductions). */
  readonly y: HostArray | undefined;
  readonly n: number;
}

/** Whether `runSplit` can run `chunks` for this backend (the calling thread works; < 65,536 chunks). */
function splitFits(backend: CpuBackend, chunks: readonly Chunk[]): boolean {
  return cpuTuning(backend).callerWorks && chunks.length < 0x10000;
}

/** Whether a par call over `a` copies anything into shared memory (then `runSplit` pays off). */
function needsStaging(a: SplitArrays): boolean {
  return !isShared(a.x) || (a.x2 !== undefined && !isShared(a.x2)) || (a.y !== undefined && !isShared(a.y));
}

/**
 * Runs a map or reduce kernel over `chunks` when some of the caller's arrays are plain (not shared):
 * the calling thread works through chunks from the front on the caller's own arrays (nothing to
 * copy), while the workers take chunks from the back on shared copies that the calling thread makes
 * chunk by chunk just ahead of them (4 chunks per worker), copying their outputs back as they finish.
 * So only the workers' share is copied, between the caller's own chunks, while the workers compute
 * (full staging copied everything before any thread started: transform over 2^24 plain f32 ran
 * 1.1-1.3x seq that way). Resolves with each
 * chunk's result in chunk order. Needs `callerWorks` and at most 65,535 chunks.
 * @param job the workers' job for a chunk, over the shared arrays given
 * @param inPlace runs the kernel over a chunk of the caller's arrays on the calling thread
 */
async function runSplit(
  backend: CpuBackend & { kind: 'par' },
  chunks: readonly Chunk[],
  arrays: SplitArrays,
  job: (chunk: Chunk, shared: SharedArgs) => KernelJob,
  inPlace: (chunk: Chunk) => number,
): Promise<number[]> {
  const { x, x2, y, n } = arrays;
  const copyIns: ((b: number, e: number) => void)[] = [];
  const sh = standIns(x, x2, y, n, (v, a) => copyIns.push((b, e) => v.set(a.subarray(b, e), b)));
  const sy = sh.y;
  const copyOut = y !== undefined && sy !== undefined && sy !== y ? sy : undefined;

  const total = chunks.length;
  const ctl = new Int32Array(new SharedArrayBuffer(16));
  ctl[0] = total << 16;
  ctl[2] = total;
  const batch: KernelBatch = {
    ctl,
    out: new Float64Array(new SharedArrayBuffer(8 * total)),
    ...batchJobs(chunks.map((c) => job(c, sh))),
    split: true,
    fin: new Int32Array(new SharedArrayBuffer(4 * total)),
  };
  const fin = batch.fin as Int32Array;
  const workers = Math.max(1, backend.pool.size - 1);
  const ahead = 4 * workers;
  // Worker outputs are copied back from the top down as they finish, between the caller's chunks.
  let copied = total;
  const copyBack = (c: number) => {
    const ch = chunks[c] as Chunk;
    if (copyOut && y) y.set(copyOut.subarray(ch.begin, ch.end), ch.begin);
  };
  const wake = () => {
    Atomics.add(ctl, 3, 1);
    Atomics.notify(ctl, 3);
  };
  // Stages the chunk below the staged ones unless the calling thread is about to take it.
  const stageNext = (): boolean => {
    const low = Atomics.load(ctl, 2);
    if (low - 1 <= (Atomics.load(ctl, 0) & 0xffff)) return false;
    const c = chunks[low - 1] as Chunk;
    for (const f of copyIns) f(c.begin, c.end);
    Atomics.store(ctl, 2, low - 1);
    wake();
    return true;
  };
  for (let i = 0; i < ahead && stageNext(); i++);
  let failure: { error: unknown } | undefined;
  const settled = backend.pool.run(runKernelBatch, new Array<KernelBatch>(workers).fill(batch)).then(
    () => undefined,
    (error: unknown) => {
      failure ??= { error };
    },
  );
  let mine = 0;
  try {
    for (;;) {
      const fb = Atomics.load(ctl, 0);
      const front = fb & 0xffff;
      const back = fb >>> 16;
      if (back <= front) break;
      if (back - Atomics.load(ctl, 2) < ahead && stageNext()) continue;
      if (copyOut && copied > back && Atomics.load(fin, copied - 1) === 1) {
        copyBack(--copied);
        continue;
      }
      if (Atomics.compareExchange(ctl, 0, fb, (front + 1) | (back << 16)) !== fb) continue;
      batch.out[front] = inPlace(chunks[front] as Chunk);
      mine++;
      wake();
    }
  } catch (error) {
    // Leave no chunk for the workers, let them finish theirs, then report the caller's error.
    for (;;) {
      const fb = Atomics.load(ctl, 0);
      if (Atomics.compareExchange(ctl, 0, fb, (fb >>> 16) | (fb & 0xffff0000)) === fb) break;
    }
    wake();
    await settled;
    throw error;
  }
  wake();
  await waitForCount(ctl, total - mine, settled, () => failure);
  await settled;
  if (failure) throw failure.error;
  while (copied > mine) copyBack(--copied);
  for (const buf of sh.scratch) releaseScratch(buf);
  return Array.from(batch.out);
}

/**
 * One par step of a kernel over `chunks`, resolving with each chunk's result in chunk order: with
 * `inPlace` (map and reduce kernels) and plain arrays involved, `runSplit`; otherwise the arrays are
 * staged whole (`stage`) and the chunks shared by every thread (`runChunks`).
 */
export async function runPar(
  backend: CpuBackend & { kind: 'par' },
  chunks: readonly Chunk[],
  arrays: SplitArrays,
  job: (chunk: Chunk, shared: SharedArgs) => KernelJob,
  inPlace?: (chunk: Chunk) => number,
): Promise<number[]> {
  if (inPlace && splitFits(backend, chunks) && needsStaging(arrays)) {
    return runSplit(backend, chunks, arrays, job, inPlace);
  }
  const st = stage(arrays.x, arrays.x2, arrays.y, arrays.n);
  const results = await runChunks(backend, chunks, (c) => job(c, st));
  st.finish();
  return results;
}
