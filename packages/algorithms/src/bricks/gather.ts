/**
 * CPU loops of gather and scatter and their stencil forms (Thrust's gather, gather_if, scatter,
 * scatter_if), as generated kernels (`Kernel` of kernels.ts, compiled once per thread through
 * `compileOnce`, tagged with their element types so each keeps its own type feedback):
 *
 *  - gather:  y[i] = x2[x[i]]            (x the map, x2 the input, y the output)
 *  - scatter: y[x2[i]] = x[i]            (x the input, x2 the map)
 *  - the stencil forms do the same only where `pred(s[i])` is truthy (the stencil `s` travels in the
 *    job's `f` field);
 *  - check: the first i in [b, e) whose index x[i] is not in [0, c) (and, with a stencil, whose
 *    stencil passes), or -1. Fronts run it over the whole map before any write, so an out-of-range
 *    index is an error that leaves the output untouched.
 *
 * seq: the loop on the calling thread. par: chunks of the map shared by the calling thread and the
 * workers (`runPar`). The arrays read or written at any index (gather's input, scatter's output),
 * the stencil and a stencil form's output must be whole in shared memory for the workers: arrays
 * from allocShared are used as they are. Plain ones would be copied into shared scratch first (and
 * outputs back): measured on the 2-core dev VM under load (2026-11-23, u32, a random permutation),
 * that made par 0.3-0.9x seq at 2^20-2^22, so with plain arrays par runs the seq loop unless the
 * policy sets `parallelThreshold` explicitly (then it stages them; the tests run that path).
 * Same-index arrays (the map, gather's output, scatter's input) are staged chunk by chunk as in every
 * par map. Scatter with repeated indices: seq keeps the last write; par keeps one of them
 * (unspecified, as on the GPU).
 */
import type { GpuFunction, HostArray, NumericType } from '@webdpl/core';
import { type CpuBackend, compileOnce, isShared, planParallel } from '@webdpl/policies';
import type { Kernel } from './kernels';
import { acquireScratch, releaseScratch } from './scratch';
import { explicitThreshold, runPar } from './staging';

export type GatherKind = 'gather' | 'scatter';

/** A stencil and the predicate applied to it (gatherIf / scatterIf). */
export interface Stencil {
  /** The stencil's elements, or undefined for counting(n): the predicate gets the index (u32). */
  readonly array: HostArray | undefined;
  readonly pred: GpuFunction;
}

function typeOf(a: HostArray): NumericType {
  return a instanceof Uint32Array ? 'u32' : a instanceof Int32Array ? 'i32' : 'f32';
}

/** The kernel body of `kind` (see the file comment); `test` guards each element (stencil). */
function body(kind: GatherKind | 'check', test: string | undefined): string {
  const guard = (stmt: string) => (test === undefined ? stmt : `if (${test}) ${stmt}`);
  switch (kind) {
    case 'gather':
      return `for (let i = b; i < e; i++) ${guard('y[i] = x2[x[i]];')}
    return 0;`;
    case 'scatter':
      return `for (let i = b; i < e; i++) ${guard('y[x2[i]] = x[i];')}
    return 0;`;
    case 'check':
      return `for (let i = b; i < e; i++) {
      const j = x[i];
      if (!(j >= 0 && j < c)${test === undefined ? '' : ` && ${test}`}) return i;
    }
    return -1;`;
  }
}

/**
 * The factory source `(p) => kernel` of `kind`, with the predicate's source spliced in when it has
 * one (`pred` a JS source; then the result is a self-contained kernel source, usable by workers).
 */
function kernelSource(
  kind: GatherKind | 'check',
  types: string,
  pred: string | 'bound' | undefined,
  counting = false,
): string {
  const test = pred === undefined ? undefined : counting ? 'p(i)' : 'p(f[i])';
  const k = `function ${kind}_kernel(x, x2, y, b, e, h, c, f) {
    ${body(kind, test)}
  }`;
  const tag = `/* webdpl ${kind} ${types} ${pred === undefined ? 'all' : pred === 'bound' ? 'bound' : 'pred'} */`;
  if (pred === 'bound') return `((p) => { 'use strict'; return ${k}; }) ${tag}`;
  return `(() => { 'use strict'; const p = ${pred ?? 'undefined'}; return ${k}; })() ${tag}`;
}

interface Compiled {
  readonly kernel: Kernel;
  /** Self-contained source (par), when the predicate has a JS source (or there is none). */
  readonly source: string | undefined;
}

function compiled(kind: GatherKind | 'check', arrays: readonly HostArray[], stencil: Stencil | undefined): Compiled {
  const types = arrays.map(typeOf).join(',');
  if (!stencil) {
    const source = kernelSource(kind, types, undefined);
    return { kernel: compileOnce<Kernel>(source), source };
  }
  const counting = stencil.array === undefined;
  const st = stencil.array ? typeOf(stencil.array) : 'u32';
  const tag = `${types},${counting ? 'counting' : st}`;
  let pred: string | undefined;
  try {
    pred = stencil.pred.jsSource([st]);
  } catch {
    // A predicate without a JS source (an explicit { js, wgsl } function): bound on this thread.
    const factory = compileOnce<(p: unknown) => Kernel>(kernelSource(kind, tag, 'bound', counting));
    return { kernel: factory(stencil.pred.js([st])), source: undefined };
  }
  const source = kernelSource(kind, tag, pred, counting);
  return { kernel: compileOnce<Kernel>(source), source };
}

/**
 * The first position of `map` whose index is outside [0, limit) (where the stencil passes), or -1.
 * Reads only; one pass on the calling thread.
 */
export function firstOutOfRange(map: HostArray, limit: number, stencil?: Stencil): number {
  const { kernel } = compiled('check', [map], stencil);
  return kernel(map, undefined, undefined, 0, map.length, false, limit, stencil?.array);
}

/**
 * gather (y[i] = input[map[i]] for i < map.length) or scatter (y[map[i]] = input[i] for
 * i < input.length), where the stencil passes if one is given. Every index must be in range (see
 * `firstOutOfRange`); the output must not overlap the other arrays.
 */
export async function cpuGather(
  backend: CpuBackend,
  kind: GatherKind,
  map: HostArray,
  input: HostArray,
  output: HostArray,
  stencil?: Stencil,
): Promise<void> {
  const n = map.length;
  if (n === 0) return;
  // The kernel's x and x2: gather reads the map first, scatter the input.
  const [x, x2] = kind === 'gather' ? [map, input] : [input, map];
  const { kernel, source } = compiled(kind, [x, x2, output], stencil);
  const s = stencil?.array;
  const chunks = source === undefined ? undefined : planParallel(backend, n);
  // Arrays the workers need whole: the one accessed at any index, the stencil, and the output of a
  // stencil form (its unwritten elements keep their values, so it is copied in and back whole).
  const outWhole = kind === 'scatter' || stencil !== undefined;
  const whole = [kind === 'gather' ? input : undefined, outWhole ? output : undefined, s].filter(
    (a): a is HostArray => a !== undefined,
  );
  const plain = whole.some((a) => !isShared(a));
  const worth = !plain || explicitThreshold(backend);
  if (!chunks || backend.kind !== 'par' || !worth) {
    kernel(x, x2, output, 0, n, false, 0, s);
    return;
  }
  // Shared stand-ins (outputs copied in: their unwritten elements keep their values).
  const scratch: SharedArrayBuffer[] = [];
  const share = (a: HostArray): HostArray => {
    if (isShared(a)) return a;
    const buf = acquireScratch(Math.max(4, a.length * 4));
    scratch.push(buf);
    const v = new (a.constructor as Uint32ArrayConstructor)(buf, 0, a.length);
    v.set(a);
    return v;
  };
  const sx2 = kind === 'gather' ? share(input) : x2;
  const sy = outWhole ? share(output) : output;
  const ss = s === undefined ? undefined : share(s);
  // The caller's chunks read its own arrays and write where the workers do (a whole output's
  // stand-in, copied back once at the end; gather's output chunk by chunk).
  await runPar(
    backend,
    chunks,
    { x, x2: sx2, y: sy, n },
    (c, sh) => ({ s: source as string, x: sh.x, x2: sh.x2, y: sh.y, b: c.begin, e: c.end, h: false, c: 0, f: ss }),
    (c) => kernel(x, x2, sy, c.begin, c.end, false, 0, s),
  );
  if (sy !== output) output.set(sy);
  for (const buf of scratch) releaseScratch(buf);
}
