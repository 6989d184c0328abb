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
import type { DeviceArray, HostArray } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { type CpuBinKind, cpuHistogram } from '../bricks/histogram';
import { type ArrayArg, type CheckedArray, checkArray, checkNoAlias, checkOutput } from '../common/args';
import { dispatch } from '../pattern/dispatch';
import { binEdges, exactBins, type HistogramBins } from './bins';
import { gpuHistogram } from './gpu';

export type { HistogramBins } from './bins';
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
    const b = binEdges(bins, a.type);
    let out: CheckedArray;
    if (output === undefined) {
      counts = new Uint32Array(b.bins);
      out = checkArray(counts, 'output');
    } else {
      out = checkOutput(output, 'output', b.bins, 'u32');
      checkNoAlias(a, out, 'input', 'output');
    }
    const m = b.edges.length;
    // Integer bins of exact integer width: the CPU loop shifts or divides (no edge reads).
    const exact = exactBins(a.type, b);
    const kind: CpuBinKind = exact ? (exact.shift >= 0 ? 'shift' : 'div') : b.even ? 'even' : 'edges';
    const params = new Float64Array(4 + m);
    params.set([b.lo, exact ? (exact.shift >= 0 ? exact.shift : exact.width) : b.scale, m, b.open ? 1 : 0]);
    params.set(b.edges, 4);
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
