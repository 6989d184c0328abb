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
 * and in-place scans work. Reads the input once, writes the output once plus the fixed-up runs.
 *
 * reduceByKey / uniqueByKey: (1) the runs are counted (par: per chunk, a chunk counting the runs
 * that start in it); (2) outputs are checked against the count (so an output too short is an error
 * before anything is written); (3) each run is written by the chunk where it starts (reduceByKey
 * folds the run's values in order, reading past the chunk's end while the run continues). A run
 * longer than a chunk is folded by one thread.
 *
 * Floats: accumulators follow the operator's JS form (built-in f32 plus adds in f64 and rounds at
 * each store; f32 lambdas round every step), in order within each run.
 */
import type { GpuFunction, HostArray, NumericType } from '@webdpl/core';
import { type Chunk, type CpuBackend, compileOnce, planParallel, sharedMemoryAvailable } from '@webdpl/policies';
import { sharedView } from './compaction';
import type { Kernel } from './kernels';
import { acquireScratch, releaseScratch } from './scratch';
import { plainScanSeq, runChunks, stage } from './staging';

/** The functions of a by-key call and the types they run on. */
export interface ByKeyFunctions {
  /** The value operator (scans and reduceByKey). */
  readonly op?: GpuFunction;
  readonly keyEq: GpuFunction;
  readonly keyType: NumericType;
  readonly valueType: NumericType;
}

type Kind = 'inclusive' | 'exclusive' | 'count' | 'reduce' | 'unique';

/**
 * The loop body of each kind, as a `Kernel` (x keys, x2 values, y output, b, e, h, c, f):
 * - inclusive / exclusive, h false: scans [b, e) (element b starts a run; without the init `c`
 *   unless it is a true head), sets f[0] (when given) to 1 | 2 (a head in [b, e) | b is a true
 *   head), returns the last run's accumulator. h true: the fix-up of the first run from carry c.
 * - count: the number of runs starting in [b, e).
 * - reduce / unique: writes the runs starting in [b, e): keys to y[c + r], values (reduce: the
 *   fold of the run, read on past e while it continues; unique: the run's first value) to f[c + r].
 */
function body(kind: Kind): string {
  const head = (i: string) => `(${i} === 0 || !eq(x[${i} - 1], x[${i}]))`;
  switch (kind) {
    case 'inclusive':
    case 'exclusive': {
      const incl = kind === 'inclusive';
      return `if (h) {
      for (let i = b; i < e; i++) {
        if (i > b && !eq(x[i - 1], x[i])) return 0;
        ${incl ? 'y[i] = op(c, y[i]);' : 'y[i] = i === b ? c : op(c, y[i]);'}
      }
      return 0;
    }
    if (b >= e) return 0;
    let flags = 0;
    let acc;
    let prev = x[b];
    const v0 = x2[b];
    if (${head('b')}) {
      flags = 3;
      ${incl ? 'acc = v0; y[b] = acc;' : 'y[b] = c; acc = op(c, v0);'}
    } else {
      acc = v0;
      ${incl ? 'y[b] = acc;' : ''}
    }
    for (let i = b + 1; i < e; i++) {
      const k = x[i];
      const v = x2[i];
      if (!eq(prev, k)) {
        flags |= 1;
        ${incl ? 'acc = v; y[i] = acc;' : 'y[i] = c; acc = op(c, v);'}
      } else {
        ${incl ? 'acc = op(acc, v); y[i] = acc;' : 'y[i] = acc; acc = op(acc, v);'}
      }
      prev = k;
    }
    if (f !== undefined) f[0] = flags;
    return acc;`;
    }
    case 'count':
      return `let m = 0;
    for (let i = b; i < e; i++) if (${head('i')}) m++;
    return m;`;
    case 'reduce':
      return `const n = x.length;
    let o = c;
    let i = b;
    while (i < e && !${head('i')}) i++;
    while (i < e) {
      const k = x[i];
      let acc = x2[i];
      let j = i + 1;
      let p = k;
      for (; j < n; j++) {
        const q = x[j];
        if (!eq(p, q)) break;
        acc = op(acc, x2[j]);
        p = q;
      }
      y[o] = k;
      f[o] = acc;
      o++;
      i = j;
    }
    return o - c;`;
    case 'unique':
      return `let o = c;
    for (let i = b; i < e; i++) {
      if (${head('i')}) {
        y[o] = x[i];
        f[o] = x2[i];
        o++;
      }
    }
    return o - c;`;
  }
}

function factory(kind: Kind): string {
  return `(op, eq) => function by_key_${kind}(x, x2, y, b, e, h, c, f) {
    'use strict';
    ${body(kind)}
  }`;
}

/** The kernel of `kind` for the calling thread, and its self-contained source for workers (if any). */
function kernelOf(kind: Kind, fns: ByKeyFunctions): { kernel: Kernel; source: string | undefined } {
  const kt = [fns.keyType, fns.keyType];
  const vt = [fns.valueType, fns.valueType];
  const tag = `/* webdpl by-key ${kind} k:${fns.keyType} v:${fns.valueType} */`;
  let source: string | undefined;
  try {
    const op = fns.op ? fns.op.jsSource(vt) : 'undefined';
    source = `(${factory(kind)})(\n${op},\n${fns.keyEq.jsSource(kt)}\n) ${tag}`;
  } catch {
    source = undefined;
  }
  if (source !== undefined) return { kernel: compileOnce<Kernel>(source), source };
  const f = compileOnce<(op: unknown, eq: unknown) => Kernel>(`${factory(kind)} ${tag}`);
  return { kernel: f(fns.op?.js(vt), fns.keyEq.js(kt)), source: undefined };
}

/**
 * Chunks of a par run over n elements of `arrays`, or undefined (seq). Like the plain scans, plain
 * (non-shared) arrays stay seq unless the tuning sets parallelThreshold: staging them in shared
 * memory (and the output back) cost more than the second thread saved (reduceByKey u32 at 2^22 on
 * the loaded 2-core VM: par 41 ms, seq 30 ms; scan by key 55 vs 45 ms).
 */
function parChunks(
  backend: CpuBackend,
  n: number,
  source: string | undefined,
  arrays: readonly HostArray[],
): readonly Chunk[] | undefined {
  if (backend.kind !== 'par' || source === undefined || !sharedMemoryAvailable()) return undefined;
  if (plainScanSeq(backend, arrays)) return undefined;
  const chunks = planParallel(backend, n);
  return chunks && chunks.length > 1 ? chunks : undefined;
}

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
  const kind = exclusive ? 'exclusive' : 'inclusive';
  const { kernel, source } = kernelOf(kind, fns);
  const chunks = parChunks(backend, n, source, [keys, values, output]);
  if (!chunks || backend.kind !== 'par' || source === undefined) {
    kernel(keys, values, output, 0, n, false, init, undefined);
    return;
  }
  const st = stage(keys, values, output, n);
  const flags = new Int32Array(new SharedArrayBuffer(4 * chunks.length));
  const accs = await runChunks(backend, chunks, (c, k) => ({
    s: source,
    x: st.x,
    x2: st.x2,
    y: st.y,
    b: c.begin,
    e: c.end,
    h: false,
    c: init,
    f: flags.subarray(k, k + 1),
  }));
  const op = fns.op?.js([fns.valueType, fns.valueType]) as (a: number, b: number) => number;
  // Carries into the chunks whose first element continues a run (the others need none).
  const fix: { chunk: Chunk; carry: number }[] = [];
  let carry = 0;
  chunks.forEach((chunk, k) => {
    const fl = flags[k] as number;
    if (k > 0 && (fl & 2) === 0) fix.push({ chunk, carry });
    const acc = accs[k] as number;
    carry = (fl & 1) !== 0 ? acc : op(carry, acc);
  });
  if (fix.length > 0) {
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
 * Where reduceByKey / uniqueByKey put their results, once the number of runs is known: checks the
 * outputs against it (throws when one is too short) and returns them.
 */
export type RunOutputs = (runs: number) => { readonly keys: HostArray; readonly values: HostArray };

/**
 * reduceByKey (`reduce`) or uniqueByKey: counts the runs, asks `outputs` for the arrays (which
 * checks their lengths before anything is written), writes each run's first key and the fold of
 * its values (uniqueByKey: its first value); returns the number of runs. `room`: elements both
 * outputs hold; at n or more no run can fall outside them, so seq writes in one pass without
 * counting first (the count pass read every key twice more).
 */
export async function cpuRunsByKey(
  backend: CpuBackend,
  keys: HostArray,
  values: HostArray,
  outputs: RunOutputs,
  fns: ByKeyFunctions,
  reduce: boolean,
  room = 0,
): Promise<number> {
  const n = keys.length;
  if (n === 0) return 0;
  const count = kernelOf('count', fns);
  const write = kernelOf(reduce ? 'reduce' : 'unique', fns);
  const chunks = parChunks(backend, n, write.source, [keys, values]);
  const serial = !chunks || backend.kind !== 'par' || write.source === undefined || count.source === undefined;
  if (serial && room >= n) {
    // n runs at most: the outputs hold them all.
    const out = outputs(n);
    return write.kernel(keys, values, out.keys, 0, n, false, 0, out.values) as number;
  }
  if (serial) {
    const runs = count.kernel(keys, undefined, undefined, 0, n, false, 0, undefined);
    const out = outputs(runs);
    write.kernel(keys, values, out.keys, 0, n, false, 0, out.values);
    return runs;
  }
  const st = stage(keys, values, undefined, n);
  const counts = await runChunks(backend, chunks, (c) => ({
    s: count.source as string,
    x: st.x,
    b: c.begin,
    e: c.end,
    h: false,
    c: 0,
  }));
  const offsets: number[] = [];
  let runs = 0;
  for (const m of counts) {
    offsets.push(runs);
    runs += m;
  }
  const out = outputs(runs);
  const kbuf = acquireScratch(Math.max(runs, 1) * 4);
  const vbuf = acquireScratch(Math.max(runs, 1) * 4);
  const ko = sharedView(fns.keyType, kbuf, runs);
  const vo = sharedView(fns.valueType, vbuf, runs);
  await runChunks(backend, chunks, (c, k) => ({
    s: write.source as string,
    x: st.x,
    x2: st.x2,
    y: ko,
    b: c.begin,
    e: c.end,
    h: false,
    c: offsets[k] as number,
    f: vo,
  }));
  out.keys.set(ko);
  out.values.set(vo);
  releaseScratch(kbuf);
  releaseScratch(vbuf);
  st.finish();
  return runs;
}
