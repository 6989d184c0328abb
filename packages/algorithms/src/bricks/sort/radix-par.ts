/**
 * Parallel LSD radix sort on the worker pool (keys as order-preserving u32 bits, optional u32 value
 * bits), 3 passes of 11/11/10 bits over SharedArrayBuffer memory, in chunks of 2^k elements (so a
 * position's chunk is `pos >>> k`):
 *
 *  1. 'prep' per chunk: key bits in place, and the chunk's histograms of all three digits.
 *  2. per pass: a global scan on the calling thread turns the per-chunk histograms of the pass's
 *     digit into per-chunk digit offsets ((digit, chunk) order keeps equal digits in input order);
 *     then 'scatter' per chunk moves keys (and values) and counts the NEXT pass's digit per
 *     destination chunk (one histogram block per source chunk, so jobs never share counters), so no
 *     pass re-reads the data for its histograms. Passes whose digit is the same for every key (the
 *     global totals of the prep histograms tell) are skipped.
 *  3. the calling thread copies the result back into the caller's arrays, restoring keys from their
 *     bits on the way (one pass).
 *
 * Costs: 1 copy in, 1 read (prep), 3 scatters (split over the workers), 1 copy out; 3 pool runs
 * plus 1 per pass.
 */
import type { NumericType } from '@webdpl/core';
import type { WorkerPool } from '@webdpl/policies';
import { bitsView, fromKeyBits } from './key-bits';
import { RADIX_PASSES } from './radix-seq';
import { borrowU32, borrowValues, giveBack } from './scratch';

interface RadixJob {
  readonly op: 'prep' | 'scatter';
  readonly keys: Uint32Array;
  readonly chunk: number;
  readonly chunks: number;
  /** log2 of the chunk length. */
  readonly log2Chunk: number;
  readonly type: NumericType;
  readonly descending: boolean;
  /** prep: 5120 words per chunk (3 histograms). scatter: offsets, 2048 words per chunk. */
  readonly hist: Uint32Array;
  readonly shift: number;
  readonly mask: number;
  readonly dst?: Uint32Array;
  readonly values?: Uint32Array;
  readonly dstValues?: Uint32Array;
  /** scatter: counts of the next digit, chunks x chunks x 2048 words ([source][destination][digit]). */
  readonly next?: Uint32Array;
  readonly nextShift: number;
  readonly nextMask: number;
}

/** The worker task (self-contained: shipped to workers as source). */
const radixTask = function radixTask(job: RadixJob): number {
  const k = job.keys;
  const b = job.chunk << job.log2Chunk;
  const e = Math.min(k.length, b + (1 << job.log2Chunk));
  if (job.op === 'prep') {
    if (job.type === 'i32') {
      const m = job.descending ? 0x7fffffff : 0x80000000;
      for (let i = b; i < e; i++) k[i] = (k[i] as number) ^ m;
    } else if (job.type === 'f32') {
      const flip = job.descending ? -1 : 0;
      for (let i = b; i < e; i++) {
        const x = k[i] as number;
        if ((x & 0x7fffffff) > 0x7f800000) k[i] = 0xffffffff;
        else k[i] = (x & 0x80000000 ? ~x : x ^ 0x80000000) ^ flip;
      }
    } else if (job.descending) {
      for (let i = b; i < e; i++) k[i] = ~(k[i] as number);
    }
    const h = job.hist.subarray(job.chunk * 5120, job.chunk * 5120 + 5120);
    for (let i = b; i < e; i++) {
      const x = k[i] as number;
      h[x & 0x7ff]++;
      h[2048 + ((x >>> 11) & 0x7ff)]++;
      h[4096 + (x >>> 22)]++;
    }
    return 0;
  }
  const o = job.hist.subarray(job.chunk * 2048, job.chunk * 2048 + 2048);
  const d = job.dst as Uint32Array;
  const s = job.shift;
  const m = job.mask;
  const v = job.values;
  const dv = job.dstValues;
  const nx = job.next;
  if (nx) {
    const cnt = nx.subarray(job.chunk * job.chunks * 2048, (job.chunk + 1) * job.chunks * 2048);
    cnt.fill(0);
    const lc = job.log2Chunk;
    const ns = job.nextShift;
    const nm = job.nextMask;
    if (v && dv) {
      for (let i = b; i < e; i++) {
        const x = k[i] as number;
        const p = o[(x >>> s) & m]++ as number;
        d[p] = x;
        dv[p] = v[i] as number;
        cnt[((p >>> lc) << 11) + ((x >>> ns) & nm)]++;
      }
    } else {
      for (let i = b; i < e; i++) {
        const x = k[i] as number;
        const p = o[(x >>> s) & m]++ as number;
        d[p] = x;
        cnt[((p >>> lc) << 11) + ((x >>> ns) & nm)]++;
      }
    }
  } else if (v && dv) {
    for (let i = b; i < e; i++) {
      const x = k[i] as number;
      const p = o[(x >>> s) & m]++ as number;
      d[p] = x;
      dv[p] = v[i] as number;
    }
  } else {
    for (let i = b; i < e; i++) {
      const x = k[i] as number;
      d[o[(x >>> s) & m]++ as number] = x;
    }
  }
  return 0;
};

function sharedU32(n: number): Uint32Array {
  return new Uint32Array(new SharedArrayBuffer(Math.max(4, n * 4)));
}

/**
 * Sorts `keys` (any 4-byte numeric type, by its order-preserving bits; ascending or descending with
 * NaN last) stably on `pool`, permuting `values` (any 4-byte typed array) along.
 * @param minChunk shortest chunk per job (chunks are powers of two, about 2 per worker)
 */
export async function radixSortPar(
  pool: WorkerPool,
  keys: Uint32Array | Int32Array | Float32Array,
  values: Uint32Array | Int32Array | Float32Array | undefined,
  type: NumericType,
  descending: boolean,
  minChunk: number,
): Promise<void> {
  const n = keys.length;
  const log2Chunk = Math.max(Math.ceil(Math.log2(Math.max(1, minChunk))), Math.ceil(Math.log2(n / (2 * pool.size))));
  const c = Math.ceil(n / 2 ** log2Chunk);
  let a = borrowU32(n);
  let b = borrowU32(n);
  a.set(bitsView(keys));
  let [va, vb] = borrowValues(values);
  try {
    const ids = Array.from({ length: c }, (_, i) => i);
    const base = { chunks: c, log2Chunk, type, descending, shift: 0, mask: 0, nextShift: 0, nextMask: 0 };
    const prepHist = sharedU32(c * 5120);
    const first = a;
    await pool.run(
      radixTask,
      ids.map((i) => ({ ...base, op: 'prep' as const, keys: first, chunk: i, hist: prepHist })),
    );
    // Passes whose digit is the same for every key (global totals do not depend on the order).
    const active = RADIX_PASSES.map(([shift, bits], p) => ({ shift, mask: (1 << bits) - 1, p })).filter(
      ({ mask, p }) => {
        for (let d = 0; d <= mask; d++) {
          let total = 0;
          for (let i = 0; i < c; i++) total += prepHist[i * 5120 + p * 2048 + d] as number;
          if (total === n) return false;
          if (total > 0) break;
        }
        return true;
      },
    );
    const offsets = sharedU32(c * 2048);
    const nextBlock = active.length > 1 ? sharedU32(c * c * 2048) : undefined;
    // Per-chunk counts of the coming pass's digit, [chunk][digit]: from prep, then from each scatter.
    let counts: (chunk: number, digit: number) => number = (i, d) =>
      prepHist[i * 5120 + (active[0]?.p ?? 0) * 2048 + d] as number;
    for (let q = 0; q < active.length; q++) {
      const { shift, mask } = active[q] as { shift: number; mask: number };
      const later = active[q + 1];
      let sum = 0;
      for (let d = 0; d <= mask; d++) {
        for (let i = 0; i < c; i++) {
          offsets[i * 2048 + d] = sum;
          sum += counts(i, d);
        }
      }
      const src = a;
      const dst = b;
      const sv = va;
      const dv = vb;
      const next = later ? nextBlock : undefined;
      await pool.run(
        radixTask,
        ids.map((i) => ({
          ...base,
          op: 'scatter' as const,
          keys: src,
          dst,
          values: sv,
          dstValues: dv,
          chunk: i,
          hist: offsets,
          shift,
          mask,
          next,
          nextShift: later?.shift ?? 0,
          nextMask: later?.mask ?? 0,
        })),
      );
      a = dst;
      b = src;
      va = dv;
      vb = sv;
      if (next) {
        // Counts of the next digit per destination chunk: the sum over the blocks of all source chunks.
        const summed = new Uint32Array(c * 2048);
        for (let s = 0; s < c; s++) {
          const block = next.subarray(s * c * 2048, (s + 1) * c * 2048);
          for (let j = 0; j < c * 2048; j++) summed[j] = (summed[j] as number) + (block[j] as number);
        }
        counts = (i, d) => summed[i * 2048 + d] as number;
      }
    }
    fromKeyBits(bitsView(keys), type, descending, 0, n, a);
    if (values && va) bitsView(values).set(va);
  } finally {
    giveBack(a, b, va, vb);
  }
}
