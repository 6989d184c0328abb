/**
 * Parallel stable merge sort on the worker pool for user comparators: chunks sorted, then rounds
 * of pairwise merges, each merge split by merge-path searches (on the calling thread) into pieces
 * of about n / (2 * pool.size) outputs, so every round keeps every thread busy. Each round's jobs
 * are claimed by `pool.size - 1` workers and the calling thread (`runClaimed`). log2(chunks)
 * rounds; each moves the data once through shared scratch.
 */
import { parallelChunks, type WorkerPool } from '@webdpl/policies';
import { withCaller } from '../staging';
import { bitsView } from './key-bits';
import { type Before, type KeyArray, type MergeSortJob, mergePath, mergeSortTask } from './merge-sort';
import { borrow, borrowValues, giveBack } from './scratch';

function sharedLike(a: KeyArray): KeyArray {
  const Ctor = a.constructor as new (buffer: SharedArrayBuffer, offset: number, length: number) => KeyArray;
  return new Ctor(borrow(a.length * 4, true), 0, a.length);
}

/**
 * Runs `jobs` on `pool.size - 1` workers and the calling thread, which claim them through a shared
 * counter (a 'claim' job, `withCaller`; the calling thread's with the caller's comparator), or with
 * `callerWorks` false the jobs themselves on the workers, the calling thread waiting.
 */
async function runClaimed(pool: WorkerPool, jobs: MergeSortJob[], before: Before, callerWorks: boolean): Promise<void> {
  if (!callerWorks || jobs.length === 0) {
    await pool.run(mergeSortTask, jobs);
    return;
  }
  const next = new Int32Array(new SharedArrayBuffer(4));
  const claim: MergeSortJob = { op: 'claim', keys: (jobs[0] as MergeSortJob).keys, jobs, next };
  await withCaller(pool, mergeSortTask, claim, () => Atomics.store(next, 0, jobs.length), true, { ...claim, before });
}

/**
 * Sorts `keys` stably by the comparator (`before` on this thread, `source` in workers and in the
 * jobs the calling thread claims), permuting `values` (any 4-byte typed array) along.
 * @param callerWorks whether the calling thread claims jobs too (the `callerWorks` tuning)
 */
export async function mergeSortPar(
  pool: WorkerPool,
  keys: KeyArray,
  values: Uint32Array | Int32Array | Float32Array | undefined,
  before: Before,
  source: string,
  minChunk: number,
  callerWorks = true,
): Promise<void> {
  const n = keys.length;
  let a = sharedLike(keys);
  a.set(keys as never);
  let b = sharedLike(keys);
  let [va, vb] = borrowValues(values);
  try {
    const chunks = parallelChunks(pool, n, minChunk);
    const first = a;
    const firstV = va;
    await runClaimed(
      pool,
      chunks.map(
        (c): MergeSortJob => ({ op: 'sort', keys: first, values: firstV, source, begin: c.begin, end: c.end }),
      ),
      before,
      callerWorks,
    );
    let runs = chunks.map((c) => [c.begin, c.end] as [number, number]);
    const target = Math.max(minChunk, Math.ceil(n / (2 * pool.size)));
    while (runs.length > 1) {
      const jobs: MergeSortJob[] = [];
      const next: [number, number][] = [];
      for (let r = 0; r < runs.length; r += 2) {
        const [lo, mid] = runs[r] as [number, number];
        const hi = r + 1 < runs.length ? (runs[r + 1] as [number, number])[1] : mid;
        next.push([lo, hi]);
        const total = hi - lo;
        const pieces = Math.max(1, Math.round(total / target));
        let i0 = 0;
        for (let k = 1; k <= pieces; k++) {
          const d0 = Math.floor(((k - 1) * total) / pieces);
          const d1 = Math.floor((k * total) / pieces);
          const i1 = k === pieces ? mid - lo : mergePath(a, lo, mid, mid, hi, d1, before);
          jobs.push({
            op: 'merge',
            keys: a,
            values: va,
            dst: b,
            dstValues: vb,
            source,
            aLo: lo + i0,
            aHi: lo + i1,
            bLo: mid + (d0 - i0),
            bHi: mid + (d1 - i1),
            out: lo + d0,
          });
          i0 = i1;
        }
      }
      await runClaimed(pool, jobs, before, callerWorks);
      [a, b] = [b, a];
      [va, vb] = [vb, va];
      runs = next;
    }
    keys.set(a as never);
    if (values && va) bitsView(values).set(va);
  } finally {
    giveBack(a, b, va, vb);
  }
}
