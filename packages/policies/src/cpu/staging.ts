/** Argument checks and shared-memory staging common to the CPU engines. */
import {
  ArgumentError,
  describe,
  elementTypeOf,
  type GpuFunction,
  type HostArray,
  type NumericType,
} from '@webdpl/core';
import type { Chunk } from './chunks';
import { type CpuBackend, cpuTuning } from './cpu-backend';
import { type KernelBatch, type KernelJob, runKernelBatch } from './kernels';
import { acquireScratch, releaseScratch } from './scratch';
import { isShared } from './shared-memory';

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

/**
 * Moves a par call's arrays into shared memory: shared arrays as they are; plain-ArrayBuffer inputs
 * copied into reusable shared scratch (see scratch.ts; the copy is ~n * 4 bytes of memcpy); a plain
 * output replaced by scratch (the input's copy when the output is the input itself) that `finish()`
 * copies back. An output must be the input itself or not overlap it.
 */
export function stage(x: HostArray, x2: HostArray | undefined, y: HostArray | undefined, n: number): Staged {
  const scratch: SharedArrayBuffer[] = [];
  const share = (a: HostArray, copy: boolean): HostArray => {
    if (isShared(a)) return a;
    const buf = acquireScratch(a.length * 4);
    scratch.push(buf);
    const v = view(elementTypeOf(a), buf, a.length);
    if (copy) v.set(a);
    return v;
  };
  const sx = share(x, true);
  const sx2 = x2 === undefined ? undefined : x2 === x ? sx : share(x2, true);
  let sy: HostArray | undefined;
  if (y === undefined || isShared(y)) sy = y;
  else if (y === x) sy = sx;
  else if (y === x2) sy = sx2;
  else sy = share(y.length === n ? y : y.subarray(0, n), false);
  return {
    x: sx,
    x2: sx2,
    y: sy,
    finish: () => {
      if (y !== undefined && sy !== undefined && sy !== y) y.set(sy.length === n ? sy : sy.subarray(0, n));
      for (const buf of scratch) releaseScratch(buf);
    },
  };
}

type WaitAsync = (
  array: Int32Array,
  index: number,
  value: number,
) => { async: false; value: string } | { async: true; value: Promise<string> };

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
  const jobs = chunks.map(job);
  const total = jobs.length;
  const batch: KernelBatch = {
    ctl: new Int32Array(new SharedArrayBuffer(8)),
    out: new Float64Array(new SharedArrayBuffer(8 * total)),
    jobs,
  };
  const callerWorks = cpuTuning(backend).callerWorks;
  const workers = Math.min(total, callerWorks ? Math.max(1, backend.pool.size - 1) : backend.pool.size);
  let failure: { error: unknown } | undefined;
  const settled = backend.pool.run(runKernelBatch, new Array<KernelBatch>(workers).fill(batch)).then(
    () => undefined,
    (error: unknown) => {
      failure ??= { error };
    },
  );
  if (callerWorks) runKernelBatch(batch);
  const waitAsync = (Atomics as unknown as { waitAsync?: WaitAsync }).waitAsync;
  for (;;) {
    if (failure) throw failure.error;
    const done = Atomics.load(batch.ctl, 1);
    if (done >= total) break;
    if (!waitAsync) {
      await settled;
      continue;
    }
    const w = waitAsync(batch.ctl, 1, done);
    if (w.async) await Promise.race([w.value, settled]);
  }
  // Wait for the workers' replies too: until the pool has them it counts those workers as busy and
  // queues the next call's jobs instead of posting them, and the caller then takes every chunk
  // itself (par ran as seq, 1.00x, before this).
  await settled;
  // (failure is set from the promise callback; the loop's check narrowed its type to undefined here)
  const late = failure as { error: unknown } | undefined;
  if (late) throw late.error;
  return Array.from(batch.out);
}
