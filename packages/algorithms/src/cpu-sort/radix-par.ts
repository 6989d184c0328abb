/**
 * Parallel LSD radix sort on the worker pool (keys as order-preserving u32 bits, optional u32 value
 * bits), 3 passes of 11/11/10 bits over SharedArrayBuffer memory:
 *
 *  1. 'prep' per chunk: key bits in place and the chunk's histograms of all three digits (one read).
 *  2. per pass: per-chunk histograms of the current order ('hist', skipped while no pass has moved
 *     the data: the prep histograms still hold), a global scan on the calling thread into per-chunk
 *     digit offsets, then a parallel stable scatter ('scatter'); passes whose digit is the same for
 *     every key are skipped.
 *  3. 'unbits' per chunk: the keys back from their bits.
 *
 * The caller's arrays are copied into shared memory and back (2 memcpys), unless already shared.
 */
import type { NumericType } from '@webdpl/core';
import { parallelChunks, type WorkerPool } from '@webdpl/policies';
import { bitsView } from './key-bits';
import { RADIX_PASSES } from './radix-seq';

interface RadixJob {
  readonly op: 'prep' | 'hist' | 'scatter' | 'unbits';
  readonly keys: Uint32Array;
  readonly begin: number;
  readonly end: number;
  readonly type: NumericType;
  readonly descending: boolean;
  /** prep: 5120 words per chunk (3 histograms); hist/scatter: 2048 words per chunk. */
  readonly hist: Uint32Array;
  readonly chunk: number;
  readonly shift: number;
  readonly mask: number;
  readonly dst?: Uint32Array;
  readonly values?: Uint32Array;
  readonly dstValues?: Uint32Array;
}

/** The worker task (self-contained: shipped to workers as source). */
const radixTask = function radixTask(job: RadixJob): number {
  const k = job.keys;
  const b = job.begin;
  const e = job.end;
  switch (job.op) {
    case 'prep': {
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
    case 'hist': {
      const h = job.hist.subarray(job.chunk * 2048, job.chunk * 2048 + 2048);
      h.fill(0);
      const s = job.shift;
      const m = job.mask;
      for (let i = b; i < e; i++) h[((k[i] as number) >>> s) & m]++;
      return 0;
    }
    case 'scatter': {
      const o = job.hist.subarray(job.chunk * 2048, job.chunk * 2048 + 2048);
      const d = job.dst as Uint32Array;
      const s = job.shift;
      const m = job.mask;
      const v = job.values;
      const dv = job.dstValues;
      if (v && dv) {
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
    }
    case 'unbits': {
      if (job.type === 'i32') {
        const m = job.descending ? 0x7fffffff : 0x80000000;
        for (let i = b; i < e; i++) k[i] = (k[i] as number) ^ m;
      } else if (job.type === 'f32') {
        const flip = job.descending ? -1 : 0;
        for (let i = b; i < e; i++) {
          const t0 = k[i] as number;
          if (t0 === 0xffffffff) k[i] = 0x7fc00000;
          else {
            const t = t0 ^ flip;
            k[i] = t & 0x80000000 ? t ^ 0x80000000 : ~t;
          }
        }
      } else if (job.descending) {
        for (let i = b; i < e; i++) k[i] = ~(k[i] as number);
      }
      return 0;
    }
  }
};

function sharedU32(n: number): Uint32Array {
  return new Uint32Array(new SharedArrayBuffer(Math.max(4, n * 4)));
}

/**
 * Sorts `keys` (any 4-byte numeric type, by its order-preserving bits; ascending or descending with
 * NaN last) stably on `pool`, permuting `values` (any 4-byte typed array) along.
 * @param minChunk shortest chunk per job
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
  const chunks = parallelChunks(pool, n, minChunk);
  const c = chunks.length;
  let a = sharedU32(n);
  let b = sharedU32(n);
  a.set(bitsView(keys));
  let va: Uint32Array | undefined;
  let vb: Uint32Array | undefined;
  if (values) {
    va = sharedU32(n);
    vb = sharedU32(n);
    va.set(bitsView(values));
  }
  const prepHist = sharedU32(c * 5120);
  const base = { type, descending, shift: 0, mask: 0, chunk: 0 };
  await pool.run(
    radixTask,
    chunks.map((ch, i) => ({
      ...base,
      op: 'prep' as const,
      keys: a,
      begin: ch.begin,
      end: ch.end,
      hist: prepHist,
      chunk: i,
    })),
  );
  const passHist = sharedU32(c * 2048);
  let moved = false;
  for (let p = 0; p < 3; p++) {
    const [shift, bits] = RADIX_PASSES[p] as readonly [number, number];
    const buckets = 1 << bits;
    const mask = buckets - 1;
    if (moved) {
      const src = a;
      await pool.run(
        radixTask,
        chunks.map((ch, i) => ({
          ...base,
          op: 'hist' as const,
          keys: src,
          begin: ch.begin,
          end: ch.end,
          hist: passHist,
          chunk: i,
          shift,
          mask,
        })),
      );
    } else {
      for (let i = 0; i < c; i++) {
        passHist.set(prepHist.subarray(i * 5120 + p * 2048, i * 5120 + p * 2048 + buckets), i * 2048);
      }
    }
    // Global scan: offsets in (digit, chunk) order, so equal digits keep chunk (= input) order.
    let sum = 0;
    let trivial = false;
    for (let d = 0; d < buckets && !trivial; d++) {
      let total = 0;
      for (let i = 0; i < c; i++) {
        const at = i * 2048 + d;
        const h = passHist[at] as number;
        passHist[at] = sum + total;
        total += h;
      }
      if (total === n) trivial = true;
      sum += total;
    }
    if (trivial) continue;
    const src = a;
    const dst = b;
    const sv = va;
    const dv = vb;
    await pool.run(
      radixTask,
      chunks.map((ch, i) => ({
        ...base,
        op: 'scatter' as const,
        keys: src,
        dst,
        values: sv,
        dstValues: dv,
        begin: ch.begin,
        end: ch.end,
        hist: passHist,
        chunk: i,
        shift,
        mask,
      })),
    );
    a = dst;
    b = src;
    va = dv;
    vb = sv;
    moved = true;
  }
  const fin = a;
  await pool.run(
    radixTask,
    chunks.map((ch) => ({ ...base, op: 'unbits' as const, keys: fin, begin: ch.begin, end: ch.end, hist: passHist })),
  );
  bitsView(keys).set(a);
  if (values && va) bitsView(values).set(va);
}
