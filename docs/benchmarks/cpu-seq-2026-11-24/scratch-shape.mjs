const LOG = Number(process.env.LOG ?? 20); const n = 1 << LOG;
const u = new Uint32Array(n); let s = 12345; for (let i = 0; i < n; i++) { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; u[i] = s; }
const f = new Float32Array(n); for (let i = 0; i < n; i++) f[i] = (u[i] >>> 8) / 2 ** 24;
const out = new Float32Array(n), o2 = new Float32Array(n);
const mk = (src) => new Function('return ' + src)();
const cases = {
  tr_closure: () => { for (let i = 0; i < f.length; i++) out[i] = f[i] * 2 + 1; },
  tr_simple: ((k) => () => k(f, undefined, o2, 0, n))(mk(`function(x, x2, y, b, e) { for (let i = b; i < e; i++) y[i] = x[i] * 2 + 1; return 0; }`)),
  tr_unroll4: ((k) => () => k(f, undefined, o2, 0, n))(mk(`function(x, x2, y, b, e) { let i = b; for (; i + 3 < e; i += 4) { const v0 = x[i], v1 = x[i+1], v2 = x[i+2], v3 = x[i+3]; y[i] = v0*2+1; y[i+1] = v1*2+1; y[i+2] = v2*2+1; y[i+3] = v3*2+1; } for (; i < e; i++) y[i] = x[i] * 2 + 1; return 0; }`)),
  tr_unroll8: ((k) => () => k(f, undefined, o2, 0, n))(mk(`function(x, x2, y, b, e) { let i = b; for (; i + 7 < e; i += 8) { const v0 = x[i], v1 = x[i+1], v2 = x[i+2], v3 = x[i+3], v4 = x[i+4], v5 = x[i+5], v6 = x[i+6], v7 = x[i+7]; y[i] = v0*2+1; y[i+1] = v1*2+1; y[i+2] = v2*2+1; y[i+3] = v3*2+1; y[i+4] = v4*2+1; y[i+5] = v5*2+1; y[i+6] = v6*2+1; y[i+7] = v7*2+1; } for (; i < e; i++) y[i] = x[i] * 2 + 1; return 0; }`)),
  tr_sub: ((k) => () => k(f, undefined, o2, 0, n))(mk(`function(x, x2, y, b, e) { const xs = x.subarray(b, e), ys = y.subarray(b, e); const m = xs.length; for (let i = 0; i < m; i++) ys[i] = xs[i] * 2 + 1; return 0; }`)),
  tr_il8: ((k) => () => k(f, undefined, o2, 0, n))(mk(`function(x, x2, y, b, e) { let i = b; for (; i + 7 < e; i += 8) { y[i] = x[i]*2+1; y[i+1] = x[i+1]*2+1; y[i+2] = x[i+2]*2+1; y[i+3] = x[i+3]*2+1; y[i+4] = x[i+4]*2+1; y[i+5] = x[i+5]*2+1; y[i+6] = x[i+6]*2+1; y[i+7] = x[i+7]*2+1; } for (; i < e; i++) y[i] = x[i] * 2 + 1; return 0; }`)),
  tr_fac8: ((k) => () => k(f, undefined, o2, 0, n))(mk(`(t, r) => (x, x2, y, b, e) => { let i = b; for (; i + 7 < e; i += 8) { y[i] = t(x[i]); y[i+1] = t(x[i+1]); y[i+2] = t(x[i+2]); y[i+3] = t(x[i+3]); y[i+4] = t(x[i+4]); y[i+5] = t(x[i+5]); y[i+6] = t(x[i+6]); y[i+7] = t(x[i+7]); } for (; i < e; i++) y[i] = t(x[i]); return 0; }`)((x) => x * 2 + 1)),
  tr_fac1: ((k) => () => k(f, undefined, o2, 0, n))(mk(`(t, r) => (x, x2, y, b, e) => { for (let i = b; i < e; i++) y[i] = t(x[i]); return 0; }`)((x) => x * 2 + 1)),
  tr_fr8: ((k) => () => k(f, undefined, o2, 0, n))(mk(`(t, r) => (x, x2, y, b, e) => { let i = b; for (; i + 7 < e; i += 8) { y[i] = t(x[i]); y[i+1] = t(x[i+1]); y[i+2] = t(x[i+2]); y[i+3] = t(x[i+3]); y[i+4] = t(x[i+4]); y[i+5] = t(x[i+5]); y[i+6] = t(x[i+6]); y[i+7] = t(x[i+7]); } for (; i < e; i++) y[i] = t(x[i]); return 0; }`)((a) => Math.fround(Math.fround(a * 2) + 1))),
  tr_fr1: ((k) => () => k(f, undefined, o2, 0, n))(mk(`(t, r) => (x, x2, y, b, e) => { for (let i = b; i < e; i++) y[i] = t(x[i]); return 0; }`)((a) => Math.fround(Math.fround(a * 2) + 1))),
  mn_closure: () => { let m = 0; for (let i = 1; i < f.length; i++) if (f[i] < f[m]) m = i; return m; },
  mn_simple: ((k) => () => k(f, undefined, undefined, 0, n))(mk(`function(x, x2, y, b, e) { let lo = Infinity, mi = -1; for (let i = b; i < e; i++) { const v = x[i]; if (v < lo) { lo = v; mi = i; } } return mi; }`)),
  mn_unroll4: ((k) => () => k(f, undefined, undefined, 0, n))(mk(`function(x, x2, y, b, e) { let lo = Infinity, mi = -1; let i = b; for (; i + 3 < e; i += 4) { const v0 = x[i], v1 = x[i+1], v2 = x[i+2], v3 = x[i+3]; if (v0 < lo || v1 < lo || v2 < lo || v3 < lo) { if (v0 < lo) { lo = v0; mi = i; } if (v1 < lo) { lo = v1; mi = i+1; } if (v2 < lo) { lo = v2; mi = i+2; } if (v3 < lo) { lo = v3; mi = i+3; } } } for (; i < e; i++) { const v = x[i]; if (v < lo) { lo = v; mi = i; } } return mi; }`)),
  mn_min4: ((k) => () => k(f, undefined, undefined, 0, n))(mk(`function(x, x2, y, b, e) { let lo = Infinity, mi = -1; let i = b; for (; i + 3 < e; i += 4) { const v0 = x[i], v1 = x[i+1], v2 = x[i+2], v3 = x[i+3]; const m01 = v1 < v0 ? v1 : v0, m23 = v3 < v2 ? v3 : v2; if ((m23 < m01 ? m23 : m01) < lo) { if (v0 < lo) { lo = v0; mi = i; } if (v1 < lo) { lo = v1; mi = i+1; } if (v2 < lo) { lo = v2; mi = i+2; } if (v3 < lo) { lo = v3; mi = i+3; } } } for (; i < e; i++) { const v = x[i]; if (v < lo) { lo = v; mi = i; } } return mi; }`)),
};
const only = process.env.ONLY ? new RegExp(process.env.ONLY) : null;
const names = Object.keys(cases).filter((k) => !only || only.test(k));
const t = Object.fromEntries(names.map((k) => [k, []]));
for (let w = 0; w < 5; w++) for (const k of names) cases[k]();
for (let r = 0; r < 31; r++) for (const k of names) { const a = performance.now(); cases[k](); t[k].push(performance.now() - a); }
for (const k of names) { const x = t[k].sort((a, b) => a - b); console.log(k.padEnd(12), x[x.length >> 1].toFixed(3)); }
