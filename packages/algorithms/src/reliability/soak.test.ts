/**
 * The soak's short form (issue 13; the full 20,000 calls run in `pnpm test:soak`): a few hundred
 * mixed calls over every algorithm family, 16 in flight, random sizes, types, policies and array
 * kinds, each checked against a reference loop; then the same calls again (same seeds: no new
 * pipeline is needed), which must not grow the device's live GPU buffers or the process RSS.
 */
import { DISPATCH_CACHE_MAX_BUFFERS } from '@webdpl/core';
import { describe, expect, it } from 'vitest';
import { testDevice } from '../testing/matrix';
import { runSoak } from './soak';

const MiB = 2 ** 20;
/** Labels of the queue's pooled buffers (core/src/queue.ts). */
const POOLS = new Set(['webdpl readback', 'webdpl params']);

describe('soak', () => {
  it.skipIf(!testDevice)(
    'mixed calls, 16 in flight: right answers, no buffer or memory growth on a repeat',
    async () => {
      const r = await runSoak({
        device: testDevice,
        seed: 1301,
        calls: 0,
        warmUp: false,
        warmUpCalls: 240,
        repeat: true,
        maxLog2: 14,
      });
      expect(r.failures).toEqual([]);
      expect(r.calls).toBe(240);
      expect(r.pipelinesEnd, 'the repeat compiled nothing new').toBe(r.pipelinesWarm);
      // The queue's pools of uniform and readback buffers keep their high-water mark, which depends
      // on how the 16 calls in flight overlapped: each may gain up to one buffer per call in flight.
      // Any other buffer alive after the repeat that was not after the first pass is a leak.
      for (const [label, [warm, end]] of Object.entries(r.grownLabels)) {
        const growth = end - warm;
        if (POOLS.has(label)) expect(growth, `pooled '${label}' buffers: ${warm} -> ${end}`).toBeLessThanOrEqual(16);
        else if (label.endsWith(' params')) {
          // Parameter buffers of the engines' caches of built calls (core/src/dispatch-cache.ts): an
          // LRU per engine and device owning at most DISPATCH_CACHE_MAX_BUFFERS buffers, keyed by the
          // bound buffers, which the repeat may assign differently. Bounded, so not a leak.
          expect(end, `cached '${label}' buffers: ${warm} -> ${end}`).toBeLessThanOrEqual(DISPATCH_CACHE_MAX_BUFFERS);
        } else expect(growth, `'${label}' buffers: ${warm} -> ${end}`).toBe(0);
      }
      // Exactly: live buffers minus those the bounded caches and pools hold must not grow.
      expect(r.unownedEnd, 'buffers outside the caches and pools').toBeLessThanOrEqual(r.unownedWarm);
      expect((r.rssEnd - r.rssWarm) / MiB, 'RSS growth on the repeat (MiB)').toBeLessThan(20);
    },
  );

  it('the checks catch wrong answers (every result corrupted before its check)', async () => {
    const r = await runSoak({ seed: 7, calls: 60, warmUp: false, maxLog2: 10 });
    expect(r.failures).toEqual([]);
    // Every call fails except those whose result is an empty array (nothing to corrupt).
    const corrupted = await runSoak({ seed: 7, calls: 60, warmUp: false, maxLog2: 10, plant: true });
    expect(corrupted.failures.length).toBeGreaterThanOrEqual(54);
    for (const f of corrupted.failures) expect(f.error).toMatch(/^wrong answer: /);
  });
});
