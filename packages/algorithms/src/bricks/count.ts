/**
 * CPU loop of count: elements equal to a value, as the 'count' kernel of kernels.ts (the value
 * travels as the carry: one kernel per element type; `k += +(x[i] === v)`, no branch). seq: the
 * kernel on the calling thread. par: chunks on the calling thread and the workers (`runPar`): with
 * a plain-ArrayBuffer input the calling thread counts its chunks in place and only the workers'
 * chunks are copied into shared memory.
 */
import type { HostArray } from '@webdpl/core';
import { elementTypeOf } from '@webdpl/core';
import type { CpuBackend } from '@webdpl/policies';
import { type KernelSpec, parKernelSource, seqKernel } from './kernels';
import { memoryBoundChunks, runPar } from './staging';

/** Number of elements of `input` equal to `value` (already converted to the element type). */
export async function cpuCount(backend: CpuBackend, input: HostArray, value: number): Promise<number> {
  const n = input.length;
  if (n === 0) return 0;
  const spec: KernelSpec = {
    kind: 'count',
    inputs: 1,
    bit: false,
    arrays: [elementTypeOf(input), undefined, undefined],
  };
  const kernel = seqKernel(spec);
  const chunks = memoryBoundChunks(backend, n);
  if (!chunks || backend.kind !== 'par') return kernel(input, undefined, undefined, 0, n, false, value, undefined);
  const s = parKernelSource(spec);
  const counts = await runPar(
    backend,
    chunks,
    { x: input, x2: undefined, y: undefined, n },
    (c, sh) => ({ s, x: sh.x, b: c.begin, e: c.end, h: false, c: value }),
    (c) => kernel(input, undefined, undefined, c.begin, c.end, false, value, undefined),
  );
  return counts.reduce((a, b) => a + b, 0);
}
