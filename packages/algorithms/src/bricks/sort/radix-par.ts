/**
 * Parallel radix sort on the worker pool: the kernel of radix-kernel.ts over shared memory.
 *
 *  1. the caller's keys (and values) are copied into shared memory unless they already live there;
 *  2. 'hist' per chunk (counts of all three digits), then the calling thread picks the level digit
 *     and scans the counts into per-(digit, chunk) offsets, so equal digits keep their input order;
 *  3. 'scatter' per chunk into shared scratch by the level digit (the only pass out of cache);
 *  4. 'buckets': every thread claims buckets from a shared counter and sorts each (in cache for
 *     evenly split keys) into the stand-ins of the caller's arrays, undoing the key transform;
 *  5. the result is copied back into the caller's arrays when they were copied in.
 *
 * Three pool runs, each on `pool.size - 1` workers and the calling thread (`withCaller`: chunks and
 * buckets claimed through shared counters; on `pool.size` workers with the `callerWorks` tuning off);
 * the copies in and out (~7 ms each for 64 MiB) are the only serial work besides the offsets. The
 * caller's arrays are written only by the last step (or, when they are shared, by the buckets step).
 */
import type { NumericType } from '@webdpl/core';
import { isShared, type WorkerPool } from '@webdpl/policies';
import { withCaller } from '../staging';
import { bitsView } from './key-bits';
import {
  HIST_WORDS,
  levelDigit,
  type RadixClaims,
  type RadixJob,
  radixClaimTask,
  radixJob,
  radixSource,
  radixTask,
} from './radix-kernel';
import { bucketStarts } from './radix-seq';
import { borrowU32, giveBack } from './scratch';

type Numeric4 = Uint32Array | Int32Array | Float32Array;

function sharedI32(n: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(Math.max(4, n * 4)));
}

/** Hist or scatter jobs, one per chunk, claimed by the workers and the calling thread (`withCaller`). */
function claimed(pool: WorkerPool, jobs: RadixJob[], callerWorks: boolean): Promise<void> {
  const w: RadixClaims = { jobs, next: sharedI32(1) };
  return withCaller(pool, radixClaimTask, w, () => Atomics.store(w.next, 0, jobs.length), callerWorks);
}

/**
 * Sorts `keys` (any 4-byte numeric type, by its order-preserving bits; ascending or descending with
 * NaN last) stably on `pool`, permuting `values` (any 4-byte typed array) along.
 * @param minChunk shortest chunk per job of the counting and scatter steps
 * @param callerWorks whether the calling thread takes part (the `callerWorks` tuning)
 */
export async function radixSortPar(
  pool: WorkerPool,
  keys: Numeric4,
  values: Numeric4 | undefined,
  type: NumericType,
  descending: boolean,
  minChunk: number,
  callerWorks = true,
): Promise<void> {
  const n = keys.length;
  if (n < 2) return;
  const s = radixSource(type, descending, values !== undefined);
  const kb = bitsView(keys);
  const vb = values ? bitsView(values) : undefined;
  const sk = isShared(kb) ? kb : borrowU32(n, true);
  const sv = vb ? (isShared(vb) ? vb : borrowU32(n, true)) : undefined;
  const a = borrowU32(n, true);
  const va = vb ? borrowU32(n, true) : undefined;
  try {
    if (sk !== kb) sk.set(kb);
    if (sv && vb && sv !== vb) sv.set(vb);
    // Two chunks per worker: every chunk costs HIST_WORDS of counts and one message per step.
    const c = Math.max(1, Math.min(2 * pool.size, Math.floor(n / Math.max(1, minChunk))));
    const bounds = Array.from({ length: c + 1 }, (_, i) => Math.floor((i * n) / c));
    const h = sharedI32(c * HIST_WORDS);
    await claimed(
      pool,
      bounds.slice(0, c).map((b, i) => radixJob({ op: 0, s, k: sk, b, e: bounds[i + 1], h, ho: i * HIST_WORDS, a })),
      callerWorks,
    );
    const total = (g: number, d: number) => {
      let t = 0;
      for (let i = 0; i < c; i++) t += h[i * HIST_WORDS + g * 2048 + d] as number;
      return t;
    };
    const dg = levelDigit(n, total);
    if (dg < 0) return; // every key has the same bits: nothing moves
    const st = bucketStarts(dg, (d) => total(dg, d));
    const off = sharedI32(c * 2048);
    for (let d = 0; d < 2048; d++) {
      let o = st[d] as number;
      for (let i = 0; i < c; i++) {
        off[i * 2048 + d] = o;
        o += h[i * HIST_WORDS + dg * 2048 + d] as number;
      }
    }
    await claimed(
      pool,
      bounds
        .slice(0, c)
        .map((b, i) => radixJob({ op: 1, s, k: sk, v: sv, b, e: bounds[i + 1], h: off, ho: i * 2048, dg, a, va })),
      callerWorks,
    );
    const stShared = sharedI32(2049);
    stShared.set(st);
    const ctl = sharedI32(1);
    const job = radixJob({ op: 2, s, a, va, o: sk, vo: sv, st: stShared, lv: 2 - dg, c: ctl });
    await withCaller(pool, radixTask, job, () => Atomics.store(ctl, 0, 1 << 30), callerWorks);
    if (sk !== kb) kb.set(sk);
    if (sv && vb && sv !== vb) vb.set(sv);
  } finally {
    giveBack(a, va, sk !== kb ? sk : undefined, sv !== vb ? sv : undefined);
  }
}
