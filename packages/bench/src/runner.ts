/**
 * Runs the entries: for each entry and size, the planned series (plain-JS baselines, seq, par, and on
 * the GPU: end to end, resident call, device time), each through `measure`. A series that fails at a
 * size is skipped at the larger sizes with the reason recorded; nothing here throws for one series.
 */

import { DeviceArray, type GpuDevice, type HostArray } from '@webdpl/core';
import { allocShared, type DevicePolicy, execution, type HostPolicy, type Policy, toShared } from '@webdpl/policies';
import type { BenchOptions } from './cli-args';
import { type AlgorithmApi, alloc, type BenchEntry, ENTRIES, type HostCase, MissingExportError } from './entries';
import { generateOnDevice, generatorOf } from './gpu-data';
import { type Measured, type MeasureSpec, measure } from './measure';
import type { EntryResult, Failure, Measurement, SeriesKind } from './results';
import type { GpuWarmth } from './warm';

/** What the runner needs besides the entries. */
export interface RunContext {
  readonly options: BenchOptions;
  /** The exports of @webdpl/algorithms. */
  readonly api: AlgorithmApi;
  /** The GPU, when one is used. */
  readonly device: GpuDevice | undefined;
  readonly devicePolicy: DevicePolicy | undefined;
  /** Largest log2 size run on the GPU. */
  readonly gpuMaxLog2: number;
  /** Called before each series with a short description, and after it. */
  readonly onStep: (task: string) => void;
  readonly onDone: () => void;
  /** Warms the GPU's clocks before each timed GPU set (warm.ts). */
  readonly warmth?: GpuWarmth;
  /**
   * Times a plain-JS baseline (entry id, baseline name, log2) in a process of its own
   * (`timeBaselineAlone` there; the CLI's `--fresh-baselines`); absent, baselines are timed in this
   * process. V8 optimizes a
   * baseline's closure for the arrays it closes over only while it is the sole closure of its
   * source, i.e. at the first size a process runs: in one process the later sizes got a generic,
   * slower form (`pnpm bench --policies js,seq --sizes 20,22,24` against one size per process,
   * 2^22: transform's loop 5.2 against 2.1 ms, minElement 4.5 / 2.2, scanByKey 7.4 / 3.1,
   * histogram 6.2 / 3.3, merge 28 / 19; docs/benchmarks/cpu-gather-2026-11-24j.md), so seq's ratio
   * to them depended on the order of the sizes.
   */
  readonly baselineProcess?: (entryId: string, baseline: string, log2: number) => Promise<Measured>;
}

/** One series planned at one size. */
interface Planned {
  readonly series: string;
  readonly kind: SeriesKind;
  readonly label: string;
  /** Times it; `resident` holds the DeviceArrays of this size once made. */
  readonly exec: (c: HostCase, resident: Resident) => Promise<Measured>;
}

/** Series labels shared by the table and the charts. */
export const SERIES_LABELS: Readonly<Record<Exclude<SeriesKind, 'js'>, string>> = {
  seq: 'seq',
  par: 'par',
  'device-e2e': 'GPU end to end',
  'device-call': 'GPU call, data resident',
  'device-time': 'GPU kernels (device time)',
};

const GPU_SERIES = ['device-e2e', 'device-call', 'device-time'] as const;

/** A series that takes longer than this per call is not run at larger sizes. */
const SLOW_CALL_MS = 20_000;

/**
 * Host arrays for one series: working inputs (copies when the call sorts in place) and outputs;
 * with `shared`, `allocShared` copies of the inputs and `allocShared` outputs.
 */
export function hostArgs(entry: BenchEntry, c: HostCase, shared: boolean) {
  const inputs = shared
    ? c.inputs.map((a) => toShared(a))
    : entry.inPlace
      ? c.inputs.map((a) => a.slice())
      : [...c.inputs];
  const outputs = c.outputs.map((o) =>
    shared ? (allocShared(o.type, o.length) as HostArray) : alloc(o.type, o.length),
  );
  const observed = entry.inPlace ? inputs : outputs;
  const before = entry.inPlace
    ? () => {
        for (const [k, w] of inputs.entries()) w.set(c.inputs[k] as HostArray);
      }
    : undefined;
  return { inputs, outputs, observed, before };
}

/** The DeviceArrays of one size, made on first use and destroyed after the size. */
class Resident {
  private arrays: { inputs: DeviceArray[]; pristine: DeviceArray[]; outputs: DeviceArray[] } | undefined;

  constructor(
    private readonly entry: BenchEntry,
    private readonly c: HostCase,
    private readonly device: GpuDevice | undefined,
    /** Make generated inputs on the GPU instead of uploading them (device-time runs). */
    private readonly gpuData = false,
  ) {}

  async get(): Promise<{ inputs: DeviceArray[]; pristine: DeviceArray[]; outputs: DeviceArray[] }> {
    if (this.arrays) return this.arrays;
    const d = this.device as GpuDevice;
    const up = async (a: HostArray) => {
      const g = this.gpuData ? generatorOf(a, this.c.inputs) : undefined;
      return g ? generateOnDevice(d, g.type, a.length, g.seed) : DeviceArray.from(d, a);
    };
    const inputs: DeviceArray[] = [];
    for (const a of this.c.inputs) inputs.push(await up(a));
    const pristine: DeviceArray[] = [];
    if (this.entry.inPlace) for (const a of this.c.inputs) pristine.push(await up(a));
    this.arrays = { inputs, pristine, outputs: this.c.outputs.map((o) => DeviceArray.create(d, o.type, o.length)) };
    return this.arrays;
  }

  /** Copies the pristine inputs over the working ones (in-place entries), untimed. */
  async restore(): Promise<void> {
    const a = await this.get();
    const d = this.device as GpuDevice;
    await d.queue.submit('bench restore', (rec) => {
      for (const [k, p] of a.pristine.entries()) {
        const w = a.inputs[k] as DeviceArray;
        if (p.byteLength) rec.encoder.copyBufferToBuffer(p.buffer, p.byteOffset, w.buffer, w.byteOffset, p.byteLength);
      }
    });
  }

  destroy(): void {
    if (!this.arrays) return;
    for (const a of [...this.arrays.inputs, ...this.arrays.pristine, ...this.arrays.outputs]) a.destroy();
    this.arrays = undefined;
  }
}

/** The series to run for `entry` at `log2`. */
function plan(entry: BenchEntry, log2: number, ctx: RunContext): Planned[] {
  const { options, api } = ctx;
  const budgetMs = options.timeMs;
  const out: Planned[] = [];
  const policies = options.policies;
  const host = !options.deviceOnly && !entry.residentOnly;
  if (host && policies.has('js')) {
    for (const b of entry.baselines) {
      if (b.maxLog2 !== undefined && log2 > b.maxLog2) continue;
      out.push({
        series: `js:${b.name}`,
        kind: 'js',
        label: `js: ${b.label}`,
        exec: async (c) => {
          if (ctx.baselineProcess) return ctx.baselineProcess(entry.id, b.name, log2);
          const { run, before } = b.setup(c);
          return measure({ run, before, budgetMs });
        },
      });
    }
  }
  // One call on host arrays under `policy` (CPU policies, and the GPU end to end).
  const onHostArrays =
    (policy: Policy, warmCalls?: MeasureSpec<unknown>['warmCalls']): Planned['exec'] =>
    (c) => {
      const a = hostArgs(entry, c, options.shared && policy.kind !== 'device');
      return measure({
        run: () => entry.call(api, policy, a.inputs, a.outputs),
        before: a.before,
        verify: (r) => entry.verify(r, a.observed, c),
        budgetMs,
        warmCalls,
      });
    };
  // par's first calls of a kernel in a process run slow while V8 optimizes the workers' copies (10-20
  // calls): up to 10 untimed calls, at most 4 budgets of them, so the figure is par's steady state
  // (in --quick, sort u32 at 2^18 read 15.8 ms par against 4.97 ms seq without them).
  const hostSeries = (kind: 'seq' | 'par', policy: HostPolicy): Planned => ({
    series: kind,
    kind,
    label: SERIES_LABELS[kind],
    exec: onHostArrays(policy, kind === 'par' ? { calls: 10, maxMs: 4 * budgetMs } : undefined),
  });
  if (host && policies.has('seq')) out.push(hostSeries('seq', execution.seq));
  if (host && policies.has('par')) out.push(hostSeries('par', execution.par));
  const device = ctx.device;
  const policy = ctx.devicePolicy;
  if (!device || !policy || !policies.has('device') || log2 > ctx.gpuMaxLog2) return out;
  const queue = device.queue;
  // Every timed GPU set starts right after >= 0.5 s of GPU work, 1.5 s after a long idle (warm clocks).
  // Resident arrays are made (uploaded) before the warm-up, so no upload idles the GPU after it.
  const warm =
    (exec: Planned['exec'], resident = false): Planned['exec'] =>
    async (c, res) => {
      if (resident) await res.get();
      await ctx.warmth?.before();
      try {
        return await exec(c, res);
      } finally {
        ctx.warmth?.after();
      }
    };
  if (host) {
    out.push({
      series: 'device-e2e',
      kind: 'device-e2e',
      label: SERIES_LABELS['device-e2e'],
      exec: warm(onHostArrays(policy)),
    });
  }
  const resident = (kind: 'device-call' | 'device-time'): Planned => ({
    series: kind,
    kind,
    label: SERIES_LABELS[kind],
    exec: warm(async (c, res) => {
      const a = await res.get();
      const observed = entry.inPlace ? a.inputs : a.outputs;
      const profiling = kind === 'device-time';
      if (profiling && !device.features.has('timestamp-query')) {
        throw new Error(`'${device.info.name}' has no timestamp-query feature: no device time`);
      }
      queue.setProfiling(profiling);
      try {
        return await measure({
          run: async () => {
            if (profiling) queue.resetDeviceTime();
            // Until the device is idle again: the caller's view of one call (as the floor is
            // measured), and for device time, work the call left in flight still counts.
            const r = await entry.call(api, policy, a.inputs, a.outputs);
            await queue.finish();
            return r;
          },
          before: entry.inPlace ? () => res.restore() : undefined,
          verify: async (r) => entry.verify(r, (await Promise.all(observed.map((d) => d.read()))) as HostArray[], c),
          // Device-time runs check the last call's result after timing: reading gigabytes back
          // first could slow what follows (docs/benchmarks/h100-notes.md).
          verifyAfter: options.deviceOnly,
          deviceTimeNs: profiling ? () => queue.totalDeviceTimeNs : undefined,
          budgetMs,
        });
      } finally {
        queue.setProfiling(false);
      }
    }, true),
  });
  out.push(resident('device-call'), resident('device-time'));
  return out;
}

/**
 * Times one plain-JS baseline, `spec` = `ENTRY_ID:BASELINE_NAME:LOG2`, on the entry's data at
 * 2^LOG2: what a process started for `RunContext.baselineProcess` does (`--baseline`).
 */
export async function timeBaselineAlone(spec: string, budgetMs: number): Promise<Measured> {
  const m = /^([^:]+):([^:]+):(\d+)$/.exec(spec);
  const entry = m ? ENTRIES.find((e) => e.id === m[1]) : undefined;
  const b = m ? entry?.baselines.find((x) => x.name === m[2]) : undefined;
  if (!m || !entry || !b) throw new Error(`--baseline: no baseline '${spec}' (expected ENTRY_ID:BASELINE_NAME:LOG2)`);
  const { run, before } = b.setup(entry.make(2 ** Number(m[3])));
  return measure({ run, before, budgetMs });
}

/** Number of measurements `runEntry` will make (for the progress bar). */
export function countSteps(entry: BenchEntry, sizes: readonly number[], ctx: RunContext): number {
  if (missingExports(entry, ctx.api).length) return 0;
  let k = 0;
  for (const s of sizes) k += plan(entry, s, ctx).length;
  return k;
}

function missingExports(entry: BenchEntry, api: AlgorithmApi): string[] {
  return entry.requires.filter((name) => typeof api[name] !== 'function');
}

function message(e: unknown): string {
  return e instanceof Error ? e.message.split('\n')[0] || e.name : String(e);
}

/** Runs every planned series of `entry` over `sizes`. */
export async function runEntry(entry: BenchEntry, sizes: readonly number[], ctx: RunContext): Promise<EntryResult> {
  const base = {
    id: entry.id,
    algorithm: entry.algorithm,
    label: entry.label,
    ...(entry.cub ? { cub: entry.cub } : {}),
    type: entry.type,
    bytesPerElement: entry.bytesPerElement,
    traffic: entry.traffic,
  };
  const missing = missingExports(entry, ctx.api);
  if (missing.length) {
    return {
      ...base,
      skipped: `@webdpl/algorithms does not export ${missing.join(', ')} yet`,
      measurements: [],
      failures: [],
    };
  }
  const measurements: Measurement[] = [];
  const failures: Failure[] = [];
  /** Series not run any more, with the reason. */
  const stopped = new Map<string, string>();
  for (const log2 of sizes) {
    const steps = plan(entry, log2, ctx);
    if (steps.length === 0) continue;
    const n = 2 ** log2;
    const c = entry.make(n);
    const resident = new Resident(entry, c, ctx.device, ctx.options.deviceOnly);
    try {
      for (const step of steps) {
        ctx.onStep(`${entry.id} 2^${log2} ${step.series}`);
        const why = stopped.get(step.series);
        if (why !== undefined) {
          failures.push({ series: step.series, log2, error: why });
          ctx.onDone();
          continue;
        }
        try {
          const m = await step.exec(c, resident);
          const seconds = m.ms / 1e3;
          const { check, quantized, ...timing } = m;
          measurements.push({
            series: step.series,
            kind: step.kind,
            label: step.label,
            log2,
            n,
            ...timing,
            gbps: (entry.bytesPerElement * n) / seconds / 1e9,
            gelems: n / seconds / 1e9,
            check,
            ...(quantized ? { quantized } : {}),
          });
          if (m.ms > SLOW_CALL_MS) stopped.set(step.series, `not run: ${m.ms.toFixed(0)} ms per call at 2^${log2}`);
        } catch (e) {
          const error = message(e);
          failures.push({ series: step.series, log2, error });
          stopped.set(
            step.series,
            e instanceof MissingExportError ? error : `not run after failing at 2^${log2}: ${error}`,
          );
          if (ctx.device?.lost) for (const k of GPU_SERIES) stopped.set(k, 'device lost');
        }
        ctx.onDone();
      }
    } finally {
      resident.destroy();
    }
  }
  return { ...base, measurements, failures };
}
