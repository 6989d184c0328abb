import { describe, expect, it } from 'vitest';
import { measure } from './measure';

/** A call whose first `slow` invocations take `ms` each (busy wait), the rest next to nothing. */
function coldStart(slow: number, ms: number): { run: () => number; count: () => number } {
  let calls = 0;
  return {
    run: () => {
      calls++;
      if (calls <= slow) {
        const t0 = performance.now();
        while (performance.now() - t0 < ms) {
          // busy
        }
      }
      return calls;
    },
    count: () => calls,
  };
}

describe('measure: untimed warm calls', () => {
  it('the calls after the probe that warmCalls asks for are not timed', async () => {
    // Six slow calls: the probe and five more. Without warm calls some of them are timed.
    const cold = coldStart(6, 15);
    const without = await measure({ run: cold.run, budgetMs: 40 });
    expect(without.medianMs).toBeGreaterThan(10);
    const warm = coldStart(6, 15);
    const with5 = await measure({ run: warm.run, budgetMs: 40, warmCalls: { calls: 5, maxMs: 1000 } });
    expect(with5.medianMs).toBeLessThan(1);
    expect(warm.count()).toBeGreaterThan(6);
  });

  it('stops warming after maxMs of calls, and calls `before` before each', async () => {
    const cold = coldStart(1000, 10);
    let befores = 0;
    const m = await measure({
      run: cold.run,
      before: () => {
        befores++;
      },
      budgetMs: 5,
      warmCalls: { calls: 1000, maxMs: 30 },
    });
    // Probe (10 ms) + warm calls until 30 ms had passed (3-4 of them) + a few timed calls.
    expect(cold.count()).toBeLessThan(20);
    // Every call but possibly one of tinybench's own had `before` first.
    expect(befores).toBeGreaterThanOrEqual(cold.count() - 1);
    expect(m.medianMs).toBeGreaterThan(5);
  });
});
