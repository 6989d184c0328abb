/**
 * One timing with tinybench: a probe call first (it warms caches and pipelines, and its result is
 * checked), optionally some untimed calls (`warmCalls`), then a tinybench task sized from the probe
 * so slow calls (a 2^24 sort) run a couple of times and fast ones fill the time budget. Device time rides on tinybench too: the task returns the
 * timestamp-query time as `overriddenDuration`, so the same statistics apply to it.
 */
import { Bench } from 'tinybench';

/** Statistics of one timing, in milliseconds. */
export interface Timing {
  /** The figure reported: the median, or the mean where `quantized` (see below). */
  readonly ms: number;
  readonly medianMs: number;
  readonly meanMs: number;
  readonly minMs: number;
  /** Relative margin of error of the mean, in percent. */
  readonly rme: number;
  readonly samples: number;
  /**
   * Device timestamps came quantized (every sample a multiple of 2^16 ns, Dawn's
   * `timestamp_quantization`). Then the median snaps to the grid and the mean is the better figure.
   */
  readonly quantized?: boolean;
}

/** What to time. */
export interface MeasureSpec<R> {
  /** The call; its promise must settle when the work is done. */
  readonly run: () => R | Promise<R>;
  /** Untimed work before each call (restoring an input that the call sorts in place). */
  readonly before?: () => void | Promise<void>;
  /** Checks the probe call's result: a message when wrong (the timing still happens, flagged). */
  readonly verify?: (result: R) => string | undefined | Promise<string | undefined>;
  /** Check the last timed call's result after timing instead of the probe's before it. @default false */
  readonly verifyAfter?: boolean;
  /**
   * Device time of the call just made, in nanoseconds (timestamp queries). When given, the
   * statistics are over device time instead of wall time.
   */
  readonly deviceTimeNs?: () => number;
  /** Time budget in milliseconds. */
  readonly budgetMs: number;
  /**
   * Untimed calls after the probe, up to `calls` of them or `maxMs` of calls, whichever comes
   * first: for `execution.par`, whose first calls in a process run while V8 optimizes the workers'
   * copies of a kernel (docs/benchmarks/cpu-par-first-calls-2026-11-25.md). @default none
   */
  readonly warmCalls?: { readonly calls: number; readonly maxMs: number };
}

/** A timing plus the probe's check. */
export interface Measured extends Timing {
  /** 'ok', or what the probe call's check found wrong. */
  readonly check: string;
}

const QUANTUM_NS = 65536;

/** Times `spec.run` as described at the top of this file. Throws what the probe call throws. */
export async function measure<R>(spec: MeasureSpec<R>): Promise<Measured> {
  const deviceTime = spec.deviceTimeNs;
  await spec.before?.();
  const t0 = performance.now();
  const first = spec.run();
  const isAsync = first instanceof Promise;
  const probe = await first;
  const probeMs = performance.now() - t0;
  if (deviceTime && deviceTime() <= 0) {
    throw new Error('no device time: the call recorded no timed compute pass (a buffer copy, or nothing to do)');
  }
  let last: R = probe;
  const check0 = spec.verifyAfter ? undefined : ((await spec.verify?.(probe)) ?? 'ok');
  if (spec.warmCalls) {
    const w0 = performance.now();
    for (let i = 0; i < spec.warmCalls.calls && performance.now() - w0 < spec.warmCalls.maxMs; i++) {
      await spec.before?.();
      last = await spec.run();
    }
  }
  const budget = spec.budgetMs;
  const deviceNs: number[] = [];
  // A safety net: whatever tinybench decides, a measurement ends after this long.
  const limit = new AbortController();
  const timer = setTimeout(() => limit.abort(), 10 * budget + 5 * probeMs + 1_000);
  const bench = new Bench({
    time: budget,
    // A call that alone fills the budget runs once more; one that fills half of it, twice.
    iterations: probeMs >= budget ? 1 : probeMs >= budget / 2 ? 2 : 5,
    warmup: probeMs < budget / 20,
    warmupTime: budget / 10,
    warmupIterations: 8,
    throws: true,
    signal: limit.signal,
  });
  const task = deviceTime
    ? async () => {
        const w0 = performance.now();
        last = await spec.run();
        const wall = performance.now() - w0;
        const ns = deviceTime();
        deviceNs.push(ns);
        // Samples are device time; the time budget is spent in wall time.
        return { overriddenDuration: ns / 1e6, overriddenIterationCost: wall };
      }
    : isAsync
      ? async () => {
          last = await spec.run();
        }
      : () => {
          last = spec.run() as R;
        };
  const before = spec.before;
  bench.add('t', task, before ? { beforeEach: async () => before() } : {});
  try {
    await bench.run();
  } finally {
    clearTimeout(timer);
  }
  const result = bench.tasks[0]?.result;
  if (!result || (result.state !== 'completed' && result.state !== 'aborted-with-statistics')) {
    const why = result && 'error' in result ? result.error.message : (result?.state ?? 'no result');
    throw new Error(`tinybench: ${why}`);
  }
  const check = check0 ?? (await spec.verify?.(last)) ?? 'ok';
  const lat = result.latency;
  const quantized = deviceNs.length > 0 && deviceNs.every((ns) => ns % QUANTUM_NS === 0);
  return {
    ms: quantized ? lat.mean : lat.p50,
    medianMs: lat.p50,
    meanMs: lat.mean,
    minMs: lat.min,
    rme: lat.rme,
    samples: lat.samplesCount,
    ...(quantized ? { quantized } : {}),
    check,
  };
}
