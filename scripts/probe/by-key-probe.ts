/**
 * GPU-machine probe for the by-key family (issue 16): device time of inclusiveScanByKey and
 * reduceByKey through the public API on DeviceArrays, with the data of scripts/probe/cub_catalogue.cu
 * (keys[i] = i >> 4: runs of 16; values: the anchor's hash; plus), on warm clocks. Checked against a
 * host reference at 2^20 and 2^24. One JSON line per measurement; compare with cub_catalogue's
 * `reduce_by_key u32 runs16` and `scan_by_key u32 runs16` rows of the same device run.
 * reduceByKey is timed in several forms in one process, `PROBE_ROUNDS` (default 2) rounds of each
 * in turn: PROBE_RBK_FORMS is a JSON object of form name -> reduceByKey tuning (policy
 * `tuning.reduceByKey`, over the scan engine's); by default one, 'rts' (the defaults).
 * Bundle: node scripts/probe/build.mjs; run: PROBE_SIZES=20,24,26,28 node .probe/by-key-probe.mjs
 * PROBE_SCAN_TUNING='{"itemsPerThread":16}' overrides the scan engine's tuning (a sweep; it applies
 * to every form); a tile sweep of reduce-then-scan:
 * PROBE_RBK_FORMS='{"256x8":{"workgroupSize":256,"itemsPerThread":8},"256x16":{}}'.
 * PROBE_RBK_PHASES=1 adds each form's phases (count, spine, tile, fix-up, copy), each timed in a
 * compute pass of its own, after its last round. A form's `"sharedOut": true` (taken out of its
 * tuning) puts keysOut and valuesOut in one buffer, so reduceByKey writes them through temporaries
 * and finish copies (the path of short DeviceArray outputs before 2026-11-24's direct writes).
 */

import { setPhasePasses } from '../../packages/algorithms/src/common/gpu-io';
import { inclusiveScanByKey, reduceByKey } from '../../packages/algorithms/src/index';
import { CUB_SEED } from '../../packages/bench/src/data';
import { fillOnDevice, generateOnDevice } from '../../packages/bench/src/gpu-data';
import { DeviceArray, type GpuDevice, releaseDevices } from '../../packages/core/src/index';
import { makeDevicePolicy } from '../../packages/policies/src/index';
import { openProbe, out, probeSizes, runProbe, timeIt } from './timing';

type Tuning = Record<string, number | boolean>;

/** PROBE_RBK_PHASES=1: after the last round of each form, its phases' device times (ms, medians). */
const phases = process.env.PROBE_RBK_PHASES === '1';

/**
 * Each phase of reduceByKey in a compute pass of its own (`setPhasePasses`): medians of `reps`
 * calls of each pass's device time, and of their sum (the split passes' own cost shows against the
 * one-pass figure).
 */
async function timePhases(device: GpuDevice, reps: number, form: string, lg: number, call: () => Promise<unknown>) {
  setPhasePasses(true);
  try {
    await call();
    const byPhase = new Map<string, number[]>();
    for (let r = 0; r < reps; r++) {
      await call();
      let sum = 0;
      for (const { label, ns } of device.queue.lastPassTimesNs) {
        const name = label.slice(label.lastIndexOf(' ') + 1);
        byPhase.set(name, [...(byPhase.get(name) ?? []), ns]);
        sum += ns;
      }
      byPhase.set('sum', [...(byPhase.get('sum') ?? []), sum]);
    }
    const median = (a: number[]) => (a.sort((x, y) => x - y)[Math.floor(a.length / 2)] as number) / 1e6;
    out({
      case: `reduceByKey phases ${form}`,
      lg,
      ...Object.fromEntries([...byPhase].map(([k, v]) => [k, median(v)])),
    });
  } finally {
    setPhasePasses(false);
  }
}

async function main() {
  const tuning = process.env.PROBE_SCAN_TUNING;
  const scan: Tuning = tuning ? JSON.parse(tuning) : {};
  const { device, policy } = await openProbe({ tuning: tuning ? { scan } : {} }, { tuning });
  const forms: Record<string, Tuning> = process.env.PROBE_RBK_FORMS
    ? JSON.parse(process.env.PROBE_RBK_FORMS)
    : { rts: {} };
  const policies = Object.entries(forms).map(([name, { sharedOut, ...t }]) => ({
    name,
    sharedOut: sharedOut === true,
    policy: makeDevicePolicy(device, { fallback: 'error', tuning: { scan, reduceByKey: t } }),
  }));
  out({ forms });
  const rounds = Number(process.env.PROBE_ROUNDS ?? 2);
  for (const lg of probeSizes('20,24,26,28')) {
    const n = 2 ** lg;
    const reps = lg >= 28 ? 10 : 30;
    const check = lg <= 24;
    const values = await generateOnDevice(device, 'u32', n, CUB_SEED);
    const keys = DeviceArray.create(device, 'u32', n);
    await fillOnDevice(device, keys, 'i >> 4u');
    const scanned = DeviceArray.create(device, 'u32', n);
    const runs = Math.ceil(n / 16);
    // PROBE_FULL_OUT=1: outputs of n elements (reduceByKey then writes them directly, no temporaries
    // and finish copies: the cost of keeping short outputs untouched on error).
    const outLength = process.env.PROBE_FULL_OUT === '1' ? n : runs;
    const plainKeys = DeviceArray.create(device, 'u32', outLength);
    const plainSums = DeviceArray.create(device, 'u32', outLength);
    // Outputs in one buffer (forms with sharedOut): written through temporaries.
    const shared = DeviceArray.create(device, 'u32', policies.some((f) => f.sharedOut) ? 2 * outLength : 2);
    const sharedKeys = shared.view(0, shared.length / 2);
    const sharedSums = shared.view(shared.length / 2, shared.length / 2);
    const v = check ? ((await values.read()) as Uint32Array) : undefined;

    const ts = await timeIt(device, reps, () => inclusiveScanByKey(policy, keys, values, scanned));
    let ok: boolean | undefined;
    if (v) {
      const got = (await scanned.read()) as Uint32Array;
      ok = true;
      let s = 0;
      for (let i = 0; i < n && ok; i++) {
        s = i % 16 === 0 ? (v[i] as number) : (s + (v[i] as number)) >>> 0;
        if (got[i] !== s) ok = false;
      }
    }
    out({ case: 'inclusiveScanByKey u32 runs16', lg, ms: ts, gbs: (12 * n) / ts / 1e6, ok });

    for (let round = 0; round < rounds; round++) {
      for (const form of policies) {
        const [keysOut, sums] = form.sharedOut ? [sharedKeys, sharedSums] : [plainKeys, plainSums];
        let count = 0;
        keysOut.write(new Uint32Array(outLength));
        sums.write(new Uint32Array(outLength));
        const tr = await timeIt(device, reps, async () => {
          count = (await reduceByKey(form.policy, keys, values, keysOut, sums)) as number;
        });
        ok = undefined;
        if (v) {
          const gk = (await keysOut.read()) as Uint32Array;
          const gs = (await sums.read()) as Uint32Array;
          ok = count === runs;
          for (let r = 0; r < runs && ok; r++) {
            let s = 0;
            for (let i = r * 16; i < Math.min(n, r * 16 + 16); i++) s = (s + (v[i] as number)) >>> 0;
            if (gk[r] !== r || gs[r] !== s) ok = false;
          }
        }
        const gbs = (8 * n + (8 * n) / 16) / tr / 1e6;
        out({ case: `reduceByKey u32 runs16 ${form.name}`, lg, round, ms: tr, gbs, runs: count, ok });
        if (phases && round === rounds - 1)
          await timePhases(device, reps, form.name, lg, () => reduceByKey(form.policy, keys, values, keysOut, sums));
      }
    }
    for (const a of [values, keys, scanned, plainKeys, plainSums, shared]) a.destroy();
  }
  releaseDevices();
}

runProbe(main);
