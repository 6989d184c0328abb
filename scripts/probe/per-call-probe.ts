/**
 * Per-call probe (issue 12): microseconds per call of reduce, inclusiveScan, transform and copyIf on
 * DeviceArrays at 2^12 and 2^20, next to the raw-WebGPU floor (one reduce dispatch + 4-byte
 * readback, everything reused) measured in the same process, interleaved, on warm clocks (>= 0.5 s
 * of GPU work before every round). Prints one JSON line per size and a table.
 *
 * Bundle: node scripts/probe/build.mjs; run: node .probe/per-call-probe.mjs
 * Env: PROBE_SIZES (default '12,20'), PROBE_ROUNDS (default 9), PROBE_BATCH_MS (default 80).
 */
import { copyIf, inclusiveScan, reduce, transform } from '../../packages/algorithms/src/index';
import { measurePerCall, type PerCallApi, renderPerCall } from '../../packages/bench/src/per-call';
import { GpuWarmth } from '../../packages/bench/src/warm';
import { type GpuDevice, gpuSelector, releaseDevices, selectDevice } from '../../packages/core/src/index';
import { makeDevicePolicy } from '../../packages/policies/src/index';

async function main(): Promise<void> {
  const device = (await selectDevice(gpuSelector)) as GpuDevice;
  const policy = makeDevicePolicy(device, { fallback: 'error' });
  const sizes = (process.env.PROBE_SIZES ?? '12,20').split(',').map(Number);
  console.log(JSON.stringify({ device: device.info.name, kind: device.info.kind, date: new Date().toISOString() }));
  const warmth = new GpuWarmth(device);
  try {
    const rows = await measurePerCall(device, policy, { reduce, inclusiveScan, transform, copyIf } as PerCallApi, {
      sizes,
      rounds: Number(process.env.PROBE_ROUNDS ?? 9),
      batchMs: Number(process.env.PROBE_BATCH_MS ?? 80),
      warmth,
    });
    for (const r of rows) console.log(JSON.stringify(r));
    console.log(renderPerCall(rows, device.info.name));
  } finally {
    warmth.destroy();
    releaseDevices();
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
