/**
 * CPU loop of min/max element: one pass over the elements' order keys (see order-key.ts), keeping
 * the first index of the least and/or greatest key. seq: one loop on the calling thread. par: one
 * loop per chunk on the worker pool over shared memory, chunk results folded in order.
 */
import type { HostArray, NumericType } from '@webdpl/core';
import { type CpuBackend, planParallel, toShared } from '@webdpl/policies';

/** What a scan looks for: 1 min, 2 max, 3 both. */
export type Want = 1 | 2 | 3;

interface ScanJob {
  /** The elements' bits. */
  readonly u: Uint32Array;
  /** 0 u32, 1 i32, 2 f32. */
  readonly m: number;
  readonly w: Want;
  readonly b: number;
  readonly e: number;
}

/** [minKey, minIndex, maxKey, maxIndex] of [b, e) (indices -1 when not asked for). */
type ScanResult = [number, number, number, number];

/** Pool task (self-contained: shipped to workers as source). */
function scanChunk(j: ScanJob): ScanResult {
  const u = j.u;
  const m = j.m;
  let minK = 4294967296;
  let minI = -1;
  let maxK = -1;
  let maxI = -1;
  const wantMin = (j.w & 1) !== 0;
  const wantMax = (j.w & 2) !== 0;
  for (let i = j.b; i < j.e; i++) {
    const bits = u[i] as number;
    let k: number;
    if (m === 0) k = bits;
    else if (m === 1) k = (bits ^ 0x80000000) >>> 0;
    else if ((bits & 0x7fffffff) > 0x7f800000) k = 0xffffffff;
    else k = bits & 0x80000000 ? ~bits >>> 0 : (bits | 0x80000000) >>> 0;
    if (wantMin && k < minK) {
      minK = k;
      minI = i;
    }
    if (wantMax && k > maxK) {
      maxK = k;
      maxI = i;
    }
  }
  return [minK, minI, maxK, maxI];
}

function bitsOf(x: HostArray): Uint32Array {
  return x instanceof Uint32Array ? x : new Uint32Array(x.buffer, x.byteOffset, x.length);
}

/** [minIndex, maxIndex] of a non-empty `input` (first occurrences; -1 for what `want` leaves out). */
export async function cpuMinMaxIndex(
  backend: CpuBackend,
  input: HostArray,
  type: NumericType,
  want: Want,
): Promise<[number, number]> {
  const n = input.length;
  const m = type === 'u32' ? 0 : type === 'i32' ? 1 : 2;
  const chunks = planParallel(backend, n);
  if (!chunks || backend.kind !== 'par') {
    const r = scanChunk({ u: bitsOf(input), m, w: want, b: 0, e: n });
    return [r[1], r[3]];
  }
  const u = bitsOf(toShared(input));
  const parts = await backend.pool.run(
    scanChunk,
    chunks.map((c) => ({ u, m, w: want, b: c.begin, e: c.end })),
  );
  // Chunks are in index order: a later chunk wins only with a strictly better key.
  let [minK, minI, maxK, maxI] = parts[0] as ScanResult;
  for (const p of parts.slice(1)) {
    if (p[0] < minK) [minK, minI] = [p[0], p[1]];
    if (p[2] > maxK) [maxK, maxI] = [p[2], p[3]];
  }
  return [minI, maxI];
}
