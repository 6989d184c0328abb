/**
 * The CPU side of the by-key family (oneDPL's reduce_by_segment family): scans by key, reduceByKey
 * and uniqueByKey over runs of consecutive equal keys.
 *
 * One generated loop per (kind, operator source, key-equality source, types), compiled once per
 * thread (`compileOnce`: the pool's shared cache in workers) so the operator and the key equality
 * are inlined; functions without a JS source (the `{ js, wgsl }` form) run through the same factory
 * with their `js` bound, on the calling thread only.
 *
 * Scans: seq runs the loop over [0, n). par (chunks on the pool, arrays staged whole in shared
 * memory; with plain arrays only under an explicit parallelThreshold, as the plain scans): (1) every chunk is scanned on its own, a chunk after the first starting a run at its
 * first element without the init unless that element is a true head; each returns its last run's
 * accumulator and whether it holds a head; (2) the calling thread chains the carries: a carry only
 * flows from one chunk into the next while the run at the boundary continues (carry = the previous
 * carry op the chunk's fold when the chunk holds no head, else the chunk's last run); (3) the first
 * run of each chunk that continues a run is fixed up in place: y[i] = carry op y[i] (exclusive:
 * y[first] = carry), which needs only associativity, so non-commutative operators keep their order
 * and in-place scans work; on the calling thread when these first runs are short in all
 * (`SCAN_FIX_INLINE`: step (1) reports where each chunk's first head is), else on the pool. Reads the input once, writes the output once plus the fixed-up runs.
 *
 * reduceByKey / uniqueByKey: one pass, no counting pass (see `cpuRunsByKey`): seq writes straight
 * into outputs of n or more elements, else into scratch of the outputs' length that is copied into
 * them once the runs are known to fit (outputs too short are never touched); par writes each chunk's
 * runs into scratch at the chunk's offset (each run by the chunk where it starts, reduceByKey reading
 * past the chunk's end while the run continues: a run longer than a chunk is folded by one thread)
 * and, once every chunk is counted, the runs are copied into place (shared inputs: by the calling
 * thread and, for shared outputs, the workers too: `runsOnPool`; there, into outputs of n elements or
 * more, the calling thread writes the chunks it takes from the front straight into them and only
 * the workers' chunks, taken from the back, go through the scratch). Plain (non-shared) arrays
 * stay seq on par unless the tuning sets parallelThreshold, as for the scans, except reduceByKey's
 * (`parChunks`). Nothing runs on the pool below BY_KEY_PAR_MIN elements.
 *
 * The loops are unrolled by 4 with the previous key in a local: see `unrolled`.
 *
 * Floats: accumulators follow the operator's JS form (built-in f32 plus adds in f64 and rounds at
 * each store; f32 lambdas round every step), in order within each run.
 */
import { allocHost, type GpuFunction, type HostArray, type NumericType } from '@webdpl/core';
import {
  type Chunk,
  type CpuBackend,
  compileOnce,
  cpuTuning,
  isShared,
  planParallel,
  sharedMemoryAvailable,
} from '@webdpl/policies';
import { sharedView } from './compaction';
import { INLINE_BUDGET, type Kernel, type KernelJob } from './kernels';
import { acquireScratch, releaseScratch } from './scratch';
import { belowParMin, plainArraysSeq, runChunks, runPar, spinUntil, stage, startWorkers } from './staging';
import { warmArray, warmedKernel, warmedSource } from './warm';

/** The functions of a by-key call and the types they run on. */
export interface ByKeyFunctions {
  /** The value operator (scans and reduceByKey). */
  readonly op?: GpuFunction;
  readonly keyEq: GpuFunction;
  readonly keyType: NumericType;
  readonly valueType: NumericType;
}

export type ByKeyKind = 'inclusive' | 'exclusive' | 'count' | 'reduce' | 'unique';

/** `e` coerced to the values' type, so V8 keeps an accumulator seeded from it unboxed (see kernels.ts). */
function coerce(type: NumericType, e: string): string {
  return type === 'u32' ? `((${e}) >>> 0)` : type === 'i32' ? `((${e}) | 0)` : `(+(${e}))`;
}

/** Elements per iteration of the unrolled loops (reduce and unique). */
const UNROLL = 4;
/**
 * Elements per iteration of the scans' loops, each element's key and value loaded right before its
 * code (`interleaved`), for short functions (else UNROLL). u32 plus over runs of 16, 2^20, kernel
 * alone: loads first, 4 per step 0.90 ms; interleaved, 4 per step 0.83, 8 per step 0.69 (a plain
 * closure loop 0.78; docs/benchmarks/cpu-seq-2026-11-24b.md).
 */
const SCAN_UNROLL = 8;

/**
 * A loop over [from, e) in steps of `u` elements, then one at a time: `step(j, prev)` is the code
 * of element `i + j` (key `k<j>`, value `w<j>` when `values`), `prev` the key before it. The
 * previous key is kept in `p` across iterations. Unrolled, V8 loads each array's length and
 * data pointer once per iteration instead of once per element: the by-key loops over arrays passed
 * as arguments ran 1.5-1.8x slower than a loop over arrays it could treat as constants, and
 * unrolling by 4 took most of that back (docs/benchmarks/cpu-by-key.md). The keys and values of a
 * step are loaded at its start, or with `interleaved` right before each element's code (the scans:
 * see `SCAN_UNROLL`). With `sameRun` (a statement), the elements of a step that all continue the
 * run ahead of them take it instead of their steps: reduceByKey u32 plus over runs of 16, 2^20,
 * kernel alone: 0.90 -> 0.83 ms (docs/benchmarks/cpu-seq-2026-11-24b.md); `eq` must be pure (it is
 * evaluated again there). Only for functions with short sources (see `byKeyKernel`): copies beyond
 * V8's inlining budget stay calls.
 */
function unrolled(
  from: string,
  values: boolean,
  step: (j: number, prev: string) => string,
  opts: { readonly sameRun?: string | undefined; readonly u?: number; readonly interleaved?: boolean } = {},
): string {
  const u = opts.u ?? UNROLL;
  const idx = (j: number) => (j === 0 ? 'i' : `i + ${j}`);
  const prevOf = (j: number) => (j === 0 ? 'p' : `k${j - 1}`);
  const load = (j: number) => `const k${j} = x[${idx(j)}];${values ? ` const w${j} = x2[${idx(j)}];` : ''}`;
  const lines: string[] = [];
  lines.push(`let i = ${from};`);
  lines.push(`for (; i + ${u - 1} < e; i += ${u}) {`);
  if (!opts.interleaved) {
    lines.push(`  const ${Array.from({ length: u }, (_, j) => `k${j} = x[${idx(j)}]`).join(', ')};`);
    if (values) lines.push(`  const ${Array.from({ length: u }, (_, j) => `w${j} = x2[${idx(j)}]`).join(', ')};`);
  }
  const steps = Array.from({ length: u }, (_, j) => `${opts.interleaved ? `${load(j)} ` : ''}${step(j, prevOf(j))}`);
  if (opts.sameRun === undefined) for (const st of steps) lines.push(`  ${st}`);
  else {
    // One test for "the run goes on through all of them", then the steps one by one only where not.
    const same = Array.from({ length: u }, (_, j) => `eq(${prevOf(j)}, k${j})`).join(' && ');
    lines.push(`  if (${same}) ${opts.sameRun}`);
    lines.push('  else {');
    for (const st of steps) lines.push(`    ${st}`);
    lines.push('  }');
  }
  lines.push(`  p = k${u - 1};`);
  lines.push('}');
  lines.push('for (; i < e; i++) {');
  lines.push(`  ${load(0)}`);
  lines.push(`  ${step(0, 'p')}`);
  lines.push('  p = k0;');
  lines.push('}');
  return lines.join('\n    ');
}

/**
 * The loop body of each kind, as a `Kernel` (x keys, x2 values, y output, b, e, h, c, f). Every loop
 * keeps the previous key in a local (one key load and one `eq` per element), is unrolled
 * (`unrolled`) and seeds its accumulators coerced to the values' type `v`:
 * - inclusive / exclusive, h false: scans [b, e) (element b starts a run; without the init `c`
 *   unless it is a true head), sets f[0] (when given) to 1 | 2 (a head in [b, e) | b is a true
 *   head) and f[1] to the first head in [b, e) (e when none), returns the last run's accumulator.
 *   h true: the fix-up of the first run from carry c.
 * - count: the number of runs starting in [b, e) (the error path: the exact count for the message).
 * - reduce / unique: writes the runs starting in [b, e) (h: whether b starts one, i.e. b is 0 or
 *   its key differs from the previous one; the caller knows it, while a worker's staged copy of the
 *   element before b may not be there yet): keys to y[c + r], values (reduce: the fold of the run,
 *   read on past e while it continues; unique: the run's first value) to f[c + r]. Returns the
 *   number of runs written, or -1 as soon as a run would fall at or beyond y's length (nothing is
 *   written there).
 */
function body(kind: ByKeyKind, v: NumericType, short: boolean): string {
  const at = (j: number) => (j === 0 ? 'i' : `i + ${j}`);
  switch (kind) {
    case 'inclusive':
    case 'exclusive': {
      const incl = kind === 'inclusive';
      // Selects, no head bookkeeping in the loop: tracking the last head's index (for the flags)
      // in each element's else-branch cost ~10% (u32 plus, runs of 16, 2^20: 1.0 -> 0.9 ms
      // standalone); the flags find the first head after the loop, and only where asked (par).
      const step = (j: number, prev: string) =>
        incl
          ? `acc = eq(${prev}, k${j}) ? op(acc, w${j}) : w${j}; y[${at(j)}] = acc;`
          : `{ const a = eq(${prev}, k${j}) ? acc : c0; y[${at(j)}] = a; acc = op(a, w${j}); }`;
      return `const c0 = ${coerce(v, 'c')};
    if (h) {
      let p = x[b];
      ${incl ? 'y[b] = op(c0, y[b]);' : 'y[b] = c0;'}
      for (let i = b + 1; i < e; i++) {
        const k = x[i];
        if (!eq(p, k)) return 0;
        y[i] = op(c0, y[i]);
        p = k;
      }
      return 0;
    }
    if (b >= e) return 0;
    let flags = 0;
    let p = x[b];
    let acc = ${coerce(v, 'x2[b]')};
    if (b === 0 || !eq(x[b - 1], p)) {
      flags = 2;
      ${incl ? '' : 'y[b] = c0; acc = op(c0, acc);'}
    }
    ${incl ? 'y[b] = acc;' : ''}
    ${unrolled('b + 1', true, step, { u: short ? SCAN_UNROLL : UNROLL, interleaved: true })}
    if (f !== undefined) {
      // Flag 1: b is a true head, or a head follows it in [b, e) (the first one ends the search);
      // f[1]: that first head, e when there is none (the fix-up's end).
      let head = b;
      if ((flags & 2) === 0) {
        head = e;
        let q = x[b];
        for (let j = b + 1; j < e; j++) {
          const k = x[j];
          if (!eq(q, k)) {
            head = j;
            break;
          }
          q = k;
        }
      }
      f[0] = head < e ? flags | 1 : flags;
      f[1] = head;
    }
    return acc;`;
    }
    case 'count':
      return `if (b >= e) return 0;
    let m = b === 0 || !eq(x[b - 1], x[b]) ? 1 : 0;
    let p = x[b];
    for (let i = b + 1; i < e; i++) {
      const k = x[i];
      if (!eq(p, k)) m++;
      p = k;
    }
    return m;`;
    case 'reduce': {
      // The run in progress: its first key and its fold; stored when the next run starts.
      const step = (j: number, prev: string) =>
        `if (eq(${prev}, k${j})) acc = op(acc, w${j}); else { if (o >= cap) return -1; y[o] = key; f[o] = acc; o++; key = k${j}; acc = w${j}; }`;
      return `const n = x.length;
    const cap = y.length;
    let o = c;
    let start = b;
    if (!h) {
      // b continues the run of the chunk before: skip to the first head.
      let q = x[b];
      for (start = b + 1; start < e; start++) {
        const k = x[start];
        if (!eq(q, k)) break;
        q = k;
      }
    }
    if (start >= e) return 0;
    let key = x[start];
    let p = key;
    let acc = ${coerce(v, 'x2[start]')};
    ${unrolled('start + 1', true, step, {
      sameRun: short
        ? `acc = ${Array.from({ length: UNROLL }, (_, j) => j).reduce((a, j) => `op(${a}, w${j})`, 'acc')};`
        : undefined,
    })}
    // The last run may go on past e.
    for (; i < n; i++) {
      const k = x[i];
      if (!eq(p, k)) break;
      acc = op(acc, x2[i]);
      p = k;
    }
    if (o >= cap) return -1;
    y[o] = key;
    f[o] = acc;
    o++;
    return o - c;`;
    }
    case 'unique': {
      const step = (j: number, prev: string) =>
        `if (!eq(${prev}, k${j})) { if (o >= cap) return -1; y[o] = k${j}; f[o] = x2[${at(j)}]; o++; }`;
      return `if (b >= e) return 0;
    const cap = y.length;
    let o = c;
    let p = x[b];
    if (h) {
      if (o >= cap) return -1;
      y[o] = p;
      f[o] = x2[b];
      o++;
    }
    ${unrolled('b + 1', false, step, { sameRun: short ? '{}' : undefined })}
    return o - c;`;
    }
  }
}

function factory(kind: ByKeyKind, v: NumericType, short = false): string {
  return `(op, eq) => function by_key_${kind}(x, x2, y, b, e, h, c, f) {
    'use strict';
    ${body(kind, v, short)}
  }`;
}

/**
 * Statements that run by-key kernel `k` of `kind` on synthetic arrays (`warmedSource`): keys in runs
 * of 1 to 5 elements (f32 keys: zeros of both signs and NaN too), ranges with every tail length and both `h`
 * branches; scans with and without the flags array (seq / workers) and the fix-up path; reduce and
 * unique with and without an output offset, and into outputs too short (the -1 return).
 */
function warmCalls(kind: ByKeyKind, fns: ByKeyFunctions): string {
  // A new run where a hash of i has its top two bits clear (runs of 1 to 5 elements); run r's key
  // is r, except +0 / -0 / NaN for some (f32 key equality's special cases; 0 in integer arrays).
  const runs = `(() => { let r = 0; return (i) => {
    r += Math.imul(i + 1, 0x9e3779b9) >>> 30 === 0 ? 1 : 0;
    const m = r % 7;
    return m === 0 ? (r & 8 ? -0 : 0) : m === 3 ? 0 / 0 : r;
  }; })()`;
  const keys = `const wk = ${warmArray(fns.keyType, runs)}, wv = ${warmArray(fns.valueType)};`;
  const range = 'q & 3, 64 - (q & 7)';
  switch (kind) {
    case 'inclusive':
    case 'exclusive':
      return `${keys} const wy = ${warmArray(fns.valueType)}, wf = new Int32Array(2);
  for (let q = 0; q < 32; q++) {
    k(wk, wv, wy, ${range}, false, q & 2 ? 0.5 : 3, q & 4 ? wf : undefined);
    k(wk, wv, wy, 8 + (q & 3), 64 - (q & 7), true, 3, undefined);
  }`;
    case 'count':
      return `${keys}
  for (let q = 0; q < 32; q++) k(wk, undefined, undefined, ${range}, false, 0, undefined);`;
    case 'reduce':
    case 'unique':
      return `${keys} const wko = ${warmArray(fns.keyType)}, wvo = ${warmArray(fns.valueType)}, short = ${warmArray(fns.keyType)}.subarray(0, 4);
  for (let q = 0; q < 32; q++) {
    k(wk, wv, wko, ${range}, (q & 1) === 0, q & 2 ? 8 : 0, wvo);
    k(wk, wv, short, ${range}, true, 0, wvo);
  }`;
  }
}

/** The kernel of `kind` for the calling thread, and its self-contained source for workers (if any). */
export function byKeyKernel(kind: ByKeyKind, fns: ByKeyFunctions): { kernel: Kernel; source: string | undefined } {
  const kt = [fns.keyType, fns.keyType];
  const vt = [fns.valueType, fns.valueType];
  const tag = `/* webdpl by-key ${kind} k:${fns.keyType} v:${fns.valueType} */`;
  let sources: { op: string; eq: string } | undefined;
  try {
    sources = { op: fns.op ? fns.op.jsSource(vt) : 'undefined', eq: fns.keyEq.jsSource(kt) };
  } catch {
    sources = undefined;
  }
  if (sources !== undefined) {
    const { op, eq } = sources;
    return warmedKernel<Kernel>(`by-key ${kind} ${fns.keyType} ${fns.valueType} ${op} ${eq}`, () => {
      // Short functions take the larger loops (the scans' 8 elements per step, the same-run test):
      // up to 11 copies of op and 12 of eq, which must fit V8's inlining budget (source lengths
      // standing in for bytecode; u32 plus / keyEqual: 437 of 920).
      const short = 11 * op.length + 12 * eq.length <= INLINE_BUDGET;
      const kernel = `(${factory(kind, fns.valueType, short)})(\n${op},\n${eq}\n)`;
      return warmedSource(kernel, warmCalls(kind, fns), tag);
    });
  }
  const f = compileOnce<(op: unknown, eq: unknown) => Kernel>(`${factory(kind, fns.valueType)} ${tag}`);
  return { kernel: f(fns.op?.js(vt), fns.keyEq.js(kt)), source: undefined };
}

/**
 * Elements from which by-key calls use the pool under the default tuning: below, the pool's round
 * trip costs more than the second thread saves (par on allocShared arrays at 2^16: reduceByKey 0.6x,
 * uniqueByKey 0.9x seq, docs/benchmarks/cpu-catalogue-par-2026-11-24.md; at 2^17, in one process
 * with seq and par interleaved: reduceByKey / uniqueByKey 0.69-0.85x seq even after the changes of
 * cpu-par-2026-11-24j.md, the scans by key 0.84-1.10x in the catalogue probe; from 2^18 1.06-1.33x).
 */
export const BY_KEY_PAR_MIN = 1 << 18;

/**
 * Chunks of a par run over n elements of `arrays`, or undefined (seq). Plain (non-shared) arrays
 * stay seq unless the tuning sets parallelThreshold or `plainOk` (reduceByKey, from BY_KEY_PAR_MIN):
 * scans by key stage their arrays whole and copy the output back, which cost what the second thread
 * saved (0.85-1.1x seq at 2^17-2^22), and uniqueByKey reads too little per element to pay for
 * copying the workers' share (0.9-1.0x); reduceByKey's `runSplit` (the calling thread on the
 * caller's arrays, only the workers' chunks copied) ran 1.1-1.5x seq from 2^17 (same doc).
 */
function parChunks(
  backend: CpuBackend,
  n: number,
  source: string | undefined,
  arrays: readonly HostArray[],
  plainOk = false,
): readonly Chunk[] | undefined {
  if (backend.kind !== 'par' || source === undefined || !sharedMemoryAvailable()) return undefined;
  if (belowParMin(backend, n, BY_KEY_PAR_MIN) || (!plainOk && plainArraysSeq(backend, arrays))) return undefined;
  const chunks = planParallel(backend, n);
  return chunks && chunks.length > 1 ? chunks : undefined;
}

/**
 * Most elements the fix-ups of a par scan by key rewrite on the calling thread (see `cpuScanByKey`);
 * beyond, they run as a second pool step. A pool step cost 0.1-0.25 ms on the 2-core VM (post,
 * wake-up, reply: docs/benchmarks/pool-latency-2026-11-24.md), the fix-up loop ~1-1.5 ns an element.
 */
const SCAN_FIX_INLINE = 1 << 16;

/**
 * Scan by key: output[i] = the fold with `op` of the values of i's run up to i (inclusive), or
 * init op the values of i's run before i (exclusive: init at each run's first element). `output`
 * may be `values` itself; it must not otherwise overlap the inputs.
 */
export async function cpuScanByKey(
  backend: CpuBackend,
  keys: HostArray,
  values: HostArray,
  output: HostArray,
  fns: ByKeyFunctions,
  exclusive: boolean,
  init: number,
): Promise<void> {
  const n = keys.length;
  if (n === 0) return;
  const kind: ByKeyKind = exclusive ? 'exclusive' : 'inclusive';
  const { kernel, source } = byKeyKernel(kind, fns);
  const chunks = parChunks(backend, n, source, [keys, values, output]);
  if (!chunks || backend.kind !== 'par' || source === undefined) {
    kernel(keys, values, output, 0, n, false, init, undefined);
    return;
  }
  const st = stage(keys, values, output, n);
  // Per chunk: its flags and its first head (see `body`).
  const flags = new Int32Array(new SharedArrayBuffer(8 * chunks.length));
  const accs = await runChunks(backend, chunks, (c, k) => ({
    s: source,
    x: st.x,
    x2: st.x2,
    y: st.y,
    b: c.begin,
    e: c.end,
    h: false,
    c: init,
    f: flags.subarray(2 * k, 2 * k + 2),
  }));
  const op = fns.op?.js([fns.valueType, fns.valueType]) as (a: number, b: number) => number;
  // Carries into the chunks whose first element continues a run (the others need none).
  const fix: { chunk: Chunk; carry: number }[] = [];
  let carry = 0;
  // Elements the fix-ups rewrite (each runs from its chunk's start to the chunk's first head).
  let fixed = 0;
  chunks.forEach((chunk, k) => {
    const fl = flags[2 * k] as number;
    if (k > 0 && (fl & 2) === 0) {
      fix.push({ chunk, carry });
      fixed += (flags[2 * k + 1] as number) - chunk.begin;
    }
    const acc = accs[k] as number;
    carry = (fl & 1) !== 0 ? acc : op(carry, acc);
  });
  if (fixed <= SCAN_FIX_INLINE) {
    // Short fix-ups (runs that end soon after each chunk's start): on the calling thread, no second
    // round trip through the pool.
    for (const f of fix) kernel(st.x, undefined, st.y, f.chunk.begin, f.chunk.end, true, f.carry, undefined);
  } else {
    await runChunks(
      backend,
      fix.map((f) => f.chunk),
      (c, k) => ({
        s: source,
        x: st.x,
        y: st.y,
        b: c.begin,
        e: c.end,
        h: true,
        c: (fix[k] as { carry: number }).carry,
      }),
    );
  }
  st.finish();
}

/**
 * Stand-ins of `room` elements for a seq run's outputs (shared scratch, reused across calls, where
 * shared memory exists; else fresh arrays) and how to give them back.
 */
function seqScratch(fns: ByKeyFunctions, room: number) {
  if (!sharedMemoryAvailable()) {
    return {
      keys: allocHost(fns.keyType, room) as HostArray,
      values: allocHost(fns.valueType, room) as HostArray,
      release: () => {},
    };
  }
  const kbuf = acquireScratch(room * 4);
  const vbuf = acquireScratch(room * 4);
  return {
    keys: sharedView(fns.keyType, kbuf, room),
    values: sharedView(fns.valueType, vbuf, room),
    release: () => {
      releaseScratch(kbuf);
      releaseScratch(vbuf);
    },
  };
}

/**
 * reduceByKey (`reduce`) or uniqueByKey: writes each run's first key to `keysOut` and the fold of
 * its values (uniqueByKey: its first value) to `valuesOut`, and returns the number of runs; when
 * either output is shorter than that, throws `tooShort(runs)` and leaves both untouched.
 *
 * One pass over the keys and values (no counting pass): seq writes straight into the outputs when
 * both hold n elements (no run can fall outside them); otherwise into scratch of the outputs' length
 * whose first `runs` elements are copied into them at the end (a run past the scratch's end stops
 * the loop: the outputs are too short, untouched; the runs are then counted for the message). par:
 * each chunk writes the runs starting in it into scratch of n elements at its own offset (a chunk
 * of m elements starts at most m runs), the calling thread checks the sum and copies each chunk's
 * runs into place. The copies move 2 x runs elements (memcpy), against the counting pass's n key
 * reads and comparisons.
 */
export async function cpuRunsByKey(
  backend: CpuBackend,
  keys: HostArray,
  values: HostArray,
  keysOut: HostArray,
  valuesOut: HostArray,
  fns: ByKeyFunctions,
  reduce: boolean,
  tooShort: (runs: number) => Error,
): Promise<number> {
  const n = keys.length;
  if (n === 0) return 0;
  const write = byKeyKernel(reduce ? 'reduce' : 'unique', fns);
  const room = Math.min(keysOut.length, valuesOut.length);
  const chunks = parChunks(backend, n, write.source, [keys, values], reduce);
  const countRuns = () => byKeyKernel('count', fns).kernel(keys, undefined, undefined, 0, n, false, 0, undefined);
  if (!chunks || backend.kind !== 'par' || write.source === undefined) {
    // n runs at most: outputs of n elements hold them all.
    if (room >= n) return write.kernel(keys, values, keysOut, 0, n, true, 0, valuesOut);
    const sc = seqScratch(fns, room);
    const runs = write.kernel(keys, values, sc.keys, 0, n, true, 0, sc.values);
    if (runs >= 0) {
      keysOut.set(sc.keys.subarray(0, runs));
      valuesOut.set(sc.values.subarray(0, runs));
    }
    sc.release();
    if (runs < 0) throw tooShort(countRuns());
    return runs;
  }
  const kbuf = acquireScratch(n * 4);
  const vbuf = acquireScratch(n * 4);
  const ko = sharedView(fns.keyType, kbuf, n);
  const vo = sharedView(fns.valueType, vbuf, n);
  const eq = fns.keyEq.js([fns.keyType, fns.keyType]) as (a: number, b: number) => unknown;
  // Whether a chunk starts a run, from the caller's keys (a worker's staged copy of the key before
  // its chunk may not be there yet).
  const head = (b: number) => b === 0 || !eq(keys[b - 1] as number, keys[b] as number);
  try {
    if (isShared(keys) && isShared(values)) {
      return await runsOnPool(backend, chunks, { src: write.source, x: keys, x2: values, ko, vo }, head, {
        keysOut,
        valuesOut,
        room,
        tooShort,
      });
    }
    const counts = await runPar(
      backend,
      chunks,
      { x: keys, x2: values, y: undefined, n },
      (c, sh): KernelJob => ({
        s: write.source as string,
        x: sh.x,
        x2: sh.x2,
        y: ko,
        b: c.begin,
        e: c.end,
        h: head(c.begin),
        c: c.begin,
        f: vo,
      }),
      (c) => write.kernel(keys, values, ko, c.begin, c.end, head(c.begin), c.begin, vo),
    );
    const counted = Int32Array.from(counts);
    const runs = placeRuns({ chunks: chunkTable(chunks, head), counts: counted, ko, vo }, keysOut, valuesOut, room);
    if (runs > room) throw tooShort(runs);
    return runs;
  } finally {
    releaseScratch(kbuf);
    releaseScratch(vbuf);
  }
}

/** Begin, end and head (1: the chunk starts a run) of each chunk, three Int32 each, in shared memory. */
function chunkTable(chunks: readonly Chunk[], head: (b: number) => boolean): Int32Array {
  const t = new Int32Array(new SharedArrayBuffer(12 * chunks.length));
  chunks.forEach((c, k) => {
    t[3 * k] = c.begin;
    t[3 * k + 1] = c.end;
    t[3 * k + 2] = head(c.begin) ? 1 : 0;
  });
  return t;
}

/** The shared state of a par reduceByKey / uniqueByKey call on shared inputs (`runsTask`). */
interface RunsBatch {
  /**
   * [next chunk to claim (`direct`: the next from the front | the end of those left from the back
   * << 16), chunks counted, next chunk to place, give up (a thread failed), workers whose task
   * returned normally].
   */
  readonly ctl: Int32Array;
  /**
   * 1: the outputs hold n elements or more (every run fits), so the calling thread claims chunks
   * from the front and writes their runs straight into the outputs (it knows their offset: the
   * runs of the chunks before, all its own), while the workers claim from the back into the
   * scratch; only the workers' chunks are placed afterwards. 0: every chunk through the scratch.
   */
  readonly direct: number;
  /** The write kernel's source (compiled once per thread). */
  readonly src: string;
  readonly x: HostArray;
  readonly x2: HostArray;
  /** Scratch of n keys and n values: chunk k writes its runs at its own begin. */
  readonly ko: HostArray;
  readonly vo: HostArray;
  /** `chunkTable`. */
  readonly chunks: Int32Array;
  /** Runs written by each chunk. */
  readonly counts: Int32Array;
}

/**
 * A thread's part of a par reduceByKey / uniqueByKey call (`runsOnPool`), self-contained (shipped
 * to the workers as source). `mode` 1 (the calling thread): claims chunks and writes their runs into
 * the scratch until none is left (`direct`: from the front, into the outputs given). 0 (a worker): the same, then, with outputs given (shared ones),
 * waits until every chunk is counted and places runs like mode 2. 2 (the calling thread, once
 * every chunk is counted): claims chunks and copies their runs into the outputs (`placeRuns`).
 * A worker that returns normally (not given up) counts itself in `ctl[4]` last, after its last write.
 */
export function runsTask(job: {
  readonly b: RunsBatch;
  readonly mode: 0 | 1 | 2;
  readonly keysOut?: HostArray;
  readonly valuesOut?: HostArray;
  readonly room?: number;
}): number {
  const { b, mode } = job;
  const { ctl, chunks, counts } = b;
  const total = counts.length;
  if (mode !== 2) {
    const k = (globalThis as unknown as { __webdplCompile: (source: string) => Kernel }).__webdplCompile(b.src);
    const front = b.direct === 1 && mode === 1;
    // The front claimer's next offset in the outputs (direct).
    let offset = 0;
    for (;;) {
      if (Atomics.load(ctl, 3) !== 0) return 0;
      let c: number;
      if (b.direct === 1) {
        const fb = Atomics.load(ctl, 0);
        const f = fb & 0xffff;
        const bk = fb >>> 16;
        if (f >= bk) break;
        const next = front ? (f + 1) | (bk << 16) : f | ((bk - 1) << 16);
        if (Atomics.compareExchange(ctl, 0, fb, next) !== fb) continue;
        c = front ? f : bk - 1;
      } else {
        c = Atomics.add(ctl, 0, 1);
        if (c >= total) break;
      }
      const begin = chunks[3 * c] as number;
      const end = chunks[3 * c + 1] as number;
      const head = chunks[3 * c + 2] === 1;
      if (front) {
        const m = k(b.x, b.x2, job.keysOut as HostArray, begin, end, head, offset, job.valuesOut);
        counts[c] = m;
        offset += m;
      } else counts[c] = k(b.x, b.x2, b.ko, begin, end, head, begin, b.vo);
      Atomics.add(ctl, 1, 1);
      Atomics.notify(ctl, 1);
    }
    if (mode === 1) return 0;
    if (job.keysOut === undefined) return returned(ctl, 0);
    // Spin for the other thread's last chunk for up to 0.15 ms (COUNT_SPIN_MS; this source is
    // shipped to workers, hence the literal), then block.
    const t0 = performance.now();
    for (;;) {
      const done = Atomics.load(ctl, 1);
      if (done >= total) break;
      if (Atomics.load(ctl, 3) !== 0) return 0;
      if (performance.now() - t0 > 0.15) Atomics.wait(ctl, 1, done, 50);
    }
  }
  const { keysOut, valuesOut } = job as { keysOut: HostArray; valuesOut: HostArray };
  let runs = 0;
  const at = new Int32Array(total);
  for (let c = 0; c < total; c++) {
    at[c] = runs;
    runs += counts[c] as number;
  }
  if (runs <= (job.room as number)) {
    // direct: the chunks before the first the workers took are in place already.
    const first = b.direct === 1 ? Atomics.load(ctl, 0) & 0xffff : 0;
    for (;;) {
      const c = first + Atomics.add(ctl, 2, 1);
      if (c >= total) break;
      const begin = chunks[3 * c] as number;
      const m = counts[c] as number;
      keysOut.set(b.ko.subarray(begin, begin + m), at[c] as number);
      valuesOut.set(b.vo.subarray(begin, begin + m), at[c] as number);
    }
  }
  return mode === 0 ? returned(ctl, runs) : runs;

  /** A worker's normal return: counted in ctl[4] (after everything it wrote). */
  function returned(ctl: Int32Array, value: number): number {
    Atomics.add(ctl, 4, 1);
    return value;
  }
}

/** `runsTask` mode 2 on the calling thread alone, over counts already known (the runs; placed when they fit). */
function placeRuns(
  b: Pick<RunsBatch, 'chunks' | 'counts' | 'ko' | 'vo'>,
  keysOut: HostArray,
  valuesOut: HostArray,
  room: number,
): number {
  const ctl = new Int32Array(5);
  return runsTask({ b: { ...b, ctl, direct: 0, src: '', x: b.ko, x2: b.vo }, mode: 2, keysOut, valuesOut, room });
}

type WaitAsync = (a: Int32Array, i: number, v: number) => { async: boolean; value: Promise<string> | string };

/**
 * Longest the calling thread spins (ms) for the workers of a par reduceByKey / uniqueByKey to
 * return once its own part is done (they place their last chunk of runs at about the same time);
 * past it, it waits for their replies.
 */
const RETURN_SPIN_MS = 0.05;

/**
 * Longest the calling thread spins (ms), once it finds no chunk left to claim, for the chunks still
 * running on the workers to be counted, before it waits with `Atomics.waitAsync` (whose wake-up came
 * 40-60 us after the last count at 2^22, where a chunk takes 80-100 us). In-process A/B at 2^22: par
 * 0.905-0.995 of the time without it. A worker that places runs spins as long before it blocks in
 * `Atomics.wait` (`runsTask`): uniqueByKey 0.94-1.00, reduceByKey 0.98-1.01 of the time without
 * (docs/benchmarks/cpu-par-2026-11-24j.md).
 */
const COUNT_SPIN_MS = 0.15;

/** Whether all `workers` count themselves returned in ctl[4] within `RETURN_SPIN_MS` (see `runsTask`). */
function workersReturned(ctl: Int32Array, workers: number): boolean {
  return spinUntil(ctl, 4, workers, RETURN_SPIN_MS);
}

/**
 * reduceByKey / uniqueByKey par over shared inputs: every thread claims chunks and writes their runs
 * into the scratch at the chunk's offset; once all are counted, the runs are copied into place by the
 * calling thread and, when the outputs are shared, by the workers too (they wait for the count
 * instead of returning; the copy was a serial 0.15-0.2 ms of a 1.7 ms uniqueByKey at 2^22,
 * docs/benchmarks/cpu-by-key-par-2026-11-24.md). Outputs too short are never touched (each thread
 * checks the total first).
 */
async function runsOnPool(
  backend: CpuBackend & { kind: 'par' },
  chunks: readonly Chunk[],
  arrays: Pick<RunsBatch, 'src' | 'x' | 'x2' | 'ko' | 'vo'>,
  head: (b: number) => boolean,
  out: { keysOut: HostArray; valuesOut: HostArray; room: number; tooShort: (runs: number) => Error },
): Promise<number> {
  const total = chunks.length;
  const { keysOut, valuesOut, room } = out;
  const n = (chunks[total - 1] as Chunk).end;
  const direct = room >= n && cpuTuning(backend).callerWorks && total < 0x8000 ? 1 : 0;
  const ctl = new Int32Array(new SharedArrayBuffer(20));
  if (direct) ctl[0] = total << 16;
  const b: RunsBatch = {
    ...arrays,
    ctl,
    direct,
    chunks: chunkTable(chunks, head),
    counts: new Int32Array(new SharedArrayBuffer(4 * total)),
  };
  const place = isShared(keysOut) && isShared(valuesOut);
  const { callerWorks, workers, settled, failed, returned } = startWorkers(
    backend,
    runsTask,
    place ? { b, mode: 0 as const, keysOut, valuesOut, room } : { b, mode: 0 as const },
    total,
  );
  try {
    if (callerWorks) runsTask({ b, mode: 1, keysOut, valuesOut });
    // The other thread is at most a chunk behind: spin for it (COUNT_SPIN_MS), then wait without
    // blocking the calling thread until every chunk is counted.
    spinUntil(b.ctl, 1, total, COUNT_SPIN_MS);
    const waitAsync = (Atomics as unknown as { waitAsync?: WaitAsync }).waitAsync;
    for (let done = Atomics.load(b.ctl, 1); done < total; done = Atomics.load(b.ctl, 1)) {
      const f = failed();
      if (f) throw f.error;
      const w = waitAsync?.(b.ctl, 1, done);
      await (w?.async ? Promise.race([w.value, settled]) : settled);
    }
  } catch (error) {
    Atomics.store(b.ctl, 3, 1);
    Atomics.notify(b.ctl, 1);
    await settled;
    throw error;
  }
  const runs = runsTask({ b, mode: 2, keysOut, valuesOut, room });
  // Every worker's task has returned normally (after its last write), so its reply can only confirm
  // that: the pool may hand those workers new jobs now (`returned`), and the call does not wait for
  // the reply (35-63 us after the workers' end at 2^22: docs/benchmarks/cpu-par-2026-11-24j.md).
  if (runs <= room && workersReturned(b.ctl, workers) && returned()) return runs;
  await settled;
  const f = failed();
  if (f) throw f.error;
  if (runs > room) throw out.tooShort(runs);
  return runs;
}
