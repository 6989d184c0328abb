/**
 * The CPU loop of transformIf (Thrust's transform_if): `y[i] = fn(x[i])` (an index lambda:
 * `fn(x[i], i)`; over `counting(n)`: `fn(i)`) for i < n where `pred` holds for the stencil's element
 * (or, without a stencil, for the input's element; over `counting(n)`, the index); y[i] is not
 * written elsewhere. A generated kernel (the `Kernel` shape of kernels.ts, compiled once per thread
 * through `compileOnce`), the functions spliced in as source where both have one (built-ins,
 * lambdas), else bound on the calling thread (then seq only).
 *
 * Zipped inputs: fn (and pred without a stencil) take one argument per array.
 *
 * The kernel's fields: x the input (a zero-length stand-in over counting; the list of arrays of a
 * zip), x2 and y both the output, f the stencil. The output travels as x2 too so that par staging
 * copies its current elements into the workers' shared stand-in before they run (a staged output
 * alone is not copied in), and copies them back unchanged where pred fails. seq: the loop on the
 * calling thread. par, where other memory-bound maps go to the pool (`plainMemoryBoundSeq`):
 * `runPar` (the calling thread on the caller's arrays, the workers on shared copies made chunk by
 * chunk), the stencil staged whole (a plain one copied) since the kernel reads it through `f`;
 * zips are staged whole (`stage` per array, the output copied in and back) and run by `runChunks`.
 */
import type { GpuFunction, HostArray, NumericType } from '@webdpl/core';
import { type CpuBackend, compileOnce } from '@webdpl/policies';
import type { Kernel } from './kernels';
import { checkFn, memoryBoundChunks, plainMemoryBoundSeq, runChunks, runPar, type Staged, stage } from './staging';
import { unreadInput } from './transform';

const JS_FROM_SOURCE = Symbol.for('webdpl.jsFromSource');

/** One transformIf call on host arrays. */
export interface TransformIfCall {
  /** The input (a list: a zip's arrays), or undefined for `counting(n)` (fn then takes the index). */
  readonly input: HostArray | readonly HostArray[] | undefined;
  /** The stencil pred tests; 'counting': the index; undefined: pred tests the input's element (or the index). */
  readonly stencil: HostArray | 'counting' | undefined;
  readonly output: HostArray;
  readonly n: number;
  readonly fn: GpuFunction;
  /** fn's argument types: the input's types, then u32 when its last argument is the index. */
  readonly fnTypes: readonly NumericType[];
  readonly pred: GpuFunction;
  /** pred's argument types (one per zipped array when it tests a zip's elements). */
  readonly predTypes: readonly NumericType[];
}

function sourceDefined(fn: GpuFunction): boolean {
  return fn.builtin || (fn as unknown as Record<symbol, unknown>)[JS_FROM_SOURCE] === true;
}

/** The kernel's loop (see the file comment). */
function loopSource(c: TransformIfCall): string {
  const zipped = Array.isArray(c.input);
  const names = !c.input ? [] : zipped ? (c.input as readonly HostArray[]).map((_, k) => `z${k}`) : ['x'];
  const loads = names.map((a) => `${a}[i]`);
  const test =
    c.stencil === undefined ? (loads.length ? loads.join(', ') : 'i') : c.stencil === 'counting' ? 'i' : 'f[i]';
  const args = [...loads, ...(c.fnTypes.length > names.length ? ['i'] : [])].join(', ');
  const value = c.fn.resultType(c.fnTypes) === 'bool' ? `(t(${args}) ? 1 : 0)` : `t(${args})`;
  const prologue = zipped ? `const ${names.map((a, k) => `${a} = x[${k}]`).join(', ')};` : '';
  return `function transform_if_kernel(x, x2, y, b, e, h, c, f) {
    ${prologue}
    for (let i = b; i < e; i++) if (p(${test})) y[i] = ${value};
    return 0;
  }`;
}

/** The kernel of `c` and, when both functions have a JS source, its self-contained source (par). */
function compiled(c: TransformIfCall, types: string): { kernel: Kernel; source: string | undefined } {
  const loop = loopSource(c);
  const tag = `/* webdpl transformIf ${types} */`;
  if (!sourceDefined(c.fn) || !sourceDefined(c.pred)) {
    const factory = compileOnce<(t: unknown, p: unknown) => Kernel>(
      `((t, p) => { 'use strict'; return ${loop}; }) ${tag}`,
    );
    return { kernel: factory(c.fn.js(c.fnTypes), c.pred.js(c.predTypes)), source: undefined };
  }
  const source = `(() => { 'use strict';
  const t = ${c.fn.jsSource(c.fnTypes)};
  const p = ${c.pred.jsSource(c.predTypes)};
  return ${loop};
})() ${tag}`;
  return { kernel: compileOnce<Kernel>(source), source };
}

function typeOf(a: HostArray): NumericType {
  return a instanceof Uint32Array ? 'u32' : a instanceof Int32Array ? 'i32' : 'f32';
}

/** Runs transformIf on host arrays (see the file comment); the output must be the input, the stencil or disjoint from them. */
export async function cpuTransformIf(backend: CpuBackend, c: TransformIfCall): Promise<void> {
  const { input, output, n } = c;
  checkFn(c.fn, c.fnTypes.length as 1 | 2, c.fnTypes, 'fn');
  if (c.predTypes.length === 1) checkFn(c.pred, 1, c.predTypes, 'pred');
  if (n === 0) return;
  const st = typeof c.stencil === 'object' ? c.stencil : undefined;
  const list = Array.isArray(input) ? (input as readonly HostArray[]) : undefined;
  const types = [
    list ? `zip(${list.map(typeOf).join(',')})` : input ? typeOf(input as HostArray) : 'counting',
    c.stencil === undefined ? '-' : st ? typeOf(st) : 'counting',
    typeOf(output),
    c.fnTypes.length > (list?.length ?? (input ? 1 : 0)) ? 'index' : '-',
  ].join(',');
  const { kernel, source } = compiled(c, types);
  const x = (input ?? output) as HostArray;
  const arrays = [...(list ?? [input as HostArray | undefined]), st, output];
  const chunks =
    source === undefined || plainMemoryBoundSeq(backend, n, arrays) ? undefined : memoryBoundChunks(backend, n);
  if (!chunks || backend.kind !== 'par') {
    kernel(x, output, output, 0, n, false, 0, st);
    return;
  }
  if (list) {
    // Whole staging: each array's shared stand-in (the output's copied in, and back by finish).
    const staged: Staged[] = [...list, ...(st ? [st] : [])].map((a) => stage(a, undefined, undefined, n));
    const out = stage(output, undefined, output, n);
    const xs = staged.slice(0, list.length).map((sa) => sa.x);
    const fs = st ? staged[list.length]?.x : undefined;
    await runChunks(backend, chunks, (ch) => ({
      s: source as string,
      x: xs as unknown as HostArray,
      x2: out.x,
      y: out.y,
      b: ch.begin,
      e: ch.end,
      h: false,
      c: 0,
      f: fs,
    }));
    out.finish();
    for (const sa of staged) sa.finish();
    return;
  }
  // The stencil whole in shared memory for the workers (a plain one copied).
  const ss = st ? stage(st, undefined, undefined, n) : undefined;
  const xs = (input as HostArray | undefined) ?? unreadInput();
  await runPar(
    backend,
    chunks,
    { x: xs, x2: output, y: output, n },
    (ch, sh) => ({
      s: source as string,
      x: sh.x,
      x2: sh.x2,
      y: sh.y,
      b: ch.begin,
      e: ch.end,
      h: false,
      c: 0,
      f: ss?.x,
    }),
    (ch) => kernel(x, output, output, ch.begin, ch.end, false, 0, st),
  );
  ss?.finish();
}
