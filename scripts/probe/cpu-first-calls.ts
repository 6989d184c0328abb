/**
 * par's first calls after the pool starts, in a fresh process (issue 11). Each round: one par call
 * then one seq call of `algo` on allocShared u32 arrays of 2^`log2n`; prints every call's ms.
 *   node_modules/.bin/esbuild scripts/probe/cpu-first-calls.ts --bundle --platform=node --format=esm \
 *     --outfile=/tmp/cfc.mjs --external:webgpu \
 *     --banner:js="import { createRequire as __cr } from 'module'; const require = __cr(import.meta.url);"
 *   node /tmp/cfc.mjs <histogram|reduce|countIf|transform> <log2n> [rounds=30] [order=ps|sp]
 * Run once per measurement: the first calls of a process are the point.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { countIf, histogram, reduce, transform } from '../../packages/algorithms/src/index';
import { allocShared, execution } from '../../packages/policies/src/index';

/** VERBOSE: each thread's name and the CPU it last ran on (/proc, Linux). */
const cpus = (): string =>
  readdirSync('/proc/self/task')
    .map((t) => {
      try {
        const st = readFileSync(`/proc/self/task/${t}/stat`, 'utf8');
        const name = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'));
        const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
        return `${name.replace(/ /g, '_')}:${f[36]}:${Number(f[11]) + Number(f[12])}`;
      } catch {
        return '';
      }
    })
    .join(' ');

const algo = process.argv[2] ?? 'histogram';
const n = 2 ** Number(process.argv[3] ?? 19);
const rounds = Number(process.argv[4] ?? 30);
const order = process.argv[5] ?? 'ps';
let s = 7;
const x = allocShared('u32', n) as Uint32Array;
for (let i = 0; i < n; i++) {
  s = (Math.imul(s, 1103515245) + 12345) >>> 0;
  x[i] = s;
}
const y = allocShared('u32', n) as Uint32Array;
const o = allocShared('u32', 256) as Uint32Array;
const spec = { bins: 256, lo: 0, hi: 2 ** 32 };
type P = typeof execution.seq;
const call = async (p: P): Promise<unknown> => {
  switch (algo) {
    case 'histogram':
      return histogram(p, x, spec, o);
    case 'reduce':
      return reduce(p, x);
    case 'countIf':
      return countIf(p, x, (v: number) => (v & 1) === 0);
    case 'transform':
      return transform(p, x, y, (v: number) => v * 3 + 1);
  }
  throw new Error(algo);
};
const par: number[] = [];
const seq: number[] = [];
let check = true;
for (let r = 0; r < rounds; r++) {
  for (const k of order) {
    const p = k === 'p' ? execution.par : execution.seq;
    const t0 = performance.now();
    const v = await call(p);
    (k === 'p' ? par : seq).push(performance.now() - t0);
    if (process.env.VERBOSE)
      console.log(`-- ${k} ${r} ${(performance.now() - t0).toFixed(2)} at ${t0.toFixed(1)} ${cpus()}`);
    if (r === 0 && k === 'p' && algo === 'reduce') check = v === (await reduce(execution.seq, x));
  }
}
const med = (a: number[]) => [...a].sort((p, q) => p - q)[a.length >> 1] as number;
const f = (a: number[]) => a.map((v) => v.toFixed(2)).join(' ');
console.log(`${algo} 2^${Math.log2(n)} ${check ? '' : 'MISMATCH '}par[0] ${par[0]?.toFixed(2)}`);
console.log(`par ${f(par.slice(1))}`);
console.log(`seq ${f(seq)}`);
const rest = par.slice(1);
console.log(
  `summary: par max(1..) ${Math.max(...rest).toFixed(2)} med(1..10) ${med(rest.slice(0, 10)).toFixed(2)} med(all) ${med(rest).toFixed(2)} | seq max ${Math.max(...seq).toFixed(2)} med ${med(seq).toFixed(2)} | par>seqmax ${rest.filter((v) => v > Math.max(med(seq) * 1.5, med(seq) + 0.1)).length}`,
);
process.exit(0);
