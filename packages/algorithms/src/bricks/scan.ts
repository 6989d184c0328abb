/**
 * Scans: `cpuInclusiveScan` and `cpuExclusiveScan`, with an optional unary transform applied to each
 * element first (transform_inclusive_scan / transform_exclusive_scan).
 *
 * seq: one generated loop. par: a chunked scan in two pool runs: (1) a head (the first n / (2p - 1)
 * elements on p threads, see `scanPlan`) is scanned from `init` while the rest's chunks are
 * reduced; (2) the calling thread combines the totals in order into carries; (3) the rest's chunks
 * are scanned from their carry-in. Reads most of the input twice and writes the output once; order is preserved, so non-commutative associative operators are exact
 * for integers. Accumulators have the transform's result type (or the input's); the stores go
 * through the output's type. f32 prefixes keep the bound of kernels.ts (`summation`): with the
 * built-in plus each output is the f64 prefix sum rounded once at its store; other f32 operators
 * combine a pairwise carry with the prefix inside a block of SUM_BLOCK elements.
 */
import { ArgumentError, coerce, describe, type GpuFunction, type HostArray, type NumericType } from '@webdpl/core';
import { type Chunk, type CpuBackend, cpuTuning, parallelChunks } from '@webdpl/policies';
import { combineInOrder, type KernelSpec, parKernelSource, seqKernel } from './kernels';
import {
  checkFn,
  checkInputs,
  checkNumber,
  checkOutput,
  memoryBoundChunks,
  plainArraysSeq,
  runChunks,
  stage,
} from './staging';

/** Options of the CPU scans. */
export interface CpuScanOptions {
  /** Unary function applied to each input element before it is scanned. @default none (the elements) */
  readonly transform?: GpuFunction;
}

interface ScanSetup {
  readonly x: HostArray;
  readonly n: number;
  readonly inType: NumericType;
  readonly outType: NumericType;
  readonly accType: NumericType;
  readonly t: GpuFunction | undefined;
  readonly bit: boolean;
  readonly r: GpuFunction;
}

function setup(input: HostArray, output: HostArray, op: GpuFunction, options: CpuScanOptions | undefined): ScanSetup {
  const { x, types, n } = checkInputs(input);
  const outType = checkOutput(output, n);
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new ArgumentError('options', 'an options object', describe(options));
  }
  let accType = types[0] as NumericType;
  let bit = false;
  let t: GpuFunction | undefined;
  if (options?.transform !== undefined) {
    t = checkFn(options.transform, 1, types, 'options.transform');
    const rt = t.resultType(types);
    bit = rt === 'bool';
    accType = rt === 'bool' ? 'u32' : rt;
  }
  const r = checkFn(op, 2, [accType, accType], 'op');
  return { x, n, inType: types[0] as NumericType, outType, accType, t, bit, r };
}

function spec(s: ScanSetup, kind: KernelSpec['kind']): KernelSpec {
  return {
    kind,
    t: s.t ? { fn: s.t, argTypes: [s.inType] } : undefined,
    r: { fn: s.r, argTypes: [s.accType, s.accType] },
    inputs: 1,
    bit: s.bit,
    arrays: [s.inType, undefined, kind === 'reduce' ? undefined : s.outType],
  };
}

/**
 * The par scan's ranges, or undefined for seq: a head `[0, h)` that the calling thread scans from
 * `init` in step (1) while the other threads reduce the rest's chunks, then the rest's chunks,
 * scanned by every thread in step (3). A reduce pass costs about half a scan pass (no stores), so
 * with p threads h = n / (2p - 1) lets step (1) end together: on 2 threads the scan does 2/3 of
 * seq's passes per thread (a head of 0 gave 3/4: every element was read twice, split evenly).
 */
function scanPlan(backend: CpuBackend, n: number): { head: Chunk; rest: Chunk[] } | undefined {
  if (backend.kind !== 'par' || !memoryBoundChunks(backend, n)) return undefined;
  const tuning = cpuTuning(backend);
  const threads = tuning.callerWorks ? Math.max(2, backend.pool.size) : backend.pool.size;
  const h = Math.max(1, Math.floor(n / (2 * threads - 1) / 16) * 16);
  const rest = parallelChunks(backend.pool, n - h, tuning.minChunk).map((c) => ({
    begin: c.begin + h,
    end: c.end + h,
  }));
  return rest.length === 0 ? undefined : { head: { begin: 0, end: h }, rest };
}

async function scan(
  backend: CpuBackend,
  s: ScanSetup,
  output: HostArray,
  kind: 'inclusiveScan' | 'exclusiveScan',
  hasInit: boolean,
  init: number,
): Promise<void> {
  const { x, n } = s;
  if (n === 0) return;
  const scanSpec = spec(s, kind);
  const plan = plainArraysSeq(backend, [x, output]) ? undefined : scanPlan(backend, n);
  if (!plan || backend.kind !== 'par') {
    seqKernel(scanSpec)(x, undefined, output, 0, n, hasInit, init, undefined);
    return;
  }
  const { head, rest } = plan;
  const scanSrc = parKernelSource(scanSpec);
  const reduceSrc = parKernelSource(spec(s, 'reduce'));
  const st = stage(x, undefined, output, n);
  // (1) scan the head from init, reduce the rest's chunks but the last (its total is not needed).
  const first = [head, ...rest.slice(0, -1)];
  const totals = await runChunks(backend, first, (c, i) =>
    i === 0
      ? { s: scanSrc, x: st.x, y: st.y, b: c.begin, e: c.end, h: hasInit, c: init }
      : { s: reduceSrc, x: st.x, b: c.begin, e: c.end, h: false, c: 0 },
  );
  // (2) carries in chunk order: carry[k] = total(head and rest chunks 0..k-1), init included.
  // Each carry combined afresh (at most 32 chunks per worker: cheap), so f32 carries keep the
  // summation's bound (f64 sums, or pairwise) instead of adding one rounding per chunk.
  const carries = totals.map((_, k) => combineInOrder(scanSpec, totals.slice(0, k + 1)));
  // (3) scan the rest's chunks from their carries.
  await runChunks(backend, rest, (c, i) => ({
    s: scanSrc,
    x: st.x,
    y: st.y,
    b: c.begin,
    e: c.end,
    h: true,
    c: carries[i] as number,
  }));
  st.finish();
}

/**
 * oneDPL's inclusive_scan: `output[i] = init op v0 op ... op vi` (without `init` when it is
 * undefined), where `v = options.transform(input[i])` or the element itself. `output` may be the
 * input itself, but must not otherwise overlap it. `op` must be associative (not necessarily
 * commutative). par costs about twice seq's reads split over the workers, plus copies for
 * plain-ArrayBuffer arrays.
 * @throws ArgumentError naming `input`, `output`, `op`, `init` or `options.transform`
 */
export async function cpuInclusiveScan(
  backend: CpuBackend,
  input: HostArray,
  output: HostArray,
  op: GpuFunction,
  init?: number,
  options?: CpuScanOptions,
): Promise<void> {
  const s = setup(input, output, op, options);
  const hasInit = init !== undefined;
  const start = hasInit ? coerce(s.accType, checkNumber(init, 'init')) : 0;
  await scan(backend, s, output, 'inclusiveScan', hasInit, start);
}

/**
 * oneDPL's exclusive_scan: `output[0] = init`, `output[i] = init op v0 op ... op v(i-1)`, where
 * `v = options.transform(input[i])` or the element itself. Same costs and aliasing rules as
 * `cpuInclusiveScan`.
 * @param init default: the identity of `op` for the accumulator type
 * @throws ArgumentError naming `init` when it is undefined and `op` has no identity
 */
export async function cpuExclusiveScan(
  backend: CpuBackend,
  input: HostArray,
  output: HostArray,
  op: GpuFunction,
  init?: number,
  options?: CpuScanOptions,
): Promise<void> {
  const s = setup(input, output, op, options);
  let start: number;
  if (init === undefined) {
    const id = s.r.identity(s.accType);
    if (id === undefined) {
      throw new ArgumentError(
        'init',
        `an initial value (operator '${s.r.name}' has no identity for ${s.accType})`,
        'undefined',
      );
    }
    start = coerce(s.accType, id);
  } else {
    start = coerce(s.accType, checkNumber(init, 'init'));
  }
  await scan(backend, s, output, 'exclusiveScan', true, start);
}
