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
 *    and their key bits appended to the candidate buffer (one global atomic per workgroup tile).
 *  - 'candidates' (rounds 2, 3): the histogram of the candidates matching the prefix so far.
 *  - 'scatter': every element to below (out[0, less)), equal (out[less, less + equal)) or above
 *    (out[less + equal, n)), each class in no particular order (per-tile workgroup counters, one
 *    global atomic per class and tile); writes past `limit` are dropped (topK keeps the first k).
 *
 * Bindings: 0 uniform {n, round, mode, k, limit}, 1 source (u32 bits), 2 state, 3 candidates or
 * output. Workgroup memory: 256 histogram words, 256 pick words and a few counters (~2 KiB); no
 * subgroup operations.
 */
import { entryParams, entryPrologue, fragment, mangle, threadIds, type WgslFragment } from '@webdpl/core';
import { runtimeKeyBitsFragment } from '../engines/radix-sort/key-bits';

/** Word offsets in the state buffer. */
export const STATE = { CAND: 16, OUT: 20, HIST: 32, WORDS: 32 + 4 * 256 } as const;

export type SelectPhase = 'hist' | 'append' | 'candidates' | 'scatter';

export interface SelectKernelParams {
  readonly phase: SelectPhase;
  readonly workgroupSize: number;
  /** Items per thread of the tiled phases ('append', 'scatter'). */
  readonly itemsPerThread: number;
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

/** The per-item part of a tiled loop, unrolled into named registers. */
function items(ipt: number, w: number, body: (j: number) => string): string {
  let s = '';
  for (let j = 0; j < ipt; j++) s += body(j).replaceAll('$i', `(base + ${j * w}u + lid)`);
  return s;
}

export function selectKernel(p: SelectKernelParams): WgslFragment {
  const { phase, workgroupSize: w, itemsPerThread: ipt } = p;
  const tiled = phase === 'append' || phase === 'scatter';
  const third =
    phase === 'append'
      ? '@group(0) @binding(3) var<storage, read_write> sel_cand: array<u32>;'
      : phase === 'scatter'
        ? '@group(0) @binding(3) var<storage, read_write> sel_out: array<u32>;'
        : '';
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
  const count = (digitOf: string) => (hist ? `atomicAdd(&sel_hist[(${digitOf} >> shift) & 0xffu], 1u);` : '');
  let loop: string;
  if (!tiled) {
    const src = phase === 'candidates' ? 'sel_src[i]' : 'rs_key_bits_rt(sel_src[i], sp.mode)';
    const total = phase === 'candidates' ? `atomicLoad(&sel_state[${STATE.CAND}u])` : 'sp.n';
    loop = `let total = ${total};
  for (var i = wg_index * ${w}u + lid; i < total; i += groups * ${w}u) {
    let b = ${src};
    if (((b ^ slot.x) & mask) == 0u) { ${count('b')} }
  }`;
  } else {
    const classes = phase === 'append' ? 1 : 3;
    const classify =
      phase === 'append'
        ? `if (((b ^ slot.x) & mask) == 0u) { ${count('b')} c$j = 0u; v$j = b; }`
        : 'c$j = select(select(2u, 1u, b == slot.x), 0u, b < slot.x); v$j = x;';
    const start = phase === 'append' ? 'array<u32, 3>(0u, 0u, 0u)' : 'array<u32, 3>(0u, slot.z, slot.z + slot.w)';
    const dst = phase === 'append' ? 'sel_cand' : 'sel_out';
    loop = `var starts = ${start};
  for (var base = wg_index * ${w * ipt}u; base < sp.n; base += groups * ${w * ipt}u) {
${items(
  ipt,
  w,
  (j) => `    var c${j} = 3u;
    var v${j} = 0u;
    var s${j} = 0u;
    if ($i < sp.n) {
      let x = sel_src[$i];
      let b = rs_key_bits_rt(x, sp.mode);
      ${classify.replaceAll('$j', String(j))}
      if (c${j} < 3u) { s${j} = atomicAdd(&sel_wcount[c${j}], 1u); }
    }
`,
)}    workgroupBarrier();
    if (lid < ${classes}u) {
      let c = atomicLoad(&sel_wcount[lid]);
      sel_wbase[lid] = starts[lid] + atomicAdd(&sel_state[${phase === 'append' ? STATE.CAND : STATE.OUT}u + lid], c);
      atomicStore(&sel_wcount[lid], 0u);
    }
    workgroupBarrier();
${items(
  ipt,
  w,
  (j) => `    if (c${j} < 3u) {
      let d = sel_wbase[c${j}] + s${j};
      ${phase === 'append' ? `${dst}[d] = v${j};` : `if (d < sp.limit) { ${dst}[d] = v${j}; }`}
    }
`,
)}    workgroupBarrier();
  }`;
  }
  const code = `struct SelParams { n: u32, round: u32, mode: u32, k: u32, limit: u32, pad0: u32, pad1: u32, pad2: u32 }
@group(0) @binding(0) var<uniform> sp: SelParams;
@group(0) @binding(1) var<storage, read> sel_src: array<u32>;
@group(0) @binding(2) var<storage, read_write> sel_state: array<atomic<u32>>;
${third}
${hist ? 'var<workgroup> sel_hist: array<atomic<u32>, 256>;' : ''}
${tiled ? 'var<workgroup> sel_wcount: array<atomic<u32>, 3>;\nvar<workgroup> sel_wbase: array<u32, 3>;' : ''}
${phase === 'hist' ? '' : pickCode(w)}

@compute @workgroup_size(${w})
fn main(${entryParams(false)}) {
${entryPrologue(false)}
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
    name: mangle('select', phase, w, tiled ? ipt : 0),
    code,
    deps: [threadIds(false), runtimeKeyBitsFragment()],
    workgroupBytes: (hist ? 1024 : 0) + (phase === 'hist' ? 0 : Math.min(w, 256) * 4 + 16) + (tiled ? 24 : 0),
  });
}
