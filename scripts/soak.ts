/**
 * `pnpm test:soak`: the full soak of issue 13 (packages/algorithms/src/reliability/soak.ts):
 * 20,000 mixed calls, 16 in flight, random sizes up to 2^20, types, policies and array kinds, every
 * result checked; prints the figures (calls, failures, live GPU buffers, RSS, duration, device) and
 * exits non-zero on a failure, growth of the buffers outside webdpl's bounded caches and pools, or RSS
 * growth of 20 MiB or more after the warm-up.
 * Options (environment): SOAK_CALLS (default 20000), SOAK_SEED (default 13), SOAK_MAX_LOG2 (20),
 * SOAK_WARMUP (random calls after the warm-up's combinations, size classes and variants, default
 * 2000), SOAK_GPU=0 (CPU
 * policies only).
 */

import { runSoak, type SoakMemory, type SoakReport } from '../packages/algorithms/src/reliability/soak';
import { type GpuDevice, gpuSelector, noGpuReason, releaseDevices, selectDevice } from '../packages/core/src/index';
import { defaultPool } from '../packages/policies/src/index';

const MiB = 2 ** 20;
const calls = Number(process.env.SOAK_CALLS ?? 20_000);
const seed = Number(process.env.SOAK_SEED ?? 13);
const maxLog2 = Number(process.env.SOAK_MAX_LOG2 ?? 20);
const warmUpCalls = Number(process.env.SOAK_WARMUP ?? 2000);

function memLine(m: SoakMemory): string {
  const f = (x: number) => (x / MiB).toFixed(1);
  return `heap ${f(m.heapUsed)}, external ${f(m.external)} (arrayBuffers ${f(m.arrayBuffers)}), GPU buffers ${f(m.gpuBuffers)} MiB`;
}

function line(r: SoakReport, done: number): string {
  const rss = (r.rssEnd / MiB).toFixed(1);
  const g = (r.rssEnd - r.rssWarm) / MiB;
  const grow = `${g >= 0 ? '+' : ''}${g.toFixed(1)}`;
  return (
    `${done}/${r.calls} calls, ${r.failures.length} failures, buffers ${r.buffersWarm} -> ${r.buffersEnd} ` +
    `(outside caches and pools ${r.unownedWarm} -> ${r.unownedEnd}), ` +
    `RSS ${rss} MiB (${grow} since warm-up), pipelines ${r.pipelinesWarm} -> ${r.pipelinesEnd}, ` +
    `${(r.durationMs / 1000).toFixed(0)} s; ${memLine(r.memoryEnd)}`
  );
}

const reason = await noGpuReason();
const device = reason || process.env.SOAK_GPU === '0' ? undefined : ((await selectDevice(gpuSelector)) as GpuDevice);
console.log(
  `soak: ${calls} calls after a warm-up (every combination in every size class, GPU policies in every variant, then ${warmUpCalls} random calls), seed ${seed}, sizes up to 2^${maxLog2}, device: ${device?.info.name ?? `none (${reason})`}`,
);
const report = await runSoak({
  calls,
  seed,
  maxLog2,
  warmUpCalls,
  device,
  progressEvery: 1000,
  onProgress: (done, r) => console.log(line(r, done)),
});
const growth = report.rssEnd - report.rssWarm;
console.log(
  JSON.stringify(
    {
      date: new Date().toISOString(),
      device: report.device,
      seed,
      warmUpCalls: report.warmUpCalls,
      calls: report.calls,
      failures: report.failures.length,
      buffers: {
        start: report.buffersStart,
        afterWarmUp: report.buffersWarm,
        end: report.buffersEnd,
        keptAfterWarmUp: report.keptWarm,
        keptEnd: report.keptEnd,
        unownedAfterWarmUp: report.unownedWarm,
        unownedEnd: report.unownedEnd,
      },
      pipelines: { afterWarmUp: report.pipelinesWarm, end: report.pipelinesEnd },
      rssMiB: { afterWarmUp: +(report.rssWarm / MiB).toFixed(1), end: +(report.rssEnd / MiB).toFixed(1) },
      memoryMiB: Object.fromEntries(
        (Object.keys(report.memoryEnd) as (keyof SoakMemory)[]).map((k) => [
          k,
          { afterWarmUp: +(report.memoryWarm[k] / MiB).toFixed(1), end: +(report.memoryEnd[k] / MiB).toFixed(1) },
        ]),
      ),
      durationS: +(report.durationMs / 1000).toFixed(1),
      newPipelines: report.newPipelines,
      perOperation: report.perOperation,
      grownBufferLabels: report.grownLabels,
    },
    null,
    2,
  ),
);
for (const f of report.failures.slice(0, 20)) console.log(`FAIL call ${f.call}: ${f.what}: ${f.error}`);
// Buffers kept by the bounded caches and pools may be more or fewer at the end; any other buffer
// alive at the end that was not after the warm-up is a leak.
const ok = report.failures.length === 0 && report.unownedEnd <= report.unownedWarm && growth < 20 * MiB;
console.log(ok ? 'soak passed' : 'soak FAILED');
releaseDevices();
await defaultPool().close();
process.exit(ok ? 0 : 1);
