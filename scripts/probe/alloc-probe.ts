/**
 * GPU-machine probe of the "large buffers after others were freed run slow" effect (H100 notes):
 * device time of a plain vec4 copy between two 2^28-element arrays when fresh, after other 1 GiB
 * buffers were created and destroyed (churn), and for arrays created after the churn; with
 * DeviceArrays (webdpl) and with raw GPUBuffers (no webdpl in the way). One JSON line each.
 * Env: PROBE_LOG2 (default 28), PROBE_CHURN (buffers created and destroyed, default 8). Reads
 * back to the host: readback-probe.ts (PROBE_CASE=read-api).
 * Bundle: node scripts/probe/build.mjs; run: node .probe/alloc-probe.mjs
 */
import { DeviceArray, releaseDevices } from '../../packages/core/src/index';
import { openProbe, out, runProbe, timeCopy } from './timing';

async function main(): Promise<void> {
  const { device } = await openProbe();
  const n = 2 ** Number(process.env.PROBE_LOG2 ?? 28);
  const churn = Number(process.env.PROBE_CHURN ?? 8);
  const mk = () => DeviceArray.create(device, 'u32', n);
  const raw = () =>
    device.gpu.createBuffer({
      size: n * 4,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC,
    });
  const touch = async (b: GPUBuffer) => {
    await device.queue.submit('touch', (rec) => rec.encoder.clearBuffer(b));
  };
  let a = mk();
  let b = mk();
  out({ case: 'fresh DeviceArrays', ms: await timeCopy(device, 10, a, b) });
  // Churn: 1 GiB buffers created, written once, destroyed at once.
  for (let i = 0; i < churn; i++) {
    const t = raw();
    await touch(t);
    t.destroy();
  }
  out({ case: `same arrays after ${churn} created and destroyed`, ms: await timeCopy(device, 10, a, b) });
  a.destroy();
  b.destroy();
  a = mk();
  b = mk();
  out({ case: 'new DeviceArrays after the churn', ms: await timeCopy(device, 10, a, b) });
  // Churn while keeping: several live at once, then all destroyed.
  const live = Array.from({ length: churn }, raw);
  for (const t of live) await touch(t);
  for (const t of live) t.destroy();
  a.destroy();
  b.destroy();
  a = mk();
  b = mk();
  out({ case: `new DeviceArrays after ${churn} live at once were destroyed`, ms: await timeCopy(device, 10, a, b) });
  // Smaller ones first, freed, then big (the night doc's pattern).
  const small = Array.from({ length: 16 }, () => DeviceArray.create(device, 'u32', n / 16));
  for (const s of small) await touch(s.buffer);
  for (const s of small) s.destroy();
  a.destroy();
  b.destroy();
  a = mk();
  b = mk();
  out({ case: 'new DeviceArrays after 16 of 1/16 the size were freed', ms: await timeCopy(device, 10, a, b) });
  a.destroy();
  b.destroy();
  releaseDevices();
}

runProbe(main);
