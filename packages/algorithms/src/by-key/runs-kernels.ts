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
 * Tiles are never waited on: their order comes from the count pass, so a tile's time does not
 * depend on its predecessors (the chained form's count look-back cost 40-60 us at 2^24 on the
 * H100, docs/benchmarks/h100-2026-11-24d.md).
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
  threadIds,
  unrolled,
  type WgslFragment,
  type WorkgroupParams,
  workgroupExclusiveScan,
  workgroupExclusiveScanRows,
  workgroupReduce,
} from '@webdpl/core';

/**
 * The interface of the count, spine and tile kernels: the segment's length, first element and the
 * input's length; the tiles before the segment and all tiles; the bases of the segment's first key
 * and value in their windows and of the outputs in theirs; the outputs' length (`cap`); the word
 * of tile 0's count and of the total in `scratch` (the tiles' records at word 0, 4 per tile); a
 * one-tile call (`single`: no count pass, spine nor fix-up). Bindings: `scratch` (records, counts,
 * total), the keys (`keys_v` as vec4s on the vec4 path, else `keys_s`), the values likewise, the
 * outputs bound whole, and (a count pass that scans the counts itself, `RunsKernelParams.spine`)
 * `spine`: word 0 the count of finished tiles, word 1 + t tile t's published count; (a tile pass
 * that runs the fix-up itself, `RunsKernelParams.fix`) `recs_a`: word 0 the count of finished
 * tiles, words 1 + 8t.. tile t's record published in 16-bit halves.
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
    },
  },
  bindings: {
    scratch: { binding: 1, access: 'read_write', type: 'u32' },
    keys_v: { binding: 2, access: 'read', form: 'vec4', optional: true },
    keys_s: { binding: 2, access: 'read', optional: true },
    vals_v: { binding: 3, access: 'read', form: 'vec4', optional: true },
    vals_s: { binding: 3, access: 'read', optional: true },
    kout: { binding: 4, access: 'read_write', optional: true },
    vout: { binding: 5, access: 'read_write', optional: true },
    spine: { binding: 6, access: 'read_write', type: 'u32', form: 'atomic', optional: true },
    recs_a: { binding: 7, access: 'read_write', type: 'u32', form: 'atomic', optional: true },
  },
});

export type RunsPhase = 'count' | 'tile';

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
   * Count pass: the tile's elements (workgroupSize x itemsPerThread of the tile pass) when this
   * pass runs its own geometry: `itemsPerThread` striped items per thread (vec4s on the vec path),
   * `workgroupSize` = tile / itemsPerThread threads. Absent: the tile pass's rows.
   */
  readonly stripedTile?: number;
  /**
   * Count pass: its last workgroup to finish scans the tile counts (`runsSpineCode`; one
   * dispatch less), polling a count not yet visible `spins` times before counting that tile's
   * heads itself. Absent: `runsSpineKernel` runs after the pass.
   */
  readonly spine?: { readonly spins: number };
  /**
   * Tile pass: its last workgroup to finish runs the fix-up (`runsFixKernel`'s loop) over the
   * records published in `recs_a`, likewise (a record not yet visible polled `spins` times, then
   * computed from the tile's keys and values). Absent: `runsFixKernel` runs after the pass.
   */
  readonly fix?: { readonly spins: number };
  /**
   * Tile pass on the vec path: each thread holds `itemsPerThread / 4` striped rows of 4 consecutive
   * items (row r at tile position r * 4 * workgroupSize + 4 * lid: coalesced vec4 loads), the rows
   * scanned together (`workgroupExclusiveScanRows`) and chained in tile order. Absent: each thread's
   * `itemsPerThread` consecutive items.
   */
  readonly rows?: boolean;
}

/** RBK's variant of a phase: the bindings it declares (`spine`: the count pass scans the counts). */
export function runsUse(phase: RunsPhase | 'spine', vec: boolean, fused = false): InterfaceUse<typeof RBK.spec> {
  if (phase === 'spine') return {};
  const keys = vec ? { keys_v: true } : { keys_s: true };
  if (phase === 'count') return fused ? { ...keys, spine: true } : keys;
  const tile = { ...keys, ...(vec ? { vals_v: true } : { vals_s: true }), kout: true, vout: true };
  return fused ? { ...tile, recs_a: true } : tile;
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
    p.stripedTile ? `striped${p.stripedTile}` : 'rows',
    p.spine ? `spine${p.spine.spins}` : 'nospine',
    p.fix ? `fix${p.fix.spins}` : 'nofix',
    p.rows ? 'tilerows' : 'blocked',
  );
}

const U32_PLUS = combinerOf(plus, 'u32');

/**
 * The count or tile kernel. A workgroup's tile is its index in the segment (`wg_index`); thread
 * `lid` holds the tile's items [lid * I, (lid + 1) * I), loaded as vec4s on the vec path.
 */
export function runsKernel(p: RunsKernelParams): WgslFragment {
  const w = p.workgroupSize;
  const I = p.itemsPerThread;
  const tile = w * I;
  const K = p.keyType;
  const T = p.valueType;
  const wp = { workgroupSize: w, subgroups: p.subgroups, minSubgroupSize: p.minSubgroupSize };
  const keysArr = p.vec ? 'keys_v' : 'keys_s';
  const keyAt = (i: string) => (p.vec ? `keys_v[(${i}) / 4u][(${i}) % 4u]` : `keys_s[${i}]`);
  const use = runsUse(p.phase, p.vec, p.phase === 'count' ? p.spine !== undefined : p.fix !== undefined);
  // The tile's record words 2 and 3 (whether its first head starts it, the fold before that head).
  const recAt = (k: string) => (p.fix ? `rbk_rec${k === '2u' ? 'z' : 'w'}` : `scratch[4u * g + ${k}]`);
  const refs = ['scratch', ...Object.keys(use)].map((b) => `_ = &${b};`).join(' ');
  const load = (array: string, base: string, reg: (j: number) => string, type: string) =>
    loadRun({ items: I, type, reg, array, vec: p.vec, base, first: 'first', full: 'full', n: 'prm.n' });
  if (p.phase === 'count' && p.stripedTile) return stripedCountKernel(p, p.stripedTile);
  const rows = p.phase === 'tile' && p.rows === true && p.vec && I % 4 === 0;
  const R = I / 4;
  // Rows: item j is component j % 4 of row j / 4, at segment position e{row} + j % 4.
  const rowOf = (j: number) => j >> 2;
  const rowLines = () => [
    ...Array.from({ length: R }, (_, r) => `let e${r} = tile * ${tile}u + ${r * 4 * w}u + ids.lid * 4u;`),
    ...Array.from(
      { length: R },
      (_, r) => `var kv${r}: vec4<${K}>; var xv${r}: vec4<${T}>; var kb${r}: ${K};
  if (e${r} < prm.n) {
    kv${r} = keys_v[(prm.k_base + e${r}) / 4u];
    xv${r} = vals_v[(prm.v_base + e${r}) / 4u];
    if (prm.seg_start + e${r} != 0u) { kb${r} = ${keyAt(`prm.k_base + e${r} - 1u`)}; }
  }`,
    ),
    ...Array.from({ length: I }, (_, j) => {
      const r = rowOf(j);
      const c = j % 4;
      const head =
        c === 0
          ? `(prm.seg_start + e${r} == 0u || !${p.keyEq.name}(kb${r}, k${j}))`
          : `!${p.keyEq.name}(k${j - 1}, k${j})`;
      return `let k${j} = kv${r}[${c}]; let x${j} = xv${r}[${c}]; let ok${j} = e${r} + ${c}u < prm.n; let h${j} = ok${j} && ${head};`;
    }),
  ];
  const lines: string[] = rows
    ? rowLines()
    : [
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
  if (p.phase === 'count') {
    const reduce = workgroupReduce({ ...wp, combiner: U32_PLUS });
    deps.push(reduce);
    lines.push(
      `let c = ${unrolled(I, (j) => `select(0u, 1u, h${j})`, ' + ')};`,
      `let heads = ${reduce.name}(c, ids);`,
      ...countOut(p),
    );
    if (p.spine) deps.push(spineScan(p));
  } else {
    const op = p.value.combine.name;
    const comb = p.pairs.combine.name;
    const fold = (c: string, a: string, js: number[]) => [
      `var ${c} = 0u;`,
      `var ${a} = ${p.value.identity};`,
      ...js.map((j) => `if (h${j}) { ${c} += 1u; ${a} = x${j}; } else if (ok${j}) { ${a} = ${op}(${a}, x${j}); }`),
    ];
    const rowItems = (r: number) => [0, 1, 2, 3].map((c) => 4 * r + c);
    const scan = rows
      ? workgroupExclusiveScanRows({ ...wp, combiner: p.pairs }, R)
      : workgroupExclusiveScan({ ...wp, combiner: p.pairs });
    deps.push(p.value.combine, p.pairs.combine, scan);
    lines.push(
      // The thread's (heads, fold since its last head) in registers (per row), then the tile's scan.
      ...(rows
        ? [
            ...Array.from({ length: R }, (_, r) => fold(`c${r}`, `a${r}`, rowItems(r))).flat(),
            `let sr = ${scan.name}(${Array.from({ length: R }, (_, r) => `vec2<u32>(c${r}, bitcast<u32>(a${r}))`).join(', ')}, ids);`,
            `var carry = ${p.pairs.identity};`,
            ...Array.from(
              { length: R },
              (_, r) => `let ex${r} = ${comb}(carry, sr.p${r}); carry = ${comb}(carry, sr.t${r});`,
            ),
            'let total = carry;',
          ]
        : [
            ...load(p.vec ? 'vals_v' : 'vals_s', 'prm.v_base', (j) => `x${j}`, T),
            ...fold(
              'c',
              'a',
              Array.from({ length: I }, (_, j) => j),
            ),
            'var total: vec2<u32>;',
            `let ex = ${scan.name}(vec2<u32>(c, bitcast<u32>(a)), ids, &total);`,
          ]),
      // The runs before the tile (the scanned counts), and whether every run fits the outputs.
      'let g = prm.tile_offset + tile;',
      'var runs_before = 0u;',
      'var fits = total.x <= prm.cap;',
      `if (prm.single == 0u) { runs_before = scratch[prm.cnt_base + g]; fits = scratch[prm.total_at] <= prm.cap; }`,
      'else if (ids.lid == 0u) { scratch[prm.total_at] = total.x; }',
      // The tile's record for the fix-up: head count and fold since its last head (or of the tile).
      p.fix ? '' : 'if (ids.lid == 0u) { scratch[4u * g] = total.x; scratch[4u * g + 1u] = total.y; }',
      // The walk: at each head the key to keysOut and the run before it to valuesOut, except at the
      // tile's first head (rc == runs_before), whose run started in an earlier tile: its part in
      // this tile goes to the record (whether the head starts the tile, the fold before it).
      `if (fits) {
    let last = prm.n_total - 1u - prm.seg_start;
    ${(rows ? Array.from({ length: R }, (_, r) => r) : [-1])
      .map((r) => {
        const js = r < 0 ? Array.from({ length: I }, (_, j) => j) : rowItems(r);
        const ex = r < 0 ? 'ex' : `ex${r}`;
        const lo = r < 0 ? 'first' : `e${r}`;
        const at = (j: number) => (r < 0 ? `first + ${j}u` : `e${r} + ${j % 4}u`);
        return `{
    var rc = runs_before + ${ex}.x;
    var ra = bitcast<${T}>(${ex}.y);
    ${js
      .map(
        (j) => `if (h${j}) {
      if (rc == runs_before) {
        ${recAt('2u')} = select(0u, 1u, ${at(j)} == tile * ${tile}u);
        ${recAt('3u')} = bitcast<u32>(ra);
      } else { vout[prm.out_base + rc - 1u] = ra; }
      kout[prm.kout_base + rc] = k${j};
      rc += 1u;
      ra = x${j};
    } else if (ok${j}) { ra = ${op}(ra, x${j}); }`,
      )
      .join('\n    ')}
    // The input's last element ends the last run: written here when that run started in this tile.
    if (last >= ${lo} && last < ${lo} + ${js.length}u && rc != runs_before) { vout[prm.out_base + rc - 1u] = ra; }
    }`;
      })
      .join('\n    ')}
  }`,
      ...(p.fix ? fixOut() : []),
    );
    if (p.fix) deps.push(fixScan(p));
  }
  const name = runsKernelName(p);
  const types = { keys_v: K, keys_s: K, vals_v: T, vals_s: T, kout: K, vout: T };
  return fragment({
    name,
    deps,
    workgroupBytes: p.phase === 'count' ? (p.spine ? 4 : 0) : p.fix ? 12 : 0,
    code: `${RBK.wgsl(use, types)}
${p.phase === 'count' && p.spine ? runsSpineHelpers(p, tile, keyAt) : ''}${p.phase === 'tile' && p.fix ? runsFixHelpers(p, tile, keyAt) : ''}
@compute @workgroup_size(${w}) fn main(${entryParams(p.subgroups)}) {
${entryPrologue(p.subgroups)}
  ${refs}
  let tile = wg_index;
  let first = tile * ${tile}u + ids.lid * ${I}u;
  let full = (tile + 1u) * ${tile}u <= prm.n;
  ${lines.join('\n  ')}
}`,
  });
}

/** The tile pass's end when it runs the fix-up: its record published, a ticket, the last one's fix-up. */
function fixOut(): string[] {
  return [
    // rbk_recz and rbk_recw were written by the thread of the tile's first head.
    'workgroupBarrier();',
    'if (ids.lid == 0u) {',
    '  rbk_publish(g, vec4<u32>(total.x, total.y, rbk_recz, rbk_recw));',
    `  rbk_last = select(0u, 1u, atomicAdd(&recs_a[0], 1u) == prm.tiles - 1u);`,
    '}',
    `if (workgroupUniformLoad(&rbk_last) != 0u) { rbk_fixup(ids, fits); }`,
  ];
}

function fixScan(p: RunsKernelParams): WgslFragment {
  const wp = { workgroupSize: p.workgroupSize, subgroups: p.subgroups, minSubgroupSize: p.minSubgroupSize };
  return workgroupExclusiveScan({ ...wp, combiner: p.pairs });
}

/**
 * Module-scope WGSL of a tile pass that runs the fix-up itself (single-segment calls only), the
 * last-finisher pattern of `runsSpineHelpers`: each tile publishes its record (4 words, each in two
 * words of 16 bits beside a flag at bit 16: a value read only when all 8 carry it) before its
 * ticket; the workgroup with the last ticket runs `fixUpLoop` over them, a record not yet visible
 * polled `spins` times, then computed from the tile's keys and values by the thread that reads it
 * (0 spins: always), and clears the words and the counter for the next call.
 */
function runsFixHelpers(p: RunsKernelParams, tile: number, keyAt: (i: string) => string): string {
  const T = p.valueType;
  const op = p.value.combine.name;
  const valAt = (i: string) => (p.vec ? `vals_v[(${i}) / 4u][(${i}) % 4u]` : `vals_s[${i}]`);
  const words = Array.from({ length: 8 }, (_, k) => k);
  const half = (k: number) => `${'xyzw'[k >> 1]}`;
  return `var<workgroup> rbk_last: u32;
var<workgroup> rbk_recz: u32;
var<workgroup> rbk_recw: u32;
fn rbk_publish(t: u32, r: vec4<u32>) {
  let s = 1u + 8u * t;
  ${words.map((k) => `atomicStore(&recs_a[s + ${k}u], 0x10000u | ${k % 2 ? `(r.${half(k)} >> 16u)` : `(r.${half(k)} & 0xffffu)`});`).join('\n  ')}
}
fn rbk_clear(t: u32) {
  ${words.map((k) => `atomicStore(&recs_a[1u + 8u * t + ${k}u], 0u);`).join(' ')}
}
fn rbk_record(t: u32) -> vec4<u32> {
  let s = 1u + 8u * t;
  for (var n = 0u; n < ${p.fix?.spins ?? 0}u; n += 1u) {
    ${words.map((k) => `let a${k} = atomicLoad(&recs_a[s + ${k}u]);`).join('\n    ')}
    if ((${words.map((k) => `a${k}`).join(' & ')} & 0x10000u) != 0u) {
      return vec4<u32>(${[0, 2, 4, 6].map((k) => `(a${k} & 0xffffu) | (a${k + 1} << 16u)`).join(', ')});
    }
  }
  let lo = t * ${tile}u;
  let hi = min(lo + ${tile}u, prm.n);
  var c = 0u;
  var a = ${p.value.identity};
  var z = 0u;
  var before = 0u;
  for (var i = lo; i < hi; i += 1u) {
    let x = ${valAt('prm.v_base + i')};
    if (prm.seg_start + i == 0u || !${p.keyEq.name}(${keyAt('prm.k_base + i - 1u')}, ${keyAt('prm.k_base + i')})) {
      if (c == 0u) { z = select(0u, 1u, i == lo); before = bitcast<u32>(a); }
      c += 1u;
      a = x;
    } else { a = ${op}(a, x); }
  }
  return vec4<u32>(c, bitcast<u32>(a), z, before);
}
fn rbk_fixup(ids: WdplIds, fits: bool) {
  var last = vec4<u32>();
  if (ids.lid == 0u) { last = rbk_record(prm.tiles - 1u); }
${fixUpLoop({ workgroupSize: p.workgroupSize, combiner: p.pairs, valueType: T, op: p.value.combine, scan: fixScan(p).name, rec: (t) => `rbk_record(${t})`, clear: (t) => `rbk_clear(${t});`, out: 'vout', fits: 'fits' })}
  if (ids.lid == 0u) {
    if (fits && last.x == 0u && carry.x - 1u < prm.cap) { vout[prm.out_base + carry.x - 1u] = bitcast<${T}>(carry.y); }
    atomicStore(&recs_a[0], 0u);
  }
}`;
}

/** A published tile count in `spine` (counts are below 2^31; the scanned words never carry it). */
const PUBLISHED = '0x80000000u';

/**
 * The end of a count kernel: the tile's head count (`heads`, on thread 0) to its count word; with
 * `p.spine`, published in `spine` (flagged) instead, then a ticket from the finished-tile counter,
 * and the workgroup that takes the last ticket scans the counts (`rbk_spine_scan`).
 */
function countOut(p: RunsKernelParams): string[] {
  if (!p.spine) return ['if (ids.lid == 0u) { scratch[prm.cnt_base + prm.tile_offset + tile] = heads; }'];
  return [
    'if (ids.lid == 0u) {',
    `  atomicStore(&spine[1u + prm.tile_offset + tile], ${PUBLISHED} | heads);`,
    '  rbk_last = select(0u, 1u, atomicAdd(&spine[0], 1u) == prm.tiles - 1u);',
    '}',
    'if (workgroupUniformLoad(&rbk_last) != 0u) { rbk_spine_scan(ids); }',
  ];
}

function spineScan(p: RunsKernelParams): WgslFragment {
  const wp = { workgroupSize: p.workgroupSize, subgroups: p.subgroups, minSubgroupSize: p.minSubgroupSize };
  return workgroupExclusiveScan({ ...wp, combiner: U32_PLUS });
}

/**
 * Module-scope WGSL of a count kernel that scans the counts itself (single-segment calls only: the
 * tiles of the whole input are this dispatch's). A last-finisher pattern, no waiting on other
 * workgroups: every tile published its count before its ticket, so the last one finds every count
 * written; a count not yet visible there (relaxed atomics order nothing between locations) is polled
 * `spins` times, then counted from the tile's keys by the thread that reads it (0 spins: always).
 * `rbk_spine_scan` is `runsSpineKernel`'s scan in the finishing workgroup; it clears the published
 * words and the counter for the next call (a new scratch buffer is zeroed by WebGPU).
 */
function runsSpineHelpers(p: RunsKernelParams, tile: number, keyAt: (i: string) => string): string {
  const w = p.workgroupSize;
  const scan = spineScan(p);
  const eq = p.keyEq.name;
  const at = (j: number) => `t0 + ${j}u`;
  return `var<workgroup> rbk_last: u32;
fn rbk_count(t: u32) -> u32 {
  for (var s = 0u; s < ${p.spine?.spins ?? 0}u; s += 1u) {
    let v = atomicLoad(&spine[1u + t]);
    if (v >= ${PUBLISHED}) { return v - ${PUBLISHED}; }
  }
  let lo = t * ${tile}u;
  let hi = min(lo + ${tile}u, prm.n);
  var h = 0u;
  for (var i = lo; i < hi; i += 1u) {
    if (prm.seg_start + i == 0u || !${eq}(${keyAt('prm.k_base + i - 1u')}, ${keyAt('prm.k_base + i')})) { h += 1u; }
  }
  return h;
}
fn rbk_spine_scan(ids: WdplIds) {
  var carry = 0u;
  for (var base = 0u; base < prm.tiles; base += ${w * SPINE_ITEMS}u) {
    let t0 = base + ids.lid * ${SPINE_ITEMS}u;
    ${unrolled(SPINE_ITEMS, (j) => `var c${j} = 0u; if (${at(j)} < prm.tiles) { c${j} = rbk_count(${at(j)}); }`, '\n    ')}
    var total: u32;
    var r = carry + ${scan.name}(${unrolled(SPINE_ITEMS, (j) => `c${j}`, ' + ')}, ids, &total);
    ${unrolled(
      SPINE_ITEMS,
      (j) =>
        `if (${at(j)} < prm.tiles) { scratch[prm.cnt_base + ${at(j)}] = r; atomicStore(&spine[1u + ${at(j)}], 0u); } r += c${j};`,
      '\n    ',
    )}
    carry += total;
  }
  if (ids.lid == 0u) { scratch[prm.total_at] = carry; atomicStore(&spine[0], 0u); }
}`;
}

/**
 * The count kernel with its own geometry (`p.stripedTile`): the tile's elements read striped (thread
 * lid takes units lid, lid + w, ...: vec4s on the vec path, coalesced), each unit's heads counted
 * from its keys and the key before it (a neighbour's load: L1); a head count needs no order.
 */
function stripedCountKernel(p: RunsKernelParams, tile: number): WgslFragment {
  const w = p.workgroupSize;
  const u = p.vec ? 4 : 1;
  const loads = p.itemsPerThread / u;
  const K = p.keyType;
  const eq = p.keyEq.name;
  const keyAt = (i: string) => (p.vec ? `keys_v[(${i}) / 4u][(${i}) % 4u]` : `keys_s[${i}]`);
  const wp = { workgroupSize: w, subgroups: p.subgroups, minSubgroupSize: p.minSubgroupSize };
  const reduce = workgroupReduce({ ...wp, combiner: U32_PLUS });
  const use = runsUse('count', p.vec, p.spine !== undefined);
  const refs = ['scratch', ...Object.keys(use)].map((b) => `_ = &${b};`).join(' ');
  const q = Array.from({ length: loads }, (_, i) => i);
  const lines = [
    ...q.map((i) => `let e${i} = tile * ${tile}u + (${i * w}u + ids.lid) * ${u}u;`),
    ...q.map(
      (i) =>
        `var a${i}: ${p.vec ? `vec4<${K}>` : K}; var b${i}: ${K};
  if (e${i} < prm.n) {
    a${i} = ${p.vec ? `keys_v[(prm.k_base + e${i}) / 4u]` : `keys_s[prm.k_base + e${i}]`};
    if (prm.seg_start + e${i} != 0u) { b${i} = ${keyAt(`prm.k_base + e${i} - 1u`)}; }
  }`,
    ),
    'var c = 0u;',
    ...q.flatMap((i) => {
      const x = (c: number) => (p.vec ? `a${i}[${c}]` : `a${i}`);
      const out = [`c += select(0u, 1u, e${i} < prm.n && (prm.seg_start + e${i} == 0u || !${eq}(b${i}, ${x(0)})));`];
      for (let c = 1; c < u; c++)
        out.push(`c += select(0u, 1u, e${i} + ${c}u < prm.n && !${eq}(${x(c - 1)}, ${x(c)}));`);
      return out;
    }),
    `let heads = ${reduce.name}(c, ids);`,
    ...countOut(p),
  ];
  const types = { keys_v: K, keys_s: K };
  return fragment({
    name: runsKernelName(p),
    deps: [threadIds(p.subgroups), p.keyEq, reduce, ...(p.spine ? [spineScan(p)] : [])],
    workgroupBytes: p.spine ? 4 : 0,
    code: `${RBK.wgsl(use, types)}
${p.spine ? runsSpineHelpers(p, tile, keyAt) : ''}
@compute @workgroup_size(${w}) fn main(${entryParams(p.subgroups)}) {
${entryPrologue(p.subgroups)}
  ${refs}
  let tile = wg_index;
  ${lines.join('\n  ')}
}`,
  });
}

/** Tile counts each thread of `runsSpineKernel` scans per step. */
const SPINE_ITEMS = 4;

/**
 * One workgroup of `workgroupSize` threads: the exclusive scan of the `prm.tiles` tile counts at
 * `prm.cnt_base` in place (4 per thread per step, one workgroup scan per step, chained by a carry),
 * the total (the number of runs) to word `prm.total_at`.
 */
export function runsSpineKernel(p: {
  workgroupSize: number;
  subgroups: boolean;
  minSubgroupSize: number;
}): WgslFragment {
  const w = p.workgroupSize;
  const scan = workgroupExclusiveScan({ ...p, combiner: U32_PLUS });
  const name = mangle('rbk_spine', w, p.subgroups ? `sg${p.minSubgroupSize}` : 'wg');
  const at = (j: number) => `prm.cnt_base + t0 + ${j}u`;
  return fragment({
    name,
    deps: [threadIds(p.subgroups), scan],
    code: `${RBK.wgsl({}, {})}
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
    fields: { tiles: 'u32', cap: 'u32', out_base: 'u32', rec_base: 'u32', total_at: 'u32' },
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
  const T = p.valueType;
  const scan = workgroupExclusiveScan(p);
  const name = mangle('rbk_fix', T, c.name, p.op.name, w, p.subgroups ? `sg${p.minSubgroupSize}` : 'wg');
  const rec = (t: string) => `recs[prm.rec_base / 4u + ${t}]`;
  return fragment({
    name,
    deps: [threadIds(p.subgroups), c.combine, p.op, scan],
    code: `${RBK_FIX.wgsl({}, { out_s: T })}
@compute @workgroup_size(${w}) fn main(${entryParams(p.subgroups)}) {
${entryPrologue(p.subgroups)}
  _ = &recs; _ = &out_s;
  // Nothing is written unless every run fits the outputs (the spine's total against cap).
  let fits = recs[prm.total_at / 4u][prm.total_at % 4u] <= prm.cap;
${fixUpLoop({ ...p, scan: scan.name, rec, out: 'out_s', fits: 'fits' })}
  if (ids.lid == 0u && prm.tiles > 0u) {
    let last = ${rec('prm.tiles - 1u')};
    if (fits && last.x == 0u && carry.x - 1u < prm.cap) { out_s[prm.out_base + carry.x - 1u] = bitcast<${T}>(carry.y); }
  }
}`,
  });
}

/**
 * The fix-up's loop (`runsFixKernel`, or the tile pass's last workgroup): `carry` (declared here)
 * folds the records `rec(t)` (a vec4<u32> expression; `clear(t)`: statements after its read) in
 * tile order; the runs crossing into a tile written to `out` (at `prm.out_base`, below `prm.cap`).
 */
function fixUpLoop(p: {
  readonly workgroupSize: number;
  readonly combiner: Combiner;
  readonly valueType: NumericType;
  readonly op: WgslFragment;
  readonly scan: string;
  readonly rec: (t: string) => string;
  readonly out: string;
  readonly clear?: (t: string) => string;
  /** WGSL bool: every run fits the outputs (else nothing is written). */
  readonly fits: string;
}): string {
  const c = p.combiner;
  const comb = c.combine.name;
  const T = p.valueType;
  const at = (j: number) => `t0 + ${j}u`;
  return `  var carry = ${c.identity};
  for (var base = 0u; base < prm.tiles; base += ${p.workgroupSize * RUNS_FIX_ITEMS}u) {
    // K consecutive records per thread, all loaded first, folded, one workgroup scan.
    let t0 = base + ids.lid * ${RUNS_FIX_ITEMS}u;
    ${unrolled(RUNS_FIX_ITEMS, (j) => `var r${j} = vec4<u32>(0u, (${c.identity}).y, 1u, 0u);`, '\n    ')}
    ${unrolled(RUNS_FIX_ITEMS, (j) => `if (${at(j)} < prm.tiles) { r${j} = ${p.rec(at(j))};${p.clear ? ` ${p.clear(at(j))}` : ''} }`, '\n    ')}
    var acc = r0.xy;
    ${unrolled(RUNS_FIX_ITEMS - 1, (j) => `acc = ${comb}(acc, r${j + 1}.xy);`, '\n    ')}
    var total: vec2<u32>;
    // The runs before tile t0 and the fold of the run open at its start, then at each next tile.
    var cin = ${comb}(carry, ${p.scan}(acc, ids, &total));
    ${unrolled(
      RUNS_FIX_ITEMS,
      (j) => `if (${p.fits} && r${j}.x != 0u && cin.x > 0u && cin.x - 1u < prm.cap) {
      var f = bitcast<${T}>(cin.y);
      if (r${j}.z == 0u) { f = ${p.op.name}(f, bitcast<${T}>(r${j}.w)); }
      ${p.out}[prm.out_base + cin.x - 1u] = f;
    }
    cin = ${comb}(cin, r${j}.xy);`,
      '\n    ',
    )}
    carry = ${comb}(carry, total);
  }`;
}

/** Records each thread of `runsFixKernel` folds per step. */
const RUNS_FIX_ITEMS = 4;
