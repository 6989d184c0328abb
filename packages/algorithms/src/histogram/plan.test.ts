/**
 * histogramPlan: even bins are memoized by type and numbers (a repeated call computes no edges),
 * explicit boundaries never are (the caller may change the array between calls), and a memoized
 * plan is the one a fresh computation gives.
 */
import { describe, expect, it } from 'vitest';
import { binEdges } from './bins';
import { histogramPlan } from './index';

describe('histogramPlan', () => {
  it('returns the same plan for equal even bins of one type, a new one for another type or numbers', () => {
    const p = histogramPlan({ bins: 256, lo: 0, hi: 2 ** 24 }, 'u32');
    expect(histogramPlan({ bins: 256, lo: 0, hi: 2 ** 24 }, 'u32')).toBe(p);
    expect(p.kind).toBe('shift');
    expect(p.b).toEqual(binEdges({ bins: 256, lo: 0, hi: 2 ** 24 }, 'u32'));
    expect(histogramPlan({ bins: 256, lo: 0, hi: 2 ** 24 }, 'i32')).not.toBe(p);
    expect(histogramPlan({ bins: 255, lo: 0, hi: 2 ** 24 }, 'u32')).not.toBe(p);
    expect(histogramPlan({ bins: 256, lo: 1, hi: 2 ** 24 }, 'u32')).not.toBe(p);
    expect(histogramPlan({ bins: 256, lo: 0, hi: 2 ** 24 + 1 }, 'u32')).not.toBe(p);
    const z = histogramPlan({ bins: 3, lo: 0, hi: 1 }, 'f32');
    const m = histogramPlan({ bins: 3, lo: -0, hi: 1 }, 'f32');
    expect(m).not.toBe(z);
    expect(Object.is(m.b.lo, -0)).toBe(true);
  });

  it('computes boundaries on every call', () => {
    const boundaries = [0, 10, 20];
    const p = histogramPlan({ boundaries }, 'u32');
    boundaries[1] = 15;
    const q = histogramPlan({ boundaries }, 'u32');
    expect(q).not.toBe(p);
    expect(q.b.edges).toEqual([0, 15, 20]);
  });

  it('still checks bins it has not seen', () => {
    expect(() => histogramPlan({ bins: 0, lo: 0, hi: 1 }, 'u32')).toThrow(/bins/);
    expect(() => histogramPlan({ bins: 4, lo: 1, hi: 1 }, 'u32')).toThrow(/hi/);
  });
});
