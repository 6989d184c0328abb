/**
 * The histogram kernel: every thread loads `itemsPerThread` elements per tile (strided by the
 * workgroup size, coalesced, all loads before any binning) and bins them; workgroups loop over tiles (a capped grid) and add into bins in
 * workgroup memory (privatized, atomics), merged into the global counts with one atomicAdd per
 * non-empty bin at the end; without privatization (too many bins) every element adds to the global
 * counts. With subgroups, a subgroup whose elements all fall in one bin adds its count once (the
 * contention case: constant or clustered data).
 *
 * Bin of x (see bins.ts): none when x is NaN, x < edge[0], or x >= edge[m-1] unless `open`; else
 * the k with edge[k] <= x < edge[k+1]: even bins estimate k = (f32(x) - lo) * scale and correct it
 * against the edges (exact whatever the estimate's rounding), explicit boundaries binary-search.
 * Bindings: 0 uniform HistParams, 1 input (a segment's window), 2 edges, 3 counts (atomic u32).
 * Workgroup memory: 4 bytes per privatized bin (a power of two >= the bins), as many (+ 4) for
 * the edges when they are cached there, plus the subgroup id counter with subgroups.
 */
import { entryParams, entryPrologue, fragment, mangle, threadIds, type WgslFragment } from '@webdpl/core';

export interface HistogramKernelParams {
  readonly type: 'u32' | 'i32' | 'f32';
  readonly even: boolean;
  /** Bins in workgroup memory (0: global atomics only). */
  readonly privateBins: number;
  /** Copy the edges into workgroup memory (privateBins + 1 of them at most) before binning. */
  readonly cacheEdges: boolean;
  readonly subgroups: boolean;
  readonly workgroupSize: number;
  readonly itemsPerThread: number;
}

/** Uniform parameters (12 u32). */
export const HIST_PARAMS_STRUCT = `struct HistParams {
  count: u32,
  base: u32,
  m: u32,
  open: u32,
  lo: f32,
  scale: f32,
  bins: u32,
  num_wg: u32,
  num_tiles: u32,
  pad0: u32,
  pad1: u32,
  pad2: u32,
}`;

export function histogramKernel(p: HistogramKernelParams): WgslFragment {
  const t = p.type;
  const w = p.workgroupSize;
  const priv = p.privateBins;
  // Where hist_bin reads the edges: the binding, or a copy in workgroup memory.
  const cache = p.cacheEdges && priv > 0;
  const e = cache ? 'h_e' : 'h_edges';
  const nan = t === 'f32' ? '  if ((bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u) { return HIST_NONE; }\n' : '';
  const find = p.even
    ? `  let est = (f32(v) - hp.lo) * hp.scale;
  var k = min(u32(max(est, 0.0)), top - 1u);
  loop { if (k == 0u || ${e}[k] <= v) { break; } k--; }
  loop { if (${e}[k + 1u] > v) { break; } k++; }
  return k;`
    : `  var l = 0u;
  var r = top;
  loop {
    if (r - l <= 1u) { break; }
    let mid = (l + r) >> 1u;
    if (${e}[mid] <= v) { l = mid; } else { r = mid; }
  }
  return l;`;
  const add = (k: string, c: string) =>
    priv ? `atomicAdd(&h_bins[${k}], ${c});` : `atomicAdd(&h_counts[${k}], ${c});`;
  const tally = p.subgroups
    ? `let first = subgroupBroadcastFirst(k);
        if (subgroupAll(k == first)) {
          // Uniform across the subgroup: count its lanes only here (two subgroup operations per
          // element otherwise).
          let lanes = subgroupAdd(1u);
          if (subgroupElect() && first != HIST_NONE) { ${add('first', 'lanes')} }
        } else if (k != HIST_NONE) { ${add('k', '1u')} }`
    : `if (k != HIST_NONE) { ${add('k', '1u')} }`;
  // Every load of a tile first (named registers, not a private array: those go to local memory on
  // some GPUs), then the binning; loads past the segment repeat its last element and bin to none.
  const loads: string[] = [];
  const bins: string[] = [];
  for (let q = 0; q < p.itemsPerThread; q++) {
    loads.push(`let j${q} = t0 + ${q * w}u;`, `let x${q} = h_in[min(hp.base + j${q}, last)];`);
    bins.push(`{
      var k = HIST_NONE;
      if (j${q} < hp.count) { k = hist_bin(x${q}); }
      ${tally}
    }`);
  }
  const code = `const HIST_NONE: u32 = 0xffffffffu;
${HIST_PARAMS_STRUCT}
@group(0) @binding(0) var<uniform> hp: HistParams;
@group(0) @binding(1) var<storage, read> h_in: array<${t}>;
@group(0) @binding(2) var<storage, read> h_edges: array<${t}>;
@group(0) @binding(3) var<storage, read_write> h_counts: array<atomic<u32>>;
${priv ? `var<workgroup> h_bins: array<atomic<u32>, ${priv}>;` : ''}
${cache ? `var<workgroup> h_e: array<${t}, ${priv + 1}>;` : ''}

fn hist_bin(v: ${t}) -> u32 {
${nan}  let top = hp.m - 1u;
  if (v < ${e}[0]) { return HIST_NONE; }
  if (v >= ${e}[top]) { return select(HIST_NONE, top, hp.open != 0u); }
${find}
}

@compute @workgroup_size(${w})
fn main(${entryParams(p.subgroups)}) {
${entryPrologue(p.subgroups)}
  if (wg_index >= hp.num_wg) { return; }
${
  priv
    ? `  for (var i = ids.lid; i < ${priv}u; i += ${w}u) { atomicStore(&h_bins[i], 0u); }
${
  cache
    ? `  for (var i = ids.lid; i < hp.m; i += ${w}u) { h_e[i] = h_edges[i]; }
`
    : ''
}  workgroupBarrier();`
    : ''
}
  let last = hp.base + hp.count - 1u;
  for (var tl = wg_index; tl < hp.num_tiles; tl += hp.num_wg) {
    let t0 = tl * ${w * p.itemsPerThread}u + ids.lid;
    ${loads.join('\n    ')}
    ${bins.join('\n    ')}
  }
${
  priv
    ? `  workgroupBarrier();
  for (var i = ids.lid; i < hp.bins; i += ${w}u) {
    let c = atomicLoad(&h_bins[i]);
    if (c != 0u) { atomicAdd(&h_counts[i], c); }
  }`
    : ''
}
}`;
  return fragment({
    name: mangle(
      'histogram',
      t,
      p.even ? 'even' : 'edges',
      priv,
      cache ? 'ce' : 'ge',
      p.subgroups ? 'sg' : 'wg',
      w,
      p.itemsPerThread,
    ),
    code,
    deps: [threadIds(p.subgroups)],
    enables: p.subgroups ? ['subgroups'] : [],
    workgroupBytes: priv * 4 + (cache ? (priv + 1) * 4 : 0),
  });
}
