/**
 * `cpuFindFirst`: the least index whose element satisfies a predicate (find_if; any_of / none_of /
 * all_of follow from it). seq: one generated loop that stops at the first hit. par: chunks run in
 * order on the pool and share the least index found so far in a SharedArrayBuffer; a chunk stops
 * (checking every 8192 elements) once an index before its start is known, so the work after an early
 * hit is about one block per worker.
 */
import { ArgumentError, describe, type GpuFunction } from '@webdpl/core';
import type { CpuBackend } from '@webdpl/policies';
import { type KernelSpec, parKernelSource, seqKernel } from './kernels';
import { checkFn, checkInputs, type Inputs, memoryBoundChunks, runPar } from './staging';

const NOT_FOUND = 0x7fffffff;

/**
 * The first index i with `pred(input[i])` truthy (or `pred(input[0][i], input[1][i])`), or -1.
 * @throws ArgumentError naming `input` or `pred`
 */
export async function cpuFindFirst(backend: CpuBackend, input: Inputs, pred: GpuFunction): Promise<number> {
  const { x, x2, types, n } = checkInputs(input);
  const p = checkFn(pred, types.length as 1 | 2, types, 'pred');
  if (n === 0) return -1;
  if (n >= NOT_FOUND) throw new ArgumentError('input', `fewer than ${NOT_FOUND} elements`, describe(n));
  const spec: KernelSpec = {
    kind: 'findFirst',
    t: { fn: p, argTypes: types },
    inputs: types.length as 1 | 2,
    bit: false,
    arrays: [types[0], types[1], undefined],
  };
  const chunks = memoryBoundChunks(backend, n);
  if (!chunks || backend.kind !== 'par') {
    return seqKernel(spec)(x, x2, undefined, 0, n, false, 0, undefined);
  }
  const s = parKernelSource(spec);
  const kernel = seqKernel(spec);
  const found = new Int32Array(new SharedArrayBuffer(4));
  found[0] = NOT_FOUND;
  // With plain arrays the calling thread searches its chunks in place (`runSplit`): only the
  // workers' chunks are copied into shared memory, instead of both inputs before any search.
  const hits = await runPar(
    backend,
    chunks,
    { x, x2, y: undefined, n },
    (c, sh) => ({ s, x: sh.x, x2: sh.x2, b: c.begin, e: c.end, h: false, c: 0, f: found }),
    (c) => kernel(x, x2, undefined, c.begin, c.end, false, 0, found),
  );
  let best = -1;
  for (const h of hits) if (h >= 0 && (best < 0 || h < best)) best = h;
  return best;
}
