/**
 * The histogram kernel: every thread loads `loads` values per tile (strided by the workgroup size,
 * coalesced, all loads before any binning; each a vec4 of 4 elements in the vector variant, else one
 * element) and bins them; workgroups loop over tiles (a capped grid) and add into bins in workgroup
 * memory (privatized, atomics; `subHistograms` copies, thread lid adding into copy lid % copies, to
 * spread contention), merged into the global counts with one atomicAdd per non-empty bin at the
 * end; without privatization (too many bins) every element adds to the global counts. With
 * subgroups, a subgroup whose elements all fall in one bin adds its count once (the contention
 * case: constant or clustered data).
 *
 * Vector variant: the window is bound twice, as elements (binding 1) and as vec4<u32> (binding 4);
 * the whole vec4s of the segment go through the tiles, the at most 3 + 3 elements before the first
 * and after the last whole vec4 are binned one by one by workgroup 0.
 *
 * Bin of x (see bins.ts): none when x is NaN, x < edge[0], or x >= edge[m-1] unless `open`; else
 * the k with edge[k] <= x < edge[k+1]. Kinds: 'shift' / 'div' (integer even bins whose edges are
 * exactly ulo + k * width in the order-preserving u32 key of the type: k = (key(x) - ulo) >> s or
 * / width, counted when k < bins; the wrap of key(x) - ulo puts keys below ulo past every bin; no
 * edge is read); 'even' (k = (f32(x) - lo) * scale, corrected against the edges, exact whatever the
 * estimate's rounding); 'edges' (binary search).
 * Bindings: HIST (the input's window, the edges, the counts; the window as vec4s).
 * Workgroup memory: 4 bytes per privatized bin (a power of two >= the bins) per sub-histogram, bins
 * + 1 more for the edges when they are cached there, plus the subgroup id counter with subgroups.
 */
import {
  entryParams,
  entryPrologue,
  fragment,
  kernelInterface,
  mangle,
  threadIds,
  type WgslFragment,
} from '@webdpl/core';

/** How the kernel finds an element's bin. */
export type HistogramBinKind = 'shift' | 'div' | 'even' | 'edges';

export interface HistogramKernelParams {
  readonly type: 'u32' | 'i32' | 'f32';
  readonly kind: HistogramBinKind;
  /** Bins in workgroup memory per sub-histogram (0: global atomics only). */
  readonly privateBins: number;
  /** Copies of the privatized bins (>= 1). */
  readonly subHistograms: number;
  /** Copy the edges into workgroup memory (privateBins + 1 of them at most) before binning. */
  readonly cacheEdges: boolean;
  readonly subgroups: boolean;
  readonly workgroupSize: number;
  /** Loads per thread per tile (elements, or vec4s in the vector variant). */
  readonly loads: number;
  /** vec4 loads through binding 4, head and tail elements through binding 1. */
  readonly vector: boolean;
}

/**
 * The histogram kernel's interface. Uniform (16 words): `count` elements of the segment from `base`
 * in its window, `m` edges, `open` (the last bin runs to the type's end), `lo` and `scale` ('even'),
 * `bins`, `num_wg` workgroups over `num_tiles` tiles, `ulo` and `width` (the shift, or the width:
 * 'shift' / 'div'), and for the vector variant the whole vec4s (`vbase`, `vcount`), the `head`
 * elements before them, the `tail`'s start and the `extra` elements before and after. Bindings:
 * `h_in` the window (the kernel's type), `h_edges` (the kernel's type; declared by every variant,
 * bound only by the kinds that read edges: an unused binding is not in the layout), `h_counts`,
 * `h_in4` the window as vec4<u32> (vector variant).
 */
export const HIST = kernelInterface({
  name: 'histogram',
  params: {
    struct: 'HistParams',
    name: 'hp',
    binding: 0,
    fields: {
      count: 'u32',
      base: 'u32',
      m: 'u32',
      open: 'u32',
      lo: 'f32',
      scale: 'f32',
      bins: 'u32',
      num_wg: 'u32',
      num_tiles: 'u32',
      ulo: 'u32',
      width: 'u32',
      vbase: 'u32',
      vcount: 'u32',
      head: 'u32',
      tail: 'u32',
      extra: 'u32',
    },
  },
  bindings: {
    h_in: { binding: 1, access: 'read' },
    h_edges: { binding: 2, access: 'read', optional: true },
    h_counts: { binding: 3, access: 'read_write', type: 'u32', form: 'atomic' },
    h_in4: { binding: 4, access: 'read', type: 'vec4<u32>', optional: true },
  },
});

export function histogramKernel(p: HistogramKernelParams): WgslFragment {
  const t = p.type;
  const w = p.workgroupSize;
  const priv = p.privateBins;
  const copies = priv ? Math.max(1, p.subHistograms) : 1;
  const exact = p.kind === 'shift' || p.kind === 'div';
  // Where hist_bin reads the edges: the binding, or a copy in workgroup memory.
  const cache = p.cacheEdges && priv > 0 && !exact;
  const e = cache ? 'h_e' : 'h_edges';
  const nan = t === 'f32' ? '  if ((bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u) { return HIST_NONE; }\n' : '';
  const key = t === 'u32' ? 'v' : t === 'i32' ? '(bitcast<u32>(v) ^ 0x80000000u)' : '';
  const body = exact
    ? `  let k = (${key} - hp.ulo) ${p.kind === 'shift' ? '>>' : '/'} hp.width;
  return select(HIST_NONE, k, k < hp.bins);`
    : `${nan}  let top = hp.m - 1u;
  if (v < ${e}[0]) { return HIST_NONE; }
  if (v >= ${e}[top]) { return select(HIST_NONE, top, hp.open != 0u); }
${
  p.kind === 'even'
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
  return l;`
}`;
  const add = (k: string, c: string, slot: string) =>
    priv ? `atomicAdd(&h_bins[${slot}${k}], ${c});` : `atomicAdd(&h_counts[${k}], ${c});`;
  const slot = copies > 1 ? 'slot + ' : '';
  const tally = (k: string) =>
    p.subgroups
      ? `{
        let first = subgroupBroadcastFirst(${k});
        if (subgroupAll(${k} == first)) {
          // Uniform across the subgroup: count its lanes only here (two subgroup operations per
          // element otherwise).
          let lanes = subgroupAdd(1u);
          if (subgroupElect() && first != HIST_NONE) { ${add('first', 'lanes', slot)} }
        } else if (${k} != HIST_NONE) { ${add(k, '1u', slot)} }
      }`
      : `if (${k} != HIST_NONE) { ${add(k, '1u', slot)} }`;
  const conv = (x: string) => (t === 'u32' ? x : `bitcast<${t}>(${x})`);
  // Every load of a tile first (named registers, not a private array: those go to local memory on
  // some GPUs), then the binning; loads past the range repeat its last value and bin to none.
  const loads: string[] = [];
  const bins: string[] = [];
  for (let q = 0; q < p.loads; q++) {
    if (p.vector) {
      loads.push(`let j${q} = t0 + ${q * w}u;`, `let x${q} = h_in4[min(hp.vbase + j${q}, vlast)];`);
      const comps = ['x', 'y', 'z', 'w'].map(
        (c) => `{
      var k = HIST_NONE;
      if (ok${q}) { k = hist_bin(${conv(`x${q}.${c}`)}); }
      ${tally('k')}
    }`,
      );
      bins.push(`let ok${q} = j${q} < hp.vcount;`, ...comps);
    } else {
      loads.push(`let j${q} = t0 + ${q * w}u;`, `let x${q} = h_in[min(hp.base + j${q}, last)];`);
      bins.push(`{
      var k = HIST_NONE;
      if (j${q} < hp.count) { k = hist_bin(x${q}); }
      ${tally('k')}
    }`);
    }
  }
  const tile = w * p.loads;
  const code = `const HIST_NONE: u32 = 0xffffffffu;
${HIST.wgsl({ h_edges: true, h_in4: p.vector }, { h_in: t, h_edges: t })}
${priv ? `var<workgroup> h_bins: array<atomic<u32>, ${priv * copies}>;` : ''}
${cache ? `var<workgroup> h_e: array<${t}, ${priv + 1}>;` : ''}

fn hist_bin(v: ${t}) -> u32 {
${body}
}

@compute @workgroup_size(${w})
fn main(${entryParams(p.subgroups)}) {
${entryPrologue(p.subgroups)}
  if (wg_index >= hp.num_wg) { return; }
${
  priv
    ? `  for (var i = ids.lid; i < ${priv * copies}u; i += ${w}u) { atomicStore(&h_bins[i], 0u); }
${
  cache
    ? `  for (var i = ids.lid; i < hp.m; i += ${w}u) { h_e[i] = h_edges[i]; }
`
    : ''
}  workgroupBarrier();`
    : ''
}
${copies > 1 ? `  let slot = (ids.lid % ${copies}u) * ${priv}u;` : ''}
${p.vector ? '  let vlast = hp.vbase + hp.vcount - 1u;' : '  let last = hp.base + hp.count - 1u;'}
  for (var tl = wg_index; tl < hp.num_tiles; tl += hp.num_wg) {
    let t0 = tl * ${tile}u + ids.lid;
    ${loads.join('\n    ')}
    ${bins.join('\n    ')}
  }
${
  p.vector
    ? `  // The elements before the first and after the last whole vec4 (at most 3 each).
  if (wg_index == 0u) {
    for (var i = ids.lid; i < hp.extra; i += ${w}u) {
      let k = hist_bin(h_in[select(hp.tail + i - hp.head, hp.base + i, i < hp.head)]);
      if (k != HIST_NONE) { ${add('k', '1u', slot)} }
    }
  }`
    : ''
}
${
  priv
    ? `  workgroupBarrier();
  for (var i = ids.lid; i < hp.bins; i += ${w}u) {
    let c = ${Array.from({ length: copies }, (_, c) => `atomicLoad(&h_bins[${c * priv}u + i])`).join(' + ')};
    if (c != 0u) { atomicAdd(&h_counts[i], c); }
  }`
    : ''
}
}`;
  return fragment({
    name: mangle(
      'histogram',
      t,
      p.kind,
      priv,
      copies,
      cache ? 'ce' : 'ge',
      p.subgroups ? 'sg' : 'wg',
      w,
      p.loads,
      p.vector ? 'v4' : 's',
    ),
    code,
    deps: [threadIds(p.subgroups)],
    enables: p.subgroups ? ['subgroups'] : [],
    workgroupBytes: priv * copies * 4 + (cache ? (priv + 1) * 4 : 0),
  });
}
