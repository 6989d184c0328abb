/**
 * CPU loops of the map algorithms without an expression to run (fill, iota, copy), as kernels of
 * kernels.ts ('fill', 'iota', 'copy'; the value or start travels as the carry, so one kernel serves
 * every value). seq: the kernel on the calling thread (fill and copy are TypedArray#fill / #set, at
 * memory speed). par: chunks shared by the calling thread and the workers (`runChunks`) when the
 * arrays already live in shared memory; otherwise the calling thread does the work, since staging
 * a plain-ArrayBuffer output through shared memory (a copy back) costs as much as these single
 * passes themselves. Memory-bound: fill, iota and copy use the pool only from `MAP_PARALLEL_MIN`
 * elements (below it waking a worker costs more than the pass). Fill of shared memory is a block
 * doubled by copyWithin (kernels.ts 'fill'); two threads doing that over halves of an allocShared
 * array ran 1.5x / 1.33x one thread at 2^22 / 2^24 on the 2-core dev VM (0.344 against 0.518 ms,
 * 2.16 against 2.87; docs/benchmarks/cpu-2026-11-24f.md). With TypedArray#fill's element-by-element
 * stores on shared memory, par fill had measured 0.2-0.4x seq, so fill never used the pool before.
 */
import type { HostArray, NumericType } from '@webdpl/core';
import { type CpuBackend, isShared, planParallel } from '@webdpl/policies';
import { type KernelKind, type KernelSpec, parKernelSource, seqKernel } from './kernels';
import { runChunks } from './staging';

const KINDS: readonly KernelKind[] = ['fill', 'iota', 'copy'];

/** Fewest elements for which iota and copy use the pool (on shared arrays). */
export const MAP_PARALLEL_MIN = 1 << 22;

/**
 * Runs a fill (k 0: y[i] = v), iota (k 1: y[i] = v + i in `type`) or copy (k 2: y[i] = x[i]) of
 * the first `n` elements of `y` (of element type `type`).
 */
export async function cpuFill(
  backend: CpuBackend,
  k: 0 | 1 | 2,
  y: HostArray,
  n: number,
  v: number,
  type: NumericType,
  x?: HostArray,
): Promise<void> {
  if (n === 0) return;
  const kind = KINDS[k] as KernelKind;
  const spec: KernelSpec = {
    kind,
    inputs: 1,
    bit: false,
    arrays: [x === undefined ? undefined : type, undefined, type],
  };
  const chunks = n < MAP_PARALLEL_MIN ? undefined : planParallel(backend, n);
  if (!chunks || backend.kind !== 'par' || !isShared(y) || (x !== undefined && !isShared(x))) {
    seqKernel(spec)(x ?? y, undefined, y, 0, n, false, v, undefined);
    return;
  }
  const s = parKernelSource(spec);
  await runChunks(backend, chunks, (c) => ({ s, x: x ?? y, y, b: c.begin, e: c.end, h: false, c: v }));
}
