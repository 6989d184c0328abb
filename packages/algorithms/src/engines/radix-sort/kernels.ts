/**
 * WGSL kernels of the OneSweep radix sort (8-bit digits, 4 digit passes over 32-bit key bits):
 *
 *  - histogramKernel: all four digit histograms in one read of the keys.
 *  - planKernel: scans the histograms into global digit offsets, marks the passes whose digit is
 *    the same for every key, and writes the indirect dispatch arguments of the passes (so skipped
 *    passes launch nothing and the ping-pong direction is decided on the device).
 *  - onesweepKernel: one digit pass: rank a tile, decoupled look-back with fallback, scatter.
 *  - copyKernel: moves the result back into the caller's buffer after an odd number of passes.
 *  - singleWorkgroupKernel: sorts up to one tile entirely in workgroup memory.
 *
 * Every buffer holds keys and values as raw u32 bits; digits come from the order-preserving key
 * bits, with the key type and order a uniform (`key_mode`, see keyMode), so one pipeline serves
 * every key type and order.
 */
import {
  combinerOf,
  entryParams,
  entryPrologue,
  fragment,
  kernelInterface,
  loadStaged,
  loadStriped,
  mangle,
  plus,
  slotLookback,
  threadIds,
  unrolled,
  type WgslFragment,
  workgroupExclusiveScan,
  workgroupFootprint,
} from '@webdpl/core';
import { runtimeKeyBitsFragment } from './key-bits';

/**
 * Words of the meta buffer: 4 histograms, 4 offset tables, 4 tile tickets, and per pass which of the
 * two look-back tables it uses (running passes alternate, so no pass needs a cleared table between
 * passes: each tile of a pass clears its slots of the other table for the next running pass).
 */
export const META_HIST = 0;
export const META_OFFSETS = 1024;
export const META_TICKETS = 2048;
export const META_TABLES = 2052;
export const META_WORDS = 2056;
/** u32 words of the indirect-arguments buffer: 4 passes x 2 directions x 3, then the copy's 3. */
export const INDIRECT_WORDS = 27;
/** Threads of the copy kernel and elements each moves. */
export const COPY_THREADS = 256;
export const COPY_PER_THREAD = 4;

/** The digit pass's interface (onesweepKernel); the values' bindings when sorting pairs. */
export const RS_PASS = kernelInterface({
  name: 'radix-sort digit pass',
  params: {
    struct: 'RsParams',
    name: 'rs_params',
    binding: 0,
    fields: { n: 'u32', tiles: 'u32', pass_index: 'u32', key_mode: 'u32', spins: 'u32', force_fallback: 'u32' },
  },
  bindings: {
    keys_in: { binding: 1, access: 'read', type: 'u32' },
    keys_out: { binding: 2, access: 'read_write', type: 'u32' },
    rs_meta: { binding: 3, access: 'read_write', type: 'u32', form: 'atomic' },
    rs_lookback: { binding: 4, access: 'read_write', type: 'u32', form: 'atomic' },
    vals_in: { binding: 5, access: 'read', type: 'u32', optional: true },
    vals_out: { binding: 6, access: 'read_write', type: 'u32', optional: true },
  },
});
/** RS_PASS's and RS_COPY's variant with values. */
export const RS_PASS_VALUES = { vals_in: true, vals_out: true } as const;

/** The single-workgroup sort's interface (sorts in place). */
export const RS_SINGLE = kernelInterface({
  name: 'radix-sort single workgroup',
  params: { struct: 'RsSingleParams', name: 'rs_params', binding: 0, fields: { n: 'u32', key_mode: 'u32' } },
  bindings: {
    keys_io: { binding: 1, access: 'read_write', type: 'u32' },
    vals_io: { binding: 2, access: 'read_write', type: 'u32', optional: true },
  },
});
export const RS_SINGLE_VALUES = { vals_io: true } as const;

/** The histogram kernel's interface. */
export const RS_HIST = kernelInterface({
  name: 'radix-sort histogram',
  params: {
    struct: 'RsHistParams',
    name: 'rs_params',
    binding: 0,
    fields: { n: 'u32', tiles: 'u32', tiles_per_wg: 'u32', key_mode: 'u32' },
  },
  bindings: {
    keys_in: { binding: 1, access: 'read', type: 'u32' },
    rs_meta: { binding: 2, access: 'read_write', type: 'u32', form: 'atomic' },
  },
});

/** The plan kernel's interface. */
export const RS_PLAN = kernelInterface({
  name: 'radix-sort plan',
  params: {
    struct: 'RsPlanParams',
    name: 'rs_params',
    binding: 0,
    fields: { n: 'u32', grid_x: 'u32', grid_y: 'u32', copy_x: 'u32', copy_y: 'u32' },
  },
  bindings: {
    rs_meta: { binding: 1, access: 'read_write', type: 'u32', form: 'atomic' },
    rs_indirect: { binding: 2, access: 'read_write', type: 'u32' },
  },
});

/** The copy kernel's interface. */
export const RS_COPY = kernelInterface({
  name: 'radix-sort copy',
  params: { struct: 'RsCopyParams', name: 'rs_params', binding: 0, fields: { n: 'u32' } },
  bindings: {
    src_keys: { binding: 1, access: 'read', type: 'u32' },
    dst_keys: { binding: 2, access: 'read_write', type: 'u32' },
    src_vals: { binding: 3, access: 'read', type: 'u32', optional: true },
    dst_vals: { binding: 4, access: 'read_write', type: 'u32', optional: true },
  },
});
export const RS_COPY_VALUES = { src_vals: true, dst_vals: true } as const;

/** What the tile-level kernels (digit pass, single workgroup) are generated from. */
export interface TileParams {
  readonly hasValues: boolean;
  /** Threads per workgroup (power of two, 32..1024). */
  readonly workgroupSize: number;
  readonly keysPerThread: number;
  /** Ballot-based ranking (needs the subgroups feature and workgroupSize >= maxSubgroupSize). */
  readonly subgroups: boolean;
  readonly minSubgroupSize: number;
  readonly maxSubgroupSize: number;
}

export interface PassParams extends TileParams {
  /**
   * Rounds of the scatter (1 or 2; 2 only with the subgroup ranking): the stage holds the keys of
   * ranks [0, H) and scatters them, then those of [H, tile), so it needs half the tile's words
   * (H = ceil(K/2) x W, at least the ranking's counters). Workgroup memory decides how many tiles
   * an SM holds (radixSortTuning).
   */
  readonly scatterRounds: number;
  /** Predecessor slots each look-back step loads at once. */
  readonly lookbackWindow: number;
  /**
   * Count the tile's digits with workgroup atomics right after loading and publish them before
   * ranking (CUB's early counts), so successors' look-backs rarely find this tile not ready.
   */
  readonly earlyCounts: boolean;
  /**
   * Tile ids from an atomic ticket per pass (in the order workgroups start); false takes the
   * workgroup index and relies on the look-back fallback wherever workgroups start out of order.
   */
  readonly atomicTileIds: boolean;
  /**
   * The key mode (keyMode) compiled in as a constant (a pipeline per key type and order), or
   * undefined: read from the uniform (one pipeline for every mode).
   */
  readonly staticKeyMode?: number;
  /** Diagnostics: words of unused (but declared and touched) workgroup memory. */
  readonly padWords?: number;
}

function tileKey(p: TileParams): (string | number | boolean)[] {
  return [
    p.hasValues ? 'kv' : 'k',
    p.workgroupSize,
    p.keysPerThread,
    p.subgroups ? `sg${p.minSubgroupSize}_${p.maxSubgroupSize}` : 'wg',
  ];
}

/** What tileCommon() gives the tile kernels. */
interface TileCode {
  /** Module-scope declarations and helper functions. */
  readonly code: string;
  readonly deps: WgslFragment[];
  readonly bytes: number;
  /** Declares `rs_p0` and `rs_q(j)`-style positions; put once near the top of `main`. */
  readonly positions: string;
  /** WGSL giving a WGSL expression of the tile position of the thread's j-th element. */
  readonly pos: (j: number) => string;
  /**
   * Statements ranking `k0..k{K-1}` by the digit at `shift` into `r0..r{K-1}` (declared by the
   * caller as vars), filling rs_dig (digit counts) and rs_dstart. Uses `valid`, `shift`, `ids`. A block: it may
   * sit in a loop.
   */
  readonly rank: string;
}

/**
 * Declarations shared by the tile kernels: constants, the tile's workgroup memory (stage, per-digit
 * scratch, digit starts), `rs_scan_digits`, and the ranking of a tile by one digit for either
 * variant, as unrolled statements over named registers (k{j} keys, r{j} ranks): private arrays
 * indexed in loops live in local memory on NVIDIA (measured on the H100 for the scan engine).
 * Workgroup memory is kept small on purpose: it decides how many tiles an SM runs at once, which
 * bounds the digit pass on the H100 (docs/benchmarks/sort-gpu.md).
 *
 * Ranking, subgroup variant (CUB's match-any ranking): keys are warp-striped (position
 * sg_id*sg_size*K + j*sg_size + lane); per key, 8 ballots find the lanes holding the same digit;
 * they all read the subgroup's counter of that digit and the lowest of them advances it by their
 * count. The counters (256 per subgroup, in the stage's memory before the keys move in) are then
 * scanned per digit across subgroups. Between the two steps a key's register holds its subgroup
 * rank and digit packed (rank << 8 | digit): one register per key, not two (1% off the sort at
 * 2^28 on the H100). Workgroup memory: max(stageKeys, (W/minSubgroupSize)*256) words for both,
 * stageKeys the tile or, with a two-round scatter, half of it. ~8 ballots per key.
 *
 * Ranking, workgroup-memory variant: keys are blocked (position lid*K + j); two stable 4-bit
 * counting passes (CUB's BlockRadixRank): per-thread packed 16-bit counters for 16 nibble values
 * (8 words per thread), a raked workgroup scan of all counters, and a permutation of
 * (position, digit) pairs through workgroup memory between the two nibbles. Workgroup memory:
 * 8*W words. ~2 workgroup scans and 10 barriers per digit.
 */
function tileCommon(p: TileParams, stageKeys = p.workgroupSize * p.keysPerThread, staticMode?: number): TileCode {
  const keyBits = runtimeKeyBitsFragment();
  const w = p.workgroupSize;
  const k = p.keysPerThread;
  const tile = w * k;
  const dpt = Math.max(1, Math.ceil(256 / w));
  const minSg = Math.max(1, p.minSubgroupSize);
  const scan = workgroupExclusiveScan({
    combiner: combinerOf(plus, 'u32'),
    workgroupSize: w,
    subgroups: p.subgroups,
    minSubgroupSize: minSg,
  });
  const kb = keyBits.name;
  const ns = Math.max(1, Math.floor(w / minSg));
  const stageWords = p.subgroups ? Math.max(stageKeys, ns * 256) : tile;
  const head = `const RS_W: u32 = ${w}u;
const RS_K: u32 = ${k}u;
const RS_TILE: u32 = ${tile}u;
const RS_DPT: u32 = ${dpt}u;
/** The tile stage; the subgroup ranking keeps its digit counters here too (before the keys move in). */
var<workgroup> rs_stage: array<atomic<u32>, ${stageWords}>;
fn rs_put(i: u32, v: u32) { atomicStore(&rs_stage[i], v); }
fn rs_get(i: u32) -> u32 { return atomicLoad(&rs_stage[i]); }
/**
 * Per-digit scratch, one array for three phases (workgroup memory bounds how many tiles an SM
 * holds): the tile's digit counts (ranking to publication), then the look-back fallback's
 * histogram, then each digit's global base (scatter).
 */
var<workgroup> rs_dig: array<atomic<u32>, 256>;
var<workgroup> rs_dstart: array<u32, 256>;

${
  staticMode === undefined
    ? `/** The key mode (keyMode()); every entry point sets it from its uniform first. */
var<private> rs_mode: u32;`
    : `/** The key mode (keyMode()), compiled in. */
const rs_mode: u32 = ${staticMode}u;`
}
fn rs_bits(k: u32) -> u32 { return ${kb}(k, rs_mode); }
fn rs_digit(k: u32, shift: u32) -> u32 { return (rs_bits(k) >> shift) & 255u; }

/** rs_dstart = exclusive scan of the counts in rs_dig. Thread t owns digits [t*DPT, t*DPT + DPT). */
fn rs_scan_digits(ids: WdplIds) {
  workgroupBarrier();
  let d0 = ids.lid * RS_DPT;
  var s = 0u;
  ${unrolled(dpt, (i) => `let c${i} = select(0u, atomicLoad(&rs_dig[min(d0 + ${i}u, 255u)]), d0 + ${i}u < 256u);\n  let l${i} = s;\n  s += c${i};`)}
  var total: u32;
  let ex = ${scan.name}(s, ids, &total);
  ${unrolled(dpt, (i) => `if (d0 + ${i}u < 256u) { rs_dstart[d0 + ${i}u] = ex + l${i}; }`)}
  workgroupBarrier();
}
`;
  if (p.subgroups) {
    const wide = p.maxSubgroupSize > 32;
    const ballot = (e: string) => (wide ? `subgroupBallot(${e})` : `subgroupBallot(${e}).x`);
    const mask = wide ? 'vec4<u32>' : 'u32';
    const helpers = wide
      ? `fn rs_lt_word(i: u32, w: u32, b: u32) -> u32 { return select(select(0u, b, i == w), 0xffffffffu, i < w); }
fn rs_lt_mask(lane: u32) -> vec4<u32> {
  let w = lane >> 5u;
  let b = (1u << (lane & 31u)) - 1u;
  return vec4<u32>(rs_lt_word(0u, w, b), rs_lt_word(1u, w, b), rs_lt_word(2u, w, b), rs_lt_word(3u, w, b));
}
fn rs_popc(v: vec4<u32>) -> u32 { return dot(countOneBits(v), vec4<u32>(1u)); }
fn rs_first_lane(v: vec4<u32>) -> u32 {
  if (v.x != 0u) { return countTrailingZeros(v.x); }
  if (v.y != 0u) { return 32u + countTrailingZeros(v.y); }
  if (v.z != 0u) { return 64u + countTrailingZeros(v.z); }
  return 96u + countTrailingZeros(v.w);
}`
      : `fn rs_lt_mask(lane: u32) -> u32 { return (1u << lane) - 1u; }
fn rs_popc(v: u32) -> u32 { return countOneBits(v); }
fn rs_first_lane(v: u32) -> u32 { return countTrailingZeros(v); }`;
    const code = `${head}
const RS_NS: u32 = ${ns}u;
${helpers}

/**
 * Rank of digit \`d\` among the subgroup's lanes below this one, plus the count of \`d\` in earlier
 * keys of this subgroup: its counter at \`cbase + d\`, which every lane of \`d\` reads and then
 * the lowest of them advances. The counters are the subgroup's own and the lanes writing in one
 * step hold distinct digits, so a load and a store replace an atomic add and a shuffle (workgroup
 * atomics cost ~2 ms per pass at 2^28 keys on the H100); the load of the next key comes after the
 * store in every invocation's program order.
 */
fn rs_match_rank(d: u32, lanes_all: ${mask}, lt: ${mask}, cbase: u32) -> u32 {
  // Lanes whose digit equals d: per bit, the lanes agreeing with d's bit (ballot, or its complement).
  var peers = lanes_all;
  ${unrolled(8, (b) => `peers &= ${ballot(`((d >> ${b}u) & 1u) != 0u`)} ^ ${mask}(((d >> ${b}u) & 1u) - 1u);`)}
  let below = rs_popc(peers & lt);
  let before = atomicLoad(&rs_stage[cbase + d]);
  if (below == 0u) { atomicStore(&rs_stage[cbase + d], before + rs_popc(peers)); }
  return before + below;
}

/** Turns the subgroups' digit counters into per-subgroup starts; fills rs_dig (counts), rs_dstart. */
fn rs_scan_counters(ids: WdplIds) {
  workgroupBarrier();
  let nsg = RS_W / ids.sg_size;
  for (var d = ids.lid; d < 256u; d += RS_W) {
    var run = 0u;
    for (var s = 0u; s < nsg; s++) {
      let c = atomicLoad(&rs_stage[s * 256u + d]);
      atomicStore(&rs_stage[s * 256u + d], run);
      run += c;
    }
    atomicStore(&rs_dig[d], run);
  }
  rs_scan_digits(ids);
}

/** The tile rank of a key with digit \`d\` whose subgroup rank is \`r\`. */
fn rs_tile_rank(d: u32, r: u32, cbase: u32) -> u32 {
  return r + rs_dstart[d] + atomicLoad(&rs_stage[cbase + d]);
}
`;
    const rank = `{
    workgroupBarrier();
    for (var i = ids.lid; i < RS_NS * 256u; i += RS_W) { atomicStore(&rs_stage[i], 0u); }
    workgroupBarrier();
    let lt = rs_lt_mask(ids.lane);
    let lanes_all = ${ballot('true')};
    let cbase = ids.sg_id * 256u;
    ${unrolled(k, (j) => `let d${j} = select(255u, rs_digit(k${j}, shift), rs_p0 + ${j}u * ids.sg_size < valid);`, '\n    ')}
    ${unrolled(k, (j) => `r${j} = (rs_match_rank(d${j}, lanes_all, lt, cbase) << 8u) | d${j};`, '\n    ')}
    rs_scan_counters(ids);
    ${unrolled(k, (j) => `r${j} = rs_tile_rank(r${j} & 255u, r${j} >> 8u, cbase);`, '\n    ')}
  }`;
    return {
      code,
      deps: [threadIds(true), keyBits, scan],
      bytes: 4 * (stageWords + 256 * 2),
      positions: 'let rs_p0 = ids.sg_id * RS_K * ids.sg_size + ids.lane;',
      pos: (j) => `rs_p0 + ${j}u * ids.sg_size`,
      rank,
    };
  }
  const code = `${head}
var<workgroup> rs_nib: array<u32, ${8 * w}>;

/** Exclusive scan of all threads' 8 packed nibble counters in place; returns the low half's total. */
fn rs_scan_nibbles(ids: WdplIds) -> u32 {
  workgroupBarrier();
  var s = 0u;
  for (var c = 0u; c < 8u; c++) { s += rs_nib[8u * ids.lid + c]; }
  var total: u32;
  var run = ${scan.name}(s, ids, &total);
  for (var c = 0u; c < 8u; c++) {
    let v = rs_nib[8u * ids.lid + c];
    rs_nib[8u * ids.lid + c] = run;
    run += v;
  }
  workgroupBarrier();
  return total & 0xffffu;
}

/** Counts nibble \`nib\` in this thread's packed counter; returns the count before. */
fn rs_count_nibble(nib: u32, lid: u32) -> u32 {
  let idx = (nib & 7u) * RS_W + lid;
  let sh = (nib >> 3u) * 16u;
  let before = (rs_nib[idx] >> sh) & 0xffffu;
  rs_nib[idx] += 1u << sh;
  return before;
}

/** Tile rank of nibble \`nib\` counted \`before\` earlier in this thread, after rs_scan_nibbles. */
fn rs_nibble_rank(nib: u32, before: u32, carry: u32, lid: u32) -> u32 {
  let idx = (nib & 7u) * RS_W + lid;
  let sh = (nib >> 3u) * 16u;
  return ((rs_nib[idx] >> sh) & 0xffffu) + select(0u, carry, sh != 0u) + before;
}
`;
  const nibblePass = (q: number) => `{
      workgroupBarrier();
      for (var c = 0u; c < 8u; c++) { rs_nib[c * RS_W + ids.lid] = 0u; }
      ${unrolled(k, (j) => `let lr${j} = rs_count_nibble(((e${j} & 255u) >> ${q * 4}u) & 15u, ids.lid);`, '\n      ')}
      let carry = rs_scan_nibbles(ids);
      ${unrolled(k, (j) => `let rr${j} = rs_nibble_rank(((e${j} & 255u) >> ${q * 4}u) & 15u, lr${j}, carry, ids.lid);`, '\n      ')}
      ${
        q === 0
          ? `${unrolled(k, (j) => `rs_put(rr${j}, e${j});`, '\n      ')}
      workgroupBarrier();
      ${unrolled(k, (j) => `e${j} = rs_get(rs_p0 + ${j}u);`, '\n      ')}`
          : `${unrolled(k, (j) => `rs_put(e${j} >> 8u, rr${j});`, '\n      ')}
      workgroupBarrier();
      ${unrolled(k, (j) => `r${j} = rs_get(rs_p0 + ${j}u);`, '\n      ')}`
      }
    }`;
  const rank = `{
    for (var d = ids.lid; d < 256u; d += RS_W) { atomicStore(&rs_dig[d], 0u); }
    workgroupBarrier();
    ${unrolled(k, (j) => `var e${j} = ((rs_p0 + ${j}u) << 8u) | select(255u, rs_digit(k${j}, shift), rs_p0 + ${j}u < valid);`, '\n    ')}
    ${unrolled(k, (j) => `atomicAdd(&rs_dig[e${j} & 255u], 1u);`, '\n    ')}
    ${nibblePass(0)}
    ${nibblePass(1)}
    rs_scan_digits(ids);
  }`;
  return {
    code,
    deps: [threadIds(false), keyBits, scan],
    bytes: 4 * (tile + 256 * 2) + 8 * w * 4,
    positions: 'let rs_p0 = ids.lid * RS_K;',
    pos: (j) => `rs_p0 + ${j}u`,
    rank,
  };
}

/**
 * WGSL declaring `${v}0..${v}{K-1}` as the thread's K elements of `buf` (tile at `base`, `valid` of
 * them; `fill` past the end). Full tiles load without bounds checks, every load issued before use.
 */
function loadTile(p: TileParams, tc: TileCode, buf: string, v: string, fill: string): string {
  const load = {
    items: p.keysPerThread,
    reg: (j: number) => `${v}${j}`,
    fill,
    array: buf,
    base: 'base',
    pos: tc.pos,
    valid: 'valid',
  };
  // Striped positions (subgroup ranking) load straight into registers; blocked ones are read
  // striped (coalesced) through the stage, then read back blocked.
  return p.subgroups
    ? loadStriped({ ...load, full: 'valid == RS_TILE' })
    : loadStaged({ ...load, threads: 'RS_W', perThread: 'RS_K', put: 'rs_put', get: 'rs_get' });
}

/**
 * Workgroup bytes of the radix sort's tile kernels for `p`: those of the digit pass, which holds
 * everything the single-workgroup sort holds and more (measured on the fragments themselves). The
 * subgroup ranking's counters take (workgroupSize / minSubgroupSize) x 256 words, so narrow
 * subgroups (SwiftShader's 4 lanes) need narrow workgroups; the workgroup-memory ranking takes
 * 8 words per thread besides the tile.
 */
export function radixTileFootprint(p: PassParams): number {
  return workgroupFootprint(onesweepKernel(p));
}

/**
 * One digit pass of the OneSweep sort: `@workgroup_size(W)`, one tile of W*K keys per workgroup,
 * tile ids from an atomic ticket (earlier tiles start first). The workgroup ranks its keys by the
 * pass's digit, publishes its digit counts (AGGREGATE) to the look-back table, walks back over its
 * predecessors until each digit meets an INCLUSIVE prefix, publishes its own, then scatters keys (and
 * values) through workgroup memory so global writes of a digit run are contiguous.
 *
 * The look-back is core's `slotLookback` (wgsl/tile.ts, the protocol shared with the scan engine):
 * slots pack a 2-bit flag (NOT_READY 0, AGGREGATE 1, PREFIX 2) with a 30-bit count, so n < 2^30. Fallback: a predecessor slot still NOT_READY after `lookbackSpins` polls is computed by
 * the whole workgroup from that tile's keys (and published with atomicMax, which never lowers a
 * flag), so the pass finishes on devices without forward-progress guarantees.
 *
 * Two look-back tables alternate between running passes (META_TABLES): each tile also clears its
 * own slots of the other table for the next running pass, so no clear runs between passes.
 *
 * The spin budget and a test switch forcing the fallback everywhere are uniforms.
 * Bindings (RS_PASS): the uniform {n, tiles, pass, key mode, spins, force}, keys in and out, meta
 * (histograms, offsets, tickets, table choice), look-back (two tables), values in and out.
 * Workgroup memory: the stage (max(tile, ranking counters)) + 2 KiB + a few words (+1 KiB with early
 * counts). Traffic per pass: keys (and values) read once and written once, plus 2 KiB of look-back
 * per tile (its slots, and clearing the next table's).
 */
export function onesweepKernel(p: PassParams): WgslFragment {
  const k = p.keysPerThread;
  // Scatter rounds: keys of stage ranks [0, k0 * W) first, then the rest (k0 = k: one round).
  const rounds = p.subgroups && p.scatterRounds === 2 && k > 1 ? 2 : 1;
  const k0 = rounds === 2 ? Math.ceil(k / 2) : k;
  const tc = tileCommon(p, k0 * p.workgroupSize, p.staticKeyMode);
  const dpt = Math.max(1, Math.ceil(256 / p.workgroupSize));
  const win = p.lookbackWindow;
  const pad = p.padWords ?? 0;
  const name = mangle(
    'rs_onesweep',
    ...tileKey(p),
    win,
    p.earlyCounts ? 'ec' : 'lc',
    p.atomicTileIds ? 'atomic' : 'wgid',
    `r${rounds}`,
    ...(p.staticKeyMode === undefined ? [] : [`m${p.staticKeyMode}`]),
    ...(pad > 0 ? [`pad${pad}`] : []),
  );
  const full = (m: number) => `${m}u * RS_W + ids.lid`;
  // Round q stages the keys (or values) whose tile rank falls in its range, then writes its
  // positions m in [from, to) (stage index m - from) with \`write(m, stage index)\`.
  const ranges: [number, number][] =
    rounds === 2
      ? [
          [0, k0],
          [k0, k],
        ]
      : [[0, k]];
  const stageRound = (q: number, v: string) =>
    rounds === 1
      ? unrolled(k, (j) => `rs_put(r${j}, ${v}${j});`)
      : unrolled(k, (j) =>
          q === 0
            ? `if (r${j} < RS_H) { rs_put(r${j}, ${v}${j}); }`
            : `if (r${j} >= RS_H) { rs_put(r${j} - RS_H, ${v}${j}); }`,
        );
  const writeRound = (q: number, write: (m: number, at: string) => string) => {
    const [from, to] = ranges[q] as [number, number];
    const ms = Array.from({ length: to - from }, (_, i) => from + i);
    return `if (valid == RS_TILE) {
    ${ms.map((m) => write(m, full(m - from))).join('\n    ')}
  } else {
    ${ms.map((m) => `if (${full(m)} < valid) { ${write(m, full(m - from))} }`).join('\n    ')}
  }`;
  };
  // Rounds after the first stage their share once the previous round has read the stage.
  const laterRounds = (v: string, write: (m: number, at: string) => string) =>
    ranges
      .slice(1)
      .map(
        (_, i) => `workgroupBarrier();
  ${stageRound(i + 1, v)}
  workgroupBarrier();
  ${writeRound(i + 1, write)}`,
      )
      .join('\n  ');
  const keyWrite = (m: number, at: string) =>
    `{ let s = rs_get(${at}); o${m} = atomicLoad(&rs_dig[rs_digit(s, shift)]) + ${full(m)}; keys_out[o${m}] = s; }`;
  const valueWrite = (m: number, at: string) => `vals_out[o${m}] = rs_get(${at});`;
  // Values load before the look-back (their latency overlaps it) where loads go straight to
  // registers; the workgroup-memory variant loads through the stage, so after the keys left it.
  const loadValues = p.hasValues ? loadTile(p, tc, 'vals_in', 'v', '0u') : '';
  const scatterValues = p.hasValues
    ? `${p.subgroups ? '' : loadValues}
  workgroupBarrier();
  ${stageRound(0, 'v')}
  workgroupBarrier();
  ${writeRound(0, valueWrite)}
  ${laterRounds('v', valueWrite)}`
    : '';
  // The tile's digit counts: early (workgroup atomics over the loaded keys) or from the ranking.
  const early = `${unrolled(k, (j) => `if (${tc.pos(j)} < valid) { atomicAdd(&rs_early[rs_digit(k${j}, shift)], 1u); }`)}
  workgroupBarrier();`;
  const count = (d: string) =>
    p.earlyCounts
      ? `atomicLoad(&rs_early[${d}])`
      : `atomicLoad(&rs_dig[${d}]) - select(0u, RS_TILE - valid, ${d} == 255u)`;
  // The look-back over the digit slots (d = lid*DPT + i): tile 0 publishes inclusive prefixes at
  // once (from the pass's global digit offsets), each tile clears its slots of the other table.
  const lb = slotLookback({
    prefix: 'rs',
    state: 'rs_lookback',
    base: 'lb',
    slots: 256,
    perThread: dpt,
    firstSlot: 'ids.lid * RS_DPT',
    tile: 'tile',
    window: win,
    count,
    carry: (d) => `atomicLoad(&rs_meta[offsets + ${d}])`,
    afterPublish: (d) => `atomicStore(&rs_lookback[lb_next + tile * 256u + ${d}], 0u);`,
    spins: 'rs_params.spins',
    force: 'rs_params.force_fallback != 0u',
    fallback: {
      comment: 'count the digits of tile `fb` from its keys.',
      statements: `for (var d = ids.lid; d < 256u; d += RS_W) { atomicStore(&rs_dig[d], 0u); }
    workgroupBarrier();
    let fbase = fb * RS_TILE;
    for (var q = ids.lid; q < RS_TILE; q += RS_W) {
      if (fbase + q < n) { atomicAdd(&rs_dig[rs_digit(keys_in[fbase + q], shift)], 1u); }
    }
    workgroupBarrier();`,
      count: (d) => `atomicLoad(&rs_dig[${d}])`,
    },
    finish: (i) => `atomicStore(&rs_dig[d], acc${i} - rs_dstart[d]);`,
  });
  const code = `${tc.code}
${RS_PASS.wgsl(p.hasValues ? RS_PASS_VALUES : {})}
${lb.flags}
${p.atomicTileIds ? 'var<workgroup> rs_tile_id: u32;' : ''}
${lb.stuck}
${p.earlyCounts ? 'var<workgroup> rs_early: array<atomic<u32>, 256>;' : ''}
${rounds === 2 ? `const RS_H: u32 = ${k0 * p.workgroupSize}u;` : ''}
${pad > 0 ? `var<workgroup> rs_pad: array<u32, ${pad}>;` : ''}

@compute @workgroup_size(${p.workgroupSize})
fn main(${entryParams(p.subgroups)}) {
${entryPrologue(p.subgroups)}
  ${p.staticKeyMode === undefined ? 'rs_mode = rs_params.key_mode;' : ''}
  ${
    pad > 0
      ? `// Diagnostics: touched under a condition never true (the flag is 0 or 1), so it stays declared.
  if (rs_params.force_fallback == 7u) { rs_pad[ids.lid % ${pad}u] = ids.lid; }`
      : ''
  }
  let pass_index = rs_params.pass_index;
  ${
    p.atomicTileIds
      ? `if (ids.lid == 0u) { rs_tile_id = atomicAdd(&rs_meta[${META_TICKETS}u + pass_index], 1u); }
  let tile = workgroupUniformLoad(&rs_tile_id);`
      : 'let tile = wg_index;'
  }
  if (tile >= rs_params.tiles) { return; }
  let n = rs_params.n;
  let base = tile * RS_TILE;
  let valid = min(RS_TILE, n - base);
  let shift = pass_index * 8u;
  let offsets = ${META_OFFSETS}u + pass_index * 256u;
  // This pass's look-back table, and the other one (cleared here for the next running pass).
  let lb = atomicLoad(&rs_meta[${META_TABLES}u + pass_index]) * rs_params.tiles * 256u;
  let lb_next = rs_params.tiles * 256u - lb;
  ${tc.positions}
  ${loadTile(p, tc, 'keys_in', 'k', '0xffffffffu')}
  ${unrolled(k, (j) => `var r${j} = 0u;`)}
  ${p.earlyCounts ? `${early}\n  ${lb.publish}\n  ${tc.rank}` : `${tc.rank}\n  ${lb.publish}`}

  // Stage the keys in tile-rank order (the first round's ranks) and load values while predecessors
  // finish.
  workgroupBarrier();
  ${stageRound(0, 'k')}
  ${p.subgroups ? loadValues : ''}

  // Decoupled look-back with fallback. Each thread walks back over its digits' slots on its own
  // (no barriers) until it meets an INCLUSIVE prefix, adding AGGREGATEs on the way. A slot still
  // NOT_READY after the spin budget leaves its thread stuck there; then the workgroup counts the
  // digits of the nearest stuck tile from its keys (publishing them for everyone), the threads stuck
  // there take the counts, and every unfinished thread walks on. Each round unsticks at least one
  // thread, so the loop ends even if a predecessor never runs.
  ${lb.walk}

  ${lb.finish}

  // Scatter: position i of the stage holds the key of tile rank i (minus the round's start), so a
  // digit's run is contiguous.
  workgroupBarrier();
  ${unrolled(k, (m) => `var o${m} = 0u;`)}
  ${writeRound(0, keyWrite)}
  ${laterRounds('k', keyWrite)}
  ${scatterValues}
}`;
  return fragment({
    name,
    code,
    deps: tc.deps,
    workgroupBytes: tc.bytes + 4 * ((p.atomicTileIds ? 2 : 1) + (p.earlyCounts ? 256 : 0) + pad),
  });
}

/**
 * Sorts up to one tile (W*K keys, with values) in one workgroup: load, then per digit whose value
 * differs between keys (an OR of key-bit differences decides), rank and permute through workgroup
 * memory; write back in place. Bindings (RS_SINGLE): the uniform {n, key mode},
 * keys and values (read_write).
 * Workgroup memory: as the digit pass. One dispatch, no global scratch.
 */
export function singleWorkgroupKernel(p: TileParams): WgslFragment {
  const tc = tileCommon(p);
  const k = p.keysPerThread;
  const name = mangle('rs_single', ...tileKey(p));
  const permuteValues = p.hasValues
    ? `workgroupBarrier();
    ${unrolled(k, (j) => `rs_put(r${j}, v${j});`, '\n    ')}
    workgroupBarrier();
    ${unrolled(k, (j) => `v${j} = rs_get(${tc.pos(j)});`, '\n    ')}`
    : '';
  const code = `${tc.code}
${RS_SINGLE.wgsl(p.hasValues ? RS_SINGLE_VALUES : {})}
var<workgroup> rs_diff: atomic<u32>;

@compute @workgroup_size(${p.workgroupSize})
fn main(${entryParams(p.subgroups)}) {
${entryPrologue(p.subgroups)}
  rs_mode = rs_params.key_mode;
  let valid = rs_params.n;
  let base = 0u;
  ${tc.positions}
  ${loadTile(p, tc, 'keys_io', 'k', '0xffffffffu')}
  ${p.hasValues ? loadTile(p, tc, 'vals_io', 'v', '0u') : ''}
  ${unrolled(k, (j) => `var r${j} = 0u;`)}
  let first = rs_bits(keys_io[0]);
  var diff = 0u;
  ${unrolled(k, (j) => `if (${tc.pos(j)} < valid) { diff |= rs_bits(k${j}) ^ first; }`)}
  atomicOr(&rs_diff, diff);
  let all_diff = workgroupUniformLoad(&rs_diff);
  for (var pass_index = 0u; pass_index < 4u; pass_index++) {
    let shift = pass_index * 8u;
    if (((all_diff >> shift) & 255u) == 0u) { continue; }
    ${tc.rank}
    workgroupBarrier();
    ${unrolled(k, (j) => `rs_put(r${j}, k${j});`, '\n    ')}
    workgroupBarrier();
    ${unrolled(k, (j) => `k${j} = rs_get(${tc.pos(j)});`, '\n    ')}
    ${permuteValues}
  }
  ${unrolled(k, (j) => `if (${tc.pos(j)} < valid) { keys_io[${tc.pos(j)}] = k${j};${p.hasValues ? ` vals_io[${tc.pos(j)}] = v${j};` : ''} }`)}
}`;
  return fragment({ name, code, deps: tc.deps, workgroupBytes: tc.bytes + 4 });
}

/**
 * All four digit histograms of the key bits: each workgroup counts a contiguous run of tiles
 * (W*K keys each, striped loads; a full tile's K keys all loaded before any is counted: 1% off the
 * whole sort on the H100, docs/benchmarks/h100-2026-11-24f/sort-histogram.txt) into 4x256
 * workgroup atomics, then adds them to the global histograms (meta words 0..1023). Bindings (RS_HIST): the uniform, keys, meta.
 * Workgroup memory: 4 KiB. Traffic: one read of the keys; 1024 global atomics per workgroup.
 */
export function histogramKernel(p: {
  workgroupSize: number;
  keysPerThread: number;
  /** As PassParams.staticKeyMode. */
  staticKeyMode?: number;
}): WgslFragment {
  const keyBits = runtimeKeyBitsFragment();
  const w = p.workgroupSize;
  const mode = p.staticKeyMode === undefined ? 'rs_params.key_mode' : `${p.staticKeyMode}u`;
  const name = mangle(
    'rs_histogram',
    w,
    p.keysPerThread,
    ...(p.staticKeyMode === undefined ? [] : [`m${p.staticKeyMode}`]),
  );
  const k = p.keysPerThread;
  const tile = w * k;
  const code = `${RS_HIST.wgsl()}
var<workgroup> rs_h: array<atomic<u32>, 1024>;

/** Counts key \`x\`'s four digits. */
fn rs_count(x: u32) {
  let b = ${keyBits.name}(x, ${mode});
  atomicAdd(&rs_h[b & 255u], 1u);
  atomicAdd(&rs_h[256u + ((b >> 8u) & 255u)], 1u);
  atomicAdd(&rs_h[512u + ((b >> 16u) & 255u)], 1u);
  atomicAdd(&rs_h[768u + (b >> 24u)], 1u);
}

@compute @workgroup_size(${w})
fn main(${entryParams(false)}) {
${entryPrologue(false)}
  for (var i = ids.lid; i < 1024u; i += ${w}u) { atomicStore(&rs_h[i], 0u); }
  workgroupBarrier();
  let n = rs_params.n;
  let first = wg_index * rs_params.tiles_per_wg;
  let last = min(first + rs_params.tiles_per_wg, rs_params.tiles);
  for (var t = first; t < last; t++) {
    let base = t * ${tile}u + ids.lid;
    if ((t + 1u) * ${tile}u <= n) {
      // A full tile: every key loaded before any is counted (the loads' latencies overlap).
      ${unrolled(k, (j) => `let x${j} = keys_in[base + ${j * w}u];`, '\n      ')}
      ${unrolled(k, (j) => `rs_count(x${j});`, '\n      ')}
    } else {
      for (var j = 0u; j < ${k}u; j++) {
        let i = base + j * ${w}u;
        if (i < n) { rs_count(keys_in[i]); }
      }
    }
  }
  workgroupBarrier();
  for (var i = ids.lid; i < 1024u; i += ${w}u) {
    let c = atomicLoad(&rs_h[i]);
    if (c != 0u) { atomicAdd(&rs_meta[${META_HIST}u + i], c); }
  }
}`;
  return fragment({ name, code, deps: [threadIds(false), keyBits], workgroupBytes: 4096 });
}

/**
 * One workgroup of `threads` (256, or 128 / 64 on devices allowing fewer), thread t owning digits
 * [t*256/threads, (t+1)*256/threads): per pass, it reads its digits' counts, a workgroup scan of
 * the threads' sums (Hillis-Steele in workgroup memory) turns them into the global digit offsets,
 * and a digit holding every key marks the pass skipped. Thread 0 then writes the indirect arguments:
 * per pass, [x, y, 1] for the direction the data moves (A->B or B->A) and zeros for the other, and
 * for the final copy B->A when an odd number of passes ran. Bindings (RS_PLAN): the uniform
 * {n, gridX, gridY, copyX, copyY}, meta, indirect arguments. Workgroup memory: 4*threads + 16.
 * ~35 barriers; no serial loops over global memory (its latency dominated small sorts).
 */
export function planKernel(threads = 256): WgslFragment {
  const w = threads;
  const per = 256 / w;
  if (!Number.isInteger(per) || per > 4) throw new Error(`planKernel: ${w} threads (expected 64, 128 or 256)`);
  const name = mangle('rs_plan', w);
  const code = `${RS_PLAN.wgsl()}
var<workgroup> rs_scan: array<u32, ${w}>;
var<workgroup> rs_skip: array<atomic<u32>, 4>;

fn rs_set(at: u32, x: u32, y: u32) {
  rs_indirect[at] = x;
  rs_indirect[at + 1u] = y;
  rs_indirect[at + 2u] = 1u;
}

@compute @workgroup_size(${w})
fn main(@builtin(local_invocation_index) li: u32) {
  let d0 = li * ${per}u;
  // Every pass's counts loaded up front (their latencies overlap), then one scan per pass.
  ${unrolled(4, (p) => unrolled(per, (j) => `let c${p}_${j} = atomicLoad(&rs_meta[${META_HIST + p * 256}u + d0 + ${j}u]);`), '\n  ')}
  ${unrolled(
    4,
    (p) => `{
    ${unrolled(per, (j) => `if (c${p}_${j} == rs_params.n) { atomicStore(&rs_skip[${p}u], 1u); }`, '\n    ')}
    let s = ${unrolled(per, (j) => `c${p}_${j}`, ' + ')};
    workgroupBarrier();
    rs_scan[li] = s;
    for (var d = 1u; d < ${w}u; d = d << 1u) {
      workgroupBarrier();
      var t = rs_scan[li];
      if (li >= d) { t += rs_scan[li - d]; }
      workgroupBarrier();
      rs_scan[li] = t;
    }
    workgroupBarrier();
    var run = rs_scan[li] - s;
    ${unrolled(per, (j) => `atomicStore(&rs_meta[${META_OFFSETS + p * 256}u + d0 + ${j}u], run);\n    run += c${p}_${j};`, '\n    ')}
  }`,
    '\n  ',
  )}
  workgroupBarrier();
  if (li == 0u) {
    var cur = 0u;
    for (var p = 0u; p < 4u; p++) {
      rs_set(p * 6u, 0u, 1u);
      rs_set(p * 6u + 3u, 0u, 1u);
      if (atomicLoad(&rs_skip[p]) == 0u) {
        rs_set(p * 6u + cur * 3u, rs_params.grid_x, rs_params.grid_y);
        atomicStore(&rs_meta[${META_TABLES}u + p], cur);
        cur = cur ^ 1u;
      }
    }
    if (cur == 1u) { rs_set(24u, rs_params.copy_x, rs_params.copy_y); } else { rs_set(24u, 0u, 1u); }
  }
}`;
  return fragment({ name, code, workgroupBytes: w * 4 + 16 });
}

/**
 * Copies n u32 (keys, and values when `hasValues`) from src to dst: `threads` (256, fewer where the
 * device allows fewer) x 4 elements per workgroup, coalesced. Bindings (RS_COPY): the uniform {n},
 * keys src and dst, values src and dst.
 */
export function copyKernel(hasValues: boolean, threads = COPY_THREADS): WgslFragment {
  const name = mangle('rs_copy', hasValues ? 'kv' : 'k', threads);
  const code = `${RS_COPY.wgsl(hasValues ? RS_COPY_VALUES : {})}
@compute @workgroup_size(${threads})
fn main(${entryParams(false)}) {
${entryPrologue(false)}
  let base = wg_index * ${threads * COPY_PER_THREAD}u;
  for (var k = 0u; k < ${COPY_PER_THREAD}u; k++) {
    let i = base + k * ${threads}u + ids.lid;
    if (i < rs_params.n) {
      dst_keys[i] = src_keys[i];
      ${hasValues ? 'dst_vals[i] = src_vals[i];' : ''}
    }
  }
}`;
  return fragment({ name, code, deps: [threadIds(false)] });
}
