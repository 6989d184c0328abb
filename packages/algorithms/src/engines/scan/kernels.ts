/**
 * WGSL of the scan-scatter engine.
 *
 * One tile template (`tileKernel`) in three phases, plus two small kernels:
 *  - 'chained': the single-pass chained scan with decoupled look-back and fallback. A workgroup takes
 *    its tile id from an atomic counter (so every lower tile has started), loads and generates its
 *    values, scans them, publishes its aggregate, looks back over its predecessors, publishes its
 *    inclusive prefix, and writes.
 *  - 'reduce': pass 1 of reduce-then-scan, one tile reduction per workgroup into `sums`.
 *  - 'downsweep': pass 3 of reduce-then-scan, a tile scanned from its carry-in read from `sums`
 *    (or, with `prm.direct`, from the segment's carry: the one-tile path).
 *  - `spineKernel`: pass 2, one workgroup scans the tile sums (exclusive, carry included).
 *  - `finishKernel`: copies a compaction result from a temporary back into an array in place.
 *
 * Tile state (chained): two u32 atomics per tile, each holding a 2-bit flag in bits 16..17 and one
 * 16-bit half of the value's bits: `(flag << 16) | half`. The owner writes both words with
 * atomicStore (aggregate, then inclusive prefix); a reader takes the value only when both words carry
 * the same non-zero flag. Each flag is published once per call, so equal flags mean both halves come
 * from the same publication; this needs nothing beyond per-location coherence of relaxed atomics
 * (WGSL's memory model), no ordering between locations. The state is cleared by the host each call.
 *
 * Look-back: one subgroup (thread 0 without subgroups) reads `subgroup size` predecessors per step.
 * When every predecessor after the nearest inclusive one is ready, it folds them in order; when one
 * is still not ready after `maxSpins` polls, the subgroup reduces that predecessor's tile from the
 * input itself (the fallback) and continues before it, so a workgroup never waits on one that may
 * not be scheduled. The fallback is not published (others may still compute the same value), so the
 * state only ever holds what its owner wrote.
 */
import {
  type Combiner,
  entryParams,
  entryPrologue,
  fragment,
  mangle,
  type NumericType,
  subgroupReduce,
  threadIds,
  type WgslFragment,
  workgroupExclusiveScan,
  workgroupReduce,
} from '@webdpl/core';

/** How each element becomes the value scanned ("generate input" hook). */
export type GenerateHook =
  /** The element itself, or `fn(x) -> V` (a transform; declares `fn <fn.name>(x0: T) -> V`). */
  | { readonly kind: 'value'; readonly fn?: WgslFragment }
  /** Compaction: keep the element when `fn(x)` (declares `fn <fn.name>(x0: T) -> bool`); scans 1/0. */
  | { readonly kind: 'predicate'; readonly fn: WgslFragment }
  /** unique: keep element i when i == 0 or x[i] differs from x[i-1] (floats: JS `!==`). */
  | { readonly kind: 'adjacent-different' };

/** What happens with the scan result ("write output" hook). */
export type WriteHook =
  /** output[i] = prefix through element i. */
  | 'inclusive'
  /** output[i] = prefix before element i. */
  | 'exclusive'
  /** Kept elements to output[number kept before them]. */
  | 'compact'
  /** As 'compact', and rejected elements to output[n_total - 1 - number rejected before them]. */
  | 'partition';

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
}

/** Uniform parameters of every engine kernel (12 u32). */
export const PARAMS_STRUCT = `struct ScnParams {
  n: u32,
  in_base: u32,
  out_base: u32,
  seg_start: u32,
  num_tiles: u32,
  tile_offset: u32,
  seg: u32,
  num_segs: u32,
  first_seg: u32,
  init: u32,
  n_total: u32,
  direct: u32,
}`;

/** Number of u32 words of PARAMS_STRUCT. */
export const PARAMS_WORDS = 12;

/**
 * Layout of the control buffer (u32 words) for S segments: [0, S) tile counters, [S, 2S) carry out
 * of each segment (value bits), [2S, 2S + 4) the results of the last partial vec4 (scans).
 */
export function ctrlWords(segments: number): number {
  return 2 * segments + 4;
}

export function isCompaction(write: WriteHook): boolean {
  return write === 'compact' || write === 'partition';
}

/** Binding numbers of the tile and spine kernels. */
export const BINDING = {
  params: 0,
  /** chained: tile states (atomics); reduce/downsweep/spine: tile sums. */
  state: 1,
  ctrl: 2,
  inVec: 3,
  inScalar: 4,
  out: 5,
} as const;

/** Binding numbers a tile kernel declares (and uses), in order. */
export function tileBindings(p: Pick<TileKernelParams, 'phase' | 'vec' | 'inPlace'>): number[] {
  const b: number[] = [BINDING.params, BINDING.state, BINDING.ctrl];
  if (!p.inPlace) {
    if (p.vec) b.push(BINDING.inVec);
    b.push(BINDING.inScalar);
  }
  if (p.phase !== 'reduce' || p.inPlace) b.push(BINDING.out);
  return b;
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

/** The WGSL expression `a differs from b` for unique(). */
function differs(t: NumericType, a: string, b: string): string {
  return t === 'f32' ? `!scn_f32_same(${a}, ${b})` : `(${a} != ${b})`;
}

/**
 * Builds one tile kernel. Bindings: 0 params, 1 state/sums, 2 ctrl, 3 input vec4 view, 4 input
 * scalar view (both read-only; absent in place), 5 output (vec4 for vec scans, else scalar; read_write).
 *
 * Needs: workgroup memory of one workgroup exclusive scan (or reduce) over V plus 8 bytes;
 * subgroups optional (the look-back then runs one predecessor per step on thread 0).
 * Performance: one read of the input and one write of the output per element ('chained'); the
 * look-back reads 8 bytes per predecessor polled, a fallback re-reads one tile.
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
  const wgp = { combiner: c, workgroupSize: w, subgroups: p.subgroups, minSubgroupSize: p.minSubgroupSize };
  const scan = p.phase === 'reduce' ? undefined : workgroupExclusiveScan(wgp);
  const red = p.phase === 'reduce' ? workgroupReduce(wgp) : undefined;
  const sgRed = p.subgroups ? subgroupReduce({ combiner: c }) : undefined;
  const vecStores = p.vec && !compaction;
  const inV = p.inPlace ? 'out_v' : 'in_v';
  const inS = p.inPlace ? (vecStores ? '' : 'out_s') : 'in_s';
  if (p.inPlace && p.phase === 'chained') throw new Error('scan engine: the chained phase never runs in place');
  if (p.inPlace && compaction) throw new Error('scan engine: compaction never runs in place');
  if (p.vec && k % 4 !== 0) throw new Error('scan engine: the vec4 path needs itemsPerThread % 4 == 0');

  // ---- bindings
  const lines = [
    `@group(0) @binding(0) var<uniform> prm: ScnParams;`,
    p.phase === 'chained'
      ? `@group(0) @binding(1) var<storage, read_write> state: array<atomic<u32>>;`
      : `@group(0) @binding(1) var<storage, read_write> sums: array<u32>;`,
    `@group(0) @binding(2) var<storage, read_write> ctrl: array<atomic<u32>>;`,
  ];
  if (!p.inPlace) {
    if (p.vec) lines.push(`@group(0) @binding(3) var<storage, read> in_v: array<vec4<${T}>>;`);
    lines.push(`@group(0) @binding(4) var<storage, read> in_s: array<${T}>;`);
  }
  if (p.phase !== 'reduce' || p.inPlace) {
    lines.push(
      vecStores
        ? `@group(0) @binding(5) var<storage, read_write> out_v: array<vec4<${V}>>;`
        : `@group(0) @binding(5) var<storage, read_write> out_s: array<${compaction ? T : V}>;`,
    );
  }
  const declared = lines.map((l) => /var<[^>]*> (\w+):/.exec(l)?.[1]).filter((x): x is string => !!x);
  const needsScalarIn = !p.vec || p.gen.kind === 'adjacent-different' || p.phase === 'chained';
  if (p.inPlace && needsScalarIn && vecStores) {
    // In place with vec4 stores there is no scalar view of the data: the fallback and unique never
    // run in place, and a non-vec in-place kernel has the scalar view as `out_s`.
    throw new Error('scan engine: in-place vec kernels have no scalar input view');
  }

  // ---- layout: R rows of W threads x C items. vec: C = 4 (one vec4 per thread per row, coalesced
  // across the workgroup); scalar: one row of C = itemsPerThread consecutive items per thread.
  // Row r of the tile covers elements [r*W*C, (r+1)*W*C); thread t holds b = tile start + r*W*C +
  // t*C .. + C - 1. Rows are scanned in order, threads in order within a row. Rows are WGSL loops
  // over private arrays (one copy of the row code, so software compilers stay fast); the constant
  // trip counts let GPU compilers unroll them into registers.
  const C = p.vec ? 4 : k;
  const R = k / C;
  const rowBase = `tile * ${tile}u + r * ${w * C}u + ids.lid * ${C}u`;
  const genValue = (x: string): string => {
    if (p.gen.kind === 'value') return p.gen.fn ? `${p.gen.fn.name}(${x})` : x;
    return '';
  };
  // Loop 1: every load of the tile is issued before any is used.
  const loadLines: string[] = [`var xs: array<array<${T}, ${C}>, ${R}>;`, `for (var r = 0u; r < ${R}u; r++) {`, `  let b = ${rowBase};`];
  if (p.vec) {
    loadLines.push(
      `  if (full || b < prm.n) { let a = ${inV}[(prm.in_base + b) / 4u]; xs[r][0] = a.x; xs[r][1] = a.y; xs[r][2] = a.z; xs[r][3] = a.w; }`,
    );
  } else {
    for (let j = 0; j < C; j++) {
      loadLines.push(`  if (full || b + ${j}u < prm.n) { xs[r][${j}] = ${inS}[prm.in_base + b + ${j}u]; }`);
    }
  }
  loadLines.push('}');
  // Loop 2: generate the values, fold each thread's items of the row, scan (or reduce) the row.
  // Scans keep the values (vs); compaction keeps the elements (xs) and a bit mask of kept items (kb).
  const foldLines: string[] = [];
  if (compaction) foldLines.push(`var kb: array<u32, ${R}>;`);
  else foldLines.push(`var vs: array<array<${V}, ${C}>, ${R}>;`);
  if (p.phase !== 'reduce') foldLines.push(`var tps: array<${V}, ${R}>;`, `var rbs: array<${V}, ${R}>;`);
  foldLines.push(`var rb = ${id};`, `for (var r = 0u; r < ${R}u; r++) {`, `  let b = ${rowBase};`);
  for (let j = 0; j < C; j++) foldLines.push(`  let ok${j} = full || b + ${j}u < prm.n;`);
  if (p.gen.kind === 'value') {
    for (let j = 0; j < C; j++) foldLines.push(`  let v${j} = select(${id}, ${genValue(`xs[r][${j}]`)}, ok${j});`);
    for (let j = 0; j < C; j++) foldLines.push(`  vs[r][${j}] = v${j};`);
  } else {
    if (p.gen.kind === 'predicate') {
      for (let j = 0; j < C; j++) foldLines.push(`  let k${j} = ok${j} && ${p.gen.fn.name}(xs[r][${j}]);`);
    } else {
      foldLines.push(`  var xp = xs[r][0];`);
      foldLines.push(`  let first = prm.seg_start + b == 0u;`);
      foldLines.push(`  if (ok0 && !first) { xp = ${inS}[prm.in_base + b - 1u]; }`);
      foldLines.push(`  let k0 = ok0 && (first || ${differs(T, 'xs[r][0]', 'xp')});`);
      for (let j = 1; j < C; j++) {
        foldLines.push(`  let k${j} = ok${j} && ${differs(T, `xs[r][${j}]`, `xs[r][${j - 1}]`)};`);
      }
    }
    for (let j = 0; j < C; j++) foldLines.push(`  let v${j} = select(0u, 1u, k${j});`);
    foldLines.push(`  kb[r] = ${Array.from({ length: C }, (_, j) => `(v${j} << ${j}u)`).join(' | ')};`);
  }
  foldLines.push(`  var s = v0;`);
  for (let j = 1; j < C; j++) foldLines.push(`  s = ${comb}(s, v${j});`);
  if (p.phase === 'reduce') {
    foldLines.push(`  rb = ${comb}(rb, ${red?.name}(s, ids));`);
  } else {
    foldLines.push(`  var tot: ${V};`, `  tps[r] = ${scan?.name}(s, ids, &tot);`, `  rbs[r] = rb;`, `  rb = ${comb}(rb, tot);`);
  }
  foldLines.push('}', 'let total = rb;');

  // ---- scalar generate for the fallback: the value of segment-local element i
  let genScalar = '';
  if (p.phase === 'chained') {
    let body: string;
    if (p.gen.kind === 'value') {
      body = `return ${genValue(`${inS}[prm.in_base + i]`)};`;
    } else if (p.gen.kind === 'predicate') {
      body = `return select(0u, 1u, ${p.gen.fn.name}(${inS}[prm.in_base + i]));`;
    } else {
      body = `if (prm.seg_start + i == 0u) { return 1u; }
  return select(0u, 1u, ${differs(T, `${inS}[prm.in_base + i]`, `${inS}[prm.in_base + i - 1u]`)});`;
    }
    genScalar = `fn scn_gen_at(i: u32) -> ${V} {
  ${body}
}`;
  }

  // ---- write (loop 3, after the tile's prefix is known)
  const writeLines: string[] = [];
  if (p.phase !== 'reduce') {
    writeLines.push(`for (var r = 0u; r < ${R}u; r++) {`, `  let b = ${rowBase};`);
    if (!compaction) {
      writeLines.push(`  var run = ${comb}(prefix, ${comb}(rbs[r], tps[r]));`);
      for (let j = 0; j < C; j++) {
        writeLines.push(
          p.write === 'inclusive'
            ? `  run = ${comb}(run, vs[r][${j}]); let r${j} = run;`
            : `  let r${j} = run; run = ${comb}(run, vs[r][${j}]);`,
        );
      }
      if (vecStores) {
        writeLines.push(`  if (full || b + 3u < prm.n) {
    out_v[(prm.out_base + b) / 4u] = vec4<${V}>(r0, r1, r2, r3);
  } else if (b < prm.n) {
    // The array's last partial vec4: its results go to ctrl and the host copies them into place.
    let tail = 2u * prm.num_segs;
    atomicStore(&ctrl[tail], bitcast<u32>(r0));
    if (b + 1u < prm.n) { atomicStore(&ctrl[tail + 1u], bitcast<u32>(r1)); }
    if (b + 2u < prm.n) { atomicStore(&ctrl[tail + 2u], bitcast<u32>(r2)); }
  }`);
      } else {
        for (let j = 0; j < C; j++) {
          writeLines.push(`  if (full || b + ${j}u < prm.n) { out_s[prm.out_base + b + ${j}u] = r${j}; }`);
        }
      }
    } else {
      writeLines.push(`  var run = prefix + rbs[r] + tps[r];`);
      for (let j = 0; j < C; j++) {
        const rejected =
          p.write === 'partition'
            ? ` else if (full || b + ${j}u < prm.n) { out_s[prm.out_base + prm.n_total - 1u - (prm.seg_start + b + ${j}u - run)] = xs[r][${j}]; }`
            : '';
        writeLines.push(`  let k${j} = ((kb[r] >> ${j}u) & 1u) != 0u;`);
        writeLines.push(`  if (k${j}) { out_s[prm.out_base + run] = xs[r][${j}]; }${rejected}`);
        writeLines.push(`  run += select(0u, 1u, k${j});`);
      }
    }
    writeLines.push('}');
  }

  // ---- tile prefix
  let prefixCode: string;
  let helpers = '';
  const carryFn = `fn scn_carry() -> ${V} {
  if (prm.first_seg != 0u) { return bitcast<${V}>(prm.init); }
  return bitcast<${V}>(atomicLoad(&ctrl[prm.num_segs + prm.seg - 1u]));
}
fn scn_carry_out(v: ${V}) {
  atomicStore(&ctrl[prm.num_segs + prm.seg], bitcast<u32>(v));
}`;
  if (p.phase === 'chained') {
    const sgMax = (e: string) => (p.subgroups ? `subgroupMax(${e})` : `(${e})`);
    const sgFold = (e: string) => (sgRed ? `${sgRed.name}(${e}, lane, sg)` : `(${e})`);
    const M = p.lookbackPerLane;
    const wr: string[] = ['var ip = 0u;', 'var np = 0u;'];
    const fw: string[] = [];
    const fa: string[] = [];
    for (let q = 0; q < M; q++) {
      wr.push(`var f${q} = SCN_INCL;`, `var v${q} = carry;`);
      wr.push(`if (t0 + ${q} >= 0) { let s = scn_read(u32(t0 + ${q})); f${q} = s.x; v${q} = bitcast<${V}>(s.y); }`);
      wr.push(`ip = select(ip, ${q + 1}u, f${q} == SCN_INCL);`, `np = select(np, ${q + 1}u, f${q} == 0u);`);
      fw.push(`lf = select(lf, ${comb}(lf, v${q}), lane + 1u > m || (lane + 1u == m && ${q + 1}u >= ip));`);
      fa.push(`af = select(af, ${comb}(af, v${q}), lane > j || (lane == j && ${q + 1}u > npj));`);
    }
    const windowRead = wr.join('\n    ');
    const foldWindow = fw.join('\n      ');
    const foldAfter = fa.join('\n      ');
    helpers = `const SCN_AGG = 1u;
const SCN_INCL = 2u;
var<workgroup> scn_prefix: ${V};

fn scn_publish(t: u32, flag: u32, v: ${V}) {
  let bits = bitcast<u32>(v);
  let s = 2u * (prm.tile_offset + t);
  atomicStore(&state[s], (flag << 16u) | (bits & 0xffffu));
  atomicStore(&state[s + 1u], (flag << 16u) | (bits >> 16u));
}

/** (flag, value bits) of tile t; flag 0 (not ready) unless both halves carry the same flag. */
fn scn_read(t: u32) -> vec2<u32> {
  let s = 2u * (prm.tile_offset + t);
  let a = atomicLoad(&state[s]);
  let b = atomicLoad(&state[s + 1u]);
  let f = select(0u, a >> 16u, (a >> 16u) == (b >> 16u));
  return vec2<u32>(f, (a & 0xffffu) | (b << 16u));
}

${genScalar}

/** Fallback: the aggregate of tile t computed from the input by this subgroup, in element order. */
fn scn_tile_reduce(t: u32, lane: u32, sg: u32) -> ${V} {
  let per = ${tile}u / sg;
  let base = t * ${tile}u + lane * per;
  var acc = ${id};
  for (var e = 0u; e < per; e++) {
    let i = base + e;
    if (i < prm.n) { acc = ${comb}(acc, scn_gen_at(i)); }
  }
  return ${sgFold('acc')};
}

/**
 * Run by one subgroup (thread 0 without subgroups): publishes the tile's aggregate, finds its
 * exclusive prefix (carry-in included), publishes the inclusive prefix, returns the exclusive one.
 */
fn scn_lookback(t: u32, agg: ${V}, lane: u32, sg: u32) -> ${V} {
  let carry = scn_carry();
  if (t == 0u) {
    let incl = ${comb}(carry, agg);
    if (lane == 0u) {
      scn_publish(0u, SCN_INCL, incl);
      if (prm.num_tiles == 1u) { scn_carry_out(incl); }
    }
    return carry;
  }
  if (lane == 0u) { scn_publish(t, SCN_AGG, agg); }
  var prefix = ${id};
  var cur = t;
  var spins = 0u;
  loop {
    // Window: tiles [cur - sg*${M}, cur); lane i holds tiles cur - sg*${M} + i*${M} + q (q < ${M}), in
    // order; tiles < 0 stand for the carry (inclusive). ip/np: 1 + index of the lane's last
    // inclusive / not-ready tile (0: none).
    let t0 = i32(cur) - i32(sg * ${M}u) + i32(lane * ${M}u);
    ${windowRead}
    let m = ${sgMax('select(0u, lane + 1u, ip > 0u)')};
    let blocked = ${sgMax('select(0u, lane + 1u, np > ip && lane + 1u >= m)')};
    if (blocked == 0u) {
      // Every tile from the nearest inclusive one on is ready: fold them in order.
      var lf = ${id};
      ${foldWindow}
      let win = ${sgFold('lf')};
      prefix = ${comb}(win, prefix);
      if (m > 0u) { break; }
      cur -= sg * ${M}u;
      spins = 0u;
      continue;
    }
    spins += 1u;
    if (spins > ${p.maxSpins}u) {
      // The last not-ready tile is still not ready: fold the ready ones after it, reduce it here.
      let j = blocked - 1u;
      let npj = ${p.subgroups ? 'subgroupShuffle(np, j)' : 'np'};
      var af = ${id};
      ${foldAfter}
      let after = ${sgFold('af')};
      let stuck = cur - sg * ${M}u + j * ${M}u + npj - 1u;
      let mine = scn_tile_reduce(stuck, lane, sg);
      prefix = ${comb}(${comb}(mine, after), prefix);
      cur = stuck;
      spins = 0u;
    }
  }
  let incl = ${comb}(prefix, agg);
  if (lane == 0u) {
    scn_publish(t, SCN_INCL, incl);
    if (t == prm.num_tiles - 1u) { scn_carry_out(incl); }
  }
  return prefix;
}`;
    prefixCode = `  if (ids.sg_id == 0u) {
    let pfx = scn_lookback(tile, total, ids.lane, ids.sg_size);
    if (ids.lane == 0u) { scn_prefix = pfx; }
  }
  let prefix = workgroupUniformLoad(&scn_prefix);`;
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
      : '  let tile = wg_index;';
  const body =
    p.phase === 'reduce'
      ? `  if (ids.lid == 0u) { sums[prm.tile_offset + tile] = bitcast<u32>(total); }`
      : `${prefixCode}
  ${writeLines.join('\n  ')}`;

  const name = mangle(
    'scn_tile',
    p.phase,
    T,
    c.name,
    p.gen.kind,
    p.gen.kind === 'adjacent-different' ? '' : (p.gen.fn?.name ?? 'id'),
    p.write,
    p.vec ? 'vec' : 'scalar',
    p.inPlace ? 'inplace' : 'apart',
    w,
    k,
    p.subgroups ? `sg${p.minSubgroupSize}` : 'wg',
    p.maxSpins,
    p.atomicTileIds ? 'atomic' : 'wgid',
    p.lookbackPerLane,
  );
  const floatEq = p.gen.kind === 'adjacent-different' && T === 'f32' ? floatEqualFragment() : undefined;
  return fragment({
    name,
    deps: [
      threadIds(p.subgroups),
      c.combine,
      scan,
      red,
      sgRed,
      p.gen.kind === 'adjacent-different' ? undefined : p.gen.fn,
      floatEq,
    ],
    enables: p.subgroups && p.phase === 'chained' ? ['subgroups'] : [],
    workgroupBytes: 8,
    code: `${PARAMS_STRUCT}
${lines.join('\n')}
var<workgroup> scn_tile: u32;
${carryFn}
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

export interface SpineKernelParams {
  readonly combiner: Combiner;
  readonly workgroupSize: number;
  readonly subgroups: boolean;
  readonly minSubgroupSize: number;
}

/**
 * Builds pass 2 of reduce-then-scan: one workgroup turns `sums[tile_offset .. + num_tiles)` into
 * exclusive prefixes that include the segment's carry-in, and writes the segment's carry out.
 * Bindings: 0 params, 1 sums, 2 ctrl. Needs: one workgroup exclusive scan; 4 sums per thread per step.
 */
export function spineKernel(p: SpineKernelParams): WgslFragment {
  const w = p.workgroupSize;
  const c = p.combiner;
  const V = c.wgslType;
  const comb = c.combine.name;
  const id = c.identity;
  const scan = workgroupExclusiveScan({
    combiner: c,
    workgroupSize: w,
    subgroups: p.subgroups,
    minSubgroupSize: p.minSubgroupSize,
  });
  const name = mangle('scn_spine', c.name, w, p.subgroups ? `sg${p.minSubgroupSize}` : 'wg');
  return fragment({
    name,
    deps: [threadIds(p.subgroups), c.combine, scan],
    code: `${PARAMS_STRUCT}
@group(0) @binding(0) var<uniform> prm: ScnParams;
@group(0) @binding(1) var<storage, read_write> sums: array<u32>;
@group(0) @binding(2) var<storage, read_write> ctrl: array<atomic<u32>>;
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

/** Uniform parameters of the finish kernel (8 u32). */
const FINISH_STRUCT = `struct ScnFinish {
  n: u32,
  count_slot: u32,
  src_base: u32,
  dst_base: u32,
  cap: u32,
  pad0: u32,
  pad1: u32,
  pad2: u32,
}`;

/**
 * Builds the copy-back of a compaction computed into a temporary (`src`, bound whole) into its
 * destination (`dst`): 'prefix' copies the `count` kept elements when count <= cap (else nothing, so
 * an output too short is left untouched); 'all' copies all n; 'stable-partition' copies the kept
 * elements and reverses the rejected ones (written from the end) back into input order.
 * Bindings: 0 params, 1 ctrl (read), 2 src (read), 3 dst (read_write). One element per thread.
 */
export function finishKernel(type: NumericType, mode: FinishMode): WgslFragment {
  const name = mangle('scn_finish', type, mode);
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
    code: `${FINISH_STRUCT}
@group(0) @binding(0) var<uniform> prm: ScnFinish;
@group(0) @binding(1) var<storage, read> ctrl: array<u32>;
@group(0) @binding(2) var<storage, read> src: array<${type}>;
@group(0) @binding(3) var<storage, read_write> dst: array<${type}>;
@compute @workgroup_size(256) fn main(${entryParams(false)}) {
${entryPrologue(false)}
  let i = wg_index * 256u + ids.lid;
  if (i >= prm.n) { return; }
  let count = ctrl[prm.count_slot];
  ${copy}
}`,
  });
}
