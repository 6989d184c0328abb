import * as A from '/work/main/packages/algorithms/src/index.ts';
import { execution } from '/work/main/packages/policies/src/index.ts';
const seq = execution.seq;
const LOG = Number(process.env.LOG ?? 20);
const n = 1 << LOG;
const only = process.env.ONLY?.split(',');
function rnd(n: number) { const a = new Uint32Array(n); let s = 12345; for (let i = 0; i < n; i++) { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; a[i] = s; } return a; }
const u = rnd(n);
const f = new Float32Array(n); for (let i = 0; i < n; i++) f[i] = (u[i]! >>> 8) / 2 ** 24;
const axpb = (x: number) => x * 2 + 1;
type Case = { name: string; js: () => unknown; api: () => Promise<unknown> };
const cases: Case[] = [];
{ const a = f; cases.push({ name: 'minElement', js: () => { let m = 0; for (let i = 1; i < a.length; i++) if (a[i]! < a[m]!) m = i; return m; }, api: () => A.minElement(seq, a) as Promise<unknown> }); }
{ const a = f; const out = new Float32Array(n); const o2 = new Float32Array(n); cases.push({ name: 'transform', js: () => { for (let i = 0; i < a.length; i++) out[i] = a[i]! * 2 + 1; return out; }, api: () => A.transform(seq, a, o2, axpb) as Promise<unknown> }); }
{ const s = new Uint32Array(n); for (let i = 0; i < n; i++) s[i] = u[i]! >>> 8; const counts = new Uint32Array(256); const c2 = new Uint32Array(256); const bins = { bins: 256, lo: 0, hi: 2 ** 24 };
  cases.push({ name: 'histogram', js: () => { counts.fill(0); for (let i = 0; i < s.length; i++) counts[s[i]! >>> 16] = counts[s[i]! >>> 16]! + 1; return counts; }, api: () => A.histogram(seq, s, bins, c2) as Promise<unknown> }); }
{ const m = new Uint32Array(n); for (let i = 0; i < n; i++) m[i] = Math.imul(i, 2654435761) & (n - 1); const a = u; const out = new Uint32Array(n); const o2 = new Uint32Array(n);
  cases.push({ name: 'gather', js: () => { for (let i = 0; i < n; i++) out[i] = a[m[i]!]!; return out; }, api: () => A.gather(seq, m, a, o2) as Promise<unknown> });
  const o3 = new Uint32Array(n); const o4 = new Uint32Array(n);
  cases.push({ name: 'scatter', js: () => { for (let i = 0; i < n; i++) o3[m[i]!] = a[i]!; return o3; }, api: () => A.scatter(seq, a, m, o4) as Promise<unknown> }); }
{ const x = u.slice(0, n >> 1).sort(); const y = u.slice(n >> 1).sort(); const out = new Uint32Array(n); const o2 = new Uint32Array(n);
  cases.push({ name: 'merge', js: () => { let i = 0, j = 0, k = 0; while (i < x.length && j < y.length) out[k++] = y[j]! < x[i]! ? y[j++]! : x[i++]!; while (i < x.length) out[k++] = x[i++]!; while (j < y.length) out[k++] = y[j++]!; return out; }, api: () => A.merge(seq, x, y, o2) as Promise<unknown> }); }
{ const k = new Uint32Array(n); for (let i = 0; i < n; i++) k[i] = i >>> 4; const a = u; const vo = new Uint32Array(n); const v2 = new Uint32Array(n);
  cases.push({ name: 'scanByKey', js: () => { let acc = 0; for (let i = 0; i < n; i++) { acc = i > 0 && k[i] === k[i - 1] ? (acc + a[i]!) >>> 0 : a[i]!; vo[i] = acc; } return vo; }, api: () => A.inclusiveScanByKey(seq, k, a, v2) as Promise<unknown> }); }
const R = Number(process.env.R ?? 21);
for (const c of cases) {
  if (only && !only.includes(c.name)) continue;
  const tj: number[] = [], ta: number[] = [];
  for (let w = 0; w < 3; w++) { c.js(); await c.api(); }
  for (let r = 0; r < R; r++) {
    let t = performance.now(); c.js(); tj.push(performance.now() - t);
    t = performance.now(); await c.api(); ta.push(performance.now() - t);
  }
  const med = (x: number[]) => x.sort((p, q) => p - q)[x.length >> 1]!;
  const j = med(tj), a = med(ta);
  console.log(`${c.name.padEnd(11)} 2^${LOG} js ${j.toFixed(3)} api ${a.toFixed(3)} ratio ${(j / a).toFixed(2)}x`);
}
process.exit(0);
