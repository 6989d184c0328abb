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
 *    stencil passes), or -1. cpuGather runs it over the whole map (par: in chunks on the pool)
 *    before any write, so an out-of-range index is an error that leaves the output untouched.
 *
 * The loops are unrolled: 16 elements per step without a stencil, 8 with every load of a step
 * before its stores with one (see `unrolled`); the check tests a block of 8 indices at a time (see
 * `checkBody`).
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
import { type CpuBackend, compileOnce, isShared } from '@webdpl/policies';
import type { Kernel } from './kernels';
import { acquireScratch, releaseScratch } from './scratch';
import { explicitThreshold, memoryBoundChunks, runPar } from './staging';
import { warmArray, warmedKernel, warmedSource } from './warm';

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

/** Elements per step of the unrolled gather / scatter loops (see `unrolled`). */
export const GATHER_UNROLL = 8;

/**
 * Largest scatter output (elements) that takes the stencil forms' unrolled loop; larger ones run
 * the plain loop (u32, a random permutation, dev VM 2026-11-24: unrolled 1.7 -> 0.96 ms at 2^20,
 * even at 2^22, 50 -> 91 ms at 2^24, where 8 random stores in a row cost more than they save).
 */
export const SCATTER_UNROLL_MAX = 1 << 21;

/**
 * Elements per step of gather and scatter without a stencil: each element's loads and store in
 * turn, `y[i] = x2[x[i]]` / `y[x2[i]] = x[i]`, 16 of them per step. The kernel alone, u32, a random
 * permutation, one process, interleaved runs (dev VM 2026-11-24, load 5-6; the loads-first steps of
 * 8 below / these / a plain closure loop): gather 2^20 1.21 / 1.03 / 0.83 ms, 2^22 22.3 / 21.0 /
 * 23.7, 2^24 179 / 166 / 125; scatter 2^20 1.09-1.13 / 0.87-0.88 / 0.60-0.64, 2^22 17.1 / 11.8 /
 * 14.7, 2^24 196 / 72-113 / 72-109 (the simple loop 104-126 there, so scatter takes these steps at
 * every size). The hardware overlaps the independent loads of consecutive elements by itself
 * (docs/benchmarks/cpu-seq-2026-11-24b.md).
 */
export const PLAIN_UNROLL = 16;

/**
 * The unrolled loop of gather or scatter. Without a stencil: `PLAIN_UNROLL` elements per step, each
 * loaded and stored in turn. With one: each step of `GATHER_UNROLL` elements issues every load
 * (the stencil tests, the indices, then the gathered values) before its first store. A scalar
 * loop does the tail. V8 does not move a load past a store through parameters that may alias, so
 * the plain loop `y[i] = x2[x[i]]` waits for each random load in turn; with the loads batched their
 * cache misses overlap (u32, a random permutation, dev VM 2026-11-24, the kernel alone: gather
 * 2.2 -> 1.1 ms at 2^20, 21 -> 8 ms at 2^22, 310 -> 170 ms at 2^24; a plain loop over closed-over
 * arrays, which V8 specializes on the arrays themselves: 0.8, 8-10 and 118 ms;
 * docs/benchmarks/cpu-gather-2026-11-24.md). A stencil form's scatter unrolls only into outputs of
 * up to `SCATTER_UNROLL_MAX` elements. The stores stay in index order, so scatter's repeated indices still
 * keep the last write. A stencil form reads the gathered value only where its test passes
 * (elsewhere the index may be out of range) and stores only there.
 *
 * @param test the stencil test of element `i + k` (k an offset source), or undefined
 */
function unrolled(kind: GatherKind, test: ((k: string) => string) | undefined): string {
  const at = (k: number) => (k === 0 ? 'i' : `i + ${k}`);
  const element = (k: number) =>
    kind === 'gather' ? `y[${at(k)}] = x2[x[${at(k)}]];` : `y[x2[${at(k)}]] = x[${at(k)}];`;
  if (test === undefined) {
    const steps = Array.from({ length: PLAIN_UNROLL }, (_, k) => element(k));
    const rows: string[] = [];
    for (let k = 0; k < PLAIN_UNROLL; k += 4) rows.push(steps.slice(k, k + 4).join(' '));
    return `let i = b;
    for (const last = e - ${PLAIN_UNROLL - 1}; i < last; i += ${PLAIN_UNROLL}) {
      ${rows.join('\n      ')}
    }
    for (; i < e; i++) ${element(0)}
    return 0;`;
  }
  const ks = Array.from({ length: GATHER_UNROLL }, (_, k) => k);
  const lines: string[] = [];
  lines.push(`const ${ks.map((k) => `t${k} = ${test(at(k))}`).join(', ')};`);
  const guard = (k: number, stmt: string) => `if (t${k}) ${stmt}`;
  if (kind === 'gather') {
    lines.push(`const ${ks.map((k) => `j${k} = x[${at(k)}]`).join(', ')};`);
    const load = (k: number) => `t${k} ? x2[j${k}] : 0`;
    lines.push(`const ${ks.map((k) => `v${k} = ${load(k)}`).join(', ')};`);
    for (const k of ks) lines.push(guard(k, `y[${at(k)}] = v${k};`));
  } else {
    lines.push(`const ${ks.map((k) => `j${k} = x2[${at(k)}]`).join(', ')};`);
    lines.push(`const ${ks.map((k) => `v${k} = x[${at(k)}]`).join(', ')};`);
    for (const k of ks) lines.push(guard(k, `y[j${k}] = v${k};`));
  }
  const when = kind === 'scatter' ? `if (y.length <= ${SCATTER_UNROLL_MAX}) ` : '';
  return `let i = b;
    ${when}for (const last = e - ${GATHER_UNROLL - 1}; i < last; i += ${GATHER_UNROLL}) {
      ${lines.join('\n      ')}
    }
    for (; i < e; i++) if (${test('i')}) ${element(0)}
    return 0;`;
}

/**
 * The check loop: a block of `GATHER_UNROLL` indices at a time with one range test each (u32 maps:
 * j >= c; i32 maps: (j >>> 0) >= min(c, 2^31), true exactly where j < 0 or j >= c), and the exact test
 * with the stencil element by element only in a block that has an index out of range, and in the
 * tail (2^20 u32 indices on the dev VM: 0.63 -> 0.49 ms).
 */
function checkBody(map: NumericType, test: ((k: string) => string) | undefined): string {
  const out = (at: string) => (map === 'u32' ? `x[${at}] >= c` : `(x[${at}] >>> 0) >= cu`);
  const ks = Array.from({ length: GATHER_UNROLL }, (_, k) => (k === 0 ? 'i' : `i + ${k}`));
  return `${map === 'u32' ? '' : 'const cu = c > 2147483648 ? 2147483648 : c;'}
    let i = b;
    for (;;) {
      for (const last = e - ${GATHER_UNROLL - 1}; i < last; i += ${GATHER_UNROLL}) {
        if (${ks.map(out).join(' || ')}) break;
      }
      for (const stop = i + ${GATHER_UNROLL} < e ? i + ${GATHER_UNROLL} : e; i < stop; i++) {
        const j = x[i];
        if (!(j >= 0 && j < c)${test === undefined ? '' : ` && ${test('i')}`}) return i;
      }
      if (i >= e) return -1;
    }`;
}

/** The kernel body of `kind` (see the file comment); `test` guards each element (stencil). */
function body(kind: GatherKind | 'check', map: NumericType, test: ((k: string) => string) | undefined): string {
  return kind === 'check' ? checkBody(map, test) : unrolled(kind, test);
}

/**
 * Statements that run kernel `k` of `kind` on synthetic arrays (`warmedSource`): `arrays` the
 * kernel's x, x2, y types, `stencil` the stencil's type (undefined: none, or counting(n)). Indices
 * are a permutation of the 64 positions (gather and scatter read and write in range); the check
 * also sees a limit below some indices (and a negative i32 index), so it returns a position too.
 * Every tail length, stencil elements that pass and fail.
 */
function warmCalls(
  kind: GatherKind | 'check',
  arrays: readonly NumericType[],
  stencil: NumericType | undefined,
): string {
  const perm = '(i) => (i * 5) & 63';
  const ws = `const ws = ${warmArray(stencil)};`;
  const range = 'q & 3, 64 - (q & 7)';
  if (kind === 'check') {
    const bad = '(i) => (i === 40 ? -1 : (i * 5) & 63)';
    return `${ws} const wm = ${warmArray(arrays[0], perm)}, wbad = ${warmArray(arrays[0], bad)};
  for (let q = 0; q < 32; q++) k(q & 1 ? wbad : wm, undefined, undefined, ${range}, false, q & 2 ? 64 : 32, ws);`;
  }
  const [x, x2] =
    kind === 'gather'
      ? [warmArray(arrays[0], perm), warmArray(arrays[1])]
      : [warmArray(arrays[0]), warmArray(arrays[1], perm)];
  return `${ws} const wx = ${x}, wx2 = ${x2}, wy = ${warmArray(arrays[2])};
  for (let q = 0; q < 32; q++) k(wx, wx2, wy, ${range}, false, 0, ws);`;
}

/**
 * The factory source `(p) => kernel` of `kind`, with the predicate's source spliced in when it has
 * one (`pred` a JS source; then the result is a self-contained kernel source, usable by workers,
 * that warms itself: `warmCalls`).
 */
function kernelSource(
  kind: GatherKind | 'check',
  arrays: readonly NumericType[],
  tagTypes: string,
  pred: string | 'bound' | undefined,
  stencil?: NumericType | 'counting',
): string {
  const counting = stencil === 'counting';
  const test = pred === undefined ? undefined : counting ? (k: string) => `p(${k})` : (k: string) => `p(f[${k}])`;
  const k = `function ${kind}_kernel(x, x2, y, b, e, h, c, f) {
    ${body(kind, arrays[0] as NumericType, test)}
  }`;
  const tag = `/* webdpl ${kind} ${tagTypes} ${pred === undefined ? 'all' : pred === 'bound' ? 'bound' : 'pred'} */`;
  if (pred === 'bound') return `((p) => { 'use strict'; return ${k}; }) ${tag}`;
  const kernel = `(() => { 'use strict'; const p = ${pred ?? 'undefined'}; return ${k}; })()`;
  return warmedSource(kernel, warmCalls(kind, arrays, counting ? undefined : stencil), tag);
}

export interface Compiled {
  readonly kernel: Kernel;
  /** Self-contained source (par), when the predicate has a JS source (or there is none). */
  readonly source: string | undefined;
}

/** The kernel of `kind` over `arrays` (its x, x2, y) and `stencil`, and its source for workers. */
export function gatherKernel(
  kind: GatherKind | 'check',
  arrays: readonly HostArray[],
  stencil: Stencil | undefined,
): Compiled {
  const types = arrays.map(typeOf);
  if (!stencil)
    return warmedKernel<Kernel>(`${kind} ${types}`, () => kernelSource(kind, types, types.join(','), undefined));
  const st = stencil.array ? typeOf(stencil.array) : 'counting';
  const tag = `${types.join(',')},${st}`;
  let pred: string | undefined;
  try {
    pred = stencil.pred.jsSource([st === 'counting' ? 'u32' : st]);
  } catch {
    // A predicate without a JS source (an explicit { js, wgsl } function): bound on this thread.
    const factory = compileOnce<(p: unknown) => Kernel>(kernelSource(kind, types, tag, 'bound', st));
    return { kernel: factory(stencil.pred.js([st === 'counting' ? 'u32' : st])), source: undefined };
  }
  const p = pred;
  return warmedKernel<Kernel>(`${kind} ${tag} ${p}`, () => kernelSource(kind, types, tag, p, st));
}

/**
 * gather (y[i] = input[map[i]] for i < map.length) or scatter (y[map[i]] = input[i] for
 * i < input.length), where the stencil passes if one is given, after checking every index (where
 * the stencil passes) against [0, limit): returns the first position whose index is out of range,
 * with nothing written, or -1 once done. The output must not overlap the other arrays. On the pool
 * the check runs in chunks too (the first failing chunk's position), so par does not wait on a
 * serial pass over the map first.
 */
export async function cpuGather(
  backend: CpuBackend,
  kind: GatherKind,
  map: HostArray,
  input: HostArray,
  output: HostArray,
  limit: number,
  stencil?: Stencil,
): Promise<number> {
  const n = map.length;
  if (n === 0) return -1;
  const check = gatherKernel('check', [map], stencil);
  // The kernel's x and x2: gather reads the map first, scatter the input.
  const [x, x2] = kind === 'gather' ? [map, input] : [input, map];
  const { kernel, source } = gatherKernel(kind, [x, x2, output], stencil);
  const s = stencil?.array;
  const chunks = source === undefined ? undefined : memoryBoundChunks(backend, n);
  // Arrays the workers need whole: the one accessed at any index, the stencil, and the output of a
  // stencil form (its unwritten elements keep their values, so it is copied in and back whole).
  const outWhole = kind === 'scatter' || stencil !== undefined;
  const whole = [kind === 'gather' ? input : undefined, outWhole ? output : undefined, s].filter(
    (a): a is HostArray => a !== undefined,
  );
  const plain = whole.some((a) => !isShared(a));
  const worth = !plain || explicitThreshold(backend);
  if (!chunks || backend.kind !== 'par' || !worth) {
    const bad = check.kernel(map, undefined, undefined, 0, n, false, limit, s);
    if (bad < 0) kernel(x, x2, output, 0, n, false, 0, s);
    return bad;
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
  const ss = s === undefined ? undefined : share(s);
  const found = await runPar(
    backend,
    chunks,
    { x: map, x2: undefined, y: undefined, n },
    (c, sh) => ({ s: check.source as string, x: sh.x, b: c.begin, e: c.end, h: false, c: limit, f: ss }),
    (c) => check.kernel(map, undefined, undefined, c.begin, c.end, false, limit, s),
  );
  const bad = found.find((r) => r >= 0);
  if (bad !== undefined) {
    for (const buf of scratch) releaseScratch(buf);
    return bad;
  }
  const sx2 = kind === 'gather' ? share(input) : x2;
  const sy = outWhole ? share(output) : output;
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
  return -1;
}
