/**
 * `pnpm test:soak`: the full soak of issue 13 (packages/algorithms/src/reliability/soak.ts):
 * 20,000 mixed calls, 16 in flight, random sizes up to 2^20, types, policies and array kinds, every
 * result checked; prints the figures (calls, failures, live GPU buffers, RSS, duration, device) and
 * exits non-zero on a failure, buffer growth or RSS growth of 20 MiB or more after the warm-up.
 * Options (environment): SOAK_CALLS (default 20000), SOAK_SEED (default 13), SOAK_MAX_LOG2 (20),
 * SOAK_WARMUP (random calls after the warm-up's combinations, default 2000), SOAK_GPU=0 (CPU
 * policies only).
 */

import { runSoak, type SoakReport } from '../packages/algorithms/src/reliability/soak';
import { type GpuDevice, gpuSelector, noGpuReason, releaseDevices, selectDevice } from '../packages/core/src/index';
import { defaultPool } from '../packages/policies/src/index';

const MiB = 2 ** 20;
const calls = Number(process.env.SOAK_CALLS ?? 20_000);
const seed = Number(process.env.SOAK_SEED ?? 13);
const maxLog2 = Number(process.env.SOAK_MAX_LOG2 ?? 20);
const warmUpCalls = Number(process.env.SOAK_WARMUP ?? 2000);

function line(r: SoakReport, done: number): string {
  const rss = (r.rssEnd / MiB).toFixed(1);
  const g = (r.rssEnd - r.rssWarm) / MiB;
  const grow = `${g >= 0 ? '+' : ''}${g.toFixed(1)}`;
  return (
    `${done}/${r.calls} calls, ${r.failures.length} failures, buffers ${r.buffersWarm} -> ${r.buffersEnd}, ` +
    `RSS ${rss} MiB (${grow} since warm-up), pipelines ${r.pipelinesWarm} -> ${r.pipelinesEnd}, ` +
    `${(r.durationMs / 1000).toFixed(0)} s`
  );
}

const reason = await noGpuReason();
const device = reason || process.env.SOAK_GPU === '0' ? undefined : ((await selectDevice(gpuSelector)) as GpuDevice);
console.log(
  `soak: ${calls} calls after a warm-up (every combination once + ${warmUpCalls}), seed ${seed}, sizes up to 2^${maxLog2}, device: ${device?.info.name ?? `none (${reason})`}`,
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
      buffers: { start: report.buffersStart, afterWarmUp: report.buffersWarm, end: report.buffersEnd },
      pipelines: { afterWarmUp: report.pipelinesWarm, end: report.pipelinesEnd },
      rssMiB: { afterWarmUp: +(report.rssWarm / MiB).toFixed(1), end: +(report.rssEnd / MiB).toFixed(1) },
      durationS: +(report.durationMs / 1000).toFixed(1),
      perOperation: report.perOperation,
      grownBufferLabels: report.grownLabels,
    },
    null,
    2,
  ),
);
for (const f of report.failures.slice(0, 20)) console.log(`FAIL call ${f.call}: ${f.what}: ${f.error}`);
const ok = report.failures.length === 0 && report.buffersEnd <= report.buffersWarm && growth < 20 * MiB;
console.log(ok ? 'soak passed' : 'soak FAILED');
releaseDevices();
await defaultPool().close();
process.exit(ok ? 0 : 1);
