/**
 * `pnpm bench`: every algorithm against plain JS on the CPU policies and the best GPU, with device
 * time from timestamp queries, a table, JSON and charts. Also the GPU-machine bundle's entry
 * (`dist/cli.mjs`, see docs/benchmarks/README.md). Exit codes: 0 done, 1 failed, 2 bad command line.
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { type GpuDevice, gpuSelector, noGpuReason, releaseDevices, selectDevice } from '@webdpl/core';
import { defaultPool, makeDevicePolicy } from '@webdpl/policies';
import { pngUnavailableReason, writeEntryCharts } from './charts';
import { type BenchOptions, defaultSizes, MAX_LOG2, parseArgs, USAGE, UsageError } from './cli-args';
import { type AlgorithmApi, ENTRIES, selectEntries } from './entries';
import { measure } from './measure';
import { measurePerCall, type PerCallApi } from './per-call';
import { createProgress } from './progress';
import { computeCrossover, formatTime, pow2, renderReport } from './report';
import { type BenchReport, type DeviceSummary, type EntryResult, isWrong } from './results';
import { countSteps, type RunContext, runEntry, timeBaselineAlone } from './runner';
import { GpuWarmth } from './warm';

function say(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * `RunContext.baselineProcess`: each plain-JS baseline timed by a new process of this CLI (`script`,
 * with this process's node flags) run with `--baseline`, so every size gets the form V8 gives a
 * loop at the first size a process runs (see runner.ts).
 */
function baselineInProcess(script: string, timeMs: number): NonNullable<RunContext['baselineProcess']> {
  return (entryId, baseline, log2) =>
    new Promise((resolve, reject) => {
      const args = [...process.execArgv, script, '--baseline', `${entryId}:${baseline}:${log2}`, '--time', `${timeMs}`];
      execFile(process.execPath, args, { maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
        if (error) {
          const why = stderr.trim().split('\n').pop() || error.message;
          reject(new Error(`the baseline's own process failed: ${why}`));
          return;
        }
        try {
          resolve(JSON.parse(stdout.trim().split('\n').pop() as string));
        } catch (e) {
          reject(new Error(`the baseline's own process printed no timing: ${errorText(e)}`));
        }
      });
    });
}

/** Largest log2 size on a software GPU when --software-gpu-max is not given. */
function softwareGpuMax(options: BenchOptions): number {
  return options.softwareGpuMax ?? (options.quick ? 18 : 20);
}

async function openGpu(options: BenchOptions): Promise<{ device?: GpuDevice; note?: string }> {
  if (!options.policies.has('device')) return { note: '--policies leaves out the device' };
  const reason = await noGpuReason();
  if (reason) return { note: `${reason} (run 'pnpm setup:gpu' for lavapipe)` };
  try {
    return { device: (await selectDevice(gpuSelector)) as GpuDevice };
  } catch (e) {
    return { note: `opening the GPU failed: ${errorText(e)}` };
  }
}

function summarize(d: GpuDevice): DeviceSummary {
  return {
    name: d.info.name,
    kind: d.info.kind,
    vendor: d.info.vendor,
    architecture: d.info.architecture,
    subgroupMinSize: d.info.subgroupMinSize,
    subgroupMaxSize: d.info.subgroupMaxSize,
    features: [...d.features].sort(),
    maxStorageBufferBindingSize: d.limits.maxStorageBufferBindingSize,
  };
}

function listEntries(): string {
  const rows = ENTRIES.map(
    (e) =>
      `  ${e.id.padEnd(22)} ${e.label.padEnd(34)} ${String(e.bytesPerElement).padStart(2)} B/elem  ${e.sets.join(',')}${e.cub ? `  (CUB: ${e.cub})` : ''}`,
  );
  return `Entries (id, what runs, compulsory traffic, default runs that include it):\n${rows.join('\n')}\n`;
}

/** Sizes (log2) of the per-call comparison with the raw-WebGPU floor (issue 12: 2^12 and 2^20). */
const PER_CALL_SIZES = [12, 20];

/** Whether a run reached the par policy, whose worker pool must be closed at the end. */
let usedPool = false;

/** Runs the CLI with `argv` (without node and the script); resolves to the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  let options: BenchOptions;
  try {
    options = parseArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    say(`${e.message}\nRun 'pnpm bench --help' for the options.`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (options.list) {
    process.stdout.write(listEntries());
    return 0;
  }
  if (options.baseline !== undefined) {
    process.stdout.write(`${JSON.stringify(await timeBaselineAlone(options.baseline, options.timeMs))}\n`);
    return 0;
  }
  const { entries, unknown } = selectEntries(options.algorithms, options.deviceOnly ? 'device' : 'default');
  if (unknown.length) {
    const known = [...new Set(ENTRIES.flatMap((e) => [e.algorithm, e.id]))].join(', ');
    say(`--algorithms: unknown ${unknown.map((u) => `'${u}'`).join(', ')}; known: ${known}`);
    return 2;
  }
  const started = performance.now();
  const sizes = defaultSizes(options);
  const notes: string[] = [];

  let api: AlgorithmApi = {};
  try {
    api = (await import('@webdpl/algorithms')) as AlgorithmApi;
  } catch (e) {
    notes.push(`@webdpl/algorithms did not load, so only the plain-JS baselines ran: ${errorText(e)}`);
  }

  const { device, note: gpuNote } = await openGpu(options);
  if (options.deviceOnly && !device) {
    say(`--device-only needs a GPU: ${gpuNote}`);
    return 1;
  }
  const software = device?.info.kind === 'software-gpu';
  const gpuMaxLog2 = software ? softwareGpuMax(options) : MAX_LOG2;
  if (device && sizes.some((s) => s > gpuMaxLog2)) {
    const where = options.deviceOnly ? 'were not run' : 'ran on the CPU only';
    notes.push(`${device.info.name} is a software GPU: sizes above ${pow2(gpuMaxLog2)} ${where} (--software-gpu-max)`);
  }
  if (options.shared)
    notes.push('seq and par ran on allocShared arrays (--shared); plain JS and the GPU on plain arrays');
  const devicePolicy = device ? makeDevicePolicy(device, { fallback: 'error' }) : undefined;
  say(
    `${device ? `GPU ${device.info.name} [${software ? 'software GPU' : 'hardware GPU'}]` : `no GPU: ${gpuNote}`}; ` +
      `sizes ${sizes.map(pow2).join(' ')}; ${entries.length} entries; ${options.timeMs} ms per measurement`,
  );

  const warmth = device ? new GpuWarmth(device) : undefined;
  let floor: BenchReport['floor'];
  if (device) {
    try {
      await warmth?.before();
      const q = device.queue;
      const { check: _check, ...t } = await measure({
        run: async () => {
          await q.submit('empty', () => {});
          await q.finish();
        },
        budgetMs: options.timeMs,
      });
      floor = t;
      warmth?.after();
    } catch (e) {
      notes.push(`the floor (empty submit-and-wait) could not be measured: ${errorText(e)}`);
    }
  }

  let total = 0;
  const progress = { step: (_: string) => {}, done: () => {} };
  const ctx: RunContext = {
    options,
    api,
    device,
    devicePolicy,
    gpuMaxLog2,
    onStep: (t) => progress.step(t),
    onDone: () => progress.done(),
    ...(warmth ? { warmth } : {}),
    ...(options.freshBaselines && process.argv[1]
      ? { baselineProcess: baselineInProcess(process.argv[1], options.timeMs) }
      : {}),
  };
  for (const e of entries) total += countSteps(e, sizes, ctx);
  usedPool = options.policies.has('par') && !options.deviceOnly;
  const bar = createProgress(total);
  progress.step = bar.step;
  progress.done = bar.done;
  const results: EntryResult[] = [];
  try {
    for (const e of entries) {
      const r = await runEntry(e, sizes, ctx);
      const crossover = computeCrossover(r);
      if (crossover) r.crossover = crossover;
      results.push(r);
    }
  } finally {
    bar.stop();
  }
  // GPU per call on DeviceArrays against the raw-WebGPU floor, in this process (per-call.ts).
  let perCall: BenchReport['perCall'];
  const perCallApi = ['reduce', 'inclusiveScan', 'transform', 'copyIf'].every((k) => typeof api[k] === 'function');
  if (device && devicePolicy && perCallApi) {
    const perCallSizes = PER_CALL_SIZES.filter((s) => s <= gpuMaxLog2);
    try {
      say(`per call on DeviceArrays vs the raw-WebGPU floor at ${perCallSizes.map(pow2).join(', ')}`);
      perCall = await measurePerCall(device, devicePolicy, api as unknown as PerCallApi, {
        sizes: perCallSizes,
        rounds: options.quick ? 3 : 7,
        batchMs: options.quick ? 20 : 60,
        ...(warmth ? { warmth } : {}),
      });
    } catch (e) {
      notes.push(`per-call figures could not be measured: ${errorText(e)}`);
    }
  }
  warmth?.destroy();
  if (device) notes.push(autoNote(device, results));
  if (device && results.some((r) => r.measurements.some((m) => m.quantized))) {
    notes.push(
      "device timestamps were quantized to 65.5 µs (Dawn's timestamp_quantization toggle is on): device times are means over many calls; small sizes are unreliable",
    );
  }

  const report: BenchReport = {
    schema: 'webdpl-bench/1',
    date: new Date().toISOString(),
    command: ['bench', ...argv].join(' '),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpu: cpus()[0]?.model.trim() ?? 'unknown CPU',
    cores: cpus().length,
    device: device ? summarize(device) : null,
    ...(device ? {} : { gpuNote }),
    options: {
      ...options,
      policies: [...options.policies],
      sizes,
      gpuMaxLog2: device ? gpuMaxLog2 : null,
    },
    ...(floor ? { floor } : {}),
    ...(perCall ? { perCall } : {}),
    entries: results,
    notes,
    durationS: 0,
  };

  const jsonPath = options.json ?? join(options.out, 'results.json');
  let chartFiles: string[] = [];
  if (options.charts) {
    try {
      const subtitle = `${device ? device.info.name : 'no GPU'} · ${report.cpu} · ${report.date.slice(0, 10)}`;
      chartFiles = await writeEntryCharts(join(options.out, 'charts'), results, subtitle);
      const why = pngUnavailableReason();
      if (why) notes.push(why);
    } catch (e) {
      notes.push(`charts failed: ${errorText(e)}`);
    }
  }
  report.durationS = (performance.now() - started) / 1e3;
  await mkdir(dirname(jsonPath), { recursive: true });
  await writeFile(jsonPath, `${JSON.stringify(report, null, 1)}\n`);
  process.stdout.write(`\n${renderReport(report)}\n`);
  say(`JSON: ${jsonPath}`);
  if (chartFiles.length) say(`charts: ${chartFiles.length} files in ${join(options.out, 'charts')}`);
  if (floor) say(`floor: ${formatTime(floor.ms)} per empty submit-and-wait`);
  if (perCall?.some((r) => r.check !== 'ok')) return 1;
  return results.some((r) => r.measurements.some((m) => isWrong(m.check))) ? 1 : 0;
}

async function shutdown(): Promise<void> {
  releaseDevices();
  if (usedPool) {
    try {
      await defaultPool().close();
    } catch {
      // no pool was started (or none exists yet): nothing to close
    }
  }
}

const argv = process.argv.slice(2);
main(argv)
  .catch((e) => {
    process.stderr.write(`bench: failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return 1;
  })
  .then(async (code) => {
    await shutdown();
    process.exitCode = code;
    // Everything is released; if a handle still keeps Node alive, say so and leave anyway.
    setTimeout(() => {
      say('something still holds the event loop after the run; exiting');
      process.exit(code);
    }, 5_000).unref();
  });

/**
 * What `execution.auto` chooses on this device for host arrays: never a software GPU; on a hardware
 * GPU, the size from which the GPU ran faster end to end than the CPU policies, which auto learns per
 * algorithm and type on first use: this run's measured crossovers are the sizes it would settle on.
 */
function autoNote(device: GpuDevice, results: readonly EntryResult[]): string {
  if (device.info.kind === 'software-gpu') {
    return `execution.auto: ${device.info.name} is a software GPU, so auto runs host arrays on the CPU pool at every size (DeviceArrays stay on it)`;
  }
  const chosen = results
    .filter((r) => r.crossover)
    .map((r) => {
      const c = r.crossover?.e2eVsCpu;
      return `${r.id} ${c === null || c === undefined ? 'CPU at every size measured' : `GPU from ${pow2(c)}`}`;
    });
  return `execution.auto on ${device.info.name} (host arrays, learned on first use; this run's end-to-end crossovers): ${chosen.join('; ') || 'no GPU end-to-end figures in this run'}`;
}
