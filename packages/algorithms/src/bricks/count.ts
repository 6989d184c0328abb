/**
 * CPU loop of count: elements equal to a value. seq: one loop on the calling thread. par: one loop
 * per chunk on the worker pool over shared memory (a plain-ArrayBuffer input is copied there first).
 */
import type { HostArray } from '@webdpl/core';
import { type CpuBackend, planParallel, toShared } from '@webdpl/policies';

interface CountJob {
  readonly x: HostArray;
  readonly v: number;
  readonly b: number;
  readonly e: number;
}

/** Pool task (self-contained: shipped to workers as source). */
function countChunk(j: CountJob): number {
  const x = j.x;
  const v = j.v;
  let c = 0;
  for (let i = j.b; i < j.e; i++) if (x[i] === v) c++;
  return c;
}

/** Number of elements of `input` equal to `value` (already converted to the element type). */
export async function cpuCount(backend: CpuBackend, input: HostArray, value: number): Promise<number> {
  const n = input.length;
  const chunks = planParallel(backend, n);
  if (!chunks || backend.kind !== 'par') return countChunk({ x: input, v: value, b: 0, e: n });
  const x = toShared(input);
  const counts = await backend.pool.run(
    countChunk,
    chunks.map((c) => ({ x, v: value, b: c.begin, e: c.end })),
  );
  return counts.reduce((a, b) => a + b, 0);
}
