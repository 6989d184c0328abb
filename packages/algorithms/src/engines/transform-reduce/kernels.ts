/**
 * WGSL of the transform-reduce engine.
 *
 * Pass 1 (`partialsKernel`): each workgroup reduces a contiguous run of tiles to one partial.
 *  - 'vec': commutative operators on 16-byte-aligned inputs; each thread issues `vecsPerThread`
 *    coalesced vec4 loads per tile before combining (memory-level parallelism), the < 4 trailing
 *    elements are read as scalars by workgroup 0.
 *  - 'strided': commutative operators on unaligned inputs; coalesced scalar loads.
 *  - 'ordered': non-commutative operators; each thread folds `itemsPerThread` contiguous elements and
 *    an ordered workgroup reduce combines threads tile by tile, so the operator sees elements in order.
 * Pass 2 (`finalKernel`): one workgroup folds the partials in order.
 * Workgroup memory: that of one workgroupReduce (see @webdpl/core). Subgroups: optional.
 */
import {
  type Combiner,
  entryParams,
  entryPrologue,
  fragment,
  mangle,
  type NumericType,
  threadIds,
  type WgslFragment,
  type WorkgroupParams,
  workgroupReduce,
} from '@webdpl/core';

export type ReducePath = 'vec' | 'strided' | 'ordered';

export interface PartialsKernelParams {
  /**
   * Element types of the inputs (0 to 4; none: the load computes from the index alone, not 'vec'; more
   * than 2: not 'vec').
   */
  readonly inTypes: readonly NumericType[];
  /** Declares `fn <load.name>([x0: T0, [x1: T1,]] i: u32) -> Acc`: the transform of element i. */
  readonly load: WgslFragment;
  readonly combiner: Combiner;
  readonly path: ReducePath;
  readonly workgroupSize: number;
  readonly vecsPerThread: number;
  readonly itemsPerThread: number;
  readonly subgroups: boolean;
  readonly minSubgroupSize: number;
}

/** Uniform parameters of both kernels (12 u32). */
export const PARAMS_STRUCT = `struct TrParams {
  n: u32,
  base0: u32,
  base1: u32,
  tiles_per_wg: u32,
  num_wg: u32,
  out_offset: u32,
  seg_start: u32,
  pad: u32,
  base2: u32,
  base3: u32,
  pad1: u32,
  pad2: u32,
}`;

/** Number of u32 words of PARAMS_STRUCT. */
export const TR_PARAMS_WORDS = 12;

/** Most inputs of the engine (zip arguments); the 'vec' path takes at most 2. */
export const TR_MAX_INPUTS = 4;

function bindings(p: PartialsKernelParams): string {
  const lines = [
    '@group(0) @binding(0) var<uniform> prm: TrParams;',
    `@group(0) @binding(1) var<storage, read_write> partials: array<${p.combiner.wgslType}>;`,
  ];
  p.inTypes.forEach((t, k) => {
    if (p.path === 'vec') {
      lines.push(`@group(0) @binding(${2 + 2 * k}) var<storage, read> in${k}_v: array<vec4<${t}>>;`);
    }
    lines.push(`@group(0) @binding(${3 + 2 * k}) var<storage, read> in${k}_s: array<${t}>;`);
  });
  return lines.join('\n');
}

/** Builds pass 1. Bindings: 0 params, 1 partials, 2/3 input 0 (vec4/scalar views), 4/5 input 1. */
export function partialsKernel(p: PartialsKernelParams): WgslFragment {
  const w = p.workgroupSize;
  const c = p.combiner;
  const comb = c.combine.name;
  const wg = { combiner: c, workgroupSize: w, subgroups: p.subgroups, minSubgroupSize: p.minSubgroupSize };
  const red = workgroupReduce(wg);
  const two = p.inTypes.length === 2;
  const none = p.inTypes.length === 0;
  if (none && p.path === 'vec') throw new Error('transform-reduce engine: the vec path needs an input');
  if (p.inTypes.length > (p.path === 'vec' ? 2 : TR_MAX_INPUTS)) {
    throw new Error('transform-reduce engine: too many inputs for this path');
  }
  /** The load of element `e` (scalar reads), or of the vec path's components `e0`/`e1`. */
  const ldAt = (e: string) =>
    `${p.load.name}(${[...p.inTypes.map((_, k) => `in${k}_s[prm.base${k} + ${e}]`), `prm.seg_start + ${e}`].join(', ')})`;
  const ld = (e0: string, e1: string, idx: string) =>
    none ? `${p.load.name}(${idx})` : `${p.load.name}(${e0}${two ? `, ${e1}` : ''}, ${idx})`;
  let body: string;
  if (p.path === 'vec') {
    const v = p.vecsPerThread;
    const comps = ['x', 'y', 'z', 'w'];
    const loadVecs = (guard: boolean) => {
      const lines: string[] = [];
      for (let j = 0; j < v; j++) {
        const vi = `t + ${j * w}u + ids.lid`;
        const inner = [
          `let a${j} = in0_v[vb0 + ${vi}];`,
          two ? `let b${j} = in1_v[vb1 + ${vi}];` : '',
          ...comps.map(
            (cc, q) =>
              `acc = ${comb}(acc, ${ld(`a${j}.${cc}`, `b${j}.${cc}`, `prm.seg_start + (${vi}) * 4u + ${q}u`)});`,
          ),
        ]
          .filter(Boolean)
          .join('\n      ');
        lines.push(guard ? `if (${vi} < end) {\n      ${inner}\n    }` : `{\n      ${inner}\n    }`);
      }
      return lines.join('\n    ');
    };
    body = `  let nv = prm.n / 4u;
  let vb0 = prm.base0 / 4u;
  let vb1 = prm.base1 / 4u;
  let tv = ${w * v}u;
  let first = wg_index * prm.tiles_per_wg * tv;
  let end = min(first + prm.tiles_per_wg * tv, nv);
  var acc = ${c.identity};
  var t = first;
  loop {
    if (t + tv > end) { break; }
    ${loadVecs(false)}
    t += tv;
  }
  if (t < end) {
    ${loadVecs(true)}
  }
  if (wg_index == 0u) {
    let e = nv * 4u + ids.lid;
    if (e < prm.n) { acc = ${comb}(acc, ${ldAt('e')}); }
  }
  let total = ${red.name}(acc, ids);`;
  } else if (p.path === 'strided') {
    const k = p.itemsPerThread;
    body = `  let tile = ${w * k}u;
  let first = wg_index * prm.tiles_per_wg * tile;
  let end = min(first + prm.tiles_per_wg * tile, prm.n);
  var acc = ${c.identity};
  for (var t = first; t < end; t += tile) {
    for (var j = 0u; j < ${k}u; j++) {
      let e = t + j * ${w}u + ids.lid;
      if (e < end) { acc = ${comb}(acc, ${ldAt('e')}); }
    }
  }
  let total = ${red.name}(acc, ids);`;
  } else {
    const k = p.itemsPerThread;
    body = `  let tile = ${w * k}u;
  let first = wg_index * prm.tiles_per_wg * tile;
  let end = min(first + prm.tiles_per_wg * tile, prm.n);
  var total = ${c.identity};
  for (var t = first; t < end; t += tile) {
    var acc = ${c.identity};
    for (var j = 0u; j < ${k}u; j++) {
      let e = t + ids.lid * ${k}u + j;
      if (e < end) { acc = ${comb}(acc, ${ldAt('e')}); }
    }
    total = ${comb}(total, ${red.name}(acc, ids));
  }`;
  }
  const name = mangle(
    'tr_partials',
    p.path,
    p.inTypes.join('_') || 'none',
    p.load.name,
    c.name,
    w,
    p.vecsPerThread,
    p.itemsPerThread,
    p.subgroups ? `sg${p.minSubgroupSize}` : 'wg',
  );
  return fragment({
    name,
    deps: [threadIds(p.subgroups), p.load, c.combine, red],
    code: `${PARAMS_STRUCT}
${bindings(p)}
@compute @workgroup_size(${w}) fn main(${entryParams(p.subgroups)}) {
${entryPrologue(p.subgroups)}
  if (wg_index >= prm.num_wg) { return; }
${body}
  if (ids.lid == 0u) { partials[prm.out_offset + wg_index] = total; }
}`,
  });
}

/** The final fold's workgroup reduce parameters (it is one workgroup running that reduce). */
export type FinalKernelParams = Required<WorkgroupParams>;

/** Builds pass 2: partials[0..prm.n) folded in order into partials[prm.out_offset]. */
export function finalKernel(p: FinalKernelParams): WgslFragment {
  const w = p.workgroupSize;
  const c = p.combiner;
  const red = workgroupReduce(p);
  const name = mangle('tr_final', c.name, w, p.subgroups ? `sg${p.minSubgroupSize}` : 'wg');
  return fragment({
    name,
    deps: [threadIds(p.subgroups), c.combine, red],
    code: `${PARAMS_STRUCT}
@group(0) @binding(0) var<uniform> prm: TrParams;
@group(0) @binding(1) var<storage, read_write> partials: array<${c.wgslType}>;
@compute @workgroup_size(${w}) fn main(${entryParams(p.subgroups)}) {
${entryPrologue(p.subgroups)}
  let k = (prm.n + ${w - 1}u) / ${w}u;
  var acc = ${c.identity};
  for (var j = 0u; j < k; j++) {
    let i = ids.lid * k + j;
    if (i < prm.n) { acc = ${c.combine.name}(acc, partials[i]); }
  }
  let total = ${red.name}(acc, ids);
  if (ids.lid == 0u) { partials[prm.out_offset] = total; }
}`,
  });
}
