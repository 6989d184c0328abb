/**
 * histogram(policy, input, bins, output?): the number of elements in each bin (oneDPL's histogram).
 * `bins` is `{ bins, lo, hi }` (even bins over [lo, hi): bin k is [lo + k (hi - lo) / bins,
 * lo + (k + 1) (hi - lo) / bins)) or `{ boundaries }` (sorted; bin i is [b[i], b[i + 1])). Elements
 * outside every bin (and NaN) are not counted. Counts are u32 (exact; they wrap past 2^32 - 1 per bin).
 * See bins.ts for how edges are compared exactly in the element type on every backend.
 *
 * Strategy: CPU: one generated loop per type and bin kind (even: arithmetic estimate plus an edge
 * check; boundaries: binary search); par: per-chunk bins on the pool, summed. GPU: one kernel over a
 * capped grid with vec4 loads, bins privatized in workgroup memory (up to the `privateBins` tuning
 * and the device's workgroup memory; optional sub-histograms) merged into the counts with global
 * atomics, global atomics for more bins; integer even bins of an integer width by one division or
 * shift (no edge reads), other even bins by an f32 estimate and edge check; optional subgroup
 * aggregation of equal bins; inputs beyond one storage binding in segments.
 * Size tiers: an empty input only clears the counts; otherwise one pass (one dispatch per segment).
 */
import type { DeviceArray, HostArray, NumericType } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { type CpuBinKind, cpuHistogram } from '../bricks/histogram';
import { type ArrayArg, type CheckedArray, checkArray, checkNoAlias, checkOutput } from '../common/args';
import { dispatch } from '../pattern/dispatch';
import { type BinEdges, binEdges, type ExactBins, exactBins, type HistogramBins } from './bins';
import { gpuHistogram } from './gpu';

export type { HistogramBins } from './bins';

/** What a call derives from its bins and element type (never written after it is made). */
export interface HistogramPlan {
  readonly b: BinEdges;
  readonly exact: ExactBins | undefined;
  /** How the CPU loop finds a bin. */
  readonly kind: CpuBinKind;
  /** The CPU loop's parameters (bricks/histogram.ts `histogramSource`). */
  readonly params: Float64Array;
}

/** Plans of even bins `{ bins, lo, hi }` by type and the three numbers (`histogramPlan`). */
const plans = new Map<string, HistogramPlan>();

/** A number's text that tells -0 from 0 (every other double has its own shortest text). */
const text = (x: number) => (Object.is(x, -0) ? '-0' : String(x));

/**
 * The plan of a call: the checked edges (bins.ts), the exact integer bins, the CPU bin kind and
 * parameters. Even bins are memoized by type and numbers: computing their edges (one ceiling per
 * edge) cost ~11 us a call for 256 bins, a 2^10-element seq call 16 us against 1 us for a plain
 * loop (docs/benchmarks/cpu-catalogue-2026-11-24c.md). At most 256 entries (then cleared).
 */
export function histogramPlan(spec: HistogramBins, type: NumericType): HistogramPlan {
  const s = spec as { bins?: unknown; lo?: unknown; hi?: unknown; boundaries?: unknown };
  const even =
    typeof spec === 'object' &&
    spec !== null &&
    !('boundaries' in spec) &&
    typeof s.bins === 'number' &&
    typeof s.lo === 'number' &&
    typeof s.hi === 'number';
  const key = even ? `${type} ${text(s.bins as number)} ${text(s.lo as number)} ${text(s.hi as number)}` : undefined;
  const known = key === undefined ? undefined : plans.get(key);
  if (known) return known;
  const b = binEdges(spec, type);
  const m = b.edges.length;
  // Integer bins of exact integer width: the CPU loop shifts or divides (no edge reads).
  const exact = exactBins(type, b);
  const kind: CpuBinKind = exact ? (exact.shift >= 0 ? 'shift' : 'div') : b.even ? 'even' : 'edges';
  const params = new Float64Array(4 + m);
  params.set([b.lo, exact ? (exact.shift >= 0 ? exact.shift : exact.width) : b.scale, m, b.open ? 1 : 0]);
  params.set(b.edges, 4);
  const plan = { b, exact, kind, params };
  if (key !== undefined) {
    if (plans.size >= 256) plans.clear();
    plans.set(key, plan);
  }
  return plan;
}
export { histogramTuning } from './tuning';

export function histogram(policy: Policy, input: ArrayArg, bins: HistogramBins): Promise<Uint32Array>;
/**
 * Writes the counts into `output[0, bins)` (overwriting; a Uint32Array or u32 DeviceArray of at
 * least as many elements as bins, not overlapping the input).
 */
export function histogram(policy: Policy, input: ArrayArg, bins: HistogramBins, output: ArrayArg): Promise<undefined>;
/**
 * The number of elements of `input` in each bin.
 * @param bins `{ bins, lo, hi }`: `bins` (1 to 2^24) even bins over [lo, hi), lo < hi finite; or
 *   `{ boundaries }`: 2 to 2^24 + 1 sorted numbers (not NaN; infinities allowed)
 * @returns a new Uint32Array of counts, when no output is given
 * @throws ArgumentError naming `input`, `bins` (or its field) or `output`
 */
export async function histogram(
  policy: Policy,
  input: ArrayArg,
  bins: HistogramBins,
  output?: ArrayArg,
): Promise<Uint32Array | undefined> {
  let counts: Uint32Array | undefined;
  await dispatch(policy, () => {
    const a = checkArray(input, 'input');
    const { b, exact, kind, params } = histogramPlan(bins, a.type);
    let out: CheckedArray;
    if (output === undefined) {
      counts = new Uint32Array(b.bins);
      out = checkArray(counts, 'output');
    } else {
      out = checkOutput(output, 'output', b.bins, 'u32');
      checkNoAlias(a, out, 'input', 'output');
    }
    return {
      algorithm: 'histogram',
      engine: 'histogram',
      // Work: reading the input and writing the counts (never 0: an empty input still clears them).
      n: a.length + b.bins,
      inputs: [a],
      outputs: [{ arg: out, length: b.bins }],
      empty: () => undefined,
      cpu: ({ backend, inputs: [x], outputs: [y] }) =>
        cpuHistogram(backend, x as HostArray, a.type, kind, params, y as Uint32Array, b.bins),
      gpu: (call) => gpuHistogram(call, call.inputs[0] as DeviceArray, call.outputs[0] as DeviceArray, b, exact),
    };
  });
  return counts;
}
