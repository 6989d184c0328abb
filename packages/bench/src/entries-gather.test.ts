/**
 * The plain-JS baselines of gather and scatter: every one computes the entry's expected result, and
 * the closed-over loop is compiled from a source of its own at each setup, so V8 gives it the same
 * (specialized) form at every size of a run instead of only at the first
 * (docs/benchmarks/cpu-gather-2026-11-24j.md).
 */
import { describe, expect, it } from 'vitest';
import { ENTRIES } from './entries';

function entry(id: string) {
  const e = ENTRIES.find((x) => x.id === id);
  if (!e) throw new Error(`no bench entry ${id}`);
  return e;
}

describe('gather / scatter baselines', () => {
  for (const id of ['gather-u32', 'scatter-u32']) {
    it(`${id}: every baseline writes the expected result (power-of-two and other sizes)`, () => {
      const e = entry(id);
      expect(e.baselines.map((b) => b.name)).toEqual(['for-loop', 'for-loop-args']);
      for (const n of [1, 16, 1000, 1024, 4099]) {
        const c = e.make(n);
        for (const b of e.baselines) {
          const got = b.setup(c).run() as Uint32Array;
          expect(Array.from(got), `${b.name} n=${n}`).toEqual(Array.from(c.arrays?.[0] as Uint32Array));
        }
      }
    });

    it(`${id}: the closed-over loop is a closure of a source of its own at every setup`, () => {
      const b = entry(id).baselines.find((x) => x.name === 'for-loop');
      const c = entry(id).make(64);
      const first = b?.setup(c).run as () => unknown;
      const second = b?.setup(c).run as () => unknown;
      // A second closure of one source would lose V8's specialization on its arrays.
      expect(first.toString()).not.toBe(second.toString());
    });
  }
});
