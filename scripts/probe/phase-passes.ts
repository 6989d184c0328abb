/**
 * One compute pass per call against one pass per phase (`setPhasePasses`), interleaved call by call:
 * topK of 1024 (the radix select's five rounds), a comparator sort (the merge sort's block sort and
 * merge levels; a copy of the input sorted by `x > y`) and reduceByKey (keys i >> 4). Device time
 * (medians of PROBE_REPS calls per round, median over PROBE_ROUNDS rounds, the order rotating) and
 * wall time per call of the same calls. Env: PROBE_SIZES (log2, default 20,24), PROBE_ROUNDS
 * (default 7), PROBE_REPS (default 9), PROBE_ALGS (default topK,sortCmp,reduceByKey).
 * Bundle: node scripts/probe/build.mjs; run: node .probe/phase-passes.mjs
 */
import { setPhasePasses } from '../../packages/algorithms/src/common/gpu-io';
import { copy, reduceByKey, sort, topK } from '../../packages/algorithms/src/index';
import { DeviceArray } from '../../packages/core/src/index';
import { makeDevicePolicy } from '../../packages/policies/src/index';
import { openProbe, out, probeSizes, runProbe, timeIt } from './timing';

runProbe(async () => {
  const { device } = await openProbe({}, {});
  const policy = makeDevicePolicy(device, { fallback: 'error' });
  const rounds = Number(process.env.PROBE_ROUNDS ?? 7);
  const reps = Number(process.env.PROBE_REPS ?? 9);
  const algs = (process.env.PROBE_ALGS ?? 'topK,sortCmp,reduceByKey').split(',');
  for (const lg of probeSizes('20,24')) {
    const n = 2 ** lg;
    const a = DeviceArray.from(
      device,
      Uint32Array.from({ length: n }, (_, i) => Math.imul(i, 2654435761) >>> 0),
    );
    const keys = DeviceArray.from(
      device,
      Uint32Array.from({ length: n }, (_, i) => i >> 4),
    );
    const o = DeviceArray.create(device, 'u32', n);
    const o2 = DeviceArray.create(device, 'u32', n);
    const top = DeviceArray.create(device, 'u32', 1024);
    const calls: Record<string, () => Promise<unknown>> = {
      topK: () => topK(policy, a, 1024, top, { largest: true }),
      sortCmp: () => copy(policy, a, o).then(() => sort(policy, o, (x: number, y: number) => x > y)),
      reduceByKey: () => reduceByKey(policy, keys, a, o, o2),
    };
    for (const alg of algs) {
      const f = calls[alg];
      if (!f) throw new Error(`PROBE_ALGS: unknown algorithm '${alg}'`);
      const modes = [false, true];
      const dev: number[][] = [[], []];
      const wall: number[][] = [[], []];
      for (let r = 0; r < rounds; r++) {
        for (let k = 0; k < 2; k++) {
          const m = (k + r) % 2;
          setPhasePasses(modes[m] as boolean);
          (dev[m] as number[]).push(await timeIt(device, reps, f));
          const t0 = performance.now();
          for (let i = 0; i < reps; i++) await f();
          (wall[m] as number[]).push((performance.now() - t0) / reps);
        }
      }
      setPhasePasses(false);
      const med = (x: number[]) => [...x].sort((p, q) => p - q)[Math.floor(x.length / 2)] as number;
      out({
        lg,
        alg,
        onePassMs: med(dev[0] as number[]),
        passPerPhaseMs: med(dev[1] as number[]),
        onePassWallMs: med(wall[0] as number[]),
        passPerPhaseWallMs: med(wall[1] as number[]),
      });
    }
    for (const x of [a, keys, o, o2, top]) x.destroy();
  }
});
