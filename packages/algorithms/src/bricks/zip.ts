/**
 * CPU loops over zipped arrays (`zip(a, b, ...)`): a map writing 1 to 4 outputs from 1 to 4 inputs,
 * and a transform-reduce whose accumulator is a tuple of 1 to 4 registers. Generated kernels (the
 * `Kernel` shape of kernels.ts, compiled once per thread through `compileOnce`), with each element of
 * a tuple result computed by its own scalar function (core's tuple lambdas), spliced in as source
 * where the function is source-defined (lambdas, built-ins) so the kernel is self-contained and V8
 * inlines the functions. The kernel's `x` and `y` are lists of arrays here, `f` the chunk results of
 * a reduction (k * width + component) and `c` the chunk's index.
 *
 * seq: the loop on the calling thread. par: chunks on the pool over arrays in shared memory (arrays
 * from allocShared as they are, plain ones copied into shared scratch and outputs back), only where
 * other memory-bound par steps would go to the pool too (`plainMemoryBoundSeq`) and every function
 * has a JS source; else the seq loop.
 * Reductions fold each chunk in order, then the chunks in order from `init`: f32 sums accumulate in
 * f32 (no wide or blocked summation as in the scalar reduce bricks).
 */
import type { GpuFunction, HostArray, NumericType } from '@webdpl/core';
import { type CpuBackend, compileOnce, isShared, planParallel } from '@webdpl/policies';
import type { Kernel } from './kernels';
import { acquireScratch, releaseScratch } from './scratch';
import { plainMemoryBoundSeq, runChunks } from './staging';

const JS_FROM_SOURCE = Symbol.for('webdpl.jsFromSource');

function typeOf(a: HostArray): NumericType {
  return a instanceof Uint32Array ? 'u32' : a instanceof Int32Array ? 'i32' : 'f32';
}

/** Functions bound into a zip kernel: their JS sources, or their objects when one has none. */
function functionsOf(fns: readonly { fn: GpuFunction; argTypes: readonly NumericType[] }[]): {
  decls: string;
  names: string;
  bound: boolean;
} {
  const bound = fns.some(
    ({ fn }) => !fn.builtin && (fn as unknown as Record<symbol, unknown>)[JS_FROM_SOURCE] !== true,
  );
  const names = fns.map(({ fn, argTypes }) => `${fn.name}(${argTypes.join(',')})`).join(' ');
  if (bound) return { decls: '', names, bound };
  const decls = fns.map(({ fn, argTypes }, k) => `const f${k} = ${fn.jsSource(argTypes)};`).join('\n');
  return { decls, names, bound };
}

/** Compiles a zip kernel body over functions f0, f1, ...: a source for workers when every function has one. */
function compiled(
  kind: string,
  fns: readonly { fn: GpuFunction; argTypes: readonly NumericType[] }[],
  tag: string,
  body: string,
): { kernel: Kernel; source: string | undefined } {
  const { decls, names, bound } = functionsOf(fns);
  const k = `function zip_${kind}(x, x2, y, b, e, h, c, f) {\n${body}\n}`;
  const label = `/* webdpl zip ${kind} ${tag} ${names} */`;
  if (bound) {
    const params = fns.map((_, i) => `f${i}`).join(', ');
    const factory = compileOnce<(...f: unknown[]) => Kernel>(
      `((${params}) => { 'use strict'; return ${k}; }) ${label}`,
    );
    return { kernel: factory(...fns.map(({ fn, argTypes }) => fn.js(argTypes))), source: undefined };
  }
  const source = `(() => { 'use strict';\n${decls}\nreturn ${k};\n})() ${label}`;
  return { kernel: compileOnce<Kernel>(source), source };
}

/** `e` coerced to `type` (keeps V8's representation of accumulators unboxed). */
function coerced(type: NumericType, e: string): string {
  return type === 'u32' ? `((${e}) >>> 0)` : type === 'i32' ? `((${e}) | 0)` : `(+(${e}))`;
}

/** Loads of the inputs at `i` and the transform parts' values `v0..`, as statements. */
function values(inputs: number, parts: readonly GpuFunction[], bools: readonly boolean[], indexed: boolean, i: string) {
  const args = [...Array.from({ length: inputs }, (_, k) => `a${k}`), ...(indexed ? [i] : [])].join(', ');
  const loads = Array.from({ length: inputs }, (_, k) => `const a${k} = i${k}[${i}];`).join(' ');
  const vals = parts.map((_, k) => `const v${k} = ${bools[k] ? '+' : ''}f${k}(${args});`).join(' ');
  return `${loads} ${vals}`;
}

const prologue = (inputs: number, outputs: number) =>
  [
    ...Array.from({ length: inputs }, (_, k) => `const i${k} = x[${k}];`),
    ...Array.from({ length: outputs }, (_, k) => `const o${k} = y[${k}];`),
  ].join(' ');

/** The caller's arrays in shared memory for the pool, with a function copying outputs back. */
function share(inputs: readonly HostArray[], outputs: readonly HostArray[]) {
  const scratch: SharedArrayBuffer[] = [];
  const stand = (a: HostArray, copy: boolean): HostArray => {
    if (isShared(a)) return a;
    const buf = acquireScratch(Math.max(4, a.length * 4));
    scratch.push(buf);
    const v = new (a.constructor as Uint32ArrayConstructor)(buf, 0, a.length);
    if (copy) v.set(a);
    return v;
  };
  const xs = inputs.map((a) => stand(a, true));
  const ys = outputs.map((a) => stand(a, false));
  return {
    xs,
    ys,
    /** Copies the first `n` elements of each output's stand-in back. */
    finish: (n: number) => {
      outputs.forEach((o, k) => {
        const s = ys[k] as HostArray;
        if (s !== o && n > 0) o.set(s.subarray(0, n));
      });
      for (const buf of scratch) releaseScratch(buf);
    },
  };
}

/** Chunks for the pool, or undefined when the call runs seq (see the file comment). */
function poolChunks(backend: CpuBackend, n: number, arrays: readonly HostArray[], source: string | undefined) {
  if (backend.kind !== 'par' || source === undefined || plainMemoryBoundSeq(backend, n, arrays)) return undefined;
  const chunks = planParallel(backend, n);
  return chunks && chunks.length > 1 ? chunks : undefined;
}

/**
 * `outputs[k][i] = parts[k](inputs[0][i], ..., [i])` for i < n: every part computed before any
 * output is stored, so an output may be one of the inputs (in place). Bool results store 1/0.
 * @param argTypes the parts' argument types (the inputs' types, then u32 for `indexed`)
 */
export async function cpuZipTransform(
  backend: CpuBackend,
  inputs: readonly HostArray[],
  outputs: readonly HostArray[],
  parts: readonly GpuFunction[],
  argTypes: readonly NumericType[],
  indexed: boolean,
  n: number,
): Promise<void> {
  if (n === 0) return;
  const bools = parts.map((p) => p.resultType(argTypes) === 'bool');
  const stores = parts.map((_, k) => `o${k}[i] = v${k};`).join(' ');
  const body = `  ${prologue(inputs.length, outputs.length)}
  for (let i = b; i < e; i++) { ${values(inputs.length, parts, bools, indexed, 'i')} ${stores} }
  return 0;`;
  const tag = `${inputs.map(typeOf).join(',')}${indexed ? ',index' : ''} -> ${outputs.map(typeOf).join(',')}`;
  const { kernel, source } = compiled(
    'map',
    parts.map((fn) => ({ fn, argTypes })),
    tag,
    body,
  );
  const xs = inputs as unknown as HostArray;
  const ys = outputs as unknown as HostArray;
  const chunks = poolChunks(backend, n, [...inputs, ...outputs], source);
  if (!chunks || backend.kind !== 'par') {
    kernel(xs, undefined, ys, 0, n, false, 0, undefined);
    return;
  }
  const sh = share(inputs, outputs);
  try {
    await runChunks(backend, chunks, (c) => ({
      s: source as string,
      x: sh.xs as unknown as HostArray,
      y: sh.ys as unknown as HostArray,
      b: c.begin,
      e: c.end,
      h: false,
      c: 0,
    }));
  } finally {
    sh.finish(n);
  }
}

/** A tuple reduction: the transform's parts, the reduce's parts and the accumulator's types. */
export interface ZipReduce {
  /** One function per accumulator element, over the inputs' elements (and the index when `indexed`). */
  readonly transform: readonly GpuFunction[];
  readonly transformTypes: readonly NumericType[];
  readonly indexed: boolean;
  /** One function per accumulator element, over (acc0, .., accK-1, v0, .., vK-1). */
  readonly reduce: readonly GpuFunction[];
  /** Types of the accumulator's elements (a bool transform result counts as u32). */
  readonly acc: readonly NumericType[];
}

/** Folds `init` and the tuples `values` (in order) with the reduction's parts. */
export function foldTuples(z: ZipReduce, init: readonly number[], values: readonly (readonly number[])[]): number[] {
  const types = [...z.acc, ...z.acc];
  const fns = z.reduce.map((r) => r.js(types) as (...a: number[]) => number);
  let acc = [...init];
  for (const v of values) acc = fns.map((f) => f(...acc, ...v));
  return acc;
}

/**
 * Folds the reduction `z` over the zipped `inputs` (n >= 0 elements) from `init` (one value per
 * accumulator element, already of the accumulator's types), in order within chunks and across them.
 */
export async function cpuZipReduce(
  backend: CpuBackend,
  inputs: readonly HostArray[],
  n: number,
  z: ZipReduce,
  init: readonly number[],
): Promise<number[]> {
  if (n === 0) return [...init];
  const w = z.acc.length;
  const bools = z.transform.map((p) => p.resultType(z.transformTypes) === 'bool');
  const fns = [
    ...z.transform.map((fn) => ({ fn, argTypes: z.transformTypes })),
    ...z.reduce.map((fn) => ({ fn, argTypes: [...z.acc, ...z.acc] })),
  ];
  // The transform's parts are f0..f(w-1), the reduction's fw..f(2w-1).
  const ks = z.acc.map((_, k) => k);
  const accs = ks.map((k) => `s${k}`).join(', ');
  const vals = ks.map((k) => `v${k}`).join(', ');
  const body = `  ${prologue(inputs.length, 0)}
  let ${ks.map((k) => `s${k} = 0`).join(', ')};
  { ${values(inputs.length, z.transform, bools, z.indexed, 'b')} ${ks.map((k) => `s${k} = ${coerced(z.acc[k] as NumericType, `v${k}`)};`).join(' ')} }
  for (let i = b + 1; i < e; i++) {
    ${values(inputs.length, z.transform, bools, z.indexed, 'i')}
    ${ks.map((k) => `const n${k} = f${w + k}(${accs}, ${vals});`).join(' ')}
    ${ks.map((k) => `s${k} = ${coerced(z.acc[k] as NumericType, `n${k}`)};`).join(' ')}
  }
  ${ks.map((k) => `f[c * ${w} + ${k}] = s${k};`).join(' ')}
  return 0;`;
  const tag = `${inputs.map(typeOf).join(',')}${z.indexed ? ',index' : ''} -> ${z.acc.join(',')}`;
  const { kernel, source } = compiled('reduce', fns, tag, body);
  const chunks = poolChunks(backend, n, inputs, source);
  if (!chunks || backend.kind !== 'par') {
    const out = new Float64Array(w);
    kernel(inputs as unknown as HostArray, undefined, undefined, 0, n, false, 0, out as unknown as HostArray);
    return foldTuples(z, init, [Array.from(out)]);
  }
  const out = new Float64Array(new SharedArrayBuffer(8 * w * chunks.length));
  const sh = share(inputs, []);
  try {
    await runChunks(backend, chunks, (c, k) => ({
      s: source as string,
      x: sh.xs as unknown as HostArray,
      b: c.begin,
      e: c.end,
      h: false,
      c: k,
      f: out as unknown as HostArray,
    }));
  } finally {
    sh.finish(0);
  }
  const partials = chunks.map((_, k) => Array.from(out.subarray(k * w, (k + 1) * w)));
  return foldTuples(z, init, partials);
}

/**
 * Stream compaction of zipped arrays (copyIf / removeIf over a zip): the elements i whose
 * `pred(inputs[0][i], .., [i])` is truthy (falsy with `negate`) go, in order and together, to
 * `outputs[k][0, count)`; returns count. `outputs` may be `inputs` themselves (removeIf in place:
 * seq, since chunks would overwrite each other's unread elements). When an output is shorter than n
 * the kept elements are counted first and `tooShort(count)` is thrown before anything is written.
 * par: count per chunk, then each chunk writes at its offset (outputs distinct from the inputs).
 */
export async function cpuZipCompact(
  backend: CpuBackend,
  inputs: readonly HostArray[],
  outputs: readonly HostArray[],
  pred: GpuFunction,
  argTypes: readonly NumericType[],
  indexed: boolean,
  negate: boolean,
  n: number,
  tooShort: (count: number) => Error,
): Promise<number> {
  if (n === 0) return 0;
  const args = [...inputs.map((_, k) => `a${k}`), ...(indexed ? ['i'] : [])].join(', ');
  const loads = inputs.map((_, k) => `const a${k} = i${k}[i];`).join(' ');
  const test = `${negate ? '!' : ''}f0(${args})`;
  const tag = `${inputs.map(typeOf).join(',')}${indexed ? ',index' : ''}${negate ? ' not' : ''}`;
  const fns = [{ fn: pred, argTypes }];
  const count = compiled(
    'count',
    fns,
    tag,
    `  ${prologue(inputs.length, 0)}
  let w = 0;
  for (let i = b; i < e; i++) { ${loads} if (${test}) w++; }
  return w;`,
  );
  const write = compiled(
    'compact',
    fns,
    tag,
    `  ${prologue(inputs.length, outputs.length)}
  let w = c;
  for (let i = b; i < e; i++) { ${loads} if (${test}) { ${outputs.map((_, k) => `o${k}[w] = a${k};`).join(' ')} w++; } }
  return w - c;`,
  );
  const xs = inputs as unknown as HostArray;
  const ys = outputs as unknown as HostArray;
  const inPlace = outputs[0] === inputs[0];
  const short = Math.min(...outputs.map((o) => o.length)) < n;
  const chunks = inPlace ? undefined : poolChunks(backend, n, [...inputs, ...outputs], write.source);
  if (!chunks || backend.kind !== 'par') {
    if (short) {
      const c = count.kernel(xs, undefined, undefined, 0, n, false, 0, undefined);
      if (outputs.some((o) => o.length < c)) throw tooShort(c);
    }
    return write.kernel(xs, undefined, ys, 0, n, false, 0, undefined);
  }
  const sh = share(inputs, outputs);
  try {
    const job = (s: string | undefined, c: { begin: number; end: number }, at: number, y?: HostArray) => ({
      s: s as string,
      x: sh.xs as unknown as HostArray,
      y,
      b: c.begin,
      e: c.end,
      h: false,
      c: at,
    });
    const counts = await runChunks(backend, chunks, (c) => job(count.source, c, 0));
    const offsets: number[] = [];
    let total = 0;
    for (const k of counts) {
      offsets.push(total);
      total += k;
    }
    if (outputs.some((o) => o.length < total)) throw tooShort(total);
    await runChunks(backend, chunks, (c, k) =>
      job(write.source, c, offsets[k] as number, sh.ys as unknown as HostArray),
    );
    sh.finish(total);
    return total;
  } catch (e) {
    sh.finish(0);
    throw e;
  }
}
