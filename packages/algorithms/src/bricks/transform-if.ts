/**
 * The CPU loop of transformIf (Thrust's transform_if): `y[i] = fn(x[i])` (an index lambda:
 * `fn(x[i], i)`; over `counting(n)`: `fn(i)`) for i < n where `pred` holds for the stencil's element
 * (or, without a stencil, for the input's element; over `counting(n)`, the index); y[i] is not
 * written elsewhere. A generated kernel (the `Kernel` shape of kernels.ts, compiled once per thread
 * through `compileOnce`), the functions spliced in as source where both have one (built-ins,
 * lambdas), else bound on the calling thread (then seq only).
 *
 * The kernel's fields: x the input (a zero-length stand-in over counting), x2 and y both the output,
 * f the stencil. The output travels as x2 too so that par staging copies its current elements into
 * the workers' shared stand-in before they run (a staged output alone is not copied in), and copies
 * them back unchanged where pred fails. seq: the loop on the calling thread. par: `runPar` (the
 * calling thread on the caller's arrays, the workers on shared copies made chunk by chunk) where
 * other memory-bound maps go to the pool (`plainMemoryBoundSeq`); a plain stencil is then copied into
 * shared scratch whole, since the kernel reads it through `f`.
 */
import type { GpuFunction, HostArray, NumericType } from '@webdpl/core';
import { type CpuBackend, compileOnce, isShared, planParallel } from '@webdpl/policies';
import type { Kernel } from './kernels';
import { acquireScratch, releaseScratch } from './scratch';
import { checkFn, plainMemoryBoundSeq, runPar } from './staging';
import { unreadInput } from './transform';

const JS_FROM_SOURCE = Symbol.for('webdpl.jsFromSource');

/** One transformIf call on host arrays. */
export interface TransformIfCall {
  /** The input, or undefined for `counting(n)` (fn then takes the index). */
  readonly input: HostArray | undefined;
  /** The stencil pred tests; 'counting': the index; undefined: pred tests the input's element (or the index). */
  readonly stencil: HostArray | 'counting' | undefined;
  readonly output: HostArray;
  readonly n: number;
  readonly fn: GpuFunction;
  /** fn's argument types: the input's type, then u32 when its last argument is the index. */
  readonly fnTypes: readonly NumericType[];
  readonly pred: GpuFunction;
  readonly predType: NumericType;
}

function sourceDefined(fn: GpuFunction): boolean {
  return fn.builtin || (fn as unknown as Record<symbol, unknown>)[JS_FROM_SOURCE] === true;
}

/** The kernel's loop (see the file comment). */
function loopSource(c: TransformIfCall): string {
  const test = c.stencil === undefined ? (c.input ? 'x[i]' : 'i') : c.stencil === 'counting' ? 'i' : 'f[i]';
  const args = c.input ? (c.fnTypes.length === 2 ? 'x[i], i' : 'x[i]') : 'i';
  const value = c.fn.resultType(c.fnTypes) === 'bool' ? `(t(${args}) ? 1 : 0)` : `t(${args})`;
  return `function transform_if_kernel(x, x2, y, b, e, h, c, f) {
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
    return { kernel: factory(c.fn.js(c.fnTypes), c.pred.js([c.predType])), source: undefined };
  }
  const source = `(() => { 'use strict';
  const t = ${c.fn.jsSource(c.fnTypes)};
  const p = ${c.pred.jsSource([c.predType])};
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
  checkFn(c.pred, 1, [c.predType], 'pred');
  if (n === 0) return;
  const st = typeof c.stencil === 'object' ? c.stencil : undefined;
  const types = [
    input ? typeOf(input) : 'counting',
    c.stencil === undefined ? '-' : st ? typeOf(st) : 'counting',
    typeOf(output),
    c.fnTypes.length === 2 ? 'index' : '-',
  ].join(',');
  const { kernel, source } = compiled(c, types);
  const x = input ?? output;
  const chunks =
    source === undefined || plainMemoryBoundSeq(backend, n, [input, st, output]) ? undefined : planParallel(backend, n);
  if (!chunks || backend.kind !== 'par') {
    kernel(x, output, output, 0, n, false, 0, st);
    return;
  }
  let scratch: SharedArrayBuffer | undefined;
  let ss = st;
  if (st && !isShared(st)) {
    scratch = acquireScratch(Math.max(4, n * 4));
    ss = new (st.constructor as Uint32ArrayConstructor)(scratch, 0, n);
    ss.set(st.subarray(0, n));
  }
  const xs = input ?? unreadInput();
  await runPar(
    backend,
    chunks,
    { x: xs, x2: output, y: output, n },
    (ch, sh) => ({ s: source as string, x: sh.x, x2: sh.x2, y: sh.y, b: ch.begin, e: ch.end, h: false, c: 0, f: ss }),
    (ch) => kernel(x, output, output, ch.begin, ch.end, false, 0, st),
  );
  if (scratch) releaseScratch(scratch);
}
