/**
 * Tuning variants side by side in one process: every round calls each (algorithm, variant) pair in
 * turn, rotating the order, `PROBE_REPS` calls each, and keeps the median device time of the pair in
 * that round; prints per pair the median over rounds and the ratio to the first variant. Variants
 * interleave call by call in one process, so load on a shared machine (lavapipe runs on its CPU)
 * falls on all of them alike, which separate processes per variant do not give.
 * Env: PROBE_VARIANTS (JSON: name -> a policy's `tuning` object, e.g.
 * '{"base":{},"64x32":{"scan":{"workgroupSize":64,"itemsPerThread":32}}}'), PROBE_ALGS
 * (comma-separated: reduce, transform, inclusiveScan, inclusiveScanInPlace, exclusiveScan, copyIf, topK, inclusiveScanByKey,
 * reduceByKey, merge / mergeByKey: two sorted halves of n/2, the keys their own values; sortCmp: a
 * copy of the input sorted by a comparator lambda, the merge sort engine; default all but the merges
 * and sortCmp), PROBE_SIZES (log2, default 12,16,20), PROBE_ROUNDS (default 5),
 * PROBE_REPS (default 9), PROBE_DATA (`hash`: the input is a full 32-bit hash of the index; default its top 5 bits). Before timing, each variant's first call is checked against the first
 * variant's: the number it returns and the first 4096 elements of both outputs (timed calls are not
 * checked).
 * Bundle: node scripts/probe/build.mjs; run: node .probe/tuning-sweep.mjs
 */
import {
  copy,
  copyIf,
  exclusiveScan,
  inclusiveScan,
  inclusiveScanByKey,
  merge,
  mergeByKey,
  reduce,
  reduceByKey,
  sort,
  topK,
  transform,
} from '../../packages/algorithms/src/index';
import { DeviceArray } from '../../packages/core/src/index';
import { makeDevicePolicy } from '../../packages/policies/src/index';
import { openProbe, out, probeSizes, runProbe, timeIt } from './timing';

runProbe(async () => {
  const variants = JSON.parse(process.env.PROBE_VARIANTS ?? '{"default":{}}') as Record<string, object>;
  const names = Object.keys(variants);
  const algs = (
    process.env.PROBE_ALGS ?? 'reduce,transform,inclusiveScan,exclusiveScan,copyIf,inclusiveScanByKey,reduceByKey'
  ).split(',');
  const rounds = Number(process.env.PROBE_ROUNDS ?? 5);
  const reps = Number(process.env.PROBE_REPS ?? 9);
  const { device } = await openProbe({}, { variants });
  // PROBE_DATA=hash: the input's full 32-bit hash (distinct keys) instead of its top 5 bits (0..31).
  const shift = process.env.PROBE_DATA === 'hash' ? 0 : 27;
  const policies = names.map((v) => makeDevicePolicy(device, { fallback: 'error', tuning: variants[v] as never }));
  for (const lg of probeSizes('12,16,20')) {
    const n = 1 << lg;
    const a = DeviceArray.from(
      device,
      new Uint32Array(n).map((_, i) => Math.imul(i, 2654435761) >>> shift),
    );
    const byKey = algs.some((x) => x.endsWith('ByKey'));
    const keys = DeviceArray.from(
      device,
      byKey ? Uint32Array.from({ length: n }, (_, i) => i >> 4) : new Uint32Array(1),
    );
    // merge: two sorted halves (even and odd numbers, so they interleave).
    const halves = algs.some((x) => x.startsWith('merge'))
      ? [0, 1].map((h) =>
          DeviceArray.from(
            device,
            new Uint32Array(n / 2).map((_, i) => 2 * i + h),
          ),
        )
      : [];
    const outs = names.map(() => DeviceArray.create(device, 'u32', n));
    const outs2 = names.map(() =>
      DeviceArray.create(device, 'u32', algs.includes('reduceByKey') || algs.includes('mergeByKey') ? n : 1),
    );
    const calls: Record<string, (v: number) => Promise<unknown>> = {
      reduce: (v) => reduce(policies[v]!, a),
      transform: (v) => transform(policies[v]!, a, outs[v]!, (x: number) => x * 3 + 1),
      inclusiveScan: (v) => inclusiveScan(policies[v]!, a, outs[v]!),
      // In place (reduce-then-scan) on the variant's own output, scanned again each call (timing only:
      // its first call checks zeros against zeros).
      // topK of 1024 largest (the radix select) into the start of the variant's output.
      topK: (v) => topK(policies[v]!, a, 1024, outs[v]!.view(0, 1024), { largest: true }),
      inclusiveScanInPlace: (v) => inclusiveScan(policies[v]!, outs[v]!, outs[v]!),
      exclusiveScan: (v) => exclusiveScan(policies[v]!, a, outs[v]!, 0),
      copyIf: (v) => copyIf(policies[v]!, a, outs[v]!, (x: number) => x < 16),
      inclusiveScanByKey: (v) => inclusiveScanByKey(policies[v]!, keys, a, outs[v]!),
      reduceByKey: (v) => reduceByKey(policies[v]!, keys, a, outs[v]!, outs2[v]!),
      merge: (v) => merge(policies[v]!, halves[0]!, halves[1]!, outs[v]!),
      sortCmp: (v) =>
        copy(policies[v]!, a, outs[v]!).then(() => sort(policies[v]!, outs[v]!, (x: number, y: number) => x > y)),
      mergeByKey: (v) => mergeByKey(policies[v]!, halves[0]!, halves[1]!, halves[0]!, halves[1]!, outs[v]!, outs2[v]!),
    };
    const ms: Record<string, number[]> = {};
    const head = async (x: DeviceArray) => Array.from((await x.read()).subarray(0, 4096));
    for (const alg of algs) {
      const f = calls[alg];
      if (!f) throw new Error(`PROBE_ALGS: unknown algorithm '${alg}'`);
      // Results of every variant against the first one's (also the compile of each variant).
      let ref: unknown;
      for (let v = 0; v < names.length; v++) {
        const r = await f(v);
        await device.queue.finish();
        const got = JSON.stringify([typeof r === 'number' ? r : null, await head(outs[v]!), await head(outs2[v]!)]);
        if (v === 0) ref = got;
        else if (got !== ref) out({ lg, alg, variant: names[v], error: 'result differs from the first variant' });
      }
    }
    for (let round = 0; round < rounds; round++) {
      for (const alg of algs) {
        for (let j = 0; j < names.length; j++) {
          const v = (j + round) % names.length;
          const t = await timeIt(device, reps, () => calls[alg]!(v));
          (ms[`${alg} ${names[v]}`] ??= []).push(t);
        }
      }
    }
    const med = (x: number[]) => [...x].sort((p, q) => p - q)[x.length >> 1] as number;
    for (const alg of algs) {
      const base = med(ms[`${alg} ${names[0]}`]!);
      for (const v of names) {
        const m = med(ms[`${alg} ${v}`]!);
        out({ lg, alg, variant: v, ms: +m.toFixed(5), vsFirst: +(m / base).toFixed(3) });
      }
    }
    a.destroy();
    keys.destroy();
    for (const o of [...outs, ...outs2, ...halves]) o.destroy();
  }
  device.destroy();
});
