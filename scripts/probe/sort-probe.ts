/**
 * GPU-machine probe of the radix-sort engine (lead's tool, not the bench): device time of u32 key
 * sorts and u32/u32 pair sorts over a sweep of tunings, with each pass's own time (timestamps per
 * compute pass), on GPU-made data, checked on the GPU after the timed runs. One JSON line each.
 * Env: PROBE_SIZES (log2 sizes, default 24,28), PROBE_REPS (default 7), PROBE_TUNINGS (a JSON array
 * of tuning objects replacing the default sweep), PROBE_PAIRS=0 to skip pairs, PROBE_PAIR_TUNINGS (a JSON array for the pairs), PROBE_KEY_TYPES (default
 * u32; f32 and i32 also sort through the public `sort` on a device policy (PROBE_TYPE_TUNING: its
 * radix-sort tuning overrides, JSON): f32 keys are
 * cub_anchor's 'sort f32 keys' data, i32 the u32 hash's bits, checked in TypedArray#sort order on the
 * host up to 2^24).
 * Bundle: node scripts/probe/build.mjs
 */
import { iota, radixSortDevice, sort } from '../../packages/algorithms/src/index';
import { CUB_SEED } from '../../packages/bench/src/data';
import { fillOnDevice, generateOnDevice } from '../../packages/bench/src/gpu-data';
import { GpuWarmth } from '../../packages/bench/src/warm';
import { DeviceArray, type GpuDevice, gpuSelector, releaseDevices, selectDevice } from '../../packages/core/src/index';
import { makeDevicePolicy } from '../../packages/policies/src/index';
import { gpuSortErrors } from './gpu-data';
import { out, runProbe } from './timing';

type Tuning = Record<string, number | boolean>;

const defaultSweep: Tuning[] = [
  {},
  { keysPerThread: 12 },
  { keysPerThread: 16 },
  { keysPerThread: 18 },
  { keysPerThread: 20 },
  { workgroupSize: 512, keysPerThread: 12 },
  { workgroupSize: 512, keysPerThread: 15 },
  { lookbackWindow: 4 },
  {},
];
const pairSweep: Tuning[] = [{}, { keysPerThread: 18 }];

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

async function copyInto(device: GpuDevice, src: DeviceArray, dst: DeviceArray): Promise<void> {
  await device.queue.submit('probe copy', (rec) => {
    rec.encoder.copyBufferToBuffer(src.buffer, src.byteOffset, dst.buffer, dst.byteOffset, src.length * 4);
  });
}

async function main() {
  const device = (await selectDevice(gpuSelector)) as GpuDevice;
  out({ device: device.info.name, sub: [device.info.subgroupMinSize, device.info.subgroupMaxSize] });
  device.queue.setProfiling(true);
  const sizes = (process.env.PROBE_SIZES ?? '24,28').split(',').map(Number);
  const reps = Number(process.env.PROBE_REPS ?? 7);
  const sweep: Tuning[] = process.env.PROBE_TUNINGS ? JSON.parse(process.env.PROBE_TUNINGS) : defaultSweep;
  const pairs = process.env.PROBE_PAIRS !== '0';
  for (const lg of sizes) {
    const n = 2 ** lg;
    const srcK = await generateOnDevice(device, 'u32', n, CUB_SEED);
    const srcV = DeviceArray.create(device, 'u32', n);
    await iota(makeDevicePolicy(device), srcV);
    const k = DeviceArray.create(device, 'u32', n);
    const v = DeviceArray.create(device, 'u32', n);
    const cases: [string, Tuning, boolean][] = sweep.map((t) => ['sort u32', t, false]);
    const pairTunings: Tuning[] = process.env.PROBE_PAIR_TUNINGS
      ? JSON.parse(process.env.PROBE_PAIR_TUNINGS)
      : pairSweep;
    if (pairs) for (const t of pairTunings) cases.push(['sortByKey u32/u32', t, true]);
    for (const [name, tuning, withValues] of cases) {
      try {
        const totals: number[] = [];
        const perPass = new Map<string, number[]>();
        // Untimed warm-up: the GPU idles (and clocks down) while a new pipeline compiles; then warm
        // clocks (>= 0.5 s of GPU work: two 2^28 sorts after the 2^24 cases' host checks were not,
        // h100-2026-11-24f/final/sort-and-verify.txt).
        for (let r = 0; r < (lg >= 26 ? 2 : 20); r++) {
          await copyInto(device, srcK, k);
          await radixSortDevice(device, k, withValues ? v : undefined, { tuning });
        }
        const warmth = new GpuWarmth(device);
        await warmth.before();
        for (let r = 0; r < reps + 1; r++) {
          await copyInto(device, srcK, k);
          if (withValues) await copyInto(device, srcV, v);
          await radixSortDevice(device, k, withValues ? v : undefined, { tuning });
          if (r === 0) continue;
          totals.push(device.queue.lastDeviceTimeNs / 1e6);
          warmth.after();
          for (const p of device.queue.lastPassTimesNs) {
            const l = perPass.get(p.label) ?? [];
            l.push(p.ns / 1e6);
            perPass.set(p.label, l);
          }
        }
        const errors = await gpuSortErrors(device, k, withValues ? { values: v, source: srcK } : undefined);
        const ms = median(totals);
        out({
          case: name,
          lg,
          tuning,
          ms,
          min: Math.min(...totals),
          gkeys: n / ms / 1e6,
          passes: Object.fromEntries([...perPass].map(([l, xs]) => [l, Number(median(xs).toFixed(4))])),
          errors,
        });
      } catch (e) {
        out({ case: name, lg, tuning, error: (e as Error).message.slice(0, 300) });
      }
    }
    for (const a of [srcK, srcV, k, v]) a.destroy();
    for (const type of (process.env.PROBE_KEY_TYPES ?? 'u32').split(',').filter((t) => t !== 'u32')) {
      const src =
        type === 'f32' ? await generateOnDevice(device, 'f32', n, CUB_SEED) : DeviceArray.create(device, 'i32', n);
      if (type === 'i32') await fillOnDevice(device, src, `bitcast<i32>(bench_hash(i, ${CUB_SEED >>> 0}u))`);
      const keys = DeviceArray.create(device, src.type, n);
      // PROBE_TYPE_TUNING: the radix sort's tuning overrides for these public sorts (JSON).
      const typeTuning = process.env.PROBE_TYPE_TUNING ? JSON.parse(process.env.PROBE_TYPE_TUNING) : undefined;
      const policy = makeDevicePolicy(device, {
        fallback: 'error',
        ...(typeTuning ? { tuning: { 'radix-sort': typeTuning } } : {}),
      });
      const totals: number[] = [];
      // One untimed sort first: a key type's first sort compiles its pipelines (the key mode is
      // compiled in on hardware GPUs) while the GPU idles. Then warm clocks: the host check of the
      // type before leaves the GPU idle for seconds.
      await copyInto(device, src, keys);
      await sort(policy, keys);
      const warmth = new GpuWarmth(device);
      await warmth.before();
      for (let r = 0; r < reps + (lg >= 26 ? 3 : 21); r++) {
        await copyInto(device, src, keys);
        await sort(policy, keys);
        if (r >= (lg >= 26 ? 3 : 21)) totals.push(device.queue.lastDeviceTimeNs / 1e6);
      }
      warmth.after();
      let ok: boolean | undefined;
      if (lg <= 24) {
        const got = await keys.read();
        const want = (await src.read()).slice().sort();
        ok = got.every((x, i) => Object.is(x, want[i]));
      }
      const ms = median(totals);
      out({ case: `sort ${type} (public sort)`, lg, ms, min: Math.min(...totals), gkeys: n / ms / 1e6, ok });
      src.destroy();
      keys.destroy();
    }
  }
  releaseDevices();
}

runProbe(main);
