/**
 * The shape of a bench run's results: what `--json` writes and what the table, the charts and
 * `scripts/h100-table.ts` read.
 */
import type { PerCallRow } from './per-call';

/** What a series measures. */
export type SeriesKind =
  /** a plain-JS baseline on the host (wall time) */
  | 'js'
  /** execution.seq (wall time) */
  | 'seq'
  /** execution.par (wall time) */
  | 'par'
  /** device policy, TypedArray in and out: upload, kernels, readback (wall time) */
  | 'device-e2e'
  /** device policy on resident DeviceArrays: the whole call as the caller waits for it (wall time) */
  | 'device-call'
  /** device policy on resident DeviceArrays: kernels only, from timestamp queries (device time) */
  | 'device-time';

/** Every series kind in display order. */
export const SERIES_KINDS: readonly SeriesKind[] = ['js', 'seq', 'par', 'device-e2e', 'device-call', 'device-time'];

/** One timing of one series at one size. */
export interface Measurement {
  /** Series id: 'js:for-loop', 'seq', 'par', 'device-e2e', 'device-call', 'device-time'. */
  readonly series: string;
  readonly kind: SeriesKind;
  /** Human label of the series. */
  readonly label: string;
  readonly log2: number;
  readonly n: number;
  /** The figure: median milliseconds per call (mean for quantized device time). */
  readonly ms: number;
  readonly medianMs: number;
  readonly meanMs: number;
  readonly minMs: number;
  /** Relative margin of error of the mean, percent. */
  readonly rme: number;
  readonly samples: number;
  /** Compulsory traffic over `ms`, in GB/s (1e9 bytes). */
  readonly gbps: number;
  /** Elements per second over `ms`, in G elements/s (1e9). */
  readonly gelems: number;
  /**
   * 'ok'; 'imprecise: ...' for a float result within 10% of the double-precision reference (kept,
   * marked '~'); anything else says what was wrong (marked '!', left out of charts and crossovers).
   */
  readonly check: string;
  /** Device timestamps were quantized (see Timing.quantized). */
  readonly quantized?: boolean;
}

/** A series that could not be measured at a size. */
export interface Failure {
  readonly series: string;
  readonly log2: number;
  readonly error: string;
}

/** The size from which the GPU wins, per comparison; null when it never does over the sizes run. */
export interface Crossover {
  /** GPU end to end (TypedArray in and out) against the faster of seq and par. */
  readonly e2eVsCpu: number | null;
  /** GPU end to end against the fastest plain-JS baseline. */
  readonly e2eVsJs: number | null;
  /** GPU call on resident data against the faster of seq and par. */
  readonly residentVsCpu: number | null;
  /** Human summary. */
  readonly text: string;
}

/** Results of one entry (an algorithm with one element type and operation). */
export interface EntryResult {
  readonly id: string;
  readonly algorithm: string;
  readonly label: string;
  /** The cub_anchor row this entry matches, if any. */
  readonly cub?: string;
  readonly type: string;
  readonly bytesPerElement: number;
  /** How the compulsory traffic is counted. */
  readonly traffic: string;
  /** Why the entry did not run at all. */
  readonly skipped?: string;
  readonly measurements: Measurement[];
  readonly failures: Failure[];
  crossover?: Crossover;
}

/** The device a run used. */
export interface DeviceSummary {
  readonly name: string;
  readonly kind: string;
  readonly vendor: string;
  readonly architecture: string;
  readonly subgroupMinSize: number;
  readonly subgroupMaxSize: number;
  readonly features: string[];
  readonly maxStorageBufferBindingSize: number;
}

/** A whole run. */
export interface BenchReport {
  readonly schema: 'webdpl-bench/1';
  readonly date: string;
  readonly command: string;
  readonly node: string;
  readonly platform: string;
  readonly cpu: string;
  readonly cores: number;
  readonly device: DeviceSummary | null;
  /** Why no GPU was used, when none was. */
  readonly gpuNote?: string;
  readonly options: Record<string, unknown>;
  /** An empty submit-and-wait round trip on the device (wall time). */
  floor?: Omit<Measurement, 'series' | 'kind' | 'label' | 'log2' | 'n' | 'gbps' | 'gelems' | 'check'>;
  /** GPU per call on DeviceArrays against the raw-WebGPU floor (per-call.ts), when a GPU ran. */
  perCall?: PerCallRow[];
  readonly entries: EntryResult[];
  readonly notes: string[];
  durationS: number;
}

/** True when a measurement's check found a wrong result (not merely an imprecise float). */
export function isWrong(check: string): boolean {
  return check !== 'ok' && !check.startsWith('imprecise');
}
