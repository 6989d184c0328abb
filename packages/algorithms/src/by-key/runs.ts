/**
 * reduceByKey on the GPU as reduce-then-scan (runs-kernels.ts): per binding segment a count pass
 * (heads per tile, keys only), one workgroup scanning the tile counts (the total is the number of
 * runs), per segment the tile pass (keys and values: every run's key, the folds of runs that start
 * and end in a tile, one record per tile), then the fix-up (`runsFixKernel`) writing
 * the folds of runs that cross tiles; the finish copies of outputs written through temporaries and
 * the readbacks follow in the same submission. A call of one tile runs the tile pass alone. By size
 * (`RUNS_FORMS`) the count pass's block sums replace the spine and the tile pass's look-back
 * replaces the fix-up (runs-kernels.ts), and (`lagCountFrom`) the count runs in the tile pass's
 * dispatch, each workgroup counting one tile and running the tile pass of one `countLag` tiles back.
 * Plans (pipelines, bind groups, parameter buffers) are cached per shape and arrays.
 */
import {
  bufferId,
  type Combiner,
  type DeviceArray,
  dispatchCache,
  type GpuDevice,
  type LruCache,
  type NumericType,
  objectId,
  paramsBuffer,
  pipelineFor,
  type Readback,
  type Recorder,
  type Turn,
  type WgslFragment,
} from '@webdpl/core';
import { type CachedStep, cachedTuning, type Phase, recordPhases, recordSteps, sameLeaves } from '../common/gpu-io';
import { scratchBuffer } from '../common/scratch';
import { segmentsFor, windowOf, windowResource } from '../common/segments';
import { bindingLimit, maxWorkgroupThreads, useSubgroups } from '../common/tuning';
import { finishPipelineFor, finishStep, type ScanTuning, scanDefaults, segmentedCombiner } from '../engines/scan';
import {
  RBK,
  RBK_FIX,
  type RunsKernelParams,
  type RunsPhase,
  runsFixKernel,
  runsFixKernelName,
  runsKernel,
  runsKernelName,
  runsSpineKernel,
  runsSpineKernelName,
  runsUse,
} from './runs-kernels';

export interface ReduceByKeyDeviceRequest {
  readonly label: string;
  readonly keys: DeviceArray;
  /** The values: the keys' length, on their device. */
  readonly values: DeviceArray;
  /** `fn(a: K, b: K) -> bool`. */
  readonly keyEq: WgslFragment;
  /** The value combiner (the user's operator over the values' type, with its identity). */
  readonly value: Combiner;
  /**
   * Each run's fold, bound whole, in no input's buffer; nothing is written unless the runs fit
   * both outputs (min of their lengths).
   */
  readonly valuesOut: DeviceArray;
  /** Each run's first key, likewise. */
  readonly keysOut: DeviceArray;
  /** Outputs written through temporaries: their first `count` elements copied into these when count <= cap. */
  readonly copyTo?: { readonly keys?: DeviceArray; readonly values?: DeviceArray; readonly cap: number };
  /** Read both outputs' first min(n, length) elements back in the same submission. */
  readonly readBack: boolean;
  /** The resolved tuning (`runsTuning`). */
  readonly tuning: RunsTuning;
}

export interface ReduceByKeyResult {
  readonly count: number;
  readonly keys?: ArrayBuffer;
  readonly values?: ArrayBuffer;
}

/**
 * reduceByKey's tuning: the scan engine's tile fields (its 'runs' kind; its `reduceReverseFrom`
 * here reverses the count pass, RunsKernelParams.reverse) and size rules of its own (inputs of fewer
 * elements than the field take the form; 0: never):
 *  - `blockSumsBelow`: the runs before each tile come from block sums the count pass adds
 *    atomically (host-cleared words, no spine dispatch) instead of the one-workgroup spine's scan
 *    of the tile counts;
 *  - `lookbackBelow`: the tile pass looks back for the fold of the run open at its start (a
 *    decoupled look-back at the tile's end) instead of leaving records for the one-workgroup fix-up.
 * Both save a single-workgroup dispatch and cost every tile a little; small inputs gain, large ones
 * lose (RUNS_FORMS).
 */
export type RunsTuning = ScanTuning & {
  readonly blockSumsBelow: number;
  readonly lookbackBelow: number;
  /**
   * Inputs of fewer elements read ahead past each tile (RunsKernelParams.readAhead) where the fix-up
   * form runs (from `lookbackBelow`), with subgroups.
   */
  readonly readAheadBelow: number;
  /**
   * Inputs of at least this many elements run the count and the tile pass in one dispatch
   * (RunsKernelParams phase 'fused'): workgroup i counts tile i, then runs the tile pass of tile
   * i - `countLag`, which waits for the counts before it (published with a flag, and per block with
   * a done count) instead of a dispatch boundary; the keys the count read are still in L2 when the
   * tile pass reads them `countLag` tiles later. Only where both outputs hold n or more elements (no
   * total to wait for), and blocks of fewer than 256 tiles under 2^24 elements.
   */
  readonly lagCountFrom: number;
  readonly countLag: number;
  /** Tests: the fused form computes every count it would wait for (RunsKernelParams.forceFallback). */
  readonly forceFusedFallback: boolean;
};

/**
 * reduceByKey's size rules (RunsTuning) on hardware GPUs and on software adapters. H100, 2026-11-24
 * (docs/benchmarks/h100-2026-11-24i.md, variants interleaved in one process, keys i >> 4), third
 * call, ms of spine + fix-up / block sums + fix-up / block sums + look-back: 0.0257 / 0.0231 /
 * 0.0216 at 2^20, 0.0408 / 0.0403 / 0.0433 at 2^22, 0.0711 / 0.0704 / 0.0797 at 2^23, 0.1122 /
 * 0.1117 / 0.1360 at 2^24, 0.3449 / 0.3403 / 0.4276 at 2^26, 1.2776 / 1.2613 / 1.6115 at 2^28 (the
 * look-back at each tile's end puts an L2 round trip and a barrier on every tile; the block sums'
 * loads ride under the tile's own). lavapipe (2 cores), 2026-11-24: 0.247 / 0.175 / 0.073 at 2^12,
 * 0.473 / 0.413 / 0.342 at 2^16, 1.23 / 1.20 / 1.22 at 2^18, 2.22 / 2.38 / 2.42 at 2^19, 4.23 /
 * 4.62 / 4.88 at 2^20.
 * `reduceReverseFrom` (the scan engine's field, 2^24 for its reduce pass; here 2^23): the count
 * pass counts the tiles last to first, so the keys still in L2 when the tile pass starts are the
 * ones it reads first (LRU: counted forward, they were the first evicted; measured as
 * `countReverseFrom`, its name before it joined the scan engine's field). H100, 2026-11-24 (docs/benchmarks/h100-2026-11-24j.md, three calls, variants
 * interleaved), ms forward -> reversed: 0.0701 -> 0.0665 at 2^23, 0.1116-0.1118 -> 0.1049-0.1055 at
 * 2^24, 0.1870-0.1872 -> 0.1805-0.1812 at 2^25, 0.3406-0.3410 -> 0.3337-0.3343 at 2^26, 1.2603 ->
 * 1.2538-1.2541 at 2^28; within +-1% at 2^20-2^22, where keys and values both fit in L2. Software
 * adapters: not measured.
 * `readAheadBelow`: H100, 2026-11-24 (h100-2026-11-24j.md, call 9, variants interleaved), ms without
 * -> with the read-ahead (first subgroup) and the gated fix-up: 0.0256 -> 0.0231 at 2^21, 0.0402 ->
 * 0.0383 at 2^22 (by-key probe 0.0382-0.0386 -> 0.0374-0.0378), 0.0673 -> 0.0654 at 2^23, 0.1053 ->
 * 0.1096 at 2^24, 0.3343 -> 0.3489 at 2^26, 1.2554 -> 1.2666 at 2^28: the first subgroup's extra
 * work holds the tile's barriers, which costs more than the fix-up from 2^24. Software adapters:
 * not measured.
 * `lagCountFrom`, `countLag`: H100, 2026-11-25 (docs/benchmarks/h100-2026-11-25.md, calls 4-5,
 * tuning-sweep, variants interleaved), ratio of the fused form to the count dispatch at 2^21 / 2^22
 * / 2^23 / 2^24 / 2^25 / 2^26 / 2^28, lag 0: 0.915 / 0.977 / 0.975 / 0.992 / 1.000 / 0.995 / 1.004;
 * lag 8: 0.933 / 0.996 / 0.970 / 0.993 / 1.001 / 0.990 / 0.988; lags 32-128: 0.94-0.95 / 1.07-1.10
 * / 0.97-0.99 / 0.97-0.99 / ~0.99 / ~0.99 / 0.99; lag 1024 1.09-1.15 from 2^23 (the keys leave L2
 * before the tile pass reads them again); 256-thread tiles 1.02-1.19. Call 8 (by-key probe, its
 * data, outputs of n, forms interleaved, medians of 6): lag 0 0.914 / 0.974 / 0.966 / 0.966 at 2^21
 * / 2^22 / 2^23 / 2^24 and 0.991 at 2^26, lag 8 0.937 / 1.025 / 0.969 / 0.971 / 0.985. Reading the
 * keys once from DRAM instead of twice gains little: the tile pass is not bound by DRAM bandwidth.
 * Software adapters (off): lavapipe, 2026-11-25 (tuning-sweep, 5 rounds), lag 0 1.067 / 1.041 /
 * 1.072 / 1.429 at 2^18 / 2^19 / 2^20 / 2^21, lag 8 1.05-1.72: a workgroup waiting for a count
 * holds one of the two CPU threads that would compute it.
 */
export const RUNS_FORMS = {
  hardware: {
    blockSumsBelow: Number.POSITIVE_INFINITY,
    lookbackBelow: 1 << 21,
    reduceReverseFrom: 1 << 23,
    readAheadBelow: 1 << 24,
    lagCountFrom: 1 << 21,
    countLag: 0,
    forceFusedFallback: false,
  },
  software: {
    blockSumsBelow: 1 << 18,
    lookbackBelow: 1 << 18,
    reduceReverseFrom: Number.POSITIVE_INFINITY,
    readAheadBelow: 0,
    lagCountFrom: Number.POSITIVE_INFINITY,
    countLag: 0,
    forceFusedFallback: false,
  },
} as const;

const defaultsMemo = new WeakMap<GpuDevice, readonly RunsTuning[]>();

/** reduceByKey's tuning: its defaults on `device` with the policy's overrides. */
export function runsTuning(
  device: GpuDevice,
  label: string,
  overrides: Readonly<Record<string, number | boolean>>,
): RunsTuning {
  let m = defaultsMemo.get(device);
  if (!m) {
    const rules = device.info.kind === 'software-gpu' ? RUNS_FORMS.software : RUNS_FORMS.hardware;
    m = [
      { ...scanDefaults(device, 'runs', false), ...rules },
      { ...scanDefaults(device, 'runs', true), ...rules },
    ];
    defaultsMemo.set(device, m);
  }
  return cachedTuning(label, m[overrides.subgroups === false ? 0 : 1] as RunsTuning, overrides);
}

interface RunsPlan {
  /** The steps by phase ('count', 'spine', 'tile', 'fix-up', 'copy'; `recordPhases`). */
  readonly phases: readonly Phase[];
  readonly owned: readonly GPUBuffer[];
  readonly scratch: GPUBuffer;
  readonly scratchBytes: number;
  /** Byte ranges of `scratch` (offset, size) cleared before the pass: look-back states, block sums. */
  readonly clear: readonly (readonly [number, number])[];
  /** The scratch word of the number of runs. */
  readonly totalAt: number;
  readonly leaves: readonly WgslFragment[];
}

/**
 * Runs reduceByKey on the device; resolves with the number of runs (and the outputs' bytes when
 * asked). A call whose plan is cached runs no async function (issue 12): it submits at once.
 */
export function reduceByKeyDevice(device: GpuDevice, req: ReduceByKeyDeviceRequest): Promise<ReduceByKeyResult> {
  try {
    const t = req.tuning;
    const leaves = [req.keyEq, req.value.combine];
    const rc = req.copyTo;
    const key = [
      req.values.length,
      // Every tuning field: the resolved tuning object (cachedTuning: one per policy's overrides),
      // where a hand-kept list of fields misses the ones added later.
      objectId(t),
      req.keyEq.name,
      req.value.name,
      arrayKey(req.keys),
      arrayKey(req.values),
      arrayKey(req.keysOut),
      arrayKey(req.valuesOut),
      rc ? `${arrayKey(rc.keys)}:${arrayKey(rc.values)}:${rc.cap}` : '-',
    ].join('|');
    const cache = dispatchCache<RunsPlan>(device, SCRATCH);
    const plan = cache.get(key);
    // The call's place in the device's call order (reserve) is taken before anything may wait.
    if (plan && sameLeaves(plan.leaves, leaves) && scratchBuffer(device, SCRATCH, plan.scratchBytes) === plan.scratch) {
      return submit(device, req, plan, device.queue.reserve());
    }
    return buildAndSubmit(device, req, leaves, key, cache, device.queue.reserve());
  } catch (e) {
    return Promise.reject(e);
  }
}

function arrayKey(a?: DeviceArray): string {
  return a ? `${bufferId(a.buffer)}@${a.offset}+${a.length}:${a.type}` : '-';
}

/** A call that builds its plan (a cache miss), then submits in its turn. */
async function buildAndSubmit(
  device: GpuDevice,
  req: ReduceByKeyDeviceRequest,
  leaves: WgslFragment[],
  key: string,
  cache: LruCache<RunsPlan>,
  turn: Turn,
): Promise<ReduceByKeyResult> {
  let plan: RunsPlan;
  try {
    plan = await buildPlan(device, req, leaves);
  } catch (e) {
    turn.release();
    throw e;
  }
  cache.set(key, plan);
  return submit(device, req, plan, turn);
}

const SCRATCH = 'reduce-by-key';

function submit(device: GpuDevice, req: ReduceByKeyDeviceRequest, p: RunsPlan, turn: Turn): Promise<ReduceByKeyResult> {
  const n = req.values.length;
  let countRb: Readback | undefined;
  let keysRb: Readback | undefined;
  let valuesRb: Readback | undefined;
  const record = (rec: Recorder) => {
    for (const [offset, size] of p.clear) rec.encoder.clearBuffer(p.scratch, offset, size);
    recordPhases(rec, req.label, p.phases);
    countRb = rec.readback(p.scratch, p.totalAt * 4, 4);
    if (req.readBack) {
      const { keysOut: ko, valuesOut: vo } = req;
      keysRb = rec.readback(ko.buffer, ko.byteOffset, Math.min(n, ko.length) * 4);
      valuesRb = rec.readback(vo.buffer, vo.byteOffset, Math.min(n, vo.length) * 4);
    }
  };
  return device.queue.submitRead(req.label, record, turn, () => ({
    count: countRb ? countRb.word(0) : 0,
    keys: keysRb?.data(),
    values: valuesRb?.data(),
  }));
}

async function buildPlan(device: GpuDevice, req: ReduceByKeyDeviceRequest, leaves: WgslFragment[]): Promise<RunsPlan> {
  const t = req.tuning;
  const { keys, values, keysOut, valuesOut } = req;
  const n = values.length;
  const w = Math.min(t.workgroupSize, maxWorkgroupThreads(device));
  const I = Math.max(1, Math.floor(t.itemsPerThread));
  const tile = w * I;
  const subgroups = useSubgroups(device, t.subgroups);
  const minSubgroupSize = device.info.subgroupMinSize || 4;
  const vec = I % 4 === 0 && keys.offset % 4 === 0 && values.offset % 4 === 0;
  const segments = segmentsFor(device, n, bindingLimit(device, t.maxBindingBytes), tile);
  const valueType = values.type as NumericType;
  const pairs = segmentedCombiner(req.value, true);
  const base: Omit<RunsKernelParams, 'phase' | 'blocks' | 'lookback'> = {
    keyType: keys.type as NumericType,
    valueType,
    keyEq: req.keyEq,
    value: req.value,
    pairs,
    vec,
    workgroupSize: w,
    itemsPerThread: I,
    subgroups,
    minSubgroupSize,
    maxSpins: t.maxSpins,
    lookbackPerLane: t.lookbackPerLane,
  };
  const kernel = (phase: RunsPhase) => {
    const params = {
      ...base,
      phase,
      blocks: blocks && phase !== 'fused',
      lookback: lookback && phase === 'tile',
      reverse: phase === 'count' && n >= t.reduceReverseFrom,
      readAhead: phase !== 'count' && readAhead,
      forceFallback: phase === 'fused' && t.forceFusedFallback,
    };
    return pipelineFor(device, runsKernelName(params), leaves, () => runsKernel(params));
  };
  let tiles = 0;
  const plans = segments.map((seg) => {
    const segTiles = Math.ceil(seg.length / tile);
    // The keys from one before the segment (its first element's head flag).
    const kStart = Math.max(0, seg.start - 1);
    const kWin = windowOf(device, keys, { start: kStart, length: seg.start + seg.length - kStart });
    const vWin = windowOf(device, values, seg);
    const plan = { seg, tiles: segTiles, tileOffset: tiles, kWin, kBase: kWin.localBase + seg.start - kStart, vWin };
    tiles += segTiles;
    return plan;
  });
  const single = tiles === 1;
  const cap = Math.min(keysOut.length, valuesOut.length);
  const blkTiles = Math.max(1, Math.ceil(Math.sqrt(tiles)));
  const blockCount = Math.ceil(tiles / blkTiles);
  // The look-back (lookbackBelow): no fix-up.
  const lookback = n < t.lookbackBelow && !single;
  // The count in the tile pass's dispatch (lagCountFrom): its block words pack a done count in 8 bits
  // above a 24-bit sum.
  const fused = n >= t.lagCountFrom && !single && !lookback && cap >= n && blkTiles < 256 && blkTiles * tile < 2 ** 24;
  // Block sums (blockSumsBelow): blocks of about sqrt(tiles) tiles, so a tile sums about 2 sqrt(tiles) words.
  const blocks = n < t.blockSumsBelow && !single && !fused;
  // The read-ahead (readAheadBelow): tiles write their last runs; the fix-up only when one could not.
  const readAhead = n < t.readAheadBelow && subgroups && !lookback && !single;
  // One workgroup for the spine and the fix-up, as wide as the device allows.
  const one = { workgroupSize: Math.min(1024, maxWorkgroupThreads(device)), subgroups, minSubgroupSize };
  const tilePipeline = await kernel(fused ? 'fused' : 'tile');
  const countPipeline = single || fused ? undefined : await kernel('count');
  const spine =
    single || blocks || fused
      ? undefined
      : await pipelineFor(device, runsSpineKernelName(one), [], () => runsSpineKernel(one));
  const fixParams = { ...one, combiner: pairs, valueType, op: req.value.combine, gated: readAhead };
  const fix =
    single || lookback
      ? undefined
      : await pipelineFor(device, runsFixKernelName(fixParams), [pairs.combine, req.value.combine], () =>
          runsFixKernel(fixParams),
        );
  const rc = req.copyTo;
  const copyPipeline = rc ? await finishPipelineFor(device, 'u32', 'prefix') : undefined;
  // Scratch: the tiles' records (4 words each) from word 0, their counts, the total, the block sums.
  const cntBase = 4 * tiles;
  const totalAt = 5 * tiles;
  const blkBase = totalAt + 1;
  // The read-ahead's word (a tile needs the fix-up), after the block sums: one clear for both.
  // Block words: the count pass's block sums, or the fused form's (done tiles, sum) words.
  const blockWords = blocks || fused ? blockCount : 0;
  const fixAt = blkBase + blockWords;
  const scratchBytes = Math.ceil(((fixAt + 1) * 4) / 16) * 16;
  const scratch = scratchBuffer(device, SCRATCH, scratchBytes);
  const scratchR = { buffer: scratch, offset: 0, size: scratchBytes };
  const koWin = windowOf(device, keysOut, { start: 0, length: keysOut.length });
  const voWin = windowOf(device, valuesOut, { start: 0, length: valuesOut.length });
  return device.queue.guard(req.label, () => {
    const owned: GPUBuffer[] = [];
    const uniform = (words: Uint32Array, what: string) => {
      const b = paramsBuffer(device, words, `${req.label} ${what}`);
      owned.push(b);
      return { buffer: b };
    };
    const counts: CachedStep[] = [];
    const tileSteps: CachedStep[] = [];
    let prm0: GPUBufferBinding | undefined;
    for (const s of plans) {
      // Fused: the tile pass runs `lag` workgroups behind the counts, in as many workgroups more.
      const lag = fused ? Math.min(t.countLag, s.tiles) : 0;
      const prm = uniform(
        RBK.pack({
          n: s.seg.length,
          seg_start: s.seg.start,
          n_total: n,
          tile_offset: s.tileOffset,
          tiles,
          k_base: s.kBase,
          v_base: s.vWin.localBase,
          out_base: voWin.localBase,
          kout_base: koWin.localBase,
          cap,
          cnt_base: cntBase,
          total_at: totalAt,
          single: single ? 1 : 0,
          blk_base: blkBase,
          blk_tiles: blkTiles,
          blocks: blockCount,
          fix_at: fixAt,
          lag,
        }),
        'params',
      );
      prm0 ??= prm;
      const keysR = windowResource(keys, s.kWin);
      const valsR = windowResource(values, s.vWin);
      const all: Record<string, GPUBindingResource> = {
        prm,
        scratch: scratchR,
        scratch_a: scratchR,
        keys_v: keysR,
        keys_s: keysR,
        vals_v: valsR,
        vals_s: valsR,
        kout: windowResource(keysOut, koWin),
        vout: windowResource(valuesOut, voWin),
      };
      const step = (pipeline: GPUComputePipeline, phase: RunsPhase): CachedStep => {
        const use = runsUse(phase, vec, blocks, lookback && phase === 'tile');
        const resources: Record<string, GPUBindingResource | undefined> = {};
        for (const name of RBK.names(use)) resources[name] = all[name];
        const group = device.gpu.createBindGroup({
          layout: pipeline.getBindGroupLayout(0),
          entries: RBK.entries(resources, use),
        });
        return { pipeline, group, wgs: s.tiles + lag };
      };
      if (countPipeline) counts.push(step(countPipeline, 'count'));
      tileSteps.push(step(tilePipeline, fused ? 'fused' : 'tile'));
    }
    const phases: Phase[] = [];
    const phase = (name: string, steps: CachedStep[]) => {
      if (steps.length > 0) phases.push({ name, record: (rec, pass) => recordSteps(rec, pass, steps) });
    };
    phase('count', counts);
    if (spine && prm0) {
      const group = device.gpu.createBindGroup({
        layout: spine.getBindGroupLayout(0),
        entries: RBK.entries({ prm: prm0, scratch: scratchR }, runsUse('spine', vec)),
      });
      phase('spine', [{ pipeline: spine, group, wgs: 1 }]);
    }
    phase('tile', tileSteps);
    if (fix) {
      const prm = uniform(
        RBK_FIX.pack({ tiles, cap, out_base: voWin.localBase, rec_base: 0, total_at: totalAt, fix_at: fixAt }),
        'fix-up params',
      );
      const group = device.gpu.createBindGroup({
        layout: fix.getBindGroupLayout(0),
        entries: RBK_FIX.entries({ prm, recs: scratchR, out_s: windowResource(valuesOut, voWin) }),
      });
      phase('fix-up', [{ pipeline: fix, group, wgs: 1 }]);
    }
    if (rc && copyPipeline) {
      // Outputs through temporaries: their first `count` elements copied when the runs fit.
      const copies: CachedStep[] = [];
      for (const [src, srcWin, dst] of [
        [keysOut, koWin, rc.keys],
        [valuesOut, voWin, rc.values],
      ] as const) {
        if (!dst) continue;
        const copy = { src, srcWin, dst, n: src.length, cap: rc.cap };
        copies.push(finishStep(device, copyPipeline, copy, totalAt, req.label, scratch, owned));
      }
      phase('copy', copies);
    }
    // Look-back states (2 words per tile from word 0, where the fix-up's records would be) and block sums.
    const clear: (readonly [number, number])[] = [];
    if (lookback) clear.push([0, 8 * tiles]);
    // Fused: the flagged tile counts, then (with the total word between) the block words.
    if (fused) clear.push([cntBase * 4, tiles * 4]);
    if (blockWords > 0 || readAhead) clear.push([blkBase * 4, (blockWords + (readAhead ? 1 : 0)) * 4]);
    const plan: RunsPlan = { phases, owned, scratch, scratchBytes, clear, totalAt, leaves };
    return plan;
  });
}
