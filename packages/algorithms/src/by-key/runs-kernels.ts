/**
 * WGSL of reduceByKey as reduce-then-scan (no look-back): three kernels of one interface (RBK) and
 * the fix-up (`runsFixKernel`, RBK_FIX) after them, all in one compute pass:
 *  - 'count': per tile, the number of heads (an element whose key differs from its predecessor's
 *    under the user's keyEq; the input's first element is one) from the keys alone, into the
 *    tile's count word;
 *  - `runsSpineKernel`: one workgroup scans the tile counts (exclusive, in place); the total, the
 *    number of runs, goes to `prm.total_at` (read back, and the finish copies' count);
 *  - 'tile': each thread folds its `itemsPerThread` consecutive (key, value) items into a (heads,
 *    fold since the last head) pair, a workgroup exclusive scan of the pairs (`segmentedCombiner`
 *    with head counts: subgroup shuffles, or a workgroup-memory tree without subgroups) gives each
 *    thread its run index (plus the runs before the tile, from the scanned counts) and the fold of
 *    its open run; a walk over the items writes each head's key to keysOut at its run index, and
 *    at each head the fold of the run before it to valuesOut when that run started in the tile (and
 *    the input's last run when it started in the last tile). Each tile leaves the record the fix-up
 *    reads (head count, fold since its last head; at its first head whether that head starts the
 *    tile and the fold before it). When the runs do not fit the outputs (`prm.cap`) nothing is
 *    written (the call is an error; a one-tile call tests its own total).
 * Tiles are never waited on for their run indices: those come from the count pass, so a tile's
 * writes do not depend on its predecessors (the chained form's count look-back cost 40-60 us at
 * 2^24 on the H100, docs/benchmarks/h100-2026-11-24d.md).
 * Below a size (reduceByKey's `blockSumsBelow` and `lookbackBelow`, by-key/runs.ts) two forms save
 * the single-workgroup dispatches:
 *  - block sums instead of the spine: the count pass also adds each tile's count atomically into its
 *    block's word (blocks of about sqrt(tiles) tiles), and each tile loads the blocks before its
 *    own, its block's tiles before it and every block (the total) under its own loads, summed per
 *    subgroup into workgroup atomics that the pair scan's barriers order (`blockSumsIssue`);
 *  - a look-back instead of the fix-up: each tile publishes its (head flag, fold) pair after its
 *    scan (with a head, as its inclusive prefix at once), walks its items keeping its first head's
 *    part in registers, then looks back (core's `windowedLookback`, with its fallback) for the fold
 *    of the run open at its start and writes the run that ends at its first head, or the input's
 *    last run.
 */
import {
  type Combiner,
  combinerOf,
  entryParams,
  entryPrologue,
  fragment,
  headFlags,
  type InterfaceUse,
  kernelInterface,
  loadRun,
  mangle,
  type NumericType,
  plus,
  subgroupInclusiveScan,
  threadIds,
  unrolled,
  type WgslFragment,
  type WorkgroupParams,
  windowedLookback,
  workgroupExclusiveScan,
  workgroupReduce,
} from '@webdpl/core';
import { segmentedCombiner } from '../engines/scan';

/**
 * The interface of the count, spine and tile kernels: the segment's length, first element and the
 * input's length; the tiles before the segment and all tiles; the bases of the segment's first key
 * and value in their windows and of the outputs in theirs; the outputs' length (`cap`); the word
 * of tile 0's count and of the total in `scratch` (the tiles' records at word 0, 4 per tile); a
 * one-tile call (`single`: no count pass, spine nor fix-up). Bindings: `scratch` (records, counts,
 * total), the keys (`keys_v` as vec4s on the vec4 path, else `keys_s`), the values likewise, and
 * the outputs bound whole.
 */
export const RBK = kernelInterface({
  name: 'reduceByKey',
  params: {
    struct: 'RbkParams',
    name: 'prm',
    binding: 0,
    fields: {
      n: 'u32',
      seg_start: 'u32',
      n_total: 'u32',
      tile_offset: 'u32',
      tiles: 'u32',
      k_base: 'u32',
      v_base: 'u32',
      out_base: 'u32',
      kout_base: 'u32',
      cap: 'u32',
      cnt_base: 'u32',
      total_at: 'u32',
      single: 'u32',
      blk_base: 'u32',
      blk_tiles: 'u32',
      blocks: 'u32',
      fix_at: 'u32',
      lag: 'u32',
    },
  },
  bindings: {
    scratch: { binding: 1, access: 'read_write', type: 'u32', optional: true },
    scratch_a: { binding: 1, access: 'read_write', type: 'u32', form: 'atomic', optional: true },
    keys_v: { binding: 2, access: 'read', form: 'vec4', optional: true },
    keys_s: { binding: 2, access: 'read', optional: true },
    vals_v: { binding: 3, access: 'read', form: 'vec4', optional: true },
    vals_s: { binding: 3, access: 'read', optional: true },
    kout: { binding: 4, access: 'read_write', optional: true },
    vout: { binding: 5, access: 'read_write', optional: true },
  },
});

export type RunsPhase = 'count' | 'tile' | 'fused';

export interface RunsKernelParams {
  readonly phase: RunsPhase;
  readonly keyType: NumericType;
  readonly valueType: NumericType;
  /** `fn(a: K, b: K) -> bool`: keys equal. */
  readonly keyEq: WgslFragment;
  /** The value combiner (its combine is the user's operator over T, with its identity). */
  readonly value: Combiner;
  /** `segmentedCombiner(value, true)`: (head count, fold since the last head) pairs. */
  readonly pairs: Combiner;
  /** Keys and values as vec4s (itemsPerThread % 4 == 0, both arrays 16-byte aligned). */
  readonly vec: boolean;
  readonly workgroupSize: number;
  readonly itemsPerThread: number;
  readonly subgroups: boolean;
  readonly minSubgroupSize: number;
  /**
   * Block sums instead of the spine (`blockSumsBelow` of reduceByKey's tuning): the count pass adds each
   * tile's count atomically into its block's word too (blocks of `prm.blk_tiles` tiles, cleared by
   * the host), and each tile sums the blocks before its own and its block's tiles before it.
   */
  readonly blocks: boolean;
  /**
   * The tile pass finds the fold of the run open at its start by a decoupled look-back over the
   * tiles' (head flag, fold) pairs instead of leaving records for the fix-up (`lookbackBelow` of
   * reduceByKey's tuning): each tile publishes its pair right after its scan (an inclusive prefix
   * at once when it holds a head), walks its items, then looks back and writes the fold of the run
   * that ends at its first head (or the input's last run). No fix-up dispatch; the states are
   * cleared by the host. With `maxSpins` and `lookbackPerLane` as in the scans.
   */
  readonly lookback: boolean;
  readonly maxSpins: number;
  readonly lookbackPerLane: number;
  /**
   * The count pass walks the segment's tiles from the last (workgroup 0 counts the last tile), so
   * the keys it reads last, still in L2 when the tile pass starts, are the first tiles' (the tile
   * pass reads them first). `reduceReverseFrom` of reduceByKey's tuning.
   */
  readonly reverse?: boolean;
  /**
   * The tile pass also writes its last run when that run ends within a subgroup's width past the
   * tile (or at the input's end): the first subgroup's lanes read the elements after the tile, the
   * first head among them ends the run, and an ordered subgroup scan folds the values before it. A
   * tile whose last run reaches further (or that holds no head, or ends at a segment's edge) sets
   * word `prm.fix_at` (cleared by the host), and the fix-up (`gated`) works only then. Fix-up form
   * with subgroups only. `readAheadBelow` of reduceByKey's tuning.
   */
  readonly readAhead?: boolean;
  /**
   * Fused form, for tests: every wait computes instead (a tile of this segment counted from its keys,
   * a block summed from its tiles), as after `maxSpins` polls. `forceFusedFallback` of the tuning.
   */
  readonly forceFallback?: boolean;
}

/** RBK's variant of a phase: the bindings it declares (`blocks`: the count pass adds atomically). */
export function runsUse(
  phase: RunsPhase | 'spine',
  vec: boolean,
  blocks = false,
  lookback = false,
): InterfaceUse<typeof RBK.spec> {
  if (phase === 'spine') return { scratch: true };
  const keys = vec ? { keys_v: true } : { keys_s: true };
  if (phase === 'count') return { ...(blocks ? { scratch_a: true } : { scratch: true }), ...keys };
  const sc = lookback || phase === 'fused' ? { scratch_a: true } : { scratch: true };
  return { ...sc, ...keys, ...(vec ? { vals_v: true } : { vals_s: true }), kout: true, vout: true };
}

/** The mangled name of a count or tile kernel (every parameter: also its pipeline key). */
export function runsKernelName(p: RunsKernelParams): string {
  return mangle(
    'rbk',
    p.phase,
    p.keyType,
    p.valueType,
    p.keyEq.name,
    p.pairs.name,
    p.vec ? 'vec' : 'scalar',
    p.workgroupSize,
    p.itemsPerThread,
    p.subgroups ? `sg${p.minSubgroupSize}` : 'wg',
    p.blocks ? 'blk' : 'spine',
    p.phase === 'tile' && p.lookback ? `lb${p.lookbackPerLane}s${p.maxSpins}` : 'fix',
    p.phase === 'count' && p.reverse ? 'rev' : 'fwd',
    p.phase !== 'count' && p.readAhead ? 'ra' : 'nra',
    p.phase === 'fused' ? `s${p.maxSpins}${p.forceFallback ? 'f' : ''}` : '-',
  );
}

const U32_PLUS = combinerOf(plus, 'u32');

/**
 * WGSL bool: segment-local element `i` (a WGSL expression) is a head: the input's first element, or
 * its key differs from the one before under keyEq (the keys' window starts one key early).
 */
function headAt(p: RunsKernelParams, keyAt: (i: string) => string, i: string): string {
  return `prm.seg_start + ${i} == 0u || !${p.keyEq.name}(${keyAt(`prm.k_base + ${i} - 1u`)}, ${keyAt(`prm.k_base + ${i}`)})`;
}

/** A phase's statements (with `tile`, `first`, `full` in scope), the fragments and module-scope WGSL they need. */
interface RunsBody {
  readonly lines: string[];
  readonly deps: WgslFragment[];
  readonly helpers: string;
}

/**
 * The count or tile kernel, or both fused (`phase` 'fused'). A workgroup's tile is its index in the
 * segment (`wg_index`; fused: it counts tile `wg_index` first, then runs the tile pass of tile
 * `wg_index - prm.lag`); thread `lid` holds the tile's items [lid * I, (lid + 1) * I), loaded as
 * vec4s on the vec path.
 */
export function runsKernel(p: RunsKernelParams): WgslFragment {
  const w = p.workgroupSize;
  const tile = w * p.itemsPerThread;
  const fused = p.phase === 'fused';
  const lookback = p.phase === 'tile' && p.lookback;
  const use = runsUse(p.phase, p.vec, p.blocks, lookback);
  const refs = Object.keys(use)
    .map((b) => `_ = &${b};`)
    .join(' ');
  const at = (t: string) => `let tile = ${t};
  let first = tile * ${tile}u + ids.lid * ${p.itemsPerThread}u;
  let full = (tile + 1u) * ${tile}u <= prm.n;`;
  let main: string;
  let bodies: RunsBody[];
  if (fused) {
    const count = runsBody(p, 'count', true);
    const tiles = runsBody(p, 'tile', true);
    bodies = [count, tiles];
    main = `// The count of tile wg_index, then (prm.lag workgroups behind) the tile pass of tile wg_index - lag.
  if (wg_index < (prm.n + ${tile - 1}u) / ${tile}u) {
  ${at('wg_index')}
  ${count.lines.join('\n  ')}
  }
  if (wg_index >= prm.lag) {
  ${at('wg_index - prm.lag')}
  ${tiles.lines.join('\n  ')}
  }`;
  } else {
    const b = runsBody(p, p.phase as 'count' | 'tile', false);
    bodies = [b];
    main = `${at(p.phase === 'count' && p.reverse ? `(prm.n - 1u) / ${tile}u - wg_index` : 'wg_index')}
  ${b.lines.join('\n  ')}`;
  }
  const name = runsKernelName(p);
  const types = {
    keys_v: p.keyType,
    keys_s: p.keyType,
    vals_v: p.valueType,
    vals_s: p.valueType,
    kout: p.keyType,
    vout: p.valueType,
  };
  const runs = p.phase !== 'count' && (p.blocks || fused);
  return fragment({
    name,
    deps: bodies.flatMap((b) => b.deps),
    code: `${RBK.wgsl(use, types)}
${runs ? 'var<workgroup> rbk_runs: array<atomic<u32>, 2>;\n' : ''}${bodies.map((b) => b.helpers).join('')}
@compute @workgroup_size(${w}) fn main(${entryParams(p.subgroups)}) {
${entryPrologue(p.subgroups)}
  ${refs}
  ${main}
}`,
  });
}

function runsBody(p: RunsKernelParams, phase: 'count' | 'tile', fused: boolean): RunsBody {
  const w = p.workgroupSize;
  const I = p.itemsPerThread;
  const tile = w * I;
  const K = p.keyType;
  const T = p.valueType;
  const wp = { workgroupSize: w, subgroups: p.subgroups, minSubgroupSize: p.minSubgroupSize };
  const keysArr = p.vec ? 'keys_v' : 'keys_s';
  const keyAt = (i: string) => (p.vec ? `keys_v[(${i}) / 4u][(${i}) % 4u]` : `keys_s[${i}]`);
  const valAt = (i: string) => (p.vec ? `vals_v[(${i}) / 4u][(${i}) % 4u]` : `vals_s[${i}]`);
  const lookback = phase === 'tile' && p.lookback && !fused;
  // The scratch words, atomic where the kernel publishes look-back states (or adds block sums, or
  // waits for counts: fused).
  const atomic = fused || lookback || (phase === 'count' && p.blocks);
  const ld = (i: string) => (atomic ? `atomicLoad(&scratch_a[${i}])` : `scratch[${i}]`);
  const st = (i: string, v: string) => (atomic ? `atomicStore(&scratch_a[${i}], ${v});` : `scratch[${i}] = ${v};`);
  const load = (array: string, base: string, reg: (j: number) => string, type: string) =>
    loadRun({ items: I, type, reg, array, vec: p.vec, base, first: 'first', full: 'full', n: 'prm.n' });
  const lines: string[] = [
    ...load(keysArr, 'prm.k_base', (j) => `k${j}`, K),
    ...unrolled(I, (j) => `let ok${j} = full || first + ${j}u < prm.n;`).split('\n  '),
    ...headFlags({
      items: I,
      key: (j) => `k${j}`,
      ok: (j) => `ok${j}`,
      flag: (j) => `h${j}`,
      eq: p.keyEq.name,
      keyAt,
      at: 'prm.k_base + first',
      first: 'prm.seg_start + first == 0u',
    }),
  ];
  const deps: WgslFragment[] = [threadIds(p.subgroups), p.keyEq];
  let helpers = '';
  if (phase === 'count') {
    const reduce = workgroupReduce({ ...wp, combiner: U32_PLUS });
    deps.push(reduce);
    lines.push(
      `let c = ${unrolled(I, (j) => `select(0u, 1u, h${j})`, ' + ')};`,
      `let heads = ${reduce.name}(c, ids);`,
      // Fused: the count flagged (bit 31: published), its block's word gaining a done tile in bits
      // 24..31 above the sum.
      `if (ids.lid == 0u) {
    let g = prm.tile_offset + tile;
    ${st('prm.cnt_base + g', fused ? 'heads | 0x80000000u' : 'heads')}${
      p.blocks || fused
        ? `
    atomicAdd(&scratch_a[prm.blk_base + g / prm.blk_tiles], ${fused ? '0x1000000u + heads' : 'heads'});`
        : ''
    }
  }`,
    );
  } else {
    const op = p.value.combine.name;
    const scan = workgroupExclusiveScan({ ...wp, combiner: p.pairs });
    deps.push(p.value.combine, p.pairs.combine, scan);
    const readAhead = p.readAhead === true && p.subgroups && !lookback;
    if (fused) helpers += fusedWaits(p, keyAt, tile);
    const sgIncl = readAhead ? subgroupInclusiveScan({ combiner: p.value }) : undefined;
    if (sgIncl) deps.push(sgIncl);
    lines.push(
      ...load(p.vec ? 'vals_v' : 'vals_s', 'prm.v_base', (j) => `x${j}`, T),
      // The thread's (heads, fold since its last head) in registers, then the tile's scan of them.
      'let g = prm.tile_offset + tile;',
      ...(fused ? [fusedSumsIssue(p.subgroups, w)] : p.blocks ? [blockSumsIssue(p.subgroups, w, ld)] : []),
      ...(readAhead ? [readAheadLines(p, keyAt, valAt, tile, sgIncl as WgslFragment)] : []),
      'var c = 0u;',
      `var a = ${p.value.identity};`,
      ...unrolled(I, (j) => `if (h${j}) { c += 1u; a = x${j}; } else if (ok${j}) { a = ${op}(a, x${j}); }`).split(
        '\n  ',
      ),
      'var total: vec2<u32>;',
      `let ex = ${scan.name}(vec2<u32>(c, bitcast<u32>(a)), ids, &total);`,
      // The runs before the tile (the scanned counts), and whether every run fits the outputs.
      'var runs_before = 0u;',
      'var fits = total.x <= prm.cap;',
      fused
        ? `runs_before = atomicLoad(&rbk_runs[0]);
  if (ids.lid == 0u && g + 1u == prm.tiles) { ${st('prm.total_at', 'runs_before + total.x')} }`
        : p.blocks
          ? blockSumsTake(st)
          : `if (prm.single == 0u) { runs_before = ${ld('prm.cnt_base + g')}; fits = ${ld('prm.total_at')} <= prm.cap; }`,
      fused ? '' : `else if (ids.lid == 0u) { ${st('prm.total_at', 'total.x')} }`,
      lookback
        ? // The tile's (head flag, fold) pair for its successors' look-back: with a head it is final.
          `let agg = vec2<u32>(select(0u, 1u, total.x > 0u), total.y);
  if (ids.lid == 0u) { rbk_publish(tile, select(RBK_AGG, RBK_INCL, total.x > 0u), agg); }
  var fh = false;
  var fz = false;
  var fra: ${T};
  var lo = false;
  var lra: ${T};`
        : // The tile's record for the fix-up: head count and fold since its last head (or of the tile).
          `if (ids.lid == 0u) {
    ${st('4u * g', 'total.x')} ${st('4u * g + 1u', 'total.y')}${
      readAhead
        ? `
    // The tile's last run, when it ends within the read-ahead; else the fix-up is needed.
    if (total.x > 0u && ra_found) {
      if (fits) { vout[prm.out_base + runs_before + total.x - 1u] = ${op}(bitcast<${T}>(total.y), ra_fold); }
    } else { ${st('prm.fix_at', '1u')} }`
        : ''
    }
  }`,
      // The walk: at each head the key to keysOut and the run before it to valuesOut, except at the
      // tile's first head (rc == runs_before), whose run started in an earlier tile: its part in
      // this tile (whether the head starts the tile, the fold before it) goes to the record, or
      // with the look-back to registers.
      `if (fits) {
    let last = prm.n_total - 1u - prm.seg_start;
    {
    var rc = runs_before + ex.x;
    var ra = bitcast<${T}>(ex.y);
    ${unrolled(
      I,
      (j) => `if (h${j}) {
      if (rc == runs_before) {
        ${
          lookback
            ? `fh = true;
        fz = first + ${j}u == tile * ${tile}u;
        fra = ra;`
            : `${st('4u * g + 2u', `select(0u, 1u, first + ${j}u == tile * ${tile}u)`)}
        ${st('4u * g + 3u', 'bitcast<u32>(ra)')}`
        }
      } else { vout[prm.out_base + rc - 1u] = ra; }
      kout[prm.kout_base + rc] = k${j};
      rc += 1u;
      ra = x${j};
    } else if (ok${j}) { ra = ${op}(ra, x${j}); }`,
      '\n    ',
    )}
    // The input's last element ends the last run: written here when that run started in this tile
    // (else by the fix-up, or after the look-back).
    if (last >= first && last < first + ${I}u) {
      if (rc != runs_before) { vout[prm.out_base + rc - 1u] = ra; }${
        lookback
          ? `
      else { lo = true; lra = ra; }`
          : ''
      }
    }
    }
  }`,
    );
    if (lookback) {
      const lb = runsLookback(p, keyAt, valAt, tile);
      deps.push(...lb.deps);
      helpers = lb.helpers;
      lines.push(
        lb.call('tile', 'agg', 'prefix'),
        // The run open at the tile's start ends at its first head (or at the input's end).
        `if (fits && runs_before > 0u) {
    let carry = bitcast<${T}>(prefix.y);
    if (fh) { vout[prm.out_base + runs_before - 1u] = select(${op}(carry, fra), carry, fz); }
    if (lo) { vout[prm.out_base + runs_before - 1u] = ${op}(carry, lra); }
  }`,
      );
    }
  }
  return { lines, deps, helpers };
}

/**
 * The read-ahead (RunsKernelParams.readAhead), before the tile's scan: lane l of the first subgroup
 * (thread 0 writes the result) reads the segment's element (tile + 1) * T + l; a lane stops the run
 * at a head or past the input's end, and is blocked past the segment's end short of the input's.
 * `ra_found`: the first stop comes before the first blocked lane; `ra_fold`: the values before it,
 * folded in order (an inclusive subgroup scan).
 */
function readAheadLines(
  p: RunsKernelParams,
  keyAt: (i: string) => string,
  valAt: (i: string) => string,
  tile: number,
  incl: WgslFragment,
): string {
  const T = p.valueType;
  const id = p.value.identity;
  return `var ra_found = false;
  var ra_fold: ${T} = ${id};
  if (ids.sg_id == 0u) {
    let ra_end = (tile + 1u) * ${tile}u;
    let ra_pos = ra_end + ids.lane;
    let ra_in = full && ra_pos < prm.n;
    let ra_done = prm.seg_start + ra_pos >= prm.n_total;
    var ra_k: ${p.keyType};
    var ra_v = ${id};
    if (ra_in) { ra_k = ${keyAt('prm.k_base + ra_pos')}; ra_v = ${valAt('prm.v_base + ra_pos')}; }
    var ra_prev = subgroupShuffleUp(ra_k, 1u);
    if (ids.lane == 0u && full) { ra_prev = ${keyAt('prm.k_base + ra_end - 1u')}; }
    let ra_stop = ra_done || (ra_in && !${p.keyEq.name}(ra_prev, ra_k));
    let ra_f = subgroupMin(select(ids.sg_size, ids.lane, ra_stop));
    let ra_b = subgroupMin(select(ids.sg_size, ids.lane, !ra_in && !ra_done));
    ra_found = ra_f < ra_b;
    let ra_s = ${incl.name}(select(${id}, ra_v, ids.lane < ra_f), ids.lane, ids.sg_size);
    ra_fold = select(${id}, subgroupShuffle(ra_s, max(ra_f, 1u) - 1u), ra_f > 0u);
  }`;
}

/**
 * The fused form's waits (module scope): a tile's head count once its count phase published it
 * (bit 31 of its word), a block's sum once every tile of the block added to it (the count of done
 * tiles in bits 24..31 of its word, the sum below). After `maxSpins` polls of an unpublished word the
 * thread computes it: a block from its tiles' words, a tile of this segment by counting its heads
 * from the keys (tiles of earlier segments were published by their dispatches). A thread waits only
 * on tiles counted by workgroups of lower index, and never blocks forever: no barrier, no
 * subgroup operation.
 */
function fusedWaits(p: RunsKernelParams, keyAt: (i: string) => string, tile: number): string {
  const force = p.forceFallback === true;
  return `
/** Head count of segment-local tile t, from the keys (the input's first element is a head). */
fn rbk_heads_of(t: u32) -> u32 {
  let lo = t * ${tile}u;
  let hi = min(lo + ${tile}u, prm.n);
  var c = 0u;
  for (var i = lo; i < hi; i++) {
    let h = ${headAt(p, keyAt, 'i')};
    c += select(0u, 1u, h);
  }
  return c;
}

/** Head count of tile g (global index). */
fn rbk_tile_count(g: u32) -> u32 {${force ? '\n  if (g >= prm.tile_offset) { return rbk_heads_of(g - prm.tile_offset); }' : ''}
  var spins = 0u;
  loop {
    let v = atomicLoad(&scratch_a[prm.cnt_base + g]);
    if ((v & 0x80000000u) != 0u) { return v & 0x7fffffffu; }
    spins += 1u;
    if (spins > ${p.maxSpins}u && g >= prm.tile_offset) { return rbk_heads_of(g - prm.tile_offset); }
  }
}

/** Heads of block b's tiles (global indices). */
fn rbk_block_sum(b: u32) -> u32 {
  let t0 = b * prm.blk_tiles;
  let want = min(prm.blk_tiles, prm.tiles - t0);
  var spins = 0u;
  loop {
    let v = atomicLoad(&scratch_a[prm.blk_base + b]);
    if (${force ? 'false' : '(v >> 24u) == want'}) { return v & 0xffffffu; }
    spins += 1u;
    if (spins > ${force ? 0 : p.maxSpins}u) {
      var s = 0u;
      for (var t = t0; t < t0 + want; t++) { s += rbk_tile_count(t); }
      return s;
    }
  }
}
`;
}

/**
 * The fused form's runs before tile g, issued before the tile's scan: the blocks before g's block
 * and the tiles of its block before g (`fusedWaits`), summed per subgroup into a workgroup atomic
 * that the pair scan's barriers order before it is read.
 */
function fusedSumsIssue(subgroups: boolean, w: number): string {
  return `{
    let gb = g / prm.blk_tiles;
    var s = 0u;
    for (var i = ids.lid; i < gb; i += ${w}u) { s += rbk_block_sum(i); }
    for (var i = gb * prm.blk_tiles + ids.lid; i < g; i += ${w}u) { s += rbk_tile_count(i); }
    ${addRuns(subgroups, 's', 1)}
  }`;
}

/**
 * Adds each thread's sum `s` (a WGSL variable: u32, or vec2<u32> when `words` is 2) into the
 * workgroup atomics `rbk_runs[0]` (and `[1]` from `.y`): once per subgroup after a subgroupAdd, else
 * per thread where nonzero.
 */
function addRuns(subgroups: boolean, s: string, words: 1 | 2): string {
  const parts = words === 1 ? [''] : ['.x', '.y'];
  if (!subgroups)
    return parts.map((c, k) => `if (${s}${c} != 0u) { atomicAdd(&rbk_runs[${k}], ${s}${c}); }`).join('\n    ');
  return `let r = subgroupAdd(${s});
    if (ids.lane == 0u) { ${parts.map((c, k) => `atomicAdd(&rbk_runs[${k}], r${c});`).join(' ')} }`;
}

/**
 * The tile pass's runs before tile g and the total from the block sums (`blocks`), issued before
 * the tile's scan: the blocks before g's block, the tiles of its block before g, and every block
 * (at most a few hundred words from L2 per tile, loaded under the tile's own loads), summed per
 * subgroup and added into two zero-initialized workgroup atomics; the pair scan's barriers order
 * those adds before `blockSumsTake` reads them, so the sums cost no barrier of their own.
 */
function blockSumsIssue(subgroups: boolean, w: number, ld: (i: string) => string): string {
  return `if (prm.single == 0u) {
    let gb = g / prm.blk_tiles;
    var s = vec2<u32>(0u);
    for (var i = ids.lid; i < prm.blocks; i += ${w}u) { let b = ${ld('prm.blk_base + i')}; s += vec2<u32>(select(0u, b, i < gb), b); }
    for (var i = gb * prm.blk_tiles + ids.lid; i < g; i += ${w}u) { s.x += ${ld('prm.cnt_base + i')}; }
    ${addRuns(subgroups, 's', 2)}
  }`;
}

/** After the tile's scan: the runs before the tile and the total from `blockSumsIssue`; the last tile writes the total. */
function blockSumsTake(st: (i: string, v: string) => string): string {
  return `if (prm.single == 0u) {
    runs_before = atomicLoad(&rbk_runs[0]);
    let all = atomicLoad(&rbk_runs[1]);
    fits = all <= prm.cap;
    if (ids.lid == 0u && g + 1u == prm.tiles) { ${st('prm.total_at', 'all')} }
  }`;
}

/**
 * The tile pass's look-back (`lookback`): core's `windowedLookback` over (head flag, fold) pairs in
 * the 'split-head' layout, states at words 2g, 2g + 1 of `scratch_a` (g the global tile), the carry
 * into a segment's first tile the previous segment's last inclusive prefix (that dispatch has
 * finished), the fallback reducing a stalled tile's pairs from the keys and values.
 */
function runsLookback(p: RunsKernelParams, keyAt: (i: string) => string, valAt: (i: string) => string, tile: number) {
  const seg = segmentedCombiner(p.value);
  const lb = windowedLookback({
    prefix: 'rbk',
    layout: 'split-head',
    combiner: seg,
    state: 'scratch_a',
    base: 'prm.tile_offset',
    tiles: 'prm.tiles',
    carry: 'rbk_carry',
    carryOut: 'rbk_carry_out',
    subgroups: p.subgroups,
    perLane: p.lookbackPerLane,
    maxSpins: p.maxSpins,
    fallback: { element: 'rbk_gen_at', tileItems: tile, n: 'prm.n' },
    published: true,
  });
  const helpers = `${lb.declarations}

${lb.stateFunctions}

/** The carry into the segment's first tile: the previous segment's last inclusive prefix (u32 wraps: t = -1). */
fn rbk_carry() -> vec2<u32> {
  if (prm.tile_offset == 0u) { return ${seg.identity}; }
  let s = rbk_read(0xffffffffu);
  return vec2<u32>(s.z, s.y);
}

fn rbk_carry_out(v: vec2<u32>) {}

/** The fallback's (head flag, value) pair of segment-local element i. */
fn rbk_gen_at(i: u32) -> vec2<u32> {
  let h = ${headAt(p, keyAt, 'i')};
  return vec2<u32>(select(0u, 1u, h), bitcast<u32>(${valAt('prm.v_base + i')}));
}

${lb.fallback}

${lb.walk}
`;
  return { helpers, deps: [seg.combine, ...lb.deps], call: lb.call };
}

/** Tile counts each thread of `runsSpineKernel` scans per step. */
const SPINE_ITEMS = 4;

/** `runsSpineKernel`'s parameters: one workgroup's shape. */
export interface RunsSpineParams {
  readonly workgroupSize: number;
  readonly subgroups: boolean;
  readonly minSubgroupSize: number;
}

/** The mangled name of `runsSpineKernel` (every parameter: also its pipeline key). */
export function runsSpineKernelName(p: RunsSpineParams): string {
  return mangle('rbk_spine', p.workgroupSize, p.subgroups ? `sg${p.minSubgroupSize}` : 'wg');
}

/**
 * One workgroup of `workgroupSize` threads: the exclusive scan of the `prm.tiles` tile counts at
 * `prm.cnt_base` in place (4 per thread per step, one workgroup scan per step, chained by a carry),
 * the total (the number of runs) to word `prm.total_at`.
 */
export function runsSpineKernel(p: RunsSpineParams): WgslFragment {
  const w = p.workgroupSize;
  const scan = workgroupExclusiveScan({ ...p, combiner: U32_PLUS });
  const name = runsSpineKernelName(p);
  const at = (j: number) => `prm.cnt_base + t0 + ${j}u`;
  return fragment({
    name,
    deps: [threadIds(p.subgroups), scan],
    code: `${RBK.wgsl({ scratch: true }, {})}
@compute @workgroup_size(${w}) fn main(${entryParams(p.subgroups)}) {
${entryPrologue(p.subgroups)}
  _ = &scratch;
  var carry = 0u;
  for (var base = 0u; base < prm.tiles; base += ${w * SPINE_ITEMS}u) {
    let t0 = base + ids.lid * ${SPINE_ITEMS}u;
    ${unrolled(SPINE_ITEMS, (j) => `var c${j} = 0u; if (t0 + ${j}u < prm.tiles) { c${j} = scratch[${at(j)}]; }`, '\n    ')}
    var total: u32;
    var r = carry + ${scan.name}(${unrolled(SPINE_ITEMS, (j) => `c${j}`, ' + ')}, ids, &total);
    ${unrolled(SPINE_ITEMS, (j) => `if (t0 + ${j}u < prm.tiles) { scratch[${at(j)}] = r; } r += c${j};`, '\n    ')}
    carry += total;
  }
  if (ids.lid == 0u) { scratch[prm.total_at] = carry; }
}`,
  });
}

/**
 * The interface of reduceByKey's fix-up (`runsFixKernel`): the number of tile records, the outputs'
 * length (`cap`) and the values output's base in its binding, the records' first word and the word
 * of the number of runs (`total_at`), both in `recs`; the tiles' records (4 words each: head count,
 * fold since the last head, whether the first head starts the tile, the fold before it), the values
 * output (bound whole).
 */
export const RBK_FIX = kernelInterface({
  name: 'reduceByKey fix-up',
  params: {
    struct: 'RbkFix',
    name: 'prm',
    binding: 0,
    fields: { tiles: 'u32', cap: 'u32', out_base: 'u32', rec_base: 'u32', total_at: 'u32', fix_at: 'u32' },
  },
  bindings: {
    recs: { binding: 1, access: 'read', type: 'vec4<u32>' },
    out_s: { binding: 2, access: 'read_write' },
  },
});

export interface RunsFixParams extends Required<WorkgroupParams> {
  /** The element (value) type and the value operator `fn(a: T, b: T) -> T`. */
  readonly valueType: NumericType;
  readonly op: WgslFragment;
  /** Work only when a tile set word `prm.fix_at` (the tiles' read-ahead, RunsKernelParams.readAhead). */
  readonly gated?: boolean;
}

/** The mangled name of `runsFixKernel` (every parameter, `gated` included: also its pipeline key). */
export function runsFixKernelName(p: RunsFixParams): string {
  return mangle(
    'rbk_fix',
    p.valueType,
    p.combiner.name,
    p.op.name,
    p.workgroupSize,
    p.subgroups ? `sg${p.minSubgroupSize}` : 'wg',
    p.gated ? 'gated' : 'all',
  );
}

/**
 * reduceByKey's second kernel, one workgroup after the tiles: folds the tiles' records in tile order
 * as (head count, fold since the last head) pairs (the segmented combiner, a workgroup exclusive
 * scan per step of `workgroupSize` tiles, chained by a carry), so the carry into tile t holds the
 * runs before it and the fold of the run open at its start; where t holds a head and runs before it
 * exist, that run ends at t's first head: its fold is the carry's, folded with t's part before the
 * head unless t starts with the head. The input's last run, when it starts before the last tile, is the carry after every tile
 * (else the last tile wrote it). Nothing is written unless every run fits the outputs (the total at
 * `prm.total_at` at most `cap`), as in the tile pass.
 */
export function runsFixKernel(p: RunsFixParams): WgslFragment {
  const w = p.workgroupSize;
  const c = p.combiner;
  const comb = c.combine.name;
  const T = p.valueType;
  const scan = workgroupExclusiveScan(p);
  const name = runsFixKernelName(p);
  return fragment({
    name,
    deps: [threadIds(p.subgroups), c.combine, p.op, scan],
    code: `${RBK_FIX.wgsl({}, { out_s: T })}
@compute @workgroup_size(${w}) fn main(${entryParams(p.subgroups)}) {
${entryPrologue(p.subgroups)}
  _ = &recs; _ = &out_s;${
    p.gated
      ? `
  // Every tile wrote its own last run (its read-ahead found the run's end): nothing to do.
  if (recs[prm.fix_at / 4u][prm.fix_at % 4u] == 0u) { return; }`
      : ''
  }
  // Nothing is written unless every run fits the outputs (the spine's total against cap).
  let fits = recs[prm.total_at / 4u][prm.total_at % 4u] <= prm.cap;
  var carry = ${c.identity};
  for (var base = 0u; base < prm.tiles; base += ${w * RUNS_FIX_ITEMS}u) {
    // K consecutive records per thread, all loaded first, folded, one workgroup scan.
    let t0 = base + ids.lid * ${RUNS_FIX_ITEMS}u;
    ${unrolled(RUNS_FIX_ITEMS, (j) => `var r${j} = vec4<u32>(0u, (${c.identity}).y, 1u, 0u);`, '\n    ')}
    ${unrolled(RUNS_FIX_ITEMS, (j) => `if (t0 + ${j}u < prm.tiles) { r${j} = recs[prm.rec_base / 4u + t0 + ${j}u]; }`, '\n    ')}
    var acc = r0.xy;
    ${unrolled(RUNS_FIX_ITEMS - 1, (j) => `acc = ${comb}(acc, r${j + 1}.xy);`, '\n    ')}
    var total: vec2<u32>;
    // The runs before tile t0 and the fold of the run open at its start, then at each next tile.
    var cin = ${comb}(carry, ${scan.name}(acc, ids, &total));
    ${unrolled(
      RUNS_FIX_ITEMS,
      (j) => `if (fits && r${j}.x != 0u && cin.x > 0u && cin.x - 1u < prm.cap) {
      var f = bitcast<${T}>(cin.y);
      if (r${j}.z == 0u) { f = ${p.op.name}(f, bitcast<${T}>(r${j}.w)); }
      out_s[prm.out_base + cin.x - 1u] = f;
    }
    cin = ${comb}(cin, r${j}.xy);`,
      '\n    ',
    )}
    carry = ${comb}(carry, total);
  }
  if (ids.lid == 0u && prm.tiles > 0u) {
    let last = recs[prm.rec_base / 4u + prm.tiles - 1u];
    if (fits && last.x == 0u && carry.x - 1u < prm.cap) { out_s[prm.out_base + carry.x - 1u] = bitcast<${T}>(carry.y); }
  }
}`,
  });
}

/** Records each thread of `runsFixKernel` folds per step. */
const RUNS_FIX_ITEMS = 4;
