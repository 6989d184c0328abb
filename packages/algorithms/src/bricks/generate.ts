/**
 * `cpuGenerate`: y[i] = fn(i) with the index in y's element type (f32: rounded to nearest, exact
 * below 2^24). seq: one generated loop ('generate' kernel of kernels.ts, the function inlined when
 * it has a source). par: per-chunk loops on the pool (`runPar`: with a plain-ArrayBuffer output the
 * calling thread writes its share in place and the workers' share goes through shared memory).
 */
import type { GpuFunction, HostArray, NumericType } from '@webdpl/core';
import type { CpuBackend } from '@webdpl/policies';
import { type KernelSpec, parKernelSource, seqKernel } from './kernels';
import { memoryBoundChunks, runPar } from './staging';

/** Writes `fn(i)` to `y[i]` for i < n (`fn` of one argument of `type`, y's element type). */
export async function cpuGenerate(
  backend: CpuBackend,
  y: HostArray,
  n: number,
  fn: GpuFunction,
  type: NumericType,
): Promise<void> {
  if (n === 0) return;
  const spec: KernelSpec = {
    kind: 'generate',
    t: { fn, argTypes: [type] },
    inputs: 1,
    bit: false,
    arrays: [undefined, undefined, type],
  };
  const kernel = seqKernel(spec);
  const chunks = memoryBoundChunks(backend, n);
  if (!chunks || backend.kind !== 'par') {
    kernel(y, undefined, y, 0, n, false, 0, undefined);
    return;
  }
  const s = parKernelSource(spec);
  // The output stands in for the (unread) input, so staging has one array to move.
  await runPar(
    backend,
    chunks,
    { x: y, x2: undefined, y, n },
    (c, sh) => ({ s, x: sh.x, y: sh.y, b: c.begin, e: c.end, h: false, c: 0 }),
    (c) => kernel(y, undefined, y, c.begin, c.end, false, 0, undefined),
  );
}
