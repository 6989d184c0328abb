/**
 * The CPU side of compaction (copyIf, removeIf, partition, unique).
 *
 * One generated loop per (predicate source, element type, mode), compiled once per thread
 * (`compileOnce` here, the pool's shared cache in workers) so the predicate is inlined: the loop
 * writes the kept elements of x[b, e) to y[b, ...) and (partition) the rejected ones to r[b, ...),
 * and returns how many it kept.
 *
 * seq: that loop over [0, n) on the calling thread, straight into the destination (in place is safe:
 * the write position never passes the read position; rejected elements of a partition go through a
 * plain temporary). No SharedArrayBuffer.
 * par: ONE pass over the input in chunks (`runPar`: with plain arrays the calling thread compacts its
 * chunks from the caller's array while the workers take staged copies of the others), each chunk
 * compacting into its own range of reusable shared scratch; then the calling thread moves each
 * chunk's kept run (and rejected run) to its final place with `set` (a memcpy). So par reads the
 * input once, like seq, and adds ~1 copy of the kept elements, instead of counting and scattering in
 * two passes over shared copies. Below the parallel threshold, or without shared memory, par runs seq.
 * Predicates follow JS truthiness (a number is kept when non-zero and not NaN).
 */
import { allocHost, type GpuFunction, type HostArray, type NumericType } from '@webdpl/core';
import { type CpuBackend, sharedMemoryAvailable } from '@webdpl/policies';
import type { Kernel, KernelJob } from './kernels';
import { acquireScratch, releaseScratch } from './scratch';
import { memoryBoundChunks, runPar } from './staging';
import { unreadInput } from './transform';
import { warmArray, warmedKernel, warmedSource } from './warm';

/** Which elements are kept. */
export type CpuKeep =
  | { readonly kind: 'predicate'; readonly fn: GpuFunction; readonly type: NumericType }
  | { readonly kind: 'adjacent-different' }
  /** unique with an equality: keep x[i] when i == 0 or `!fn(x[i - 1], x[i])` (JS truthiness). */
  | { readonly kind: 'adjacent-equal'; readonly fn: GpuFunction; readonly type: NumericType };

/** Where rejected elements go: nowhere, or after the kept ones in input order (stable partition). */
export type CpuCompactMode = 'compact' | 'partition';

/**
 * The source of a compaction kernel (a `Kernel` of kernels.ts) returning how many it kept: x[b, e)
 * -> y from b (kept) and x2 from b (rejected, partition). Adjacent-different (no `pred`) keeps x[i]
 * when it differs from x[i - 1], and with `equal` (then `pred` is a binary equality) when
 * `!pred(x[i - 1], x[i])`; a chunk after the first gets x[b - 1] as `c` with `h` set (workers may
 * not see it: only their own chunks are staged). With `stencil` (its element type), x2 is the stencil
 * and the predicate is applied to x2[i] instead of x[i] ('compact' only); a 'counting' stencil
 * (counting(n)) applies it to the index i. With `counting`, the
 * elements are the indices i themselves (counting(n); x is not read).
 */
export function compactSource(
  pred: string | undefined,
  type: NumericType,
  mode: CpuCompactMode,
  stencil?: NumericType | 'counting',
  counting = false,
  equal = false,
): string {
  if (stencil !== undefined && (pred === undefined || equal || mode !== 'compact')) {
    throw new Error('compaction: a stencil needs a predicate and the compact mode');
  }
  // unique: with the neighbours' equality `pred`, or JS !==.
  const adjacent = pred === undefined || equal;
  const reject = mode === 'partition' ? 'else r[q++] = v;' : '';
  const test =
    pred === undefined
      ? 'v !== prev'
      : equal
        ? '!f(prev, v)'
        : stencil === 'counting'
          ? 'f(i)'
          : stencil !== undefined
            ? 'f(r[i])'
            : 'f(v)';
  const track = adjacent ? 'prev = v;' : '';
  const kind =
    pred === undefined ? 'unique' : equal ? 'unique_eq' : stencil === undefined ? 'pred' : `stencil_${stencil}`;
  return `(function () {
  'use strict';
  const f = ${pred ?? 'undefined'};
  return function compact_${type}_${mode}_${kind}(x, r, y, b0, e, h, c) {
    let b = b0, k = b0, q = b0;
    let prev = +c;
    if (${adjacent} && b < e && !h) {
      prev = x[b];
      y[k++] = prev;
      b++;
    }
    for (let i = b; i < e; i++) {
      const v = ${counting ? 'i' : 'x[i]'};
      if (${test}) y[k++] = v;
      ${reject}
      ${track}
    }
    return k - b0;
  };
})() /* webdpl compaction ${type}${stencil === undefined ? '' : ` stencil ${stencil}`}${counting ? ' counting' : ''} */`;
}

/**
 * `compactSource`'s kernel, warming itself where it is compiled (`warmedSource`): spread values and
 * values in runs of 1-2 equal ones (both sides of a predicate, of an equality), every tail length,
 * both `h` branches; a partition's rejected output, a stencil array, or none.
 */
export function warmCompactSource(...args: Parameters<typeof compactSource>): string {
  const [, type, mode, stencil] = args;
  const kernel = compactSource(...args);
  const r =
    mode === 'partition'
      ? warmArray(type)
      : stencil === undefined || stencil === 'counting'
        ? 'undefined'
        : warmArray(stencil);
  const runs = warmArray(type, '(i) => Math.imul((i * 3) >> 2, 0x9e3779b9)');
  const calls = `const wa = [${warmArray(type)}, ${runs}], wr = ${r}, wy = ${warmArray(type)};
  for (let q = 0; q < 32; q++) for (const w of wa) k(w, wr, wy, q & 3, 64 - (q & 7), (q & 1) === 1, q & 2 ? 0.5 : 7);`;
  return warmedSource(kernel, calls, '');
}

function predSource(keep: CpuKeep): string | undefined {
  if (keep.kind === 'adjacent-equal') return keep.fn.jsSource([keep.type, keep.type]);
  return keep.kind === 'predicate' ? keep.fn.jsSource([keep.type]) : undefined;
}

function typeOf(a: HostArray): NumericType {
  return a instanceof Uint32Array ? 'u32' : a instanceof Int32Array ? 'i32' : 'f32';
}

/** A view of `n` elements of `type` over shared scratch. */
export function sharedView(type: NumericType, buf: SharedArrayBuffer, n: number): HostArray {
  return type === 'u32'
    ? new Uint32Array(buf, 0, n)
    : type === 'i32'
      ? new Int32Array(buf, 0, n)
      : new Float32Array(buf, 0, n);
}

function seqCompact(
  kernel: Kernel,
  src: HostArray,
  n: number,
  dst: HostArray,
  mode: CpuCompactMode,
  stencil: HostArray | undefined,
): number {
  const r = mode === 'partition' ? (allocHost(typeOf(src), n) as HostArray) : undefined;
  const kept = kernel(src, r ?? stencil, dst, 0, n, false, 0, undefined);
  if (r) dst.set(r.subarray(0, n - kept), kept);
  return kept;
}

/**
 * Writes the kept elements of `src` in order to `dst[0, count)` (partition: then the rejected ones in
 * order) and returns count. `dst` may be `src` (in place) and needs n elements; only `dst[0, count)`
 * (partition: all n) is written. With a `stencil` (n elements; 'compact' only) element i is kept
 * when the predicate holds for stencil[i] (the predicate's type is then the stencil's; 'counting':
 * for the index i, as u32). A number
 * `source` n stands for counting(n): the elements are the u32 indices 0..n-1 (nothing allocated).
 */
export async function cpuCompact(
  backend: CpuBackend,
  source: HostArray | number,
  dst: HostArray,
  keep: CpuKeep,
  mode: CpuCompactMode,
  stencilArg?: HostArray | 'counting',
): Promise<number> {
  const counting = typeof source === 'number';
  // The stencil array the kernels read (none for a counting stencil: they use the index).
  const stencil = stencilArg === 'counting' ? undefined : stencilArg;
  const stencilType = stencilArg === 'counting' ? 'counting' : stencil ? typeOf(stencil) : undefined;
  const n = counting ? source : source.length;
  // What the kernels get as x: counting kernels never read it.
  const src = counting ? dst : source;
  const type = counting ? 'u32' : typeOf(source);
  let pred: string | undefined;
  try {
    pred = predSource(keep);
  } catch {
    // A predicate without a JS source (host-only): the calling thread runs its function.
    return seqCompactFn(keep, counting ? undefined : src, n, dst, mode, stencilArg);
  }
  const equal = keep.kind === 'adjacent-equal';
  const { kernel, source: kernelSource } = warmedKernel<Kernel>(
    `compaction ${type} ${mode} ${stencilType} ${counting} ${equal} ${pred}`,
    () => warmCompactSource(pred, type, mode, stencilType, counting, equal),
  );
  const chunks = memoryBoundChunks(backend, n);
  if (!chunks || backend.kind !== 'par' || !sharedMemoryAvailable()) {
    return seqCompact(kernel, src, n, dst, mode, stencil);
  }
  const ybuf = acquireScratch(n * 4);
  const rbuf = mode === 'partition' ? acquireScratch(n * 4) : undefined;
  const y = sharedView(type, ybuf, n);
  const r = rbuf ? sharedView(type, rbuf, n) : undefined;
  const prevOf = (b: number) => (b > 0 ? (src[b - 1] as number) : 0);
  const x = counting ? unreadInput() : src;
  // The stencil travels as x2 (staged like the input); a partition's rejected elements go to `r`.
  const counts = await runPar(
    backend,
    chunks,
    { x, x2: r ?? stencil, y, n },
    (c, sh): KernelJob => ({
      s: kernelSource,
      x: sh.x,
      x2: stencil ? sh.x2 : r,
      y,
      b: c.begin,
      e: c.end,
      h: c.begin > 0,
      c: prevOf(c.begin),
    }),
    (c) => kernel(x, r ?? stencil, y, c.begin, c.end, c.begin > 0, prevOf(c.begin), undefined),
  );
  let o = 0;
  for (let i = 0; i < chunks.length; i++) {
    const b = (chunks[i] as { begin: number }).begin;
    const k = counts[i] as number;
    dst.set(y.subarray(b, b + k), o);
    o += k;
  }
  if (r) {
    let q = o;
    for (let i = 0; i < chunks.length; i++) {
      const { begin: b, end: e } = chunks[i] as { begin: number; end: number };
      const rej = e - b - (counts[i] as number);
      dst.set(r.subarray(b, b + rej), q);
      q += rej;
    }
  }
  releaseScratch(ybuf);
  if (rbuf) releaseScratch(rbuf);
  return o;
}

/** The calling thread's loop with the predicate's function (no JS source to generate a kernel from). */
function seqCompactFn(
  keep: CpuKeep,
  src: HostArray | undefined,
  n: number,
  dst: HostArray,
  mode: CpuCompactMode,
  stencil: HostArray | 'counting' | undefined,
): number {
  const f = keep.kind === 'predicate' ? (keep.fn.js([keep.type]) as (x: number) => unknown) : undefined;
  const eq =
    keep.kind === 'adjacent-equal'
      ? (keep.fn.js([keep.type, keep.type]) as (a: number, b: number) => unknown)
      : undefined;
  const r = mode === 'partition' ? (allocHost(src ? typeOf(src) : 'u32', n) as HostArray) : undefined;
  let k = 0;
  let q = 0;
  let prev = 0;
  for (let i = 0; i < n; i++) {
    const v = src ? (src[i] as number) : i;
    // (src[i - 1] may already be overwritten when compacting in place: keep the previous in a local.)
    const s = stencil === undefined ? v : stencil === 'counting' ? i : (stencil[i] as number);
    if (f ? f(s) : i === 0 || (eq ? !eq(prev, v) : v !== prev)) dst[k++] = v;
    else if (r) r[q++] = v;
    prev = v;
  }
  if (r) dst.set(r.subarray(0, q), k);
  return k;
}

/** A host array of `type` and `n` elements (for results computed before they are checked). */
export function scratchHost(type: NumericType, n: number): HostArray {
  return allocHost(type, n) as HostArray;
}
