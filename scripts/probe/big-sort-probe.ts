/**
 * GPU-machine probe of sorts beyond one storage binding (lead's tool, not the bench): the public
 * `sort` of u32 keys under a device policy that never falls back, at sizes below and above the
 * device's maxStorageBufferBindingSize (above it: segment sorts and windowed merges). Device time
 * (sum of every pass of the call, warm clocks) minus a plain copy of the input in the same call,
 * and wall time; each result checked on the GPU (isSorted, and the u32 sum against the input's).
 * Env: PROBE_SIZES (log2, default 28,29,30), PROBE_REPS (default 3).
 * Bundle: node scripts/probe/build.mjs; run: node .probe/big-sort-probe.mjs
 */
import { copy, isSorted, reduce, sort } from '../../packages/algorithms/src/index';
import { CUB_SEED } from '../../packages/bench/src/data';
import { generateOnDevice } from '../../packages/bench/src/gpu-data';
import { DeviceArray, releaseDevices } from '../../packages/core/src/index';
import { openProbe, out, probeSizes, runProbe, timeIt } from './timing';

async function main(): Promise<void> {
  const { device, policy } = await openProbe();
  out({
    maxStorageBufferBindingSize: device.limits.maxStorageBufferBindingSize,
    maxBufferSize: device.limits.maxBufferSize,
  });
  const reps = Number(process.env.PROBE_REPS ?? 3);
  for (const lg of probeSizes('28,29,30')) {
    const n = 2 ** lg;
    const src = await generateOnDevice(device, 'u32', n, CUB_SEED);
    const k = DeviceArray.create(device, 'u32', n);
    try {
      const run = async () => {
        await copy(policy, src, k);
        await sort(policy, k);
      };
      const total = await timeIt(device, reps, run);
      const copyMs = await timeIt(device, reps, () => copy(policy, src, k));
      const t0 = performance.now();
      await run();
      const wallMs = performance.now() - t0;
      const sorted = await isSorted(policy, k);
      const sumOk = (await reduce(policy, k)) === (await reduce(policy, src));
      const ms = total - copyMs;
      out({
        case: 'sort u32 (public sort, device policy)',
        lg,
        segmented: n * 4 > device.limits.maxStorageBufferBindingSize,
        ms: Number(ms.toFixed(3)),
        gkeys: Number((n / ms / 1e6).toFixed(2)),
        wallMs: Number(wallMs.toFixed(2)),
        sorted,
        sumOk,
      });
    } catch (e) {
      out({ case: 'sort u32', lg, error: (e as Error).message.slice(0, 300) });
    } finally {
      src.destroy();
      k.destroy();
    }
  }
  releaseDevices();
}

runProbe(main);
