/**
 * Kernels of the GPU radix select (nthElement, partialSort, topK): the k-th smallest key is found
 * digit by digit (8-bit digits of the radix sort's order-preserving key bits, top digit first), the
 * elements are then moved into below / equal / above.
 *
 * State (one u32 storage array, cleared before a call): per round r = 0..3 a slot
 * {prefix, rank, less, equal} at 4 r, the candidate count at CAND, the scatter's three counters at
 * OUT, and a 256-bin digit histogram per round at HIST + 256 r.
 *
 * Every kernel but the first starts with the pick of the previous round (`sel_pick`): the whole
 * workgroup scans that round's histogram and finds the bin holding the wanted rank, giving the next
 * slot (the prefix grows by that digit; rank, the count of keys below the prefix, and the bin's
 * count). Every workgroup computes it (256 words), workgroup 0 stores it: no one-workgroup pick
 * dispatches between the rounds.
 *
 * Kernels (one dispatch each, grid-stride over at most `maxWorkgroups` workgroups):
 *  - 'hist' (round 0): the top-digit histogram of every key.
 *  - 'append' (round 1): keys whose top digit is the picked one: their second digit's histogram,
 *    and their key bits appended to the candidate buffer.
 *  - 'candidates' (rounds 2, 3): the histogram of the candidates matching the prefix so far.
 *  - 'scatter': every element to below (out[0, less)), equal (out[less, less + equal)) or above
 *    (out[less + equal, n)), each class in no particular order; writes past `limit` are dropped
 *    (topK keeps the first k, and reserves nothing for above).
 *
 * Atomics per key: none in global memory. Histograms are privatized in workgroup memory (one
 * workgroup atomic per key: on the H100 that is 22% faster for the top-digit histogram than
 * aggregating runs of equal digits per thread, whose branches cost more than they save on random
 * keys; the histogram engine measured constant data no slower there), then one global add per
 * non-empty bin and workgroup. The scatter ranks a tile with per-thread counts and one workgroup
 * exclusive scan (below and equal packed in 16-bit halves, so a tile is < 2^16 keys; the above rank
 * follows from the valid keys before the thread; with subgroups a one-barrier scan of its own,
 * `scatterScan`), then one global atomic per class and tile: no per-key atomics on the 3 class
 * counters, which every key of a tile would hit. 'append' ranks its few candidates per tile (~1/256
 * of the keys) by one workgroup atomic each on a tile counter, in no order (no scan), then one
 * global atomic per tile with candidates; the copy out touches only the staged candidates.
 *
 * Memory access: every phase walks tiles of workgroupSize x itemsPerThread keys (grid-stride),
 * loaded striped (item j of thread t at tile + j workgroupSize + t: a warp's load instruction
 * reads 32 consecutive words) with all of a thread's loads issued before any is used. The ranks of
 * the tiled phases are in thread-major order (a thread's items are consecutive ranks), so writing
 * them straight to global memory would put adjacent lanes ~itemsPerThread / classes words apart (a
 * scattered store per instruction); instead the tile is staged in workgroup memory at its ranks
 * (candidates at their counter ranks; or below | equal | above for the scatter) and copied out
 * striped: slot q of the staged tile by thread q mod workgroupSize, so consecutive lanes write
 * consecutive words of a class. The staging reuses the barrier after the per-tile atomics (no extra barrier). The candidate
 * rounds run a quarter of the grid (gpu.ts): their input is ~n / 256 keys on spread data.
 *
 * Bindings: SEL (source, state, candidates or output). Workgroup memory: 256 histogram words, 256 pick words, a few words, the scan's scratch
 * (workgroupSize words, or one per subgroup with subgroups) and, in the tiled phases, the staged
 * tile (workgroupSize x itemsPerThread words).
 */
import {
  combinerOf,
  entryParams,
  entryPrologue,
  fragment,
  type InterfaceUse,
  kernelInterface,
  mangle,
  plus,
  threadIds,
  type WgslFragment,
  workgroupExclusiveScan,
} from '@webdpl/core';
import { runtimeKeyBitsFragment } from '../engines/radix-sort/key-bits';

/** Word offsets in the state buffer. */
export const STATE = { CAND: 16, OUT: 20, HIST: 32, WORDS: 32 + 4 * 256 } as const;

export type SelectPhase = 'hist' | 'append' | 'candidates' | 'scatter';

/**
 * The select kernels' interface: uniform {n keys, round, key mode, k (the rank), limit (writes of the
 * scatter past it are dropped)}; `sel_src` the keys' bits (the candidates in the candidate rounds),
 * `sel_state` (see STATE), and at binding 3 `sel_cand` (the candidates: 'append') or `sel_out` (the
 * output: 'scatter').
 */
export const SEL = kernelInterface({
  name: 'select',
  params: {
    struct: 'SelParams',
    name: 'sp',
    binding: 0,
    fields: { n: 'u32', round: 'u32', mode: 'u32', k: 'u32', limit: 'u32' },
  },
  bindings: {
    sel_src: { binding: 1, access: 'read', type: 'u32' },
    sel_state: { binding: 2, access: 'read_write', type: 'u32', form: 'atomic' },
    sel_cand: { binding: 3, access: 'read_write', type: 'u32', optional: true },
    sel_out: { binding: 3, access: 'read_write', type: 'u32', optional: true },
  },
});

/** The optional bindings of each phase's kernel. */
export const SELECT_USE: Readonly<Record<SelectPhase, InterfaceUse<typeof SEL.spec>>> = {
  hist: {},
  append: { sel_cand: true },
  candidates: {},
  scatter: { sel_out: true },
};

export interface SelectKernelParams {
  readonly phase: SelectPhase;
  readonly workgroupSize: number;
  /** Items per thread of the tiled phases ('append', 'scatter'); workgroupSize x itemsPerThread < 2^16. */
  readonly itemsPerThread: number;
  /** The tiled phases' workgroup scan uses subgroups (the device has the feature). */
  readonly subgroups: boolean;
  /** Smallest subgroup size of the device (sizes the scan's scratch; subgroups only). */
  readonly minSubgroupSize: number;
}

/** `fn sel_pick(r, lid) -> vec4<u32>`: the slot of round r from round r's histogram (see the file comment). */
function pickCode(w: number): string {
  const t = Math.min(w, 256);
  const c = 256 / t;
  return `var<workgroup> sel_pk: array<u32, ${t}>;
var<workgroup> sel_pick_out: vec4<u32>;
fn sel_pick(r: u32, lid: u32) -> vec4<u32> {
  var prev = vec4<u32>(0u, sp.k, 0u, 0u);
  if (r > 0u) {
    let s = 4u * (r - 1u);
    prev = vec4<u32>(atomicLoad(&sel_state[s]), atomicLoad(&sel_state[s + 1u]), atomicLoad(&sel_state[s + 2u]), 0u);
  }
  let base = ${STATE.HIST}u + 256u * r + lid * ${c}u;
  var sum = 0u;
  if (lid < ${t}u) {
    for (var j = 0u; j < ${c}u; j++) { sum += atomicLoad(&sel_state[base + j]); }
    sel_pk[lid] = sum;
  }
  workgroupBarrier();
  for (var off = 1u; off < ${t}u; off <<= 1u) {
    var v = 0u;
    if (lid < ${t}u && lid >= off) { v = sel_pk[lid - off]; }
    workgroupBarrier();
    if (lid < ${t}u) { sel_pk[lid] += v; }
    workgroupBarrier();
  }
  if (lid < ${t}u) {
    var below = sel_pk[lid] - sum;
    if (prev.y >= below && prev.y < below + sum) {
      let shift = 24u - 8u * r;
      for (var j = 0u; j < ${c}u; j++) {
        let h = atomicLoad(&sel_state[base + j]);
        if (prev.y < below + h) {
          sel_pick_out = vec4<u32>(prev.x | ((lid * ${c}u + j) << shift), prev.y - below, prev.z + below, h);
          break;
        }
        below += h;
      }
    }
  }
  return workgroupUniformLoad(&sel_pick_out);
}
fn sel_commit(r: u32, lid: u32, wg: u32, s: vec4<u32>) {
  if (wg == 0u && lid == 0u) {
    for (var j = 0u; j < 4u; j++) { atomicStore(&sel_state[4u * r + j], s[j]); }
  }
}`;
}

/** The per-item part of a tiled loop, unrolled into named registers ($i: the item's index, striped). */
function items(ipt: number, w: number, body: (j: number) => string): string {
  let s = '';
  for (let j = 0; j < ipt; j++) s += body(j).replaceAll('$i', `(base + ${j * w}u + lid)`);
  return s;
}

/** The per-slot part of the striped copy out of the staged tile ($p: the tile slot, `j w + lid`). */
function slots(ipt: number, w: number, body: string): string {
  let s = '';
  for (let j = 0; j < ipt; j++) s += body.replaceAll('$p', `(${j * w}u + lid)`);
  return s;
}

/**
 * `fn sel_scan(x, ids, total) -> u32`: the scatter's exclusive sum over the workgroup with subgroups,
 * without the leading barrier of core's workgroupExclusiveScan: the tile loop's broadcast barrier
 * already separates a tile's reads of the scratch from the next tile's writes. One barrier; each
 * thread then adds the totals of the subgroups before its own (w / subgroup size words).
 */
function scatterScan(w: number, minSubgroupSize: number): WgslFragment {
  const n = Math.max(1, Math.ceil(w / Math.min(minSubgroupSize, w)));
  return fragment({
    name: mangle('sel_scan', w, n),
    enables: ['subgroups'],
    workgroupBytes: 4 * n,
    code: `var<workgroup> sel_sg: array<u32, ${n}>;
fn ${mangle('sel_scan', w, n)}(x: u32, ids: WdplIds, total: ptr<function, u32>) -> u32 {
  let e = subgroupExclusiveAdd(x);
  if (ids.lane == ids.sg_size - 1u) { sel_sg[ids.sg_id] = e + x; }
  workgroupBarrier();
  var pre = 0u;
  var tot = 0u;
  for (var i = 0u; i < ${w}u / ids.sg_size; i++) {
    let v = sel_sg[i];
    tot += v;
    pre += select(0u, v, i < ids.sg_id);
  }
  *total = tot;
  return pre + e;
}`,
  });
}

export function selectKernel(p: SelectKernelParams): WgslFragment {
  const { phase, workgroupSize: w, itemsPerThread: ipt, subgroups } = p;
  const tile = w * ipt;
  const tiled = phase === 'append' || phase === 'scatter';
  const hist = phase !== 'scatter';
  const round = phase === 'hist' ? '0u' : phase === 'append' ? '1u' : phase === 'candidates' ? 'sp.round' : '4u';
  // The slot the kernel works from: the previous round's pick (round 0: the whole range).
  const slot =
    phase === 'hist'
      ? 'let slot = vec4<u32>(0u, sp.k, 0u, 0u);'
      : `let slot = sel_pick(${round} - 1u, lid);
  sel_commit(${round} - 1u, lid, wg_index, slot);`;
  // Keys match the prefix when their digits above this round's agree with it (the scatter uses none).
  const mask =
    phase === 'scatter'
      ? ''
      : `let mask = ~(0xffffffffu >> (8u * ${round}));
  let shift = 24u - 8u * ${round};`;
  const count = (digitOf: string) =>
    `let d = (${digitOf} >> shift) & 0xffu;
        atomicAdd(&sel_hist[d], 1u);`;
  const scan =
    phase !== 'scatter'
      ? undefined
      : subgroups
        ? scatterScan(w, p.minSubgroupSize)
        : workgroupExclusiveScan({
            combiner: combinerOf(plus, 'u32'),
            workgroupSize: w,
            subgroups,
            minSubgroupSize: 4,
          });
  const total = phase === 'candidates' ? `atomicLoad(&sel_state[${STATE.CAND}u])` : 'sp.n';
  const keyOf = (x: string) => (phase === 'candidates' ? x : `rs_key_bits_rt(${x}, sp.mode)`);
  // Every phase walks tiles of `tile` items, loaded striped (item j of thread lid at
  // base + j w + lid: a warp's load is 32 consecutive words), all loads of a tile issued before
  // any is used (ipt loads in flight per thread, no atomics between them).
  const head = `let total = ${total};
  for (var base = wg_index * ${tile}u; base < total; base += groups * ${tile}u) {
${items(ipt, w, (j) => `    var x${j} = 0u;\n    if ($i < total) { x${j} = sel_src[$i]; }\n`)}`;
  let loop: string;
  if (!tiled) {
    loop = `${head}${items(
      ipt,
      w,
      (j) => `    if ($i < total) {
      let b = ${keyOf(`x${j}`)};
      if (((b ^ slot.x) & mask) == 0u) {
        ${count('b')}
      }
    }
`,
    )}  }`;
  } else if (phase === 'append' || !scan) {
    // Candidates (~1/256 of the keys, in no particular order): each is ranked in the tile by one
    // workgroup atomic on a counter (no workgroup scan: a tile holds a few), staged in workgroup
    // memory at that rank and copied out striped by the first threads (consecutive lanes,
    // consecutive words); one global atomic per tile with candidates, none without.
    loop = `${head}    workgroupBarrier();
${items(
  ipt,
  w,
  (j) => `    if ($i < total) {
      let b = ${keyOf(`x${j}`)};
      if (((b ^ slot.x) & mask) == 0u) {
        ${count('b')}
        sel_tile[atomicAdd(&sel_wcnt, 1u)] = b;
      }
    }
`,
)}    workgroupBarrier();
    if (lid == 0u) {
      let t = atomicLoad(&sel_wcnt);
      var at = 0u;
      if (t != 0u) { at = atomicAdd(&sel_state[${STATE.CAND}u], t); }
      sel_wbase[0] = at;
      sel_wbase[1] = t;
      atomicStore(&sel_wcnt, 0u);
    }
    workgroupBarrier();
    let wb = sel_wbase[0];
    let tot = sel_wbase[1];
    for (var q = lid; q < tot; q += ${w}u) { sel_cand[wb + q] = sel_tile[q]; }
  }`;
  } else {
    // Scatter: per-thread counts of below and equal packed in 16-bit halves (tile < 2^16), one
    // workgroup scan; above follows from the valid items before the thread. The tile is staged in
    // workgroup memory as below | equal | above (each class at its in-tile rank), then copied out
    // striped: slot q goes to its class's global base + its rank in the class, so consecutive
    // lanes write consecutive words within a class (a blocked write would put a thread's ranks
    // next to each other and adjacent lanes ~ipt/3 words apart). One global atomic per class and
    // tile, none for a class that starts at or past 'limit' (topK: above).
    // A key's class (0 below, 1 equal, 2 above) is computed again after the scan rather than kept
    // (itemsPerThread fewer registers live across the scan's barrier: a few ALU operations).
    const classOf = (j: number) => `sel_class(${keyOf(`x${j}`)}, slot.x)`;
    let validBefore = '0u';
    for (let j = 0; j < ipt; j++) validBefore += ` + min(lid, select(0u, rem - ${j * w}u, rem > ${j * w}u))`;
    loop = `${head}    let rem = total - base;
    let valid = min(rem, ${tile}u);
    var pk = 0u;
${items(
  ipt,
  w,
  (j) => `    if ($i < total) {
      let c = ${classOf(j)};
      pk += select(select(0u, 0x10000u, c == 1u), 1u, c == 0u);
    }
`,
)}    var tot = 0u;
    let ex = ${scan.name}(pk, ids, &tot);
    let tb = tot & 0xffffu;
    let te = tot >> 16u;
    var ob = ex & 0xffffu;
    var oe = ex >> 16u;
    var oa = tb + te + (${validBefore}) - ob - oe;
    oe += tb;
${items(
  ipt,
  w,
  (j) => `    if ($i < total) {
      let c = ${classOf(j)};
      sel_tile[select(select(oa, oe, c == 1u), ob, c == 0u)] = x${j};
      ob += select(0u, 1u, c == 0u);
      oe += select(0u, 1u, c == 1u);
      oa += select(0u, 1u, c == 2u);
    }
`,
)}    if (lid < 3u) {
      var counts = array<u32, 3>(tb, te, valid - tb - te);
      var at = sp.limit;
      if (counts[lid] != 0u && starts[lid] < sp.limit) {
        at = starts[lid] + atomicAdd(&sel_state[${STATE.OUT}u + lid], counts[lid]);
      }
      sel_wbase[lid] = at;
    }
    workgroupBarrier();
    let wb = array<u32, 3>(sel_wbase[0], sel_wbase[1], sel_wbase[2]);
    let te2 = tb + te;
${slots(
  ipt,
  w,
  `    if ($p < valid) {
      let q = $p;
      let d = select(select(wb[2] + (q - te2), wb[1] + (q - tb), q < te2), wb[0] + q, q < tb);
      if (d < sp.limit) { sel_out[d] = sel_tile[q]; }
    }
`,
)}  }`;
    loop = `var starts = array<u32, 3>(0u, slot.z, slot.z + slot.w);
  ${loop}`;
  }
  const code = `${SEL.wgsl(SELECT_USE[phase])}
${hist ? 'var<workgroup> sel_hist: array<atomic<u32>, 256>;' : ''}
${tiled ? `var<workgroup> sel_wbase: array<u32, 3>;\nvar<workgroup> sel_tile: array<u32, ${tile}>;` : ''}
${phase === 'append' ? 'var<workgroup> sel_wcnt: atomic<u32>;' : ''}
${phase === 'scatter' ? 'fn sel_class(b: u32, s: u32) -> u32 { return select(select(2u, 1u, b == s), 0u, b < s); }' : ''}
${phase === 'hist' ? '' : pickCode(w)}

@compute @workgroup_size(${w})
fn main(${entryParams(subgroups)}) {
${entryPrologue(subgroups)}
  let lid = ids.lid;
  let groups = wdpl_nwg.x * wdpl_nwg.y;
${hist ? `  for (var b = lid; b < 256u; b += ${w}u) { atomicStore(&sel_hist[b], 0u); }` : ''}
  workgroupBarrier();
  ${slot}
  ${mask}
  ${loop}
${
  hist
    ? `  workgroupBarrier();
  for (var b = lid; b < 256u; b += ${w}u) {
    let c = atomicLoad(&sel_hist[b]);
    if (c != 0u) { atomicAdd(&sel_state[${STATE.HIST}u + 256u * ${round} + b], c); }
  }`
    : ''
}
}`;
  return fragment({
    name: mangle('select', phase, w, tiled ? ipt : 0, subgroups ? `sg${p.minSubgroupSize}` : 'wg'),
    code,
    deps: [threadIds(subgroups), runtimeKeyBitsFragment(), ...(scan ? [scan] : [])],
    workgroupBytes:
      (hist ? 1024 : 0) +
      (phase === 'hist' ? 0 : Math.min(w, 256) * 4 + 16) +
      (tiled ? 12 + 4 * tile : 0) +
      (phase === 'append' ? 4 : 0),
  });
}
