const LOG = Number(process.env.LOG ?? 20); const n = 1 << LOG;
const u = new Uint32Array(n); for (let i = 0; i < n; i++) { let h = Math.imul(i ^ 0x9e3779b9, 0x85ebca6b); h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35); h ^= h >>> 16; u[i] = h >>> 0; }
const X = u.slice(0, n >> 1).sort(), Y = u.slice(n >> 1).sort();
const out = new Uint32Array(n), o2 = new Uint32Array(n);
const mk = (src) => new Function('return ' + src)();
const pre = `(function () { 'use strict'; const before = (a, b) => a < b; return `;
const K = {
  closure: () => { const x = X, y = Y; let i = 0, j = 0, k = 0; while (i < x.length && j < y.length) out[k++] = y[j] < x[i] ? y[j++] : x[i++]; while (i < x.length) out[k++] = x[i++]; while (j < y.length) out[k++] = y[j++]; },
  cur: mk(pre + `function (a, b, va, vb, o, ov) { const na = a.length, nb = b.length; let i = 0, j = 0, d = 0;
    while (i < na && j < nb) { const x = a[i], y = b[j]; if (before(y, x)) { o[d] = y; j++; } else { o[d] = x; i++; } d++; }
    for (; i < na; i++, d++) o[d] = a[i]; for (; j < nb; j++, d++) o[d] = b[j]; return 0; }; })()`),
  held: mk(pre + `function (a, b, va, vb, o, ov) { const na = a.length, nb = b.length; let i = 0, j = 0, d = 0;
    if (na > 0 && nb > 0) { let x = a[0], y = b[0];
      for (;;) { if (before(y, x)) { o[d++] = y; if (++j >= nb) break; y = b[j]; } else { o[d++] = x; if (++i >= na) break; x = a[i]; } } }
    for (; i < na; i++, d++) o[d] = a[i]; for (; j < nb; j++, d++) o[d] = b[j]; return 0; }; })()`),
  sel: mk(pre + `function (a, b, va, vb, o, ov) { const na = a.length, nb = b.length; let i = 0, j = 0, d = 0;
    while (i < na && j < nb) { const x = a[i], y = b[j]; const t = before(y, x); o[d++] = t ? y : x; j += t ? 1 : 0; i += t ? 0 : 1; }
    for (; i < na; i++, d++) o[d] = a[i]; for (; j < nb; j++, d++) o[d] = b[j]; return 0; }; })()`),
};
const run = (k) => k === 'closure' ? K.closure() : K[k](X, Y, undefined, undefined, o2, undefined);
const names = Object.keys(K);
const t = Object.fromEntries(names.map((k) => [k, []]));
for (let w = 0; w < 3; w++) for (const k of names) { run(k); if (k !== 'closure' && o2.join() !== out.join()) throw new Error(k); o2.fill(0); }
for (let r = 0; r < 21; r++) for (const k of names) { const a = performance.now(); run(k); t[k].push(performance.now() - a); }
for (const k of names) { const x = t[k].sort((a, b) => a - b); console.log(k.padEnd(12), x[x.length >> 1].toFixed(3)); }
