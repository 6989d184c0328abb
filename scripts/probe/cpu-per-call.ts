/**
 * Per-call cost of `execution.seq` at 2^10 elements with an inline lambda, against a plain loop
 * (issue 11: <= 3x), from a process's first call to its steady state. One algorithm per process (the
 * first calls of a process are part of the point); run it once per algorithm:
 *   node_modules/.bin/esbuild scripts/probe/cpu-per-call.ts --bundle --platform=node --format=esm \
 *     --outfile=/tmp/cpc.mjs --external:webgpu \
 *     --banner:js="import { createRequire as __cr } from 'module'; const require = __cr(import.meta.url);"
 *   for a in countIf reduce transform copyIf inclusiveScan transformReduce minElement scanLambda findIf adjacentDifference; do
 *     node /tmp/cpc.mjs $a; done
 *
 * Batches of B calls (default 200) alternate between the library call and the plain loop, so both
 * warm up in the same process and any disturbance hits both. The plain loop is written two ways, as
 * a developer would: a closure over the module's arrays (V8 specializes it on them: the fastest form)
 * and a function taking the arrays as arguments; the ratio is against the faster. Prints, per span of
 * calls, the median microseconds per call of each batch in it, and one JSON line.
 */

import {
  adjacentDifference,
  copyIf,
  countIf,
  findIf,
  inclusiveScan,
  minElement,
  reduce,
  transform,
  transformReduce,
} from '../../packages/algorithms/src/index';
import { execution } from '../../packages/policies/src/index';

const algo = process.argv[2] ?? 'countIf';
const B = Number(process.env.PROBE_BATCH ?? 200);
const TOTAL = Number(process.env.PROBE_CALLS ?? 60000);
const n = 1 << 10;
const a = new Float32Array(n);
for (let i = 0; i < n; i++) a[i] = ((i * 0.37) % 1) + 0.001 * (i % 7);
const out = new Float32Array(n);
const seq = execution.seq;

type Case = {
  lib: () => Promise<unknown>;
  closure: () => unknown;
  args: (x: Float32Array, y: Float32Array) => unknown;
};
/** The plain scan loops (f32 prefixes rounded at each step), the baseline of both scan cases. */
const scanLoops: Pick<Case, 'closure' | 'args'> = {
  closure: () => {
    let s = 0;
    for (let i = 0; i < a.length; i++) {
      s = Math.fround(s + (a[i] as number));
      out[i] = s;
    }
    return out;
  },
  args: (x, y) => {
    let s = 0;
    for (let i = 0; i < x.length; i++) {
      s = Math.fround(s + (x[i] as number));
      y[i] = s;
    }
    return y;
  },
};
const cases: Record<string, Case> = {
  countIf: {
    lib: () => countIf(seq, a, (v: number) => v > 0.5),
    closure: () => {
      let c = 0;
      for (let i = 0; i < a.length; i++) if ((a[i] as number) > 0.5) c++;
      return c;
    },
    args: (x) => {
      let c = 0;
      for (let i = 0; i < x.length; i++) if ((x[i] as number) > 0.5) c++;
      return c;
    },
  },
  reduce: {
    lib: () => reduce(seq, a),
    closure: () => {
      let s = 0;
      for (let i = 0; i < a.length; i++) s += a[i] as number;
      return Math.fround(s);
    },
    args: (x) => {
      let s = 0;
      for (let i = 0; i < x.length; i++) s += x[i] as number;
      return Math.fround(s);
    },
  },
  transform: {
    lib: () => transform(seq, a, out, (v: number) => v * 2 + 1),
    closure: () => {
      for (let i = 0; i < a.length; i++) out[i] = (a[i] as number) * 2 + 1;
      return out;
    },
    args: (x, y) => {
      for (let i = 0; i < x.length; i++) y[i] = (x[i] as number) * 2 + 1;
      return y;
    },
  },
  copyIf: {
    lib: () => copyIf(seq, a, out, (v: number) => v > 0.5),
    closure: () => {
      let k = 0;
      for (let i = 0; i < a.length; i++) if ((a[i] as number) > 0.5) out[k++] = a[i] as number;
      return k;
    },
    args: (x, y) => {
      let k = 0;
      for (let i = 0; i < x.length; i++) if ((x[i] as number) > 0.5) y[k++] = x[i] as number;
      return k;
    },
  },
  inclusiveScan: {
    lib: () => inclusiveScan(seq, a, out),
    ...scanLoops,
  },
  transformReduce: {
    lib: () =>
      transformReduce(
        seq,
        a,
        0,
        (p: number, q: number) => p + q,
        (v: number) => v * v,
      ),
    closure: () => {
      let s = 0;
      for (let i = 0; i < a.length; i++) s += (a[i] as number) * (a[i] as number);
      return Math.fround(s);
    },
    args: (x) => {
      let s = 0;
      for (let i = 0; i < x.length; i++) s += (x[i] as number) * (x[i] as number);
      return Math.fround(s);
    },
  },
  minElement: {
    lib: () => minElement(seq, a),
    closure: () => {
      let m = 0;
      for (let i = 1; i < a.length; i++) if ((a[i] as number) < (a[m] as number)) m = i;
      return m;
    },
    args: (x) => {
      let m = 0;
      for (let i = 1; i < x.length; i++) if ((x[i] as number) < (x[m] as number)) m = i;
      return m;
    },
  },
  scanLambda: {
    lib: () => inclusiveScan(seq, a, out, (p: number, q: number) => p + q),
    ...scanLoops,
  },
  findIf: {
    // Not found: the whole array is read.
    lib: () => findIf(seq, a, (v: number) => v > 2),
    closure: () => {
      for (let i = 0; i < a.length; i++) if ((a[i] as number) > 2) return i;
      return a.length;
    },
    args: (x) => {
      for (let i = 0; i < x.length; i++) if ((x[i] as number) > 2) return i;
      return x.length;
    },
  },
  adjacentDifference: {
    lib: () => adjacentDifference(seq, a, out, (p: number, q: number) => p - q),
    closure: () => {
      out[0] = a[0] as number;
      for (let i = 1; i < a.length; i++) out[i] = (a[i] as number) - (a[i - 1] as number);
      return out;
    },
    args: (x, y) => {
      y[0] = x[0] as number;
      for (let i = 1; i < x.length; i++) y[i] = (x[i] as number) - (x[i - 1] as number);
      return y;
    },
  },
};
const c = cases[algo];
if (!c) throw new Error(`unknown algorithm ${algo}: ${Object.keys(cases).join(', ')}`);

const lib: number[] = [];
const clo: number[] = [];
const arg: number[] = [];
let sink = 0;
for (let done = 0; done < TOTAL; done += B) {
  let t0 = performance.now();
  for (let i = 0; i < B; i++) await c.lib();
  lib.push(((performance.now() - t0) * 1000) / B);
  t0 = performance.now();
  for (let i = 0; i < B; i++) sink += Number(c.closure() !== undefined);
  clo.push(((performance.now() - t0) * 1000) / B);
  t0 = performance.now();
  for (let i = 0; i < B; i++) sink += Number(c.args(a, out) !== undefined);
  arg.push(((performance.now() - t0) * 1000) / B);
}
const med = (v: number[]): number => [...v].sort((p, q) => p - q)[v.length >> 1] as number;
// Spans of calls: the first batch, the first 1000 / 5000 / 10000 calls, and the last half (steady).
const spans: [string, number, number][] = [
  ['first batch', 0, 1],
  ['calls 1-1000', 0, Math.ceil(1000 / B)],
  ['calls 1000-5000', Math.ceil(1000 / B), Math.ceil(5000 / B)],
  ['calls 5000-10000', Math.ceil(5000 / B), Math.ceil(10000 / B)],
  ['steady (last half)', lib.length >> 1, lib.length],
];
const rows = spans
  .filter(([, from]) => from < lib.length)
  .map(([name, from, to]) => {
    const l = med(lib.slice(from, to));
    const base = Math.min(med(clo.slice(from, to)), med(arg.slice(from, to)));
    return {
      span: name,
      libUs: l,
      closureUs: med(clo.slice(from, to)),
      argsUs: med(arg.slice(from, to)),
      ratio: l / base,
    };
  });
for (const r of rows)
  console.log(
    `${algo.padEnd(16)} ${r.span.padEnd(20)} seq ${r.libUs.toFixed(3)} us  loop ${r.closureUs.toFixed(3)} (closure) / ${r.argsUs.toFixed(3)} (args) us  ratio ${r.ratio.toFixed(2)}x`,
  );
console.log(JSON.stringify({ algo, n, batch: B, calls: TOTAL, rows, sink: sink > 0 }));
process.exit(0);
