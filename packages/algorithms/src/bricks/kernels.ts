/**
 * Loop kernels of the CPU engines, generated as JS source and compiled with `new Function`.
 *
 * Why generated: a loop shared by every operator (`acc = f(acc, x[i])` in one function) sees many
 * functions and array kinds at its call site and V8 stops inlining there (measured 5.6x slower than
 * a hand-written loop). Each kernel here is compiled from its own source text, tagged with its
 * element types and function identities, so V8 keeps separate type feedback for it (V8 shares
 * feedback between identical `new Function` sources) and inlines the operator: within a few percent
 * of a hand-written loop.
 *
 * One kernel is `(t, r) => (job) => result`: `t` is the transform or predicate (unary over `x`, or
 * binary over `x` and `x2`) and `r` the binary operator. The seq path binds `fn.js(argTypes)` on the
 * calling thread; the par path ships the kernel source with `fn.jsSource(argTypes)` spliced in, and
 * `runKernelBatch` (the pool task, also run by the calling thread) compiles it once per thread,
 * cached by source.
 */
import type { GpuFunction, HostArray, NumericType } from '@webdpl/core';

/** What a kernel does over `[b, e)`. */
export type KernelKind = 'map' | 'reduce' | 'inclusiveScan' | 'exclusiveScan' | 'findFirst';

/** A function and the argument types it is called with. */
export interface BoundFunction {
  readonly fn: GpuFunction;
  readonly argTypes: readonly NumericType[];
}

export interface KernelSpec {
  readonly kind: KernelKind;
  /** Transform or predicate over each element (of `x`, or of `x` and `x2`); none reads `x[i]`. */
  readonly t?: BoundFunction;
  /** The binary operator (reduce and scans). */
  readonly r?: BoundFunction;
  /** Number of input arrays (1 or 2; 2 needs a binary `t`). */
  readonly inputs: 1 | 2;
  /** Turn each transformed value into 1 or 0 by truthiness (predicates, counts). */
  readonly bit: boolean;
  /** Element types of x, x2 and y, for the source tag (undefined where absent). */
  readonly arrays: readonly (NumericType | undefined)[];
}

/**
 * One kernel call. Field names are short: the job is structured-cloned for every par chunk.
 * Results: map returns 0; reduce and scans return the last accumulator; findFirst the index or -1.
 */
export interface KernelJob {
  /** Kernel source (par only; the seq path passes ''). */
  readonly s: string;
  readonly x: HostArray;
  readonly x2?: HostArray | undefined;
  readonly y?: HostArray | undefined;
  /** Range [b, e). */
  readonly b: number;
  readonly e: number;
  /** Whether `c` is a carry-in / initial value (reduce, inclusive scan; exclusive scans always have one). */
  readonly h: boolean;
  readonly c: number;
  /** findFirst: a shared Int32Array[1] holding the least index found so far, for early exit. */
  readonly f?: Int32Array | undefined;
}

export type Kernel = (job: KernelJob) => number;

function valueExpr(spec: KernelSpec, i: string): string {
  let v = spec.t ? (spec.inputs === 2 ? `t(x[${i}], x2[${i}])` : `t(x[${i}])`) : `x[${i}]`;
  if (spec.bit) v = `(${v} ? 1 : 0)`;
  return v;
}

/** The factory source `(t, r) => (j) => { ... }` of a kernel. */
export function factorySource(spec: KernelSpec): string {
  const v = (i: string) => valueExpr(spec, i);
  let body: string;
  switch (spec.kind) {
    case 'map':
      body = `for (let i = b; i < e; i++) y[i] = ${v('i')};
    return 0;`;
      break;
    case 'reduce':
      body = `let i = b, acc;
    if (j.h) acc = j.c; else { acc = ${v('b')}; i++; }
    for (; i < e; i++) acc = r(acc, ${v('i')});
    return acc;`;
      break;
    case 'inclusiveScan':
      body = `let i = b, acc;
    if (j.h) acc = j.c; else { acc = ${v('b')}; y[b] = acc; i++; }
    for (; i < e; i++) { acc = r(acc, ${v('i')}); y[i] = acc; }
    return acc;`;
      break;
    case 'exclusiveScan':
      body = `let acc = j.c;
    for (let i = b; i < e; i++) { const v = ${v('i')}; y[i] = acc; acc = r(acc, v); }
    return acc;`;
      break;
    case 'findFirst':
      body = `const f = j.f;
    for (let s = b; s < e; s += 8192) {
      if (f !== undefined && Atomics.load(f, 0) < b) return -1;
      const m = Math.min(s + 8192, e);
      for (let i = s; i < m; i++) {
        if (${v('i')}) {
          if (f !== undefined) {
            for (;;) {
              const cur = Atomics.load(f, 0);
              if (cur <= i || Atomics.compareExchange(f, 0, cur, i) === cur) break;
            }
          }
          return i;
        }
      }
    }
    return -1;`;
      break;
  }
  return `(t, r) => (j) => {
    const x = j.x, x2 = j.x2, y = j.y, b = j.b, e = j.e;
    ${body}
  }`;
}

function tag(spec: KernelSpec, ids: string): string {
  const fnTypes = (f: BoundFunction | undefined) => (f ? f.argTypes.join(',') : '-');
  return `/* webdpl ${spec.kind} x:${spec.arrays.map((a) => a ?? '-').join(',')} t:${fnTypes(spec.t)} r:${fnTypes(spec.r)} bit:${spec.bit}${ids} */`;
}

function specKey(spec: KernelSpec): string {
  return `${spec.kind}|${spec.inputs}|${spec.bit}|${spec.arrays.join(',')}|${spec.t?.argTypes.join(',')}|${spec.r?.argTypes.join(',')}`;
}

const fnIds = new WeakMap<GpuFunction, number>();
let nextFnId = 1;

function fnId(fn: GpuFunction | undefined): number {
  if (!fn) return 0;
  let id = fnIds.get(fn);
  if (id === undefined) {
    id = nextFnId++;
    fnIds.set(fn, id);
  }
  return id;
}

/** Caches keyed by the spec's first function object, so kernels of dropped lambdas are collected. */
const seqCache = new WeakMap<GpuFunction, Map<string, Kernel>>();
const noFnSeq = new Map<string, Kernel>();
const parCache = new WeakMap<GpuFunction, Map<string, string>>();
const noFnPar = new Map<string, string>();

function cacheFor<V>(
  weak: WeakMap<GpuFunction, Map<string, V>>,
  none: Map<string, V>,
  spec: KernelSpec,
): Map<string, V> {
  const owner = spec.t?.fn ?? spec.r?.fn;
  if (!owner) return none;
  let m = weak.get(owner);
  if (!m) {
    m = new Map();
    weak.set(owner, m);
  }
  return m;
}

/**
 * The kernel for the calling thread, with `fn.js(argTypes)` bound. Compiled once per spec and
 * function objects (a few ms the first time), then cached.
 */
export function seqKernel(spec: KernelSpec): Kernel {
  const key = `${specKey(spec)}|${fnId(spec.t?.fn)}|${fnId(spec.r?.fn)}`;
  const cache = cacheFor(seqCache, noFnSeq, spec);
  let k = cache.get(key);
  if (!k) {
    const ids = ` #${fnId(spec.t?.fn)} #${fnId(spec.r?.fn)}`;
    const factory = new Function(`return (${factorySource(spec)}) ${tag(spec, ids)}`)() as (
      t: unknown,
      r: unknown,
    ) => Kernel;
    k = factory(spec.t?.fn.js(spec.t.argTypes), spec.r?.fn.js(spec.r.argTypes));
    cache.set(key, k);
  }
  return k;
}

/** The self-contained kernel source for workers: the factory applied to the functions' JS sources. */
export function parKernelSource(spec: KernelSpec): string {
  const key = `${specKey(spec)}|${fnId(spec.t?.fn)}|${fnId(spec.r?.fn)}`;
  const cache = cacheFor(parCache, noFnPar, spec);
  let s = cache.get(key);
  if (s === undefined) {
    const t = spec.t ? spec.t.fn.jsSource(spec.t.argTypes) : 'undefined';
    const r = spec.r ? spec.r.fn.jsSource(spec.r.argTypes) : 'undefined';
    s = `(${factorySource(spec)})(\n${t},\n${r}\n) ${tag(spec, '')}`;
    cache.set(key, s);
  }
  return s;
}

/**
 * Chunk jobs shared by the calling thread and the workers of one par step. Each thread claims the
 * next chunk with `Atomics.add(ctl, 0, 1)`, runs it, stores its result in `out[chunk]` and counts it
 * in `ctl[1]` (with a notify), until every chunk is claimed.
 */
export interface KernelBatch {
  /**
   * Over a SharedArrayBuffer. Shared queue: [next chunk to claim, chunks completed]. Split queue
   * (`split`): [front | back << 16, chunks completed by workers, lowest staged chunk, generation].
   */
  readonly ctl: Int32Array;
  /** Result of each chunk, over a SharedArrayBuffer (f64 holds every u32/i32/f32/index exactly). */
  readonly out: Float64Array;
  readonly jobs: readonly KernelJob[];
  /**
   * Split queue (see `runSplit` in staging.ts): the calling thread works through chunks from the
   * front on the caller's own arrays, workers take chunks from the back once the calling thread has
   * staged their inputs (chunks at or above `ctl[2]`); a claim moves `front` or `back` with one
   * compareExchange on `ctl[0]`. Workers wait on the generation word `ctl[3]`, which the calling
   * thread bumps (and notifies) whenever it stages a chunk or claims one.
   */
  readonly split?: boolean;
  /** Split queue: set to 1 per chunk once a worker has stored its result (over a SharedArrayBuffer). */
  readonly fin?: Int32Array;
}

/**
 * The pool task of every CPU engine (and what the calling thread runs too): claims chunks of `batch`
 * until none is left; compiles each kernel source once per thread (cached by source; the cache is
 * cleared past 256 kernels). Returns the number of chunks this thread ran. Self-contained: it is
 * shipped to workers as source.
 */
export function runKernelBatch(batch: KernelBatch): number {
  const g = globalThis as unknown as { __webdplKernels?: Map<string, (j: KernelJob) => number> };
  let cache = g.__webdplKernels;
  if (cache === undefined) {
    cache = new Map();
    g.__webdplKernels = cache;
  }
  const { ctl, out, jobs } = batch;
  let ran = 0;
  for (;;) {
    let c: number;
    if (batch.split) {
      const gen = Atomics.load(ctl, 3);
      const fb = Atomics.load(ctl, 0);
      const front = fb & 0xffff;
      const back = fb >>> 16;
      if (back <= front) return ran;
      if (back - 1 < Atomics.load(ctl, 2)) {
        // Not staged yet: sleep until the calling thread stages or claims a chunk (50 ms at most).
        Atomics.wait(ctl, 3, gen, 50);
        continue;
      }
      if (Atomics.compareExchange(ctl, 0, fb, front | ((back - 1) << 16)) !== fb) continue;
      c = back - 1;
    } else {
      c = Atomics.add(ctl, 0, 1);
      if (c >= jobs.length) return ran;
    }
    const job = jobs[c] as KernelJob;
    let kernel = cache.get(job.s);
    if (kernel === undefined) {
      if (cache.size >= 256) cache.clear();
      kernel = new Function(`return ${job.s};`)() as (j: KernelJob) => number;
      cache.set(job.s, kernel);
    }
    out[c] = kernel(job);
    if (batch.fin !== undefined) Atomics.store(batch.fin, c, 1);
    Atomics.add(ctl, 1, 1);
    Atomics.notify(ctl, 1);
    ran++;
  }
}
