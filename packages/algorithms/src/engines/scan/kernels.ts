/**
 * WGSL of the scan-scatter engine.
 *
 * One tile template (`tileKernel`) in three phases, plus two small kernels:
 *  - 'chained': the single-pass chained scan with decoupled look-back and fallback. A workgroup takes
 *    its tile id from an atomic counter (so every lower tile has started), loads and generates its
 *    values ("generate input" hook: the open 'element' hook, or the open 'adjacent' hook over each
 *    element and its predecessor or their keys), scans them, publishes its aggregate, looks back over
 *    its predecessors, publishes its inclusive prefix, and writes ("write output" hook: in scans the
 *    open 'scan' hook, each prefix at its element; in compactions the open 'scatter' hook, each
 *    written element at its output position; each stored by the engine or by a fragment into up to 3
 *    outputs). Tile 0 starts from the segment's carry and never
 *    looks back, so a one-tile segment is one workgroup with no waiting.
 *  - 'reduce': pass 1 of reduce-then-scan, one tile reduction per workgroup into `sums`.
 *  - 'downsweep': pass 3 of reduce-then-scan, a tile scanned from its carry-in read from `sums`
 *    (or, with `prm.direct`, from the segment's carry: the one-tile path).
 *  - `spineKernel`: pass 2, one workgroup scans the tile sums (exclusive, carry included).
 *  - `finishKernel`: copies a compaction result from a temporary back into an array in place.
 *
 * Tile state and look-back (chained): core's `windowedLookback` (wgsl/tile.ts), the decoupled
 * look-back of one value per tile shared with the radix sort's protocol. Two u32 atomics per tile
 * ('split': 16 value bits beside the flag in each; scans by key carry the pair's head flag in bit
 * 18), cleared by the host each call; the carry in and out of a segment are `scn_carry` /
 * `scn_carry_out` (ctrl), the fallback's element values `scn_gen_at`.
 *
 * Tile layout: see `tileKernel` (striped vec4 rows with subgroups, one contiguous run per thread
 * without; scans by key with subgroups: subgroup rows, one contiguous part of the tile per
 * subgroup). Values stay in registers from the load to the write.
 *
 * Look-back: one subgroup (thread 0 without subgroups) reads subgroup size x `lookbackPerLane`
 * predecessors per step; a predecessor still not ready after `maxSpins` polls is reduced from the
 * input by that subgroup (the fallback, never published), so a workgroup never waits on one that may
 * not be scheduled.
 */
import {
  type Combiner,
  entryParams,
  entryPrologue,
  fragment,
  headFlags,
  type InterfaceTypes,
  type InterfaceUse,
  kernelInterface,
  loadRun,
  mangle,
  type NumericType,
  subgroupReduce,
  tailFlags,
  threadIds,
  type WgslFragment,
  type WorkgroupParams,
  windowedLookback,
  workgroupExclusiveScan,
  workgroupExclusiveScanRows,
  workgroupReduce,
} from '@webdpl/core';

/** The most streamed inputs an 'element' hook reads beside the element (SCN's `st_s`, `st1_s`). */
export const SCAN_MAX_INPUTS = 2;

/**
 * The element-wise "generate input" hook: element i's value is its element function over the
 * element x, up to `SCAN_MAX_INPUTS` streamed inputs s0.. (arrays of the input's length, each bound
 * at its own SCN binding, `st_s` then `st1_s`, and read at the element's index) and the element's
 * global index i. The function's signature is fixed by the hook:
 * `fn <fn.name>([x: T,] [s0: S0, s1: S1,] [i: u32]) -> V` in scans (V the combiner's type; no `fn`:
 * the element itself), `-> bool` in compactions (keep the element; the engine scans 1/0). `x` is an
 * argument unless `element` is false, `i` only when `index` is true.
 */
export interface ElementHook {
  readonly kind: 'element';
  readonly fn?: WgslFragment;
  /** The streamed inputs' element types, in argument order (at most SCAN_MAX_INPUTS). @default [] */
  readonly inputs?: readonly NumericType[];
  /** Whether the function takes the element x. @default true */
  readonly element?: boolean;
  /** Whether the function takes the element's global index i (u32). @default false */
  readonly index?: boolean;
}

/** The key stream an 'adjacent' hook compares instead of the elements (the by-key family). */
export interface AdjacentKeys {
  /** The keys' element type K. */
  readonly type: NumericType;
  /**
   * 'head': element i starts a run (i == 0 or not equal to i - 1); 'tail': it ends one (the range's
   * last, or not equal to i + 1). @default 'head'
   */
  readonly edge?: 'head' | 'tail';
  /**
   * Scans: the value combiner's combine (`fn(a: T, b: T) -> T` over the input's type); the
   * combiner must be `segmentedCombiner(value)`, the scan restarts at every head, 'exclusive' writes
   * the init at heads and starts each run from `op(init, x)`.
   */
  readonly scan?: { readonly op: WgslFragment };
}

/**
 * The neighbour "generate input" hook: whether element i starts a run, from it and its predecessor
 * through an open equality of the fixed signature `fn <fn.name>(prev: K, x: K) -> bool` (true: the
 * two are in one run). Element i is a head when it is the range's first or `!fn(prev, x)`. Without
 * `keys` K is the input's type T and the compared values are the elements themselves (without
 * `fn`: JS `===`, floats bitwise so NaN never equals, +0 equals -0; unique and unique with an
 * equality); in compactions the heads are kept. With `keys` (`fn` required) K is the keys' type and
 * the compared values are a second array of the input's length, bound at SCN's `st_v` / `st_s` and
 * read at the element's index and its neighbours; the kept elements are the heads (or tails), and
 * with `keys.scan` the hook drives a scan by key (see `AdjacentKeys`).
 * 'adjacent-different' and 'by-key' are its built-in forms (`neighboursOf`, `keysOf`).
 */
export interface AdjacentHook {
  readonly kind: 'adjacent';
  /** The equality of neighbours; without it (no `keys` only) JS `===` over the elements. */
  readonly fn?: WgslFragment;
  /** Compare a key stream instead of the elements. @default none */
  readonly keys?: AdjacentKeys;
}

/**
 * By key (the reduce_by_segment family): `{ kind: 'adjacent', fn: keyEq, keys: { type: keyType,
 * edge, scan } }` (see `AdjacentHook`): heads or tails of runs of keys under
 * `fn <keyEq.name>(a: K, b: K) -> bool`.
 */
export interface ByKeyHook {
  readonly kind: 'by-key';
  readonly keyType: NumericType;
  readonly keyEq: WgslFragment;
  readonly edge: 'head' | 'tail';
  /** Scans: the value combiner's combine (`fn(a: T, b: T) -> T` over the input's type). */
  readonly scan?: { readonly op: WgslFragment };
}

/** How each element becomes the value scanned ("generate input" hook). */
export type GenerateHook =
  /** Element-wise: the element, its streamed inputs and index through an open function. */
  | ElementHook
  /** Neighbours: whether an element and its predecessor (or their keys) are in one run. */
  | AdjacentHook
  /** unique: keep element i when i == 0 or x[i] differs from x[i-1] (floats: JS `!==`): `{ kind: 'adjacent' }`. */
  | { readonly kind: 'adjacent-different' }
  /** By key: an 'adjacent' hook over keys. */
  | ByKeyHook;

const BUILT_IN_NEIGHBOURS: AdjacentHook = { kind: 'adjacent' };
const keyForms = new WeakMap<AdjacentHook, ByKeyHook>();

/**
 * A hook comparing each element with its predecessor ('adjacent-different', or 'adjacent' without
 * keys): its equality in `fn` (none: JS `===`); undefined for other hooks.
 */
export function neighboursOf(g: GenerateHook): AdjacentHook | undefined {
  if (g.kind === 'adjacent-different') return BUILT_IN_NEIGHBOURS;
  return g.kind === 'adjacent' && !g.keys ? g : undefined;
}

/** A hook comparing a key stream ('by-key', or 'adjacent' with keys) in its 'by-key' form; else undefined. */
export function keysOf(g: GenerateHook): ByKeyHook | undefined {
  if (g.kind === 'by-key') return g;
  if (g.kind !== 'adjacent' || !g.keys) return undefined;
  let f = keyForms.get(g);
  if (!f) {
    if (!g.fn) throw new Error("scan engine: an 'adjacent' hook over keys needs fn (the keys' equality)");
    f = { kind: 'by-key', keyType: g.keys.type, keyEq: g.fn, edge: g.keys.edge ?? 'head', scan: g.keys.scan };
    keyForms.set(g, f);
  }
  return f;
}

/** The hook's kind in kernel names and cache keys: 'element', 'adjacent-different' or 'by-key'. */
export function genKind(g: GenerateHook): 'element' | 'adjacent-different' | 'by-key' {
  if (g.kind === 'element') return 'element';
  return keysOf(g) ? 'by-key' : 'adjacent-different';
}

/** The most outputs a 'scatter' write stores into (SCN's `out_s`, `out1_s`, `out2_s`). */
export const SCAN_MAX_OUTPUTS = 3;

/**
 * The open "write output" hook of compactions: every kept element (with `rejected`, every element)
 * is written at its output position `at`: a kept element at the number kept before it, a rejected
 * one at n_total - 1 - the number rejected before it. Without `fn` the element x goes to output 0
 * (`out_s[at]`). With `fn` the kernel calls a fragment of the fixed signature
 * `fn <fn.name>(at: u32, x: T, [s0: S0, s1: S1,] i: u32)` (x the element, s0.. the generate hook's
 * streamed inputs at the element's index, or over keys its key, i its global index), which stores into up to
 * `SCAN_MAX_OUTPUTS` outputs through the kernel's `fn scn_store<k>(j: u32, v: O<k>)` (output k at
 * index j; bound whole: SCN's `out_s`, `out1_s`, `out2_s`, the bases of outputs 1.. in the `obase`
 * uniform) at `at` or anywhere, or not at all.
 */
export interface ScatterWrite {
  readonly kind: 'scatter';
  /** The store fragment; without it x goes to output 0 at `at`. */
  readonly fn?: WgslFragment;
  /** The outputs' element types, in order (at most SCAN_MAX_OUTPUTS). @default [the input's type] */
  readonly outputs?: readonly NumericType[];
  /** Rejected elements are written too (partition). @default false */
  readonly rejected?: boolean;
  /**
   * Without `fn`, over keys ('by-key' / 'adjacent' with keys): each written element's key goes to
   * the keys output (SCN's `kout_s`) at the same position, and both only below the outputs' length
   * (`prm.cap`): uniqueByKey's 'by-key-firsts'. @default false
   */
  readonly keysOut?: boolean;
}

/**
 * The open "write output" hook of scans: element i's result, the scan's prefix through element i
 * (inclusive) or before it (`exclusive`; scans by key: the value, the init at heads), is written
 * at i. Without `fn` the prefix goes to output 0 (`out_s[i]`, vec4 stores where aligned). With
 * `fn` the kernel calls a fragment of the fixed signature
 * `fn <fn.name>(i: u32, prefix: V, x: T, [s0: S0, s1: S1])` (i the element's global index, V the
 * scan's result type: the combiner's, by key the values'; x the element; s0.. the generate hook's
 * streamed inputs at i), which stores into up to `SCAN_MAX_OUTPUTS` outputs through the kernel's
 * `fn scn_store<k>(j: u32, v: O<k>)` (output k at global index j: output 0 bound per binding
 * segment like a scan's, so at j in the element's segment only; outputs 1.. bound whole, SCN's
 * `out1_s`, `out2_s`, their bases in the `obase` uniform), on the scalar path (scalar stores; the
 * loads stay vec4 where aligned). Never in place.
 */
export interface ScanWrite {
  readonly kind: 'scan';
  /** The prefix before the element (else through it). */
  readonly exclusive: boolean;
  /** The store fragment; without it the prefix goes to output 0 at i. */
  readonly fn?: WgslFragment;
  /** The outputs' element types, in order (at most SCAN_MAX_OUTPUTS). @default [V] */
  readonly outputs?: readonly NumericType[];
}

/** What happens with the scan result ("write output" hook). */
export type WriteHook =
  /** A scan: the open scan write. */
  | ScanWrite
  /** output[i] = prefix through element i: `{ kind: 'scan', exclusive: false }`. */
  | 'inclusive'
  /** output[i] = prefix before element i: `{ kind: 'scan', exclusive: true }`. */
  | 'exclusive'
  /** A compaction: the open scatter write. */
  | ScatterWrite
  /** Kept elements to output[number kept before them]: `{ kind: 'scatter' }`. */
  | 'compact'
  /**
   * As 'compact', and rejected elements to output[n_total - 1 - number rejected before them]:
   * `{ kind: 'scatter', rejected: true }`.
   */
  | 'partition'
  /**
   * uniqueByKey in one pass: a compaction of the heads of a 'by-key' hook (u32 plus over 1/0) that
   * writes each head's element to output[number of heads before it] and its key to keysOut[same]:
   * `{ kind: 'scatter', keysOut: true }`.
   */
  | 'by-key-firsts';

const COMPACT: ScatterWrite = { kind: 'scatter' };
const PARTITION: ScatterWrite = { kind: 'scatter', rejected: true };
const FIRSTS: ScatterWrite = { kind: 'scatter', keysOut: true };
const INCLUSIVE: ScanWrite = { kind: 'scan', exclusive: false };
const EXCLUSIVE: ScanWrite = { kind: 'scan', exclusive: true };

/** A compaction's write as a scatter hook ('compact', 'partition' and 'by-key-firsts' are its built-in forms). */
export function scatterOf(write: WriteHook): ScatterWrite | undefined {
  if (write === 'compact') return COMPACT;
  if (write === 'partition') return PARTITION;
  if (write === 'by-key-firsts') return FIRSTS;
  return typeof write === 'object' && write.kind === 'scatter' ? write : undefined;
}

/** A scan's write as a scan hook ('inclusive' and 'exclusive' are its built-in forms). */
export function scanOf(write: WriteHook): ScanWrite | undefined {
  if (write === 'inclusive') return INCLUSIVE;
  if (write === 'exclusive') return EXCLUSIVE;
  return typeof write === 'object' && write.kind === 'scan' ? write : undefined;
}

/** An open write's store fragment and its outputs' types (a 'scatter' or 'scan' write with `fn`). */
export function storeOf(
  write: WriteHook,
): { readonly fn: WgslFragment; readonly outputs: readonly NumericType[] } | undefined {
  const w = scatterOf(write) ?? scanOf(write);
  return w?.fn ? { fn: w.fn, outputs: w.outputs ?? [] } : undefined;
}

/**
 * A write hook's name in kernel names and cache keys: the string, or for a scatter 'compact' /
 * 'partition' (a scan 'inclusive' / 'exclusive') followed by its fragment and output types when it
 * has a fragment.
 */
export function writeName(write: WriteHook): string {
  if (typeof write === 'string') return write;
  if (write.kind === 'scatter' && write.keysOut && !write.fn) return 'by-key-firsts';
  const base =
    write.kind === 'scan' ? (write.exclusive ? 'exclusive' : 'inclusive') : write.rejected ? 'partition' : 'compact';
  return write.fn ? `${base}_${write.fn.name}_${(write.outputs ?? []).join('_')}` : base;
}

/** Whether a write stores through the output's vec4 view on the vec path (the built-in scan writes). */
export function vecStored(write: WriteHook): boolean {
  const sc = scanOf(write);
  return sc !== undefined && !sc.fn;
}

export type TilePhase = 'chained' | 'reduce' | 'downsweep';

export interface TileKernelParams {
  readonly phase: TilePhase;
  /** Element type of the input. */
  readonly inType: NumericType;
  /** Combiner over the scanned value type V (u32 plus for compaction). */
  readonly combiner: Combiner;
  readonly gen: GenerateHook;
  readonly write: WriteHook;
  /** vec4 loads (and, for scans, vec4 stores): arrays start on 16-byte boundaries, itemsPerThread % 4 == 0. */
  readonly vec: boolean;
  /** The input is read through the output's binding (in-place scans; 'downsweep' and 'reduce' only). */
  readonly inPlace: boolean;
  readonly workgroupSize: number;
  readonly itemsPerThread: number;
  readonly subgroups: boolean;
  readonly minSubgroupSize: number;
  /**
   * The device's largest subgroup (0: unknown). At most 32 lanes, the striped compaction counts
   * ballots by their first word alone (2-3% faster on the H100 than the 4-word count the compiler
   * kept; docs/benchmarks/h100-2026-11-24g.md).
   */
  readonly maxSubgroupSize?: number;
  /** Look-back polls before the fallback ('chained'). */
  readonly maxSpins: number;
  /**
   * 'chained': take tile ids from an atomic counter, in the order workgroups start (so a tile only
   * ever waits on started ones); false uses the workgroup index and relies on the fallback when a
   * device runs workgroups out of order.
   */
  readonly atomicTileIds: boolean;
  /** 'chained': predecessors each look-back lane polls per step (the window is subgroup size x this). */
  readonly lookbackPerLane: number;
  /**
   * The vec4 path with subgroups: consecutive items per thread per row (a multiple of 4 dividing
   * itemsPerThread). @default 4
   */
  readonly rowItems?: number;
  /** 'reduce': tiles last to first (workgroup 0 takes the segment's last tile). */
  readonly reverse?: boolean;
}

const slot = (binding: number, access: 'read' | 'read_write', vec = false) =>
  ({ binding, access, optional: true, form: vec ? ('vec4' as const) : undefined }) as const;

/**
 * The interface of the tile kernels and the spine: the ScnParams uniform; binding 1 holds the tile
 * states (`state`, atomics: 'chained') or the tile sums (`sums`: reduce-then-scan); `ctrl` the tile
 * counters and carries; the input as vec4s and scalars (`in_v`, `in_s`; in place the kernels read
 * the output's binding); the output as vec4s (`out_v`: vec4 stores) or scalars (`out_s`); the
 * keys (`st_v` by key on the vec4 path, else `st_s`) or an 'element' hook's first streamed input
 * (`st_s`, from `st_base`), its second (`st1_s`, from `st1_base`); the keys output of runs by key
 * (`kout_s`, bound whole); a 'scatter' write's outputs 1 and 2 (`out1_s`, `out2_s`, bound whole,
 * from `obase.x` and `obase.y`: a uniform of their own, so the kernels without them keep ScnParams
 * as it was). Element types per kernel.
 */
export const SCN = kernelInterface({
  name: 'scan',
  params: {
    struct: 'ScnParams',
    name: 'prm',
    binding: 0,
    fields: {
      n: 'u32',
      in_base: 'u32',
      out_base: 'u32',
      seg_start: 'u32',
      num_tiles: 'u32',
      tile_offset: 'u32',
      seg: 'u32',
      num_segs: 'u32',
      first_seg: 'u32',
      init: 'u32',
      n_total: 'u32',
      direct: 'u32',
      st_base: 'u32',
      kout_base: 'u32',
      cap: 'u32',
      st1_base: 'u32',
    },
  },
  bindings: {
    state: { binding: 1, access: 'read_write', type: 'u32', form: 'atomic', optional: true },
    sums: { binding: 1, access: 'read_write', type: 'u32', optional: true },
    ctrl: { binding: 2, access: 'read_write', type: 'u32', form: 'atomic' },
    in_v: slot(3, 'read', true),
    in_s: slot(4, 'read'),
    out_v: slot(5, 'read_write', true),
    out_s: slot(5, 'read_write'),
    st_v: slot(6, 'read', true),
    st_s: slot(6, 'read'),
    kout_s: slot(7, 'read_write'),
    st1_s: slot(8, 'read'),
    out1_s: slot(9, 'read_write'),
    out2_s: slot(10, 'read_write'),
    obase: { binding: 11, access: 'uniform', type: 'vec4<u32>', optional: true },
  },
});

/**
 * Layout of the control buffer (u32 words) for S segments: [0, S) tile counters, [S, 2S) carry out
 * of each segment (value bits), [2S, 2S + 4) the results of the last partial vec4 (scans).
 */
export function ctrlWords(segments: number): number {
  return 2 * segments + 4;
}

export function isCompaction(write: WriteHook): boolean {
  return scatterOf(write) !== undefined;
}

/** Whether a compaction writes each element's key to the keys output ('by-key-firsts'). */
export function keysWritten(write: WriteHook): boolean {
  const sc = scatterOf(write);
  return sc?.keysOut === true && !sc.fn;
}

/** The outputs a write stores into beyond output 0 (a 'scatter' or 'scan' write with a fragment). */
export function extraOutputs(write: WriteHook): readonly NumericType[] {
  return storeOf(write)?.outputs.slice(1) ?? [];
}

/** SCN's bindings of a scatter write's outputs 1.., in order (their bases: obase.x, .y). */
const OUTPUTS = ['out1_s', 'out2_s'] as const;

/** The storage bindings a kernel variant declares (against `maxStorageBuffersPerShaderStage`). */
export function storageBindings(use: InterfaceUse<typeof SCN.spec>): number {
  return SCN.names(use).filter((name) => name !== 'prm' && name !== 'obase').length;
}

/** SCN's variant of a tile kernel: the bindings it declares (and uses). */
export function tileUse(
  p: Pick<TileKernelParams, 'phase' | 'vec' | 'inPlace' | 'gen' | 'write'>,
): InterfaceUse<typeof SCN.spec> {
  const use: { -readonly [K in keyof InterfaceUse<typeof SCN.spec>]: boolean } = {};
  if (p.phase === 'chained') use.state = true;
  else use.sums = true;
  if (!p.inPlace) {
    if (p.vec) use.in_v = true;
    use.in_s = true;
  }
  // By key on the vec path the keys are bound as vec4s (loaded like the values) and read one by one
  // through `scn_key`; else as scalars.
  const keyed = keysOf(p.gen) !== undefined;
  if (keyed && p.vec) use.st_v = true;
  else if (keyed || streamedInputs(p.gen).length >= 1) use.st_s = true;
  if (streamedInputs(p.gen).length >= 2) use.st1_s = true;
  if (p.phase !== 'reduce' || p.inPlace) {
    if (p.vec && vecStored(p.write)) use.out_v = true;
    else use.out_s = true;
  }
  if (keysWritten(p.write)) use.kout_s = true;
  if (p.phase !== 'reduce') {
    extraOutputs(p.write).forEach((_, k) => {
      use[OUTPUTS[k] as (typeof OUTPUTS)[number]] = true;
      use.obase = true;
    });
  }
  return use;
}

/** The streamed inputs' types of an 'element' hook (none for other hooks). */
export function streamedInputs(g: GenerateHook): readonly NumericType[] {
  return g.kind === 'element' ? (g.inputs ?? []) : [];
}

/** SCN's bindings of the streamed inputs, in order, with their base parameters. */
const STREAMS = [
  { array: 'st_s', base: 'prm.st_base' },
  { array: 'st1_s', base: 'prm.st1_base' },
] as const;

/** Streamed input k at an element: `at(base)` its index in the input's window from its base parameter. */
function streamLoad(k: number, at: (base: string) => string): string {
  const s = STREAMS[k] as (typeof STREAMS)[number];
  return `${s.array}[${at(s.base)}]`;
}

/**
 * Which compactions take the striped layout where subgroups are on (tileKernel's `sgc`): an element
 * hook's ('element': copyIf, removeIf, partition and their stencil, counting and zip forms) and
 * unique's ('adjacent': heads of equal neighbours); undefined for every other call. (uniqueByKey's
 * heads of keys measured slower striped on the H100: its vec4-bound keys read one word per lane.)
 */
/** The striped compaction's kind where `p`'s tile kernel takes it (the chained phase with subgroups). */
function stripedOf(p: TileKernelParams): 'element' | 'adjacent' | undefined {
  return p.phase === 'chained' && p.subgroups && !p.inPlace ? stripedKind(p.gen, p.write) : undefined;
}

/** Whether every subgroup of `p`'s device fits one ballot word (at most 32 lanes). */
function narrowBallots(p: TileKernelParams): boolean {
  return (p.maxSubgroupSize ?? 0) > 0 && (p.maxSubgroupSize ?? 0) <= 32;
}

export function stripedKind(g: GenerateHook, write: WriteHook): 'element' | 'adjacent' | undefined {
  const sc = scatterOf(write);
  if (g.kind === 'element' && g.fn !== undefined && sc) return 'element';
  if (neighboursOf(g) && sc && !sc.fn) return 'adjacent';
  return undefined;
}

/**
 * The scatter write's statement storing element `x` at output position `to`: the hook's fragment
 * (`fn(to, x, [s0, s1,] i)`, the streamed inputs read again at the element's index, or over keys
 * the element's key `key`) or `out_s[to] = x`.
 */
function scatterStore(
  scatter: ScatterWrite,
  streams: number,
  to: string,
  x: string,
  at: { readonly stream: (base: string) => string; readonly index: string },
  key?: string,
): string {
  if (!scatter.fn) return `out_s[prm.out_base + ${to}] = ${x};`;
  const ins = key !== undefined ? [key] : Array.from({ length: streams }, (_, q) => streamLoad(q, at.stream));
  return `${scatter.fn.name}(${[to, x, ...ins, at.index].join(', ')});`;
}

/**
 * The WGSL value of an 'element' hook at an element: `x` the element, `at(base)` the element's
 * index in a streamed input's window from that input's base parameter, `index` its global index.
 * Scans: the function's value (the element without one); compactions: whether it is kept (bool).
 */
function elementCall(g: ElementHook, x: string, at: (base: string) => string, index: string): string {
  const ins = g.inputs ?? [];
  if (ins.length > SCAN_MAX_INPUTS) throw new Error(`scan engine: at most ${SCAN_MAX_INPUTS} streamed inputs`);
  if (!g.fn) {
    if (ins.length > 0 || g.element === false || g.index)
      throw new Error('scan engine: an element hook over more than x needs fn');
    return x;
  }
  const args: string[] = [];
  if (g.element !== false) args.push(x);
  ins.forEach((_, k) => {
    args.push(streamLoad(k, at));
  });
  if (g.index) args.push(index);
  return `${g.fn.name}(${args.join(', ')})`;
}

function floatEqualFragment(): WgslFragment {
  return fragment({
    name: 'scn_f32_same',
    code: `/** JS === on f32 values: NaN equals nothing, +0 equals -0. Bitwise, so no compiler may fold NaNs away. */
fn scn_f32_same(a: f32, b: f32) -> bool {
  let ua = bitcast<u32>(a);
  let ub = bitcast<u32>(b);
  if ((ua & 0x7fffffffu) > 0x7f800000u) { return false; }
  return ua == ub || ((ua | ub) & 0x7fffffffu) == 0u;
}`,
  });
}

/**
 * The WGSL expression `x differs from prev` of a neighbours hook over elements of type `t`: not its
 * equality `fn(prev, x)`, or without one JS `!==` (unique).
 */
function differs(g: AdjacentHook, t: NumericType, x: string, prev: string): string {
  if (g.fn) return `!${g.fn.name}(${prev}, ${x})`;
  return t === 'f32' ? `!scn_f32_same(${x}, ${prev})` : `(${x} != ${prev})`;
}

/** The name of the generate hook's function (for names and cache keys). */
export function genFnName(g: GenerateHook): string {
  const k = keysOf(g);
  if (k) return `${k.keyEq.name}_${k.scan ? k.scan.op.name : 'flags'}`;
  const nb = neighboursOf(g);
  if (nb) return nb.fn?.name ?? '';
  return g.kind === 'element' ? (g.fn?.name ?? 'id') : '';
}

/** The argument list of an 'element' hook's function for names and cache keys: x, inputs, i. */
export function genSignature(g: GenerateHook): string {
  const k = keysOf(g);
  if (k) return `${k.keyType}_${k.edge}`;
  if (g.kind !== 'element') return '';
  // Built without arrays: a per-call cache key (issue 12).
  let sig = g.element === false ? '' : 'x';
  for (const t of g.inputs ?? []) sig = sig ? `${sig}_${t}` : t;
  if (g.index) sig = sig ? `${sig}_i` : 'i';
  return sig;
}

/**
 * The combiner of a scan by key over (head, value) pairs, `vec2<u32>(head, value bits)` for the
 * value combiner `value` (over a 4-byte type V): (a, b) = b when b holds a head, else
 * (a.head | b.head, a op b). Associative, not commutative; it keeps `value`'s order. Its identity is
 * (0, value's identity). 8 bytes, no subgroup built-in (lane-ordered shuffles). With `countHeads` the
 * first word counts the heads (a.x + b.x) instead of flagging them: reduceByKey's run indices.
 */
export function segmentedCombiner(value: Combiner, countHeads = false): Combiner {
  const V = value.wgslType;
  const f = value.combine;
  const name = mangle(countHeads ? 'scn_segc' : 'scn_seg', value.name);
  return {
    name,
    wgslType: 'vec2<u32>',
    bytes: 8,
    identity: `vec2<u32>(0u, bitcast<u32>(${value.identity}))`,
    combine: fragment({
      name,
      deps: [f],
      code: `fn ${name}(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let v = bitcast<u32>(${f.name}(bitcast<${V}>(a.y), bitcast<${V}>(b.y)));
  return vec2<u32>(a.x ${countHeads ? '+' : '|'} b.x, select(v, b.y, b.x != 0u));
}`,
    }),
  };
}

/**
 * The mangled name of a tile kernel: every parameter of it, so it also keys the engine's pipeline
 * cache without building the kernel (`pipelineFor`).
 */
export function tileKernelName(p: TileKernelParams): string {
  const parts: (string | number)[] = [
    'scn_tile',
    p.phase,
    p.inType,
    p.combiner.name,
    genKind(p.gen),
    genFnName(p.gen),
    genSignature(p.gen),
    writeName(p.write),
    p.vec ? 'vec' : 'scalar',
    p.inPlace ? 'inplace' : 'apart',
    p.workgroupSize,
    p.itemsPerThread,
    p.subgroups ? `sg${p.minSubgroupSize}` : 'wg',
    p.maxSpins,
    p.atomicTileIds ? 'atomic' : 'wgid',
    p.lookbackPerLane,
  ];
  if ((p.rowItems ?? 4) !== 4) parts.push(`c${p.rowItems}`);
  if (stripedOf(p) && narrowBallots(p)) parts.push('b32');
  if (p.phase === 'reduce' && p.reverse) parts.push('rev');
  return mangle(...parts);
}

/**
 * WGSL lines defining `below`, the ballot mask (vec4<u32>, 128 lanes) of the lanes below this one
 * (`lw`: its word, `lt`: the word indices), for ranks and segment starts from subgroup ballots.
 */
const BELOW_LANE = [
  `let lw = ids.lane >> 5u;`,
  `let lt = vec4<u32>(0u, 1u, 2u, 3u);`,
  `let below = select(vec4<u32>(0u), vec4<u32>(0xffffffffu), lt < vec4<u32>(lw)) | select(vec4<u32>(0u), vec4<u32>((1u << (ids.lane & 31u)) - 1u), lt == vec4<u32>(lw));`,
] as const;

/** What the striped compaction needs of its kernel (see `stripedCompaction`). */
interface StripedParams {
  readonly sgc: 'element' | 'adjacent';
  readonly k: number;
  readonly w: number;
  readonly tile: number;
  readonly T: NumericType;
  /** The input's scalar binding. */
  readonly inS: string;
  readonly elem: ElementHook | undefined;
  /** The neighbours hook ('adjacent'). */
  readonly nbr: AdjacentHook | undefined;
  readonly scatter: ScatterWrite;
  /** The element hook's streamed inputs. */
  readonly streams: number;
  /** Subgroups of at most 32 lanes: a ballot's first word holds every lane. */
  readonly narrow: boolean;
}

/**
 * The tile kernel's load, fold and write lines for a striped compaction (`stripedKind`), in place
 * of the rows layout's.
 */
function stripedCompaction(p: StripedParams): { load: string[]; fold: string[]; write: string[] } {
  const { sgc, k, w, tile, T, inS, elem, scatter, narrow } = p;
  // Kept lanes of a ballot `b` and of those below this lane (`below`: BELOW_LANE).
  const popAll = (b: string) => (narrow ? `countOneBits(${b}.x)` : `dot(countOneBits(${b}), vec4<u32>(1u))`);
  const popBelow = (b: string) =>
    narrow ? `countOneBits(${b}.x & below.x)` : `dot(countOneBits(${b} & below), vec4<u32>(1u))`;
  const loadLines: string[] = [];
  const foldLines: string[] = [];
  const writeLines: string[] = [];
  // Striped compaction: subgroup g owns the contiguous range [g*S*k, (g+1)*S*k) of the tile (S its
  // size); its item j is element g*S*k + j*S + lane (scalar loads, one coalesced S*4 bytes per
  // item). Each item's kept flags form a ballot: an element's rank among the subgroup's kept ones
  // is the kept count of the items before plus the popcount of its ballot below its lane, so the
  // kept elements of one item go to consecutive output positions (one contiguous run of stores per
  // instruction) with no workgroup scan; the subgroups' totals are folded once per tile.
  // Registers: the k elements and one bit per item (kept); positions and ranks are recomputed at
  // the write (a ballot and two popcounts per item) rather than held. Full tiles load without
  // bounds tests.
  const load = (i: string): string => `${inS}[prm.in_base + ${i}]`;
  loadLines.push(`let sgb = tile * ${tile}u + (ids.lid - ids.lane) * ${k}u + ids.lane;`);
  for (let j = 0; j < k; j++) loadLines.push(`var cx${j}: ${T};`);
  loadLines.push('if (full) {');
  for (let j = 0; j < k; j++) loadLines.push(`  cx${j} = ${load(`sgb + ${j}u * ids.sg_size`)};`);
  loadLines.push('} else {');
  for (let j = 0; j < k; j++) {
    loadLines.push(`  if (sgb + ${j}u * ids.sg_size < prm.n) { cx${j} = ${load(`sgb + ${j}u * ids.sg_size`)}; }`);
  }
  loadLines.push('}');
  if (sgc !== 'element') {
    // The element before the subgroup's range (lane 0's item 0), from memory: unique's input
    // window starts one element before the segment.
    loadLines.push(
      `var cp: ${T} = cx0;`,
      `if (ids.lane == 0u && prm.seg_start + sgb > 0u && (full || sgb < prm.n)) { cp = ${load('sgb - 1u')}; }`,
    );
  }
  const masks = Math.ceil(k / 32);
  const bit = (j: number) => ({ mask: `km${Math.floor(j / 32)}`, bit: `${(1 << (j % 32)) >>> 0}u` });
  foldLines.push(...BELOW_LANE, 'var so = 0u;');
  for (let q = 0; q < masks; q++) foldLines.push(`var km${q} = 0u;`);
  const ce = (j: number) => `(sgb + ${j}u * ids.sg_size)`;
  const cat = (j: number) => ({ stream: (base: string) => `${base} + ${ce(j)}`, index: `prm.seg_start + ${ce(j)}` });
  /** Whether item j is kept: the element hook, or a head (cv: the element before; see below). */
  const kept = (j: number): string => {
    if (sgc === 'element' && elem) {
      const at = cat(j);
      return `(full || ${ce(j)} < prm.n) && ${elementCall(elem, `cx${j}`, at.stream, at.index)}`;
    }
    const head = differs(p.nbr as AdjacentHook, T, `cx${j}`, `cv${j}`);
    return `(full || ${ce(j)} < prm.n) && (prm.seg_start + ${ce(j)} == 0u || ${head})`;
  };
  for (let j = 0; j < k; j++) {
    const b = bit(j);
    if (sgc !== 'element') {
      // unique: the element before (the lane before's; lane 0's: the last lane's of item j - 1),
      // shuffled outside the kept test: WGSL's && and || short-circuit, and a shuffle in
      // non-uniform control flow may read an inactive lane (it gave wrong heads on the H100).
      const before = j === 0 ? 'cp' : `subgroupShuffle(cx${j - 1}, ids.sg_size - 1u)`;
      foldLines.push(`let cv${j} = select(subgroupShuffleUp(cx${j}, 1u), ${before}, ids.lane == 0u);`);
    }
    foldLines.push(
      `{ let kp = ${kept(j)};`,
      `  ${b.mask} |= select(0u, ${b.bit}, kp);`,
      `  so += ${popAll('subgroupBallot(kp)')}; }`,
    );
  }
  foldLines.push(
    `if (ids.lane == 0u) { scn_sga[ids.sg_id] = so; }`,
    'workgroupBarrier();',
    'var sgp = 0u;',
    'var total = 0u;',
    `for (var g = 0u; g < ${w}u / ids.sg_size; g++) {
    let a = scn_sga[g];
    sgp += select(0u, a, g < ids.sg_id);
    total += a;
  }`,
  );
  writeLines.push('var wo = prefix + sgp;');
  for (let j = 0; j < k; j++) {
    const at = cat(j);
    const b = bit(j);
    const store = (to: string): string => scatterStore(scatter, p.streams, to, `cx${j}`, at);
    const rejected = scatter.rejected
      ? ` else if (full || ${ce(j)} < prm.n) { ${store(`prm.n_total - 1u - (prm.seg_start + ${ce(j)} - to)`)} }`
      : '';
    writeLines.push(
      `{ let kp = (${b.mask} & ${b.bit}) != 0u;`,
      `  let bl = subgroupBallot(kp);`,
      `  let to = wo + ${popBelow('bl')};`,
      `  if (kp) { ${store('to')} }${rejected}`,
      `  wo += ${popAll('bl')}; }`,
    );
  }
  return { load: loadLines, fold: foldLines, write: writeLines };
}

/**
 * Builds one tile kernel. Bindings: 0 params, 1 state/sums, 2 ctrl, 3 input vec4 view, 4 input
 * scalar view (both read-only; absent in place), 5 output (vec4 for vec scans, else scalar; read_write);
 * 6 and 8 streamed inputs (keys), 7 keys output; a scatter fragment's outputs 1 and 2 at 9 and 10,
 * their bases in the uniform at 11.
 *
 * Needs: workgroup memory of one workgroup exclusive scan (or reduce) over V plus 8 bytes (scans by
 * key in subgroup rows: W / minSubgroupSize values of V instead of the scan);
 * subgroups optional (without them: one row per tile, so one workgroup scan of 2 log2(W) barriers,
 * and a look-back of `lookbackPerLane` predecessors per step on thread 0).
 * Performance: one read of the input (by key: and of the keys) and one write of the output per
 * element ('chained'; 'reduce' reads, 'downsweep' reads and writes); the look-back reads 8 bytes
 * per predecessor polled and a fallback re-reads one tile. One workgroup scan per row
 * (itemsPerThread / 4 rows with subgroups); scans by key in subgroup rows: one subgroup scan per
 * row and one workgroup step per tile.
 * H100 (Dawn/Vulkan), 2^24 u32 inclusive: ~1.6x the time of a striped vec4 copy.
 */
export function tileKernel(p: TileKernelParams): WgslFragment {
  const w = p.workgroupSize;
  const k = p.itemsPerThread;
  const tile = w * k;
  const c = p.combiner;
  const V = c.wgslType;
  const T = p.inType;
  const comb = c.combine.name;
  const id = c.identity;
  const compaction = isCompaction(p.write);
  const byKey = keysOf(p.gen);
  // A neighbours hook over the elements (unique): its equality.
  const nbr = neighboursOf(p.gen);
  // A scan by key: V is the (head, value bits) pair, the output holds the values (the input's type).
  const pair = byKey !== undefined && !compaction;
  // A scan's write (the open scan hook; 'inclusive' / 'exclusive' its built-in forms).
  const scanW = scanOf(p.write);
  const excl = scanW?.exclusive === true;
  const OutT = pair ? T : V;
  if (byKey && (p.phase !== 'chained' || p.inPlace)) {
    throw new Error('scan engine: scans and compaction by key run the chained phase, never in place');
  }
  if (pair && (!byKey?.scan || byKey.edge !== 'head' || V !== 'vec2<u32>')) {
    throw new Error('scan engine: a scan by key needs heads, the value operator and segmentedCombiner');
  }
  /** What element results go out as: the pair's value (exclusive by key: the init at heads). */
  const outOf = (r: string, h: string): string =>
    !pair ? r : excl ? `select(bitcast<${T}>(${r}.y), bitcast<${T}>(prm.init), ${h})` : `bitcast<${T}>(${r}.y)`;
  const wgp = { combiner: c, workgroupSize: w, subgroups: p.subgroups, minSubgroupSize: p.minSubgroupSize };
  // Scans by key on the vec4 path with subgroups scan in subgroup rows (see the layout below).
  const sgRows = pair && p.subgroups && p.vec;
  // Compactions of an 'element' hook with subgroups ('striped compaction', see below).
  const sgc = stripedOf(p);
  // Tiles of several rows (the vec4 path with subgroups) scan their rows together: one exchange of
  // subgroup totals per tile instead of one workgroup scan (a subgroup scan, two barriers and an
  // ordered fold of the subgroup totals) per row. (Compactions first packed their rows' 1/0 counts
  // 16 bits each into one vecN<u32> scan: on the H100 that gave wrong partition and shuffled-write
  // results with vec2/vec3 counts, so no vector subgroup operations here; see tuning.ts.)
  // The tile's layout: R rows of C items per thread (see the layout comment below).
  const C = p.vec && p.subgroups ? (p.rowItems ?? 4) : k;
  if (C % 4 !== 0 && C !== k) throw new Error('scan engine: rowItems must be a multiple of 4');
  if (k % C !== 0) throw new Error('scan engine: rowItems must divide itemsPerThread');
  const R = k / C;
  const rowScan =
    p.phase !== 'reduce' && !sgRows && !sgc && p.subgroups && R >= 2 ? workgroupExclusiveScanRows(wgp, R) : undefined;
  const scan = p.phase === 'reduce' || sgRows || sgc || rowScan ? undefined : workgroupExclusiveScan(wgp);
  const red = p.phase === 'reduce' ? workgroupReduce(wgp) : undefined;
  const sgRed = p.subgroups ? subgroupReduce({ combiner: c }) : undefined;
  const vecStores = p.vec && vecStored(p.write);
  const inV = p.inPlace ? 'out_v' : 'in_v';
  const inS = p.inPlace ? (vecStores ? '' : 'out_s') : 'in_s';
  if (p.inPlace && p.phase === 'chained') throw new Error('scan engine: the chained phase never runs in place');
  if (p.inPlace && compaction) throw new Error('scan engine: compaction never runs in place');
  if (p.inPlace && scanW?.fn) throw new Error("scan engine: a scan write's fragment never runs in place");
  if (p.vec && k % 4 !== 0) throw new Error('scan engine: the vec4 path needs itemsPerThread % 4 == 0');

  // ---- bindings (SCN)
  const vecKeys = byKey !== undefined && p.vec;
  if (keysWritten(p.write) && !byKey) throw new Error("scan engine: 'by-key-firsts' needs the 'by-key' hook");
  const use = tileUse(p);
  const streams = streamedInputs(p.gen);
  const scatter = scatterOf(p.write);
  if (keysWritten(p.write) && scatter?.rejected)
    throw new Error("scan engine: 'by-key-firsts' writes no rejected elements");
  const outTypes = storeOf(p.write)?.outputs ?? [];
  if (outTypes.length > SCAN_MAX_OUTPUTS) throw new Error(`scan engine: at most ${SCAN_MAX_OUTPUTS} outputs`);
  const st = byKey ? byKey.keyType : streams[0];
  const types: InterfaceTypes<typeof SCN.spec> = {
    in_v: T,
    in_s: T,
    out_v: OutT,
    out_s: compaction ? (outTypes[0] ?? T) : (outTypes[0] ?? OutT),
    st_v: st,
    st_s: st,
    kout_s: byKey?.keyType,
    st1_s: streams[1],
    out1_s: outTypes[1],
    out2_s: outTypes[2],
  };
  const decls = SCN.wgsl(use, types);
  const declared = SCN.names(use);
  const needsScalarIn = !p.vec || nbr !== undefined || p.phase === 'chained';
  if (p.inPlace && needsScalarIn && vecStores) {
    // In place with vec4 stores there is no scalar view of the data: the fallback and unique never
    // run in place, and a non-vec in-place kernel has the scalar view as `out_s`.
    throw new Error('scan engine: in-place vec kernels have no scalar input view');
  }

  // ---- layout: R rows of W threads x C items. With subgroups (cheap workgroup scans): striped
  // rows, C = 4 on the vec4 path (one vec4 per thread per row, coalesced across the workgroup),
  // R = itemsPerThread / 4. Without subgroups (workgroup scans cost 2 log2(W) barriers each) or on
  // the scalar path: one row of C = itemsPerThread consecutive items per thread (vec4 or scalar
  // loads). Row r of the tile covers elements [r*W*C, (r+1)*W*C); thread t holds b{r} = tile start
  // + r*W*C + t*C .. + C - 1. Rows are scanned in order, threads in order within a row. The code is
  // unrolled into named registers (private arrays indexed in loops spilled on the H100).
  // Scans by key with subgroups on the vec4 path ('subgroup rows', CUB's warp-striped arrangement):
  // subgroup g owns the contiguous range [g*S*k, (g+1)*S*k) of the tile (S its size) in R rows of
  // S vec4s (each row a coalesced S*16 bytes), lane l of row r holds b{r} = tile start + g*S*k +
  // r*S*4 + l*4 .. + 3. Each row is one segmented subgroup scan (head flags from a ballot, only the
  // value bits shuffled; all rows step together), the rows are chained in registers, and the tile
  // needs one workgroup step (subgroup aggregates in workgroup memory) instead of one workgroup
  // scan (2 barriers and two ordered subgroup folds) per row.
  const item = (r: number, j: number) => `${r}_${j}`;
  const elem = p.gen.kind === 'element' ? p.gen : undefined;
  if (elem && compaction && !elem.fn) throw new Error("scan engine: a compaction needs the element hook's fn");

  /** The WGSL expression of the key at window index `i` (by key). */
  const keyAt = (i: string): string => (vecKeys ? `scn_key(${i})` : `st_s[${i}]`);
  // A striped compaction's lines (stripedCompaction) replace the rows layout's loads, folds and writes.
  const striped =
    sgc && scatter
      ? stripedCompaction({
          sgc,
          k,
          w,
          tile,
          T,
          inS,
          elem,
          nbr,
          scatter,
          streams: streams.length,
          narrow: narrowBallots(p),
        })
      : undefined;
  // Every load of the tile is issued before any value is used.
  const loadLines: string[] = striped ? striped.load : [];
  if (sgRows) loadLines.push(`let sgb = tile * ${tile}u + (ids.lid - ids.lane) * ${k}u + ids.lane * ${C}u;`);
  for (let r = 0; r < R && !striped; r++) {
    loadLines.push(
      sgRows
        ? `let b${r} = sgb + ${r * C}u * ids.sg_size;`
        : `let b${r} = tile * ${tile}u + ${r * w * C}u + ids.lid * ${C}u;`,
    );
    const run = { items: C, vec: p.vec, first: `b${r}`, full: 'full', n: 'prm.n' };
    loadLines.push(
      ...loadRun({ ...run, type: T, reg: (j) => `x${item(r, j)}`, array: p.vec ? inV : inS, base: 'prm.in_base' }),
    );
    // By key: the keys of row r (ky).
    if (byKey) {
      loadLines.push(
        ...loadRun({
          ...run,
          type: byKey.keyType,
          reg: (j) => `ky${item(r, j)}`,
          array: vecKeys ? 'st_v' : 'st_s',
          base: 'prm.st_base',
        }),
      );
    }
  }
  // Generate the values (v), kept flags (k, compaction), fold each thread's items of a row, scan
  // (or reduce) the row; rp{r} is the prefix of row r's first item within the tile, `total` the
  // tile's aggregate.
  const foldLines: string[] = striped ? striped.fold : [];
  // By key: whether each element is a head or tail (hd).
  const keyLines = (r: number): string[] => {
    if (!byKey) return [];
    const flags = {
      items: C,
      key: (j: number) => `ky${item(r, j)}`,
      ok: (j: number) => `ok${item(r, j)}`,
      flag: (j: number) => `hd${item(r, j)}`,
      eq: byKey.keyEq.name,
      keyAt,
      at: `prm.st_base + b${r}`,
    };
    // With subgroup rows the key before a lane's first is the previous lane's last; lane 0 reads it.
    return byKey.edge === 'head'
      ? headFlags({
          ...flags,
          first: `prm.seg_start + b${r} == 0u`,
          shuffle: sgRows ? { lane: 'ids.lane', prev: `kp${r}` } : undefined,
        })
      : tailFlags({ ...flags, last: (j) => `prm.seg_start + b${r} + ${j + 1}u == prm.n_total` });
  };
  /** A pair's value bits from element x and its head flag h (exclusive: the run starts at op(init, x)). */
  const pairBits = (x: string, h: string): string =>
    `bitcast<u32>(${excl ? `select(${x}, ${byKey?.scan?.op.name}(bitcast<${T}>(prm.init), ${x}), ${h})` : x})`;
  /** The pair of element `it` from its value and head flag (the identity past the end). */
  const pairOf = (it: string, h: string): string =>
    `select(${id}, vec2<u32>(select(0u, 1u, ${h}), ${pairBits(`x${it}`, h)}), ok${it})`;
  // Pairs: each element's head flag is also kept as bit `e % 32` of hm{e / 32} (e its index in the
  // thread's items), so only the values stay live in registers until the write.
  const headBit = (r: number, j: number) => {
    const e = r * C + j;
    return { mask: `hm${Math.floor(e / 32)}`, bit: `${(1 << (e % 32)) >>> 0}u` };
  };
  /** Element j of row r in the streamed inputs' windows (from their bases) and its global index. */
  const elemAt = (r: number, j: number) => ({
    stream: (base: string) => `${base} + b${r} + ${j}u`,
    index: `prm.seg_start + b${r} + ${j}u`,
  });
  if (pair) for (let g = 0; g < Math.ceil(k / 32); g++) foldLines.push(`var hm${g} = 0u;`);
  for (let r = 0; r < R && !striped; r++) {
    for (let j = 0; j < C; j++) foldLines.push(`let ok${item(r, j)} = full || b${r} + ${j}u < prm.n;`);
    foldLines.push(...keyLines(r));
    if (pair) {
      for (let j = 0; j < C; j++) {
        const it = item(r, j);
        const hb = headBit(r, j);
        foldLines.push(`let v${it} = ${pairOf(it, `hd${it}`)};`, `${hb.mask} |= select(0u, ${hb.bit}, hd${it});`);
      }
    } else if (elem && !compaction) {
      for (let j = 0; j < C; j++) {
        const at = elemAt(r, j);
        foldLines.push(
          `let v${item(r, j)} = select(${id}, ${elementCall(elem, `x${item(r, j)}`, at.stream, at.index)}, ok${item(r, j)});`,
        );
      }
    } else {
      if (elem) {
        for (let j = 0; j < C; j++) {
          const at = elemAt(r, j);
          foldLines.push(
            `let k${item(r, j)} = ok${item(r, j)} && ${elementCall(elem, `x${item(r, j)}`, at.stream, at.index)};`,
          );
        }
      } else if (byKey) {
        for (let j = 0; j < C; j++) foldLines.push(`let k${item(r, j)} = hd${item(r, j)};`);
      } else {
        const x0 = `x${item(r, 0)}`;
        foldLines.push(`var xp${r} = ${x0};`);
        foldLines.push(`let first${r} = prm.seg_start + b${r} == 0u;`);
        foldLines.push(`if (ok${item(r, 0)} && !first${r}) { xp${r} = ${inS}[prm.in_base + b${r} - 1u]; }`);
        foldLines.push(
          `let k${item(r, 0)} = ok${item(r, 0)} && (first${r} || ${differs(nbr as AdjacentHook, T, x0, `xp${r}`)});`,
        );
        for (let j = 1; j < C; j++) {
          foldLines.push(
            `let k${item(r, j)} = ok${item(r, j)} && ${differs(nbr as AdjacentHook, T, `x${item(r, j)}`, `x${item(r, j - 1)}`)};`,
          );
        }
      }
      for (let j = 0; j < C; j++) foldLines.push(`let v${item(r, j)} = select(0u, 1u, k${item(r, j)});`);
    }
    foldLines.push(`var s${r} = v${item(r, 0)};`);
    for (let j = 1; j < C; j++) foldLines.push(`s${r} = ${comb}(s${r}, v${item(r, j)});`);
  }
  if (striped) {
    // The striped fold ends with the tile's total (stripedCompaction).
  } else if (p.phase === 'reduce') {
    foldLines.push(`var total = ${red?.name}(s0, ids);`);
    for (let r = 1; r < R; r++) foldLines.push(`total = ${comb}(total, ${red?.name}(s${r}, ids));`);
  } else if (sgRows) {
    // Row scans within the subgroup, ballot-based (CUB's segmented warp scan): lane l's thread fold
    // s{r} holds a head when s{r}.x != 0; the ballot of those flags gives each lane its segment
    // start sst{r} (the highest flagged lane at or below it: firstLeadingBit of the ballot masked
    // below the lane), and an unsegmented shuffle scan of the value bits only, each step bounded by
    // the segment (lane >= start + d), gives the inclusive values iv{r}. All rows step together
    // (their shuffles overlap) for as many steps as the longest segment needs (subgroupMax of the
    // spans: 3 steps for runs of 16 at 32 lanes instead of 5). Head flags of the exclusive prefix
    // e{r} and of the row total come from the ballot, so only the values are shuffled. The rows are
    // chained (rb: the rows before), then the subgroup aggregates of the tile: sgp, the fold of the
    // subgroups before.
    const op = byKey?.scan?.op.name;
    const opBits = (a: string, b: string) => `bitcast<u32>(${op}(bitcast<${T}>(${a}), bitcast<${T}>(${b})))`;
    foldLines.push(...BELOW_LANE, `let rb0 = ${id};`);
    const spans: string[] = [];
    for (let r = 0; r < R; r++) {
      foldLines.push(
        `let bl${r} = subgroupBallot(s${r}.x != 0u);`,
        `let mb${r} = bl${r} & below;`,
        `let sst${r} = select(scn_top_lane(mb${r}), ids.lane, s${r}.x != 0u);`,
        `var iv${r} = s${r}.y;`,
      );
      spans.push(`ids.lane - sst${r}`);
    }
    let span = spans[0] as string;
    for (let r = 1; r < R; r++) span = `max(${span}, ${spans[r]})`;
    foldLines.push(`let span = subgroupMax(${span});`, `for (var d = 1u; d <= span; d = d << 1u) {`);
    for (let r = 0; r < R; r++) foldLines.push(`  let y${r} = subgroupShuffleUp(iv${r}, d);`);
    for (let r = 0; r < R; r++) {
      foldLines.push(`  iv${r} = select(iv${r}, ${opBits(`y${r}`, `iv${r}`)}, ids.lane >= sst${r} + d);`);
    }
    foldLines.push('}');
    for (let r = 0; r < R; r++) {
      const eHead = `select(0u, 1u, any(mb${r} != vec4<u32>(0u)))`;
      const tHead = `select(0u, 1u, any(bl${r} != vec4<u32>(0u)))`;
      foldLines.push(
        `let e${r} = vec2<u32>(${eHead}, select((${id}).y, subgroupShuffleUp(iv${r}, 1u), ids.lane > 0u));`,
        `let rb${r + 1} = ${comb}(rb${r}, vec2<u32>(${tHead}, subgroupShuffle(iv${r}, ids.sg_size - 1u)));`,
      );
    }
    foldLines.push(
      `if (ids.lane == 0u) { scn_sga[ids.sg_id] = rb${R}; }`,
      'workgroupBarrier();',
      `var sgp = ${id};`,
      `var total = ${id};`,
      `for (var g = 0u; g < ${w}u / ids.sg_size; g++) {
    let a = scn_sga[g];
    sgp = select(sgp, ${comb}(sgp, a), g < ids.sg_id);
    total = ${comb}(total, a);
  }`,
    );
    for (let r = 0; r < R; r++) foldLines.push(`let rp${r} = ${comb}(sgp, ${comb}(rb${r}, e${r}));`);
  } else if (rowScan) {
    foldLines.push(
      `let sr = ${rowScan.name}(${Array.from({ length: R }, (_, r) => `s${r}`).join(', ')}, ids);`,
      `let rb0 = ${id};`,
    );
    for (let r = 0; r < R; r++) {
      foldLines.push(`let tp${r} = sr.p${r};`, `let tot${r} = sr.t${r};`);
      foldLines.push(`let ${r + 1 < R ? `rb${r + 1}` : 'total'} = ${comb}(rb${r}, tot${r});`);
      if (!compaction) foldLines.push(`let rp${r} = ${comb}(rb${r}, tp${r});`);
    }
  } else {
    foldLines.push(`let rb0 = ${id};`);
    for (let r = 0; r < R; r++) {
      foldLines.push(`var tot${r}: ${V};`, `let tp${r} = ${scan?.name}(s${r}, ids, &tot${r});`);
      foldLines.push(`let ${r + 1 < R ? `rb${r + 1}` : 'total'} = ${comb}(rb${r}, tot${r});`);
      if (!compaction) foldLines.push(`let rp${r} = ${comb}(rb${r}, tp${r});`);
    }
  }

  // ---- scalar generate for the fallback: the value of segment-local element i
  let genScalar = '';
  if (p.phase === 'chained') {
    let body: string;
    let edgeAt = '';
    if (byKey) {
      const eq = byKey.keyEq.name;
      edgeAt =
        byKey.edge === 'head'
          ? `fn scn_edge_at(i: u32) -> bool {
  if (prm.seg_start + i == 0u) { return true; }
  return !${eq}(${keyAt('prm.st_base + i - 1u')}, ${keyAt('prm.st_base + i')});
}
`
          : `fn scn_edge_at(i: u32) -> bool {
  if (prm.seg_start + i + 1u == prm.n_total) { return true; }
  return !${eq}(${keyAt('prm.st_base + i')}, ${keyAt('prm.st_base + i + 1u')});
}
`;
    }
    if (pair) {
      body = `let x = ${inS}[prm.in_base + i];
  let h = scn_edge_at(i);
  return vec2<u32>(select(0u, 1u, h), ${pairBits('x', 'h')});`;
    } else if (byKey) {
      body = 'return select(0u, 1u, scn_edge_at(i));';
    } else if (elem) {
      const v = elementCall(elem, `${inS}[prm.in_base + i]`, (base) => `${base} + i`, 'prm.seg_start + i');
      body = compaction ? `return select(0u, 1u, ${v});` : `return ${v};`;
    } else {
      body = `if (prm.seg_start + i == 0u) { return 1u; }
  return select(0u, 1u, ${differs(nbr as AdjacentHook, T, `${inS}[prm.in_base + i]`, `${inS}[prm.in_base + i - 1u]`)});`;
    }
    genScalar = `${edgeAt}fn scn_gen_at(i: u32) -> ${V} {
  ${body}
}`;
  }

  // ---- write (after the tile's prefix is known)
  const writeLines: string[] = striped ? striped.write : [];
  if (p.phase !== 'reduce' && !striped) {
    for (let r = 0; r < R; r++) {
      // Pairs: each element's head flag and pair again from the head bits (h, w).
      const unpack = (j: number): string => {
        const it = item(r, j);
        const hb = headBit(r, j);
        return `let h${it} = (${hb.mask} & ${hb.bit}) != 0u; let w${it} = ${pairOf(it, `h${it}`)};`;
      };
      if (!compaction) {
        writeLines.push(`var run${r} = ${comb}(prefix, rp${r});`);
        for (let j = 0; j < C; j++) {
          if (pair) writeLines.push(unpack(j));
          const v = `${pair ? 'w' : 'v'}${item(r, j)}`;
          writeLines.push(
            !excl
              ? `run${r} = ${comb}(run${r}, ${v}); let r${item(r, j)} = run${r};`
              : `let r${item(r, j)} = run${r}; run${r} = ${comb}(run${r}, ${v});`,
          );
        }
        if (scanW?.fn) {
          // The scan hook's fragment: fn(i, prefix, x, [s0, s1]) for each element in range.
          for (let j = 0; j < C; j++) {
            const it = item(r, j);
            const at = elemAt(r, j);
            const ins = streams.map((_, q) => streamLoad(q, at.stream));
            const args = [at.index, outOf(`r${it}`, `h${it}`), `x${it}`, ...ins];
            writeLines.push(`if (ok${it}) { ${scanW.fn.name}(${args.join(', ')}); }`);
          }
        } else if (vecStores) {
          for (let q = 0; q < C / 4; q++) {
            const rs = [0, 1, 2, 3].map((c) => outOf(`r${item(r, 4 * q + c)}`, `h${item(r, 4 * q + c)}`));
            const at = (c: number) => `b${r} + ${4 * q + c}u`;
            writeLines.push(`if (full || ${at(3)} < prm.n) {
    out_v[(prm.out_base + b${r}) / 4u + ${q}u] = vec4<${OutT}>(${rs.join(', ')});
  } else if (${at(0)} < prm.n) {
    // The array's last partial vec4: its results go to ctrl and the host copies them into place.
    let tail = 2u * prm.num_segs;
    atomicStore(&ctrl[tail], bitcast<u32>(${rs[0]}));
    if (${at(1)} < prm.n) { atomicStore(&ctrl[tail + 1u], bitcast<u32>(${rs[1]})); }
    if (${at(2)} < prm.n) { atomicStore(&ctrl[tail + 2u], bitcast<u32>(${rs[2]})); }
  }`);
          }
        } else {
          for (let j = 0; j < C; j++) {
            writeLines.push(
              `if (ok${item(r, j)}) { out_s[prm.out_base + b${r} + ${j}u] = ${outOf(`r${item(r, j)}`, `h${item(r, j)}`)}; }`,
            );
          }
        }
      } else {
        writeLines.push(`var run${r} = prefix + rb${r} + tp${r};`);
        for (let j = 0; j < C; j++) {
          const it = item(r, j);
          const x = `x${it}`;
          if (keysWritten(p.write)) {
            // 'by-key-firsts': the key too, both only below prm.cap (the outputs' length).
            writeLines.push(
              `if (k${it} && run${r} < prm.cap) { out_s[prm.out_base + run${r}] = ${x}; kout_s[prm.kout_base + run${r}] = ky${it}; }`,
            );
          } else if (scatter) {
            // The scatter hook: kept elements at their rank, rejected ones (with `rejected`) from the end.
            const at = elemAt(r, j);
            const key = byKey ? `ky${it}` : undefined;
            const store = (to: string): string => scatterStore(scatter, streams.length, to, x, at, key);
            const rejected = scatter.rejected
              ? ` else if (ok${it}) { ${store(`prm.n_total - 1u - (prm.seg_start + b${r} + ${j}u - run${r})`)} }`
              : '';
            writeLines.push(`if (k${it}) { ${store(`run${r}`)} }${rejected}`);
          }
          writeLines.push(`run${r} += v${it};`);
        }
      }
    }
  }

  // ---- tile prefix
  let prefixCode: string;
  let helpers = '';
  let lbDeps: readonly WgslFragment[] = [];
  // By key the carry is the leftmost operand of every fold (its head flag never matters): its value
  // bits only, as for other scans.
  const carryFn = pair
    ? `fn scn_carry() -> vec2<u32> {
  if (prm.first_seg != 0u) { return vec2<u32>(0u, prm.init); }
  return vec2<u32>(0u, atomicLoad(&ctrl[prm.num_segs + prm.seg - 1u]));
}
fn scn_carry_out(v: vec2<u32>) {
  atomicStore(&ctrl[prm.num_segs + prm.seg], v.y);
}`
    : `fn scn_carry() -> ${V} {
  if (prm.first_seg != 0u) { return bitcast<${V}>(prm.init); }
  return bitcast<${V}>(atomicLoad(&ctrl[prm.num_segs + prm.seg - 1u]));
}
fn scn_carry_out(v: ${V}) {
  atomicStore(&ctrl[prm.num_segs + prm.seg], bitcast<u32>(v));
}`;
  // A store fragment's stores: output 0 from prm.out_base (scans: j global, output 0 bound per
  // segment), outputs 1.. from obase.
  const storeFn = p.phase === 'reduce' ? undefined : storeOf(p.write)?.fn;
  const store0 = scanW
    ? `fn scn_store0(j: u32, v: ${outTypes[0] ?? OutT}) { out_s[prm.out_base + j - prm.seg_start] = v; }`
    : `fn scn_store0(j: u32, v: ${outTypes[0] ?? T}) { out_s[prm.out_base + j] = v; }`;
  const stores = storeFn
    ? [store0]
        .concat(
          extraOutputs(p.write).map(
            (t, q) => `fn scn_store${q + 1}(j: u32, v: ${t}) { ${OUTPUTS[q]}[obase.${'xy'[q]} + j] = v; }`,
          ),
        )
        .map((f) => `\n${f}`)
        .join('')
    : '';
  if (p.phase === 'chained') {
    const lb = windowedLookback({
      prefix: 'scn',
      layout: pair ? 'split-head' : 'split',
      combiner: c,
      state: 'state',
      base: 'prm.tile_offset',
      tiles: 'prm.num_tiles',
      carry: 'scn_carry',
      carryOut: 'scn_carry_out',
      subgroups: p.subgroups,
      perLane: p.lookbackPerLane,
      maxSpins: p.maxSpins,
      fallback: { element: 'scn_gen_at', tileItems: tile, n: 'prm.n' },
    });
    lbDeps = lb.deps;
    helpers = `${lb.declarations}

${lb.stateFunctions}

${genScalar}

${lb.fallback}

${lb.walk}`;
    prefixCode = lb.call('tile', 'total', 'prefix');
  } else if (p.phase === 'downsweep') {
    prefixCode = `  var prefix: ${V};
  if (prm.direct != 0u) {
    prefix = scn_carry();
    if (ids.lid == 0u) { scn_carry_out(${comb}(prefix, total)); }
  } else {
    prefix = bitcast<${V}>(sums[prm.tile_offset + tile]);
  }`;
  } else {
    prefixCode = '';
  }

  const tileAcquire =
    p.phase === 'chained' && p.atomicTileIds
      ? `  if (ids.lid == 0u) { scn_tile = atomicAdd(&ctrl[prm.seg], 1u); }
  let tile = workgroupUniformLoad(&scn_tile);`
      : p.phase === 'reduce' && p.reverse
        ? '  let tile = prm.num_tiles - 1u - wg_index;'
        : '  let tile = wg_index;';
  const body =
    p.phase === 'reduce'
      ? `  if (ids.lid == 0u) { sums[prm.tile_offset + tile] = bitcast<u32>(total); }`
      : `${prefixCode}
  ${writeLines.join('\n  ')}`;

  const name = tileKernelName(p);
  const floatEq = nbr && !nbr.fn && T === 'f32' ? floatEqualFragment() : undefined;
  return fragment({
    name,
    deps: [
      threadIds(p.subgroups),
      c.combine,
      scan,
      rowScan,
      red,
      sgRed,
      p.gen.kind === 'element' ? p.gen.fn : (byKey?.keyEq ?? nbr?.fn),
      byKey?.scan?.op,
      storeFn,
      floatEq,
      ...lbDeps,
    ],
    enables: p.subgroups && p.phase === 'chained' ? ['subgroups'] : [],
    workgroupBytes: 8 + (sgRows || sgc ? (w / Math.min(p.minSubgroupSize, w)) * c.bytes : 0),
    code: `${decls}
var<workgroup> scn_tile: u32;
${sgRows || sgc ? `var<workgroup> scn_sga: array<${V}, ${w / Math.min(p.minSubgroupSize, w)}>;` : ''}
${vecKeys ? `fn scn_key(i: u32) -> ${byKey.keyType} { return st_v[i >> 2u][i & 3u]; }` : ''}
${sgRows ? SCN_TOP_LANE : ''}
${carryFn}${stores}
${helpers}

@compute @workgroup_size(${w}) fn main(${entryParams(p.subgroups)}) {
${entryPrologue(p.subgroups)}
  ${declared.map((d) => `_ = &${d};`).join(' ')}
  if (wg_index >= prm.num_tiles) { return; }
${tileAcquire}
  let full = (tile + 1u) * ${tile}u <= prm.n;
  ${loadLines.join('\n  ')}
  ${foldLines.join('\n  ')}
${body}
}`,
  });
}

/** The highest lane set in a ballot mask (0 when none): a segment's first lane in scans by key. */
const SCN_TOP_LANE = `fn scn_top_lane(m: vec4<u32>) -> u32 {
  var s = select(0u, firstLeadingBit(m.x), m.x != 0u);
  s = select(s, 32u + firstLeadingBit(m.y), m.y != 0u);
  s = select(s, 64u + firstLeadingBit(m.z), m.z != 0u);
  return select(s, 96u + firstLeadingBit(m.w), m.w != 0u);
}`;

/** The spine's workgroup scan parameters (the spine is one workgroup running that scan). */
export type SpineKernelParams = Required<WorkgroupParams>;

/** SCN's variant of the spine. */
export const SPINE_USE = { sums: true } as const;

/**
 * Builds pass 2 of reduce-then-scan: one workgroup turns `sums[tile_offset .. + num_tiles)` into
 * exclusive prefixes that include the segment's carry-in, and writes the segment's carry out.
 * Bindings (SCN): params, sums, ctrl. Needs: one workgroup exclusive scan; 4 sums per thread per step.
 */
export function spineKernel(p: SpineKernelParams): WgslFragment {
  const w = p.workgroupSize;
  const c = p.combiner;
  const V = c.wgslType;
  const comb = c.combine.name;
  const id = c.identity;
  const scan = workgroupExclusiveScan(p);
  const name = mangle('scn_spine', c.name, w, p.subgroups ? `sg${p.minSubgroupSize}` : 'wg');
  return fragment({
    name,
    deps: [threadIds(p.subgroups), c.combine, scan],
    code: `${SCN.wgsl(SPINE_USE)}
@compute @workgroup_size(${w}) fn main(${entryParams(p.subgroups)}) {
${entryPrologue(p.subgroups)}
  var run = ${id};
  if (prm.first_seg != 0u) { run = bitcast<${V}>(prm.init); }
  else { run = bitcast<${V}>(atomicLoad(&ctrl[prm.num_segs + prm.seg - 1u])); }
  for (var base = 0u; base < prm.num_tiles; base += ${4 * w}u) {
    let j0 = base + ids.lid * 4u;
    var s: array<${V}, 4>;
    for (var q = 0u; q < 4u; q++) {
      s[q] = ${id};
      if (j0 + q < prm.num_tiles) { s[q] = bitcast<${V}>(sums[prm.tile_offset + j0 + q]); }
    }
    let acc = ${comb}(${comb}(s[0], s[1]), ${comb}(s[2], s[3]));
    var total: ${V};
    let tp = ${scan.name}(acc, ids, &total);
    var r = ${comb}(run, tp);
    for (var q = 0u; q < 4u; q++) {
      if (j0 + q < prm.num_tiles) { sums[prm.tile_offset + j0 + q] = bitcast<u32>(r); }
      r = ${comb}(r, s[q]);
    }
    run = ${comb}(run, total);
  }
  if (ids.lid == 0u) { atomicStore(&ctrl[prm.num_segs + prm.seg], bitcast<u32>(run)); }
}`,
  });
}

/** How `finishKernel` copies a compaction result back. */
export type FinishMode = 'prefix' | 'all' | 'stable-partition';

/** The finish kernel's interface: ctrl (read), src and dst of the kernel's element type. */
export const SCN_FINISH = kernelInterface({
  name: 'scan finish',
  params: {
    struct: 'ScnFinish',
    name: 'prm',
    binding: 0,
    fields: { n: 'u32', count_slot: 'u32', src_base: 'u32', dst_base: 'u32', cap: 'u32' },
  },
  bindings: {
    ctrl: { binding: 1, access: 'read', type: 'u32' },
    src: { binding: 2, access: 'read' },
    dst: { binding: 3, access: 'read_write' },
  },
});

/**
 * Builds the copy-back of a compaction computed into a temporary (`src`, bound whole) into its
 * destination (`dst`): 'prefix' copies the `count` kept elements when count <= cap (else nothing, so
 * an output too short is left untouched); 'all' copies all n; 'stable-partition' copies the kept
 * elements and reverses the rejected ones (written from the end) back into input order.
 * Bindings (SCN_FINISH): params, ctrl (read), src (read), dst (read_write). One element per thread,
 * `threads` per workgroup (256; fewer on devices that allow fewer).
 */
export function finishKernel(type: NumericType, mode: FinishMode, threads = 256): WgslFragment {
  const name = mangle('scn_finish', type, mode, threads);
  const copy =
    mode === 'prefix'
      ? `if (count <= prm.cap && i < count) { dst[prm.dst_base + i] = src[prm.src_base + i]; }`
      : mode === 'all'
        ? `dst[prm.dst_base + i] = src[prm.src_base + i];`
        : `let at = select(prm.n - 1u - (i - count), i, i < count);
  dst[prm.dst_base + i] = src[prm.src_base + at];`;
  return fragment({
    name,
    deps: [threadIds(false)],
    code: `${SCN_FINISH.wgsl({}, { src: type, dst: type })}
@compute @workgroup_size(${threads}) fn main(${entryParams(false)}) {
${entryPrologue(false)}
  let i = wg_index * ${threads}u + ids.lid;
  if (i >= prm.n) { return; }
  let count = ctrl[prm.count_slot];
  ${copy}
}`,
  });
}
