/**
 * GPU-machine probe for the catalogue (issues 15/16): device time of gather, scatter, histogram and
 * merge through the public API on DeviceArrays, beside a plain vec4 copy kernel, with the data that
 * scripts/probe/cub_catalogue.cu makes (see its header), so the two runs move the same bytes. Every
 * timed set starts on warm clocks (>= 0.5 s of GPU work first). Each result is checked on the host
 * against a reference at the sizes where that is cheap (2^20, 2^24). One JSON line per measurement.
 * Bundle: node scripts/probe/build.mjs; run: PROBE_SIZES=20,24,26,28 node .probe/catalogue-probe.mjs
 */
import * as algorithms from '../../packages/algorithms/src/index';
import { CUB_SEED } from '../../packages/bench/src/data';
import { fillOnDevice, generateOnDevice } from '../../packages/bench/src/gpu-data';
import { DeviceArray, releaseDevices } from '../../packages/core/src/index';
import { makeDevicePolicy } from '../../packages/policies/src/index';
import { openProbe, out, probeSizes, runProbe, timeCopy, timeIt } from './timing';

async function main() {
  // PROBE_TUNING: the policy's tuning overrides as JSON, e.g. '{"scatter":{"itemsPerThread":16}}'.
  const tuning = process.env.PROBE_TUNING;
  const { device, policy } = await openProbe(tuning ? { tuning: JSON.parse(tuning) } : {}, tuning ? { tuning } : {});
  const api = algorithms as unknown as Record<string, ((...a: unknown[]) => Promise<unknown>) | undefined>;
  // PROBE_ONLY=histogram,merge,gather: those cases only (the copy always runs).
  const only = process.env.PROBE_ONLY?.split(',');
  const want = (c: string) => !only || only.includes(c);
  // PROBE_HIST_SWEEP=1: histogram under each tuning of this list too (labelled by its JSON).
  const histSweep: Record<string, number | boolean>[] = process.env.PROBE_HIST_SWEEP
    ? [
        { subHistograms: 1 },
        { exactBins: false, vectorize: false },
        { vectorize: false },
        { subgroups: false },
        { subHistograms: 2 },
        { subHistograms: 4 },
        { itemsPerThread: 16 },
        { itemsPerThread: 4 },
        { maxWorkgroups: 264 },
        { maxWorkgroups: 528 },
        { maxWorkgroups: 2048 },
        { subgroups: false, subHistograms: 2 },
        { subgroups: false, itemsPerThread: 16 },
        { workgroupSize: 512 },
        { workgroupSize: 128, maxWorkgroups: 2048 },
      ]
    : [];
  // PROBE_MERGE_SWEEP=1 (or 2: the second list): merge under each of these tunings too.
  const mergeSweep: Record<string, number>[] = process.env.PROBE_MERGE_SWEEP
    ? (process.env.PROBE_MERGE_SWEEP === '2'
        ? [
            [512, 5],
            [512, 6],
            [512, 7],
            [1024, 5],
            [1024, 7],
            [1024, 8],
            [256, 5],
          ]
        : [128, 256, 512].flatMap((w) => [7, 8].map((k) => [w, k]))
      ).map(([workgroupSize, itemsPerThread]) => ({ workgroupSize, itemsPerThread }))
    : [];
  const sizes = probeSizes('20,24,26,28');
  for (const lg of sizes) {
    const n = 2 ** lg;
    const reps = lg >= 28 ? 10 : 30;
    const check = lg <= 24;
    const a = await generateOnDevice(device, 'u32', n, CUB_SEED);
    const b = DeviceArray.create(device, 'u32', n);
    const ms = await timeCopy(device, reps, a, b);
    out({ case: 'copy vec4', lg, ms, gbs: (8 * n) / ms / 1e6 });
    const host = check ? await a.read() : undefined;

    const map = DeviceArray.create(device, 'u32', n);
    for (const kind of want('gather') ? (['random', 'blocked'] as const) : []) {
      const expr = kind === 'random' ? '(i * 2654435761u) & (n - 1u)' : 'i ^ 31u';
      await fillOnDevice(device, map, expr);
      const m = check ? ((await map.read()) as Uint32Array) : undefined;
      for (const op of ['gather', 'scatter'] as const) {
        const f = api[op];
        if (!f) {
          out({ case: `${op} u32 ${kind}`, lg, missing: true });
          continue;
        }
        const t = await timeIt(device, reps, () => (op === 'gather' ? f(policy, map, a, b) : f(policy, a, map, b)));
        let ok: boolean | undefined;
        if (host && m) {
          const got = (await b.read()) as Uint32Array;
          ok = true;
          for (let i = 0; i < n && ok; i++) {
            const want = op === 'gather' ? host[m[i] as number] : host[i];
            const at = op === 'gather' ? i : (m[i] as number);
            if (got[at] !== want) ok = false;
          }
        }
        out({ case: `${op} u32 ${kind}`, lg, ms: t, gbs: (12 * n) / t / 1e6, vsCopy: ms / t, ok });
      }
    }
    map.destroy();

    // histogram: samples a[i] >> 8 in [0, 2^24), 256 even bins over [0, 2^24)
    if (!want('histogram')) {
    } else if (api.histogram) {
      const s = DeviceArray.create(device, 'u32', n);
      await (api.transform as (...x: unknown[]) => Promise<unknown>)(policy, a, s, (x: number) => x >>> 8);
      const hist = DeviceArray.create(device, 'u32', 256);
      const hf = api.histogram;
      const t = await timeIt(device, reps, () => hf(policy, s, { bins: 256, lo: 0, hi: 2 ** 24 }, hist));
      // The f32 estimate and edge check with scalar loads and subgroups off: the sweep's reference.
      const refPolicy = makeDevicePolicy(device, {
        fallback: 'error',
        tuning: { histogram: { exactBins: false, vectorize: false, subgroups: false } },
      });
      let ok: boolean | undefined;
      if (host) {
        const want = new Uint32Array(256);
        for (let i = 0; i < n; i++) (want[(host[i] as number) >>> 24] as number)++;
        const got = (await hist.read()) as Uint32Array;
        ok = want.every((v, i) => v === got[i]);
      }
      out({ case: 'histogram u32 256 bins', lg, ms: t, gbs: (4 * n) / t / 1e6, ok });
      for (const tuning of histSweep) {
        const p = makeDevicePolicy(device, { fallback: 'error', tuning: { histogram: tuning } });
        const ts = await timeIt(device, reps, () => hf(p, s, { bins: 256, lo: 0, hi: 2 ** 24 }, hist));
        const got = (await hist.read()) as Uint32Array;
        await hf(refPolicy, s, { bins: 256, lo: 0, hi: 2 ** 24 }, hist);
        const ref = (await hist.read()) as Uint32Array;
        out({
          case: 'histogram u32 256 bins',
          tuning,
          lg,
          ms: ts,
          gbs: (4 * n) / ts / 1e6,
          same: ref.every((v, i) => v === got[i]),
        });
      }
      // PROBE_HIST_CONST=1: constant data (every element in one bin: the atomics' worst case), with
      // and without subgroup aggregation.
      if (process.env.PROBE_HIST_CONST) {
        await fillOnDevice(device, s, '123457u');
        for (const subgroups of [false, true]) {
          const p = makeDevicePolicy(device, { fallback: 'error', tuning: { histogram: { subgroups } } });
          const tc = await timeIt(device, reps, () => hf(p, s, { bins: 256, lo: 0, hi: 2 ** 24 }, hist));
          const got = (await hist.read()) as Uint32Array;
          out({
            case: 'histogram u32 256 bins constant',
            subgroups,
            lg,
            ms: tc,
            gbs: (4 * n) / tc / 1e6,
            ok: got[1] === n,
          });
        }
      }
      s.destroy();
      hist.destroy();
    } else out({ case: 'histogram u32 256 bins', lg, missing: true });

    // merge: two sorted halves of n/2 random keys each
    if (!want('merge')) {
    } else if (api.merge && api.sort) {
      const h = n / 2;
      const u = DeviceArray.create(device, 'u32', n);
      await (api.copy as (...x: unknown[]) => Promise<unknown>)(policy, a, u);
      const lo = u.view(0, h);
      const hi = u.view(h, h);
      await api.sort(policy, lo);
      await api.sort(policy, hi);
      const mf = api.merge;
      const want = host ? Uint32Array.from(host).sort() : undefined;
      // The default tuning ({}), then the sweep's; checked against the host's sort where cheap.
      for (const tuning of [{}, ...mergeSweep]) {
        const p = makeDevicePolicy(device, { fallback: 'error', tuning: { merge: tuning } });
        const t = await timeIt(device, reps, () => mf(p, lo, hi, b));
        const got = want ? ((await b.read()) as Uint32Array) : undefined;
        const ok = want && got ? want.every((v, i) => v === got[i]) : undefined;
        out({
          case: 'merge u32 keys',
          ...(Object.keys(tuning).length ? { tuning } : {}),
          lg,
          ms: t,
          gbs: (8 * n) / t / 1e6,
          ok,
        });
      }
      u.destroy();
    } else out({ case: 'merge u32 keys', lg, missing: true });
    a.destroy();
    b.destroy();
  }
  releaseDevices();
}

runProbe(main);
