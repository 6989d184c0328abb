/**
 * cpuHistogram's exact integer kernels ('shift', 'div') against a reference: both of their loops
 * (counts straight into the output when the bins outnumber the range's elements or exceed
 * LOCAL_BINS_MAX, else into a local array HIST_UNROLL (8) elements per step, then added; 'shift' with
 * bins of 2^16 or more over enough elements into 2^(32 - w) words with no range check), every tail
 * length (with and without a full step),
 * values below, inside and above the bins, seq and par, plain and shared input, counts added to
 * what the output's other bins hold untouched.
 */
import type { HostArray, NumericType } from '@webdpl/core';
import { createPool } from '@webdpl/policies';
import { afterAll, describe, expect, it } from 'vitest';
import { type CpuBinKind, cpuHistogram } from './histogram';
import { alloc, diff, rng, sharedCopy, testBackends } from './test-data';

const pool = createPool({ size: 2 });
afterAll(() => pool.close());

interface Case {
  type: NumericType;
  kind: CpuBinKind;
  lo: number;
  /** log2 of the width ('shift') or the width ('div'). */
  scale: number;
  bins: number;
}

const width = (c: Case) => (c.kind === 'shift' ? 2 ** c.scale : c.scale);

function reference(c: Case, x: HostArray): Uint32Array {
  const out = new Uint32Array(c.bins);
  const w = width(c);
  for (const v of x) {
    if (v < c.lo || v >= c.lo + c.bins * w) continue;
    const k = Math.floor((v - c.lo) / w);
    out[k] = (out[k] as number) + 1;
  }
  return out;
}

/** Values from a little below lo to a little above the last bin, some exactly at bin edges. */
function data(c: Case, n: number, seed: number): HostArray {
  const r = rng(n * 7 + seed);
  const w = width(c);
  const span = c.bins * w;
  const x = alloc(c.type, n);
  for (let i = 0; i < n; i++) {
    const k = r() % (c.bins + 2);
    const v = r() % 4 === 0 ? c.lo + (k - 1) * w : c.lo - w + Math.floor(((r() >>> 0) / 2 ** 32) * (span + 2 * w));
    x[i] = c.type === 'u32' ? Math.min(Math.max(v, 0), 2 ** 32 - 1) : Math.min(Math.max(v, -(2 ** 31)), 2 ** 31 - 1);
  }
  return x;
}

function params(c: Case): Float64Array {
  const p = new Float64Array(4 + c.bins + 1);
  p.set([c.lo, c.scale, c.bins + 1, 0]);
  for (let k = 0; k <= c.bins; k++) p[4 + k] = c.lo + k * width(c);
  return p;
}

const CASES: Case[] = [
  { type: 'u32', kind: 'shift', lo: 1000, scale: 4, bins: 1 },
  { type: 'u32', kind: 'shift', lo: 2 ** 28, scale: 20, bins: 256 },
  { type: 'i32', kind: 'shift', lo: -5000, scale: 3, bins: 100 },
  { type: 'u32', kind: 'div', lo: 7, scale: 3, bins: 3 },
  { type: 'i32', kind: 'div', lo: -(2 ** 20), scale: 12345, bins: 170 },
  // Past LOCAL_BINS_MAX: the direct loop even for ranges longer than the bins.
  { type: 'u32', kind: 'shift', lo: 0, scale: 1, bins: (1 << 16) + 1 },
  // Bins of 2^26: the wide loop (no range check) from WIDE_MIN elements (~3% of the values outside
  // the bins), and below it; bins of 2^28 / 2^29 with ~30% outside: the sample keeps the checked loop.
  { type: 'u32', kind: 'shift', lo: 5, scale: 26, bins: 62 },
  { type: 'i32', kind: 'shift', lo: -(2 ** 31) + 7, scale: 26, bins: 62 },
  { type: 'u32', kind: 'shift', lo: 5, scale: 28, bins: 3 },
  { type: 'i32', kind: 'shift', lo: -(2 ** 31) + 7, scale: 29, bins: 5 },
];

describe.each(testBackends(pool))('cpuHistogram exact bins on $name', ({ backend }) => {
  for (const c of CASES) {
    it(`${c.type} ${c.kind} ${c.bins} bins: tails, sizes around the bin count, shared input`, async () => {
      const tails = Array.from({ length: 18 }, (_, i) => i);
      // Around WIDE_MIN (512) and 4096: every tail length of the wide loop's steps.
      const wide = c.scale >= 16 ? Array.from({ length: 36 }, (_, i) => (i < 18 ? 510 : 4094 - 18) + i) : [];
      const sizes = [...tails, ...wide, c.bins - 1, c.bins, c.bins + 1, c.bins + 3, 4099, 2 ** 17 + 3];
      for (const n of [...new Set(sizes)].filter((s) => s >= 0)) {
        const x = data(c, n, c.bins);
        const input = n % 2 === 1 ? sharedCopy(x) : x;
        const counts = new Uint32Array(c.bins + 2).fill(0xdead);
        await cpuHistogram(backend, input, c.type, c.kind, params(c), counts, c.bins);
        const want = reference(c, x);
        expect(diff(counts.subarray(0, c.bins), want), `n=${n}`).toBe('');
        expect([counts[c.bins], counts[c.bins + 1]], `n=${n} past the bins`).toEqual([0xdead, 0xdead]);
      }
    });
  }
});
