/**
 * WGSL kernels of the merge sort (any strict weak order given as a WGSL comparator, stable):
 *
 *  - blockSortKernel: each workgroup sorts one tile (W*K keys) in workgroup memory: a stable
 *    insertion sort of each thread's K keys, then log2(W) rounds of merge-path merges.
 *  - partitionKernel: for a merge pass of runs of `width` keys, the merge-path split (keys taken
 *    from the left run) at the start of every output tile.
 *  - mergeKernel: each workgroup merges one output tile's share of a pair of runs through workgroup
 *    memory (coalesced loads and stores, per-thread merge-path splits inside the tile).
 *
 * Ties always take the left run first, so every step is stable. Values (u32 bits) move along.
 */
import {
  entryParams,
  entryPrologue,
  fragment,
  kernelInterface,
  mangle,
  threadIds,
  type WgslFragment,
  workgroupFootprint,
} from '@webdpl/core';

export interface MergeKernelParams {
  /** WGSL type of the keys (u32, i32, f32). */
  readonly keyType: string;
  /** Declares `fn <name>(a: T, b: T) -> bool`: a strict weak order ("a before b"). */
  readonly comparator: WgslFragment;
  readonly hasValues: boolean;
  /** Threads per workgroup (power of two). */
  readonly workgroupSize: number;
  readonly itemsPerThread: number;
  /**
   * Partition and merge kernels only: merge two sorted arrays (`keys_a` of `width` keys, then
   * `keys_b`, read as one range; one pair of runs) instead of the runs of one array. Each array (and
   * the output) starts at an element offset of its binding given in the uniform (MS_PARAMS_TWO), so
   * windows of buffers larger than one binding can be merged. @default false
   */
  readonly twoInputs?: boolean;
}

/** Threads per workgroup of the partition kernel. */
export const PARTITION_THREADS = 64;

/** The uniform of the block sort, partition and merge kernels: {n, width, tiles}. */
const MS_PARAMS = {
  struct: 'MsParams',
  name: 'ms_params',
  binding: 0,
  fields: { n: 'u32', width: 'u32', tiles: 'u32' },
} as const;

/**
 * The uniform of the `twoInputs` partition and merge kernels: also the element offsets of a, b and
 * the output (keys, then values) inside their bindings, so windows of larger buffers bind at
 * aligned offsets.
 */
const MS_PARAMS_TWO = {
  ...MS_PARAMS,
  fields: {
    ...MS_PARAMS.fields,
    a_off: 'u32',
    b_off: 'u32',
    o_off: 'u32',
    av_off: 'u32',
    bv_off: 'u32',
    ov_off: 'u32',
  },
} as const;

/** Bindings of the merge sort's kernels: keys of the kernel's key type (`types`), values and parts u32. */
const keys = (binding: number, access: 'read' | 'read_write') => ({ binding, access }) as const;
const words = (binding: number, access: 'read' | 'read_write') => ({ binding, access, type: 'u32' }) as const;
const vals = (binding: number, access: 'read' | 'read_write') =>
  ({ binding, access, type: 'u32', optional: true }) as const;

/** Interfaces of the merge sort's kernels; values are bound where `use` sets them (MS_*_VALUES). */
export const MS_BLOCK = kernelInterface({
  name: 'merge-sort block sort',
  params: MS_PARAMS,
  bindings: {
    keys_src: keys(1, 'read'),
    keys_dst: keys(2, 'read_write'),
    vals_src: vals(3, 'read'),
    vals_dst: vals(4, 'read_write'),
  },
});
/** The block sort in place (when the merge passes leave the result where it started). */
export const MS_BLOCK_IN_PLACE = kernelInterface({
  name: 'merge-sort block sort (in place)',
  params: MS_PARAMS,
  bindings: { keys_src: keys(1, 'read_write'), vals_src: vals(3, 'read_write') },
});
export const MS_PARTITION = kernelInterface({
  name: 'merge-sort partition',
  params: MS_PARAMS,
  bindings: { keys_src: keys(1, 'read'), parts: words(2, 'read_write') },
});
export const MS_PARTITION_TWO = kernelInterface({
  name: 'merge-sort partition (two inputs)',
  params: MS_PARAMS_TWO,
  bindings: { keys_a: keys(1, 'read'), parts: words(2, 'read_write'), keys_b: keys(6, 'read') },
});
export const MS_MERGE = kernelInterface({
  name: 'merge-sort merge',
  params: MS_PARAMS,
  bindings: {
    keys_src: keys(1, 'read'),
    keys_dst: keys(2, 'read_write'),
    parts: words(3, 'read'),
    vals_src: vals(4, 'read'),
    vals_dst: vals(5, 'read_write'),
  },
});
export const MS_MERGE_TWO = kernelInterface({
  name: 'merge-sort merge (two inputs)',
  params: MS_PARAMS_TWO,
  bindings: {
    keys_a: keys(1, 'read'),
    keys_dst: keys(2, 'read_write'),
    parts: words(3, 'read'),
    vals_a: vals(4, 'read'),
    vals_dst: vals(5, 'read_write'),
    keys_b: keys(6, 'read'),
    vals_b: vals(7, 'read'),
  },
});
export const MS_PROBE = kernelInterface({
  name: 'merge-sort probe',
  params: { struct: 'MsProbe', name: 'probe', binding: 0, fields: { count: 'u32' } },
  bindings: { pairs: keys(1, 'read'), flags: words(2, 'read_write') },
});
/** The variants with values of MS_BLOCK (and, vals_src alone, MS_BLOCK_IN_PLACE), MS_MERGE, MS_MERGE_TWO. */
export const MS_BLOCK_VALUES = { vals_src: true, vals_dst: true } as const;
export const MS_BLOCK_IN_PLACE_VALUES = { vals_src: true } as const;
export const MS_MERGE_VALUES = { vals_src: true, vals_dst: true } as const;
export const MS_MERGE_TWO_VALUES = { vals_a: true, vals_b: true, vals_dst: true } as const;

function key(kind: string, p: MergeKernelParams, extra: (string | number | boolean)[] = []): string {
  return mangle(
    kind,
    p.keyType,
    p.comparator.name,
    p.hasValues ? 'kv' : 'k',
    p.workgroupSize,
    p.itemsPerThread,
    ...(p.twoInputs ? ['two'] : []),
    ...extra,
  );
}

/**
 * Where the partition and merge kernels read keys (and values): the source array's bindings
 * (keys_src, vals_src), or with `twoInputs` a and b (keys_a, keys_b, vals_a, vals_b) read as one
 * range through ms_key / ms_val (`code`), and the pair width that makes the whole range one pair of
 * runs.
 */
function sources(p: MergeKernelParams, values: boolean) {
  const t = p.keyType;
  if (!p.twoInputs) {
    return {
      code: '',
      key: (i: string) => `keys_src[${i}]`,
      val: (i: string) => `vals_src[${i}]`,
      w2: '2u * ms_params.width',
    };
  }
  const pick = (a: string, b: string, ty: string, name: string, offs: [string, string]) =>
    `fn ${name}(i: u32) -> ${ty} {
  if (i < ms_params.width) { return ${a}[ms_params.${offs[0]} + i]; }
  return ${b}[ms_params.${offs[1]} + i - ms_params.width];
}`;
  return {
    code: `${pick('keys_a', 'keys_b', t, 'ms_key', ['a_off', 'b_off'])}
${values ? pick('vals_a', 'vals_b', 'u32', 'ms_val', ['av_off', 'bv_off']) : ''}`,
    key: (i: string) => `ms_key(${i})`,
    val: (i: string) => `ms_val(${i})`,
    // One pair: (d / w2) * w2 is 0 and min(w2, n) is n.
    w2: '0xffffffffu',
  };
}

/** Tile memory, the in-tile merge path and the serial merge of K outputs into registers. */
function tileMerge(p: MergeKernelParams): string {
  const t = p.keyType;
  const k = p.itemsPerThread;
  const tile = p.workgroupSize * k;
  const cmp = p.comparator.name;
  const v = p.hasValues;
  return `const MS_W: u32 = ${p.workgroupSize}u;
const MS_K: u32 = ${k}u;
const MS_TILE: u32 = ${tile}u;
var<workgroup> ms_keys: array<${t}, ${tile}>;
${v ? `var<workgroup> ms_vals: array<u32, ${tile}>;` : ''}

/** Keys taken from run A ([a_beg, a_beg + a_len)) among the first diag outputs of merging A and B. */
fn ms_merge_path(a_beg: u32, a_len: u32, b_beg: u32, b_len: u32, diag: u32) -> u32 {
  var lo = select(0u, diag - b_len, diag > b_len);
  var hi = min(diag, a_len);
  while (lo < hi) {
    let mid = (lo + hi) >> 1u;
    if (!${cmp}(ms_keys[b_beg + diag - 1u - mid], ms_keys[a_beg + mid])) { lo = mid + 1u; } else { hi = mid; }
  }
  return lo;
}

/** Merges \`count\` (<= K) outputs from A at i0 (< a_end) and B at j0 (< b_end) into registers. */
fn ms_merge_serial(a_end: u32, b_end: u32, i0: u32, j0: u32, count: u32, rk: ptr<function, array<${t}, ${k}>>${
    v ? `, rv: ptr<function, array<u32, ${k}>>` : ''
  }) {
  var i = i0;
  var j = j0;
  // The next key of each side in registers: one workgroup-memory read per output (past a side's
  // end the key read is any in the tile and never taken).
  var ka = ms_keys[min(i, MS_TILE - 1u)];
  var kb = ms_keys[min(j, MS_TILE - 1u)];
  for (var k = 0u; k < MS_K; k++) {
    if (k < count) {
      let take_a = i < a_end && (j >= b_end || !${cmp}(kb, ka));
      (*rk)[k] = select(kb, ka, take_a);
      ${v ? '(*rv)[k] = ms_vals[select(j, i, take_a)];' : ''}
      if (take_a) {
        i++;
        ka = ms_keys[min(i, MS_TILE - 1u)];
      } else {
        j++;
        kb = ms_keys[min(j, MS_TILE - 1u)];
      }
    }
  }
}`;
}

function vDecl(p: MergeKernelParams): string {
  return p.hasValues ? `var rv: array<u32, ${p.itemsPerThread}>;` : '';
}
function vArg(p: MergeKernelParams): string {
  return p.hasValues ? ', &rv' : '';
}
function vIf(p: MergeKernelParams, code: string): string {
  return p.hasValues ? code : '';
}

/** WGSL: the thread's merged run (`rk`, `rv`: `cnt` elements) into the tile at `out0`. */
function writeRun(p: MergeKernelParams): string {
  // A constant trip count, so the loop unrolls and rk stays in registers (a runtime bound indexes
  // it dynamically: local memory on some GPUs).
  return `for (var k = 0u; k < MS_K; k++) {
    if (k < cnt) {
      ms_keys[out0 + k] = rk[k];
      ${vIf(p, 'ms_vals[out0 + k] = rv[k];')}
    }
  }`;
}

/** WGSL: the tile's `valid` keys (and values) to `dst` (and `vdst`) at `base`, coalesced. */
function storeTile(p: MergeKernelParams, dst: string, vdst: string): string {
  const [o, ov] = p.twoInputs ? ['ms_params.o_off + ', 'ms_params.ov_off + '] : ['', ''];
  return `for (var k = 0u; k < MS_K; k++) {
    let q = k * MS_W + ids.lid;
    if (q < valid) {
      ${dst}[${o}base + q] = ms_keys[q];
      ${vIf(p, `${vdst}[${ov}base + q] = ms_vals[q];`)}
    }
  }`;
}

/** Workgroup bytes of a tile: keys, and values when there are any. */
function tileBytes(p: MergeKernelParams): number {
  return p.workgroupSize * p.itemsPerThread * (p.hasValues ? 8 : 4);
}

/**
 * Sorts each tile of W*K keys in workgroup memory (stable). Bindings (MS_BLOCK): the uniform {n},
 * keys src and dst, values src and dst; `inPlace` (MS_BLOCK_IN_PLACE) binds one read_write array of
 * keys (and one of values) instead.
 * Workgroup memory: tile x (4 + 4 with values) bytes. Cost: K^2/2 comparisons per thread, then
 * log2(W) rounds of a log2(tile) search and K comparisons per thread.
 */
/**
 * Workgroup bytes of the merge sort's tile kernels for `p` (block sort and merge hold the same tile:
 * W*K keys, and as many values), measured on the block-sort fragment.
 */
export function mergeSortFootprint(p: MergeKernelParams): number {
  return workgroupFootprint(blockSortKernel({ ...p, inPlace: false }));
}

export function blockSortKernel(p: MergeKernelParams & { readonly inPlace: boolean }): WgslFragment {
  const t = p.keyType;
  const cmp = p.comparator.name;
  const src = 'keys_src';
  const dst = p.inPlace ? 'keys_src' : 'keys_dst';
  const vsrc = 'vals_src';
  const vdst = p.inPlace ? 'vals_src' : 'vals_dst';
  const bindings = p.inPlace
    ? MS_BLOCK_IN_PLACE.wgsl(p.hasValues ? MS_BLOCK_IN_PLACE_VALUES : {}, { keys_src: t })
    : MS_BLOCK.wgsl(p.hasValues ? MS_BLOCK_VALUES : {}, { keys_src: t, keys_dst: t });
  const code = `${tileMerge(p)}
${bindings}

@compute @workgroup_size(${p.workgroupSize})
fn main(${entryParams(false)}) {
${entryPrologue(false)}
  let n = ms_params.n;
  let base = wg_index * MS_TILE;
  if (base >= n) { return; }
  let valid = min(MS_TILE, n - base);
  for (var k = 0u; k < MS_K; k++) {
    let q = k * MS_W + ids.lid;
    if (q < valid) {
      ms_keys[q] = ${src}[base + q];
      ${vIf(p, `ms_vals[q] = ${vsrc}[base + q];`)}
    }
  }
  workgroupBarrier();
  let out0 = ids.lid * MS_K;
  var cnt = 0u;
  if (out0 < valid) { cnt = min(MS_K, valid - out0); }
  var rk: array<${t}, ${p.itemsPerThread}>;
  ${vDecl(p)}
  for (var k = 0u; k < MS_K; k++) {
    if (k < cnt) {
      rk[k] = ms_keys[out0 + k];
      ${vIf(p, 'rv[k] = ms_vals[out0 + k];')}
    }
  }
  for (var a = 1u; a < MS_K; a++) {
    if (a < cnt) {
      let x = rk[a];
      ${vIf(p, 'let xv = rv[a];')}
      var b = a;
      while (b > 0u && ${cmp}(x, rk[b - 1u])) {
        rk[b] = rk[b - 1u];
        ${vIf(p, 'rv[b] = rv[b - 1u];')}
        b--;
      }
      rk[b] = x;
      ${vIf(p, 'rv[b] = xv;')}
    }
  }
  ${writeRun(p)}
  for (var width = MS_K; width < MS_TILE; width = width * 2u) {
    workgroupBarrier();
    if (out0 < valid) {
      let pair = (out0 / (2u * width)) * (2u * width);
      let a_end = min(pair + width, valid);
      let b_end = min(pair + 2u * width, valid);
      let diag = out0 - pair;
      let i = ms_merge_path(pair, a_end - pair, a_end, b_end - a_end, diag);
      ms_merge_serial(a_end, b_end, pair + i, a_end + diag - i, cnt, &rk${vArg(p)});
    }
    workgroupBarrier();
    ${writeRun(p)}
  }
  workgroupBarrier();
  ${storeTile(p, dst, vdst)}
}`;
  const bytes = tileBytes(p);
  return fragment({
    name: key('ms_block', p, [p.inPlace ? 'ip' : 'oop']),
    code,
    deps: [threadIds(false), p.comparator],
    workgroupBytes: bytes,
  });
}

/**
 * The merge-path split at the start of every output tile of a merge pass (runs of `width` keys
 * merged pairwise): `parts[s]` = keys taken from the pair's left run before output s*tile.
 * Bindings (MS_PARTITION, MS_PARTITION_TWO): the uniform {n, width, tiles}, keys, parts. One thread
 * per split, log2(width) reads.
 */
export function partitionKernel(p: MergeKernelParams): WgslFragment {
  const cmp = p.comparator.name;
  const tile = p.workgroupSize * p.itemsPerThread;
  const src = sources(p, false);
  const t = p.keyType;
  const decls = p.twoInputs
    ? MS_PARTITION_TWO.wgsl({}, { keys_a: t, keys_b: t })
    : MS_PARTITION.wgsl({}, { keys_src: t });
  const code = `${decls}
${src.code}

@compute @workgroup_size(${PARTITION_THREADS})
fn main(${entryParams(false)}) {
${entryPrologue(false)}
  let s = wg_index * ${PARTITION_THREADS}u + ids.lid;
  if (s > ms_params.tiles) { return; }
  let n = ms_params.n;
  let w2 = ${src.w2};
  let d = min(s * ${tile}u, n);
  let pair = (d / w2) * w2;
  let a_end = min(pair + ms_params.width, n);
  let b_end = min(pair + w2, n);
  let a_len = a_end - pair;
  let b_len = b_end - a_end;
  let diag = d - pair;
  var lo = select(0u, diag - b_len, diag > b_len);
  var hi = min(diag, a_len);
  while (lo < hi) {
    let mid = (lo + hi) >> 1u;
    if (!${cmp}(${src.key('a_end + diag - 1u - mid')}, ${src.key('pair + mid')})) { lo = mid + 1u; } else { hi = mid; }
  }
  parts[s] = lo;
}`;
  return fragment({ name: key('ms_partition', p), code, deps: [threadIds(false), p.comparator] });
}

/**
 * One merge pass: workgroup t produces output tile t of the merge of its pair of runs, loading
 * exactly the keys it needs (split by `parts`) into workgroup memory. Bindings (MS_MERGE,
 * MS_MERGE_TWO): the uniform {n, width, tiles}, keys src and dst, parts, values src and dst. Workgroup memory as the
 * block sort. Traffic: keys (and values) read once and written once per pass.
 */
export function mergeKernel(p: MergeKernelParams): WgslFragment {
  const t = p.keyType;
  const src = sources(p, p.hasValues);
  const decls = p.twoInputs
    ? MS_MERGE_TWO.wgsl(p.hasValues ? MS_MERGE_TWO_VALUES : {}, { keys_a: t, keys_b: t, keys_dst: t })
    : MS_MERGE.wgsl(p.hasValues ? MS_MERGE_VALUES : {}, { keys_src: t, keys_dst: t });
  const code = `${tileMerge(p)}
${decls}
${src.code}

@compute @workgroup_size(${p.workgroupSize})
fn main(${entryParams(false)}) {
${entryPrologue(false)}
  let n = ms_params.n;
  let base = wg_index * MS_TILE;
  if (base >= n) { return; }
  let valid = min(MS_TILE, n - base);
  let width = ms_params.width;
  let w2 = ${src.w2};
  let pair = (base / w2) * w2;
  let a_end = min(pair + width, n);
  let b_end = min(pair + w2, n);
  let len_a = a_end - pair;
  let len_b = b_end - a_end;
  let d0 = base - pair;
  let d1 = d0 + valid;
  let i0 = parts[wg_index];
  var i1 = len_a;
  if (d1 < len_a + len_b) { i1 = parts[wg_index + 1u]; }
  let j0 = d0 - i0;
  let na = i1 - i0;
  for (var k = 0u; k < MS_K; k++) {
    let q = k * MS_W + ids.lid;
    if (q < valid) {
      var src = pair + i0 + q;
      if (q >= na) { src = a_end + j0 + (q - na); }
      ms_keys[q] = ${src.key('src')};
      ${vIf(p, `ms_vals[q] = ${src.val('src')};`)}
    }
  }
  workgroupBarrier();
  let out0 = ids.lid * MS_K;
  var cnt = 0u;
  if (out0 < valid) { cnt = min(MS_K, valid - out0); }
  var rk: array<${t}, ${p.itemsPerThread}>;
  ${vDecl(p)}
  if (out0 < valid) {
    let i = ms_merge_path(0u, na, na, valid - na, out0);
    ms_merge_serial(na, valid, i, na + out0 - i, cnt, &rk${vArg(p)});
  }
  workgroupBarrier();
  ${writeRun(p)}
  workgroupBarrier();
  ${storeTile(p, 'keys_dst', 'vals_dst')}
}`;
  const bytes = tileBytes(p);
  return fragment({ name: key('ms_merge', p), code, deps: [threadIds(false), p.comparator], workgroupBytes: bytes });
}

/** Threads per workgroup of the probe kernel. */
export const PROBE_THREADS = 64;

/**
 * Evaluates the comparator on pairs gathered by the host (the merge-path searches of merges beyond
 * one storage binding, engines/merge-sort/windows.ts): `flags[q] = cmp(pairs[2q + 1], pairs[2q])`
 * for q < count. Bindings (MS_PROBE): the uniform {count}, pairs (read), flags (u32). No workgroup
 * memory.
 */
export function probeKernel(p: Pick<MergeKernelParams, 'keyType' | 'comparator'>): WgslFragment {
  const t = p.keyType;
  const code = `${MS_PROBE.wgsl({}, { pairs: t })}

@compute @workgroup_size(${PROBE_THREADS})
fn main(${entryParams(false)}) {
${entryPrologue(false)}
  let q = wg_index * ${PROBE_THREADS}u + ids.lid;
  if (q >= probe.count) { return; }
  flags[q] = select(0u, 1u, ${p.comparator.name}(pairs[2u * q + 1u], pairs[2u * q]));
}`;
  return fragment({
    name: mangle('ms_probe', t, p.comparator.name),
    code,
    deps: [threadIds(false), p.comparator],
  });
}
