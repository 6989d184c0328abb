/**
 * How `execution.auto` chooses between the CPU pool and a GPU for calls on host arrays: by measured
 * crossover, per device, algorithm, element type and size.
 *
 * Sizes fall in buckets of powers of two. The first calls in a bucket measure both sides, end to end
 * (upload, kernels, readback on the GPU): the GPU twice (its first call also compiles pipelines, so
 * the second is the one kept), then the CPU once; afterwards the bucket runs on the faster side. A
 * bucket without measurements of its own follows the nearest measured bucket below it when that one
 * chose the GPU (larger inputs favour the GPU further), else explores. Every answer is the same on
 * both sides, so exploring costs time, never correctness.
 *
 * A software GPU (lavapipe, SwiftShader) is not picked for host arrays: on every machine measured it
 * ran 15-100x slower than `seq` (and its first pipelines take seconds to compile, which exploring
 * would pay in user calls). DeviceArray arguments always run on their device.
 *
 * Overrides: `makeAutoPolicy({ crossover })` fixes the crossover (elements) per algorithm or for all
 * (`'*'`); `Infinity` keeps host arrays on the CPU, 0 sends them to the GPU.
 */
import type { GpuDevice, NumericType } from '@webdpl/core';

/** What auto decided for one call. */
export type AutoSide = 'gpu' | 'cpu';

/** Measurements of one (device, algorithm, type) pair, by size bucket (log2). */
interface Bucket {
  gpu: number[];
  cpu: number[];
}

const GPU_SAMPLES = 2;
const CPU_SAMPLES = 1;
const tables = new WeakMap<GpuDevice, Map<string, Map<number, Bucket>>>();

function bucketOf(n: number): number {
  return Math.max(0, Math.floor(Math.log2(Math.max(1, n))));
}

function tableFor(device: GpuDevice, algorithm: string, type: NumericType): Map<number, Bucket> {
  let byKey = tables.get(device);
  if (!byKey) {
    byKey = new Map();
    tables.set(device, byKey);
  }
  const key = `${algorithm}:${type}`;
  let t = byKey.get(key);
  if (!t) {
    t = new Map();
    byKey.set(key, t);
  }
  return t;
}

function decided(b: Bucket | undefined): AutoSide | undefined {
  if (!b || b.gpu.length < GPU_SAMPLES || b.cpu.length < CPU_SAMPLES) return undefined;
  return (b.gpu[b.gpu.length - 1] as number) < Math.min(...b.cpu) ? 'gpu' : 'cpu';
}

/**
 * The side auto runs a host-array call of `n` elements on, measuring where nothing is known yet.
 * @param crossover a fixed crossover from the policy (elements), if any
 */
export function autoSide(
  device: GpuDevice,
  algorithm: string,
  type: NumericType,
  n: number,
  crossover: number | undefined,
): AutoSide {
  if (crossover !== undefined) return n >= crossover ? 'gpu' : 'cpu';
  if (device.info.kind === 'software-gpu') return 'cpu';
  const table = tableFor(device, algorithm, type);
  const k = bucketOf(n);
  const b = table.get(k);
  const own = decided(b);
  if (own) return own;
  if (!b) {
    // Below the smallest bucket measured so far and above one that chose the CPU: explore. Above a
    // bucket that chose the GPU: the GPU.
    let below: AutoSide | undefined;
    for (let j = k - 1; j >= 0 && below === undefined; j--) below = decided(table.get(j));
    if (below === 'gpu') return 'gpu';
  }
  const gpuRuns = b?.gpu.length ?? 0;
  return gpuRuns < GPU_SAMPLES ? 'gpu' : 'cpu';
}

/** Records how long a host-array call of `n` elements took on `side` (ms, end to end). */
export function autoRecord(
  device: GpuDevice,
  algorithm: string,
  type: NumericType,
  n: number,
  side: AutoSide,
  ms: number,
): void {
  if (device.info.kind === 'software-gpu') return;
  const table = tableFor(device, algorithm, type);
  const k = bucketOf(n);
  let b = table.get(k);
  if (!b) {
    b = { gpu: [], cpu: [] };
    table.set(k, b);
  }
  const list = side === 'gpu' ? b.gpu : b.cpu;
  if (list.length < (side === 'gpu' ? GPU_SAMPLES : CPU_SAMPLES)) list.push(ms);
}

/** One measured crossover: the smallest size from which auto runs `algorithm` on the GPU. */
export interface AutoCrossover {
  readonly algorithm: string;
  readonly type: NumericType;
  /** log2 of the first bucket where the GPU won, or undefined when the CPU won every bucket measured. */
  readonly fromLog2: number | undefined;
  /** Buckets measured, with each side's time (ms). */
  readonly buckets: readonly { readonly log2: number; readonly gpuMs: number; readonly cpuMs: number }[];
}

/** What auto has measured on `device` so far (for reports such as `pnpm bench`). */
export function autoCrossovers(device: GpuDevice): AutoCrossover[] {
  const out: AutoCrossover[] = [];
  for (const [key, table] of tables.get(device) ?? []) {
    const [algorithm, type] = key.split(':') as [string, NumericType];
    const buckets = [...table.entries()]
      .filter(([, b]) => decided(b) !== undefined)
      .sort((a, b) => a[0] - b[0])
      .map(([log2, b]) => ({ log2, gpuMs: b.gpu[b.gpu.length - 1] as number, cpuMs: Math.min(...b.cpu) }));
    const first = buckets.find((b) => b.gpuMs < b.cpuMs);
    out.push({ algorithm, type, fromLog2: first?.log2, buckets });
  }
  return out;
}
