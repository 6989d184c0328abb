/**
 * GPU-machine probe: which transfers leave the H100 slow afterwards (see h100-notes.md section 5).
 * Each case runs in its own process (PROBE_CASE): a fresh pair of 2^28-element arrays is timed with
 * a vec4 copy, then the transfer runs, then the same pair is timed again. Cases: read-1g (one 1 GiB
 * MAP_READ staging buffer), read-chunks-<MiB> (a reused staging buffer of that many MiB, the array in
 * pieces), write-1g (queue.writeBuffer of 1 GiB in one call), write-chunks-<MiB> (in pieces),
 * host-<k> (k JS arrays of 1 GiB written and kept, no transfer), read-api (DeviceArray.read three
 * times, the results kept).
 * Bundle: node scripts/probe/build.mjs; run: PROBE_CASE=read-chunks-64 node .probe/readback-probe.mjs
 */
import { DeviceArray, releaseDevices } from '../../packages/core/src/index';
import { openProbe, out, runProbe, timeCopy } from './timing';

async function main(): Promise<void> {
  const { device } = await openProbe();
  const kase = process.env.PROBE_CASE ?? 'read-1g';
  const n = 2 ** 28;
  const bytes = n * 4;
  const a = DeviceArray.create(device, 'u32', n);
  const b = DeviceArray.create(device, 'u32', n);
  const before = await timeCopy(device, 10, a, b);
  const gpu = device.gpu;
  const t0 = performance.now();
  const chunkMiB = Number(kase.split('-')[2] ?? 0);
  const chunk = chunkMiB ? chunkMiB * 2 ** 20 : bytes;
  const kept: Uint8Array[] = [];
  if (kase.startsWith('host')) {
    // Host memory only: 1 GiB JS arrays written and kept alive, no transfer.
    for (let i = 0; i < Number(kase.split('-')[1] ?? 3); i++) kept.push(new Uint8Array(bytes).fill(1));
  } else if (kase === 'read-api') {
    // DeviceArray.read: a 1 GiB readback copied into a JS array, three times, kept alive.
    for (let i = 0; i < 3; i++) kept.push(new Uint8Array((await a.read()).buffer));
  } else if (kase.startsWith('read')) {
    const staging = gpu.createBuffer({ size: chunk, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    for (let off = 0; off < bytes; off += chunk) {
      const enc = gpu.createCommandEncoder();
      enc.copyBufferToBuffer(a.buffer, off, staging, 0, chunk);
      gpu.queue.submit([enc.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      new Uint8Array(staging.getMappedRange()).slice(0, 16);
      staging.unmap();
    }
    staging.destroy();
  } else {
    const host = new Uint8Array(chunk);
    for (let off = 0; off < bytes; off += chunk) gpu.queue.writeBuffer(a.buffer, off, host);
    await gpu.queue.onSubmittedWorkDone();
  }
  const ms = performance.now() - t0;
  // PROBE_PRE_MS: that long of copies (GPU busy) before the timed set, beyond timeIt's warm-up.
  const pre = Number(process.env.PROBE_PRE_MS ?? 0);
  const p0 = performance.now();
  while (performance.now() - p0 < pre) await timeCopy(device, 1, a, b);
  const after = await timeCopy(device, 10, a, b);
  out({
    case: kase,
    transferMs: Number(ms.toFixed(1)),
    preMs: pre,
    copyBefore: before,
    copyAfter: after,
    kept: kept.length,
  });
  a.destroy();
  b.destroy();
  releaseDevices();
}

runProbe(main);
