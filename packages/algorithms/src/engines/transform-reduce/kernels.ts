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
 * Tuple (struct) accumulators: `blockedKernel`, in order ('blocked' / 'blocked-vec').
 * Pass 2 (`finalKernel`): one workgroup folds the partials in order.
 * Workgroup memory: that of one workgroupReduce (see @webdpl/core). Subgroups: optional.
 */
import {
  type Combiner,
  entryParams,
  entryPrologue,
  fragment,
  type InterfaceUse,
  kernelInterface,
  mangle,
  type NumericType,
  threadIds,
  type WgslFragment,
  type WorkgroupParams,
  workgroupReduce,
} from '@webdpl/core';

/**
 * 'blocked' / 'blocked-vec': tuple (struct) accumulators, in order (`blockedKernel`, scalar or vec4
 * loads); the others: `partialsKernel`.
 */
export type ReducePath = 'vec' | 'strided' | 'ordered' | 'blocked' | 'blocked-vec';

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
  /**
   * The atomic (`atomicAdd`...) folding each workgroup's total into word `prm.out_offset` of the
   * partials (`partials_a`, cleared by the host), instead of storing it at `out_offset + wg_index`:
   * one pass for commutative integer operators whose identity is 0 (`atomicFoldOf`).
   */
  readonly atomicFold?: AtomicFold;
}

/** A WGSL atomic read-modify-write function with identity 0. */
export type AtomicFold = 'atomicAdd' | 'atomicOr' | 'atomicXor' | 'atomicMax';

/**
 * The atomic that folds `c`'s values exactly as its combine does, in any order, starting from a
 * cleared (0) word: plus, or, xor over u32 / i32 (wrapping as the combine does), max over u32.
 */
export function atomicFoldOf(c: Combiner): AtomicFold | undefined {
  if (c.wgslType !== 'u32' && c.wgslType !== 'i32') return undefined;
  switch (c.subgroupOp) {
    case 'Add':
      return 'atomicAdd';
    case 'Or':
      return 'atomicOr';
    case 'Xor':
      return 'atomicXor';
    case 'Max':
      return c.wgslType === 'u32' ? 'atomicMax' : undefined;
    default:
      return undefined;
  }
}

/** Most inputs of the engine (zip arguments); the 'vec' path takes at most 2. */
export const TR_MAX_INPUTS = 4;

const input = (binding: number, vec: boolean) =>
  ({ binding, access: 'read', optional: true, form: vec ? ('vec4' as const) : undefined }) as const;

/**
 * The interface of both passes: the uniform, the partials (of the accumulator's type), and input k's
 * vec4 view `in<k>_v` (vec4 loads) and scalar view `in<k>_s`, both of its type; pass 2 binds no input.
 */
export const TR = kernelInterface({
  name: 'transform-reduce',
  params: {
    struct: 'TrParams',
    name: 'prm',
    binding: 0,
    fields: {
      n: 'u32',
      base0: 'u32',
      base1: 'u32',
      tiles_per_wg: 'u32',
      num_wg: 'u32',
      out_offset: 'u32',
      seg_start: 'u32',
      base2: 'u32',
      base3: 'u32',
    },
  },
  bindings: {
    partials: { binding: 1, access: 'read_write', optional: true },
    partials_a: { binding: 1, access: 'read_write', form: 'atomic', optional: true },
    in0_v: input(2, true),
    in0_s: input(3, false),
    in1_v: input(4, true),
    in1_s: input(5, false),
    in2_v: input(6, true),
    in2_s: input(7, false),
    in3_v: input(8, true),
    in3_s: input(9, false),
  },
});

export type TrBinding = `in${0 | 1 | 2 | 3}_${'v' | 's'}`;

/** The input views of input k (TR's binding names). */
export function trInput(k: number): { readonly v: TrBinding; readonly s: TrBinding } {
  return { v: `in${k}_v` as TrBinding, s: `in${k}_s` as TrBinding };
}

/**
 * TR's variant for `inputs` inputs: their scalar views, and their vec4 views with `vec`; the
 * partials as atomics with `atomic`.
 */
export function trUse(inputs: number, vec: boolean, atomic = false): InterfaceUse<typeof TR.spec> {
  const use: Partial<Record<TrBinding | 'partials' | 'partials_a', boolean>> = atomic
    ? { partials_a: true }
    : { partials: true };
  for (let k = 0; k < inputs; k++) {
    const b = trInput(k);
    use[b.s] = true;
    if (vec) use[b.v] = true;
  }
  return use;
}

/** TR's declarations for a pass 1 over `inTypes` (vec4 views with `vec`) reducing values of `acc`. */
function bindings(inTypes: readonly NumericType[], vec: boolean, acc: string, atomic = false): string {
  const types: Partial<Record<TrBinding | 'partials' | 'partials_a', string>> = { partials: acc, partials_a: acc };
  inTypes.forEach((t, k) => {
    const b = trInput(k);
    types[b.s] = t;
    types[b.v] = t;
  });
  return TR.wgsl(trUse(inTypes.length, vec, atomic), types);
}

/** Builds pass 1. Bindings (TR): params, partials, input k's vec4 and scalar views. */
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
    p.atomicFold ?? 'store',
  );
  const out = p.atomicFold
    ? `${p.atomicFold}(&partials_a[prm.out_offset], total);`
    : 'partials[prm.out_offset + wg_index] = total;';
  return fragment({
    name,
    deps: [threadIds(p.subgroups), p.load, c.combine, red],
    code: `${bindings(p.inTypes, p.path === 'vec', c.wgslType, p.atomicFold !== undefined)}
@compute @workgroup_size(${w}) fn main(${entryParams(p.subgroups)}) {
${entryPrologue(p.subgroups)}
  if (wg_index >= prm.num_wg) { return; }
${body}
  if (ids.lid == 0u) { ${out} }
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
    code: `${TR.wgsl({ partials: true }, { partials: c.wgslType })}
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

/**
 * A struct accumulator `{ c0: T0, .., c<fields-1>: T, ok: u32 }` (tuple reductions): `ok == 0` is
 * the identity. `raw` declares `fn <raw.name>(a: S, b: S) -> S`, the operator on two values that
 * hold elements (no flag tests; its result has `ok == 1`).
 */
export interface TupleShape {
  readonly fields: number;
  readonly raw: WgslFragment;
}

export interface BlockedKernelParams {
  readonly inTypes: readonly NumericType[];
  readonly load: WgslFragment;
  /** The flagged combine of the struct (identity `ok == 0`). */
  readonly combiner: Combiner;
  readonly tuple: TupleShape;
  /** vec4 loads (inputs 16-byte aligned); else scalar loads. */
  readonly vec: boolean;
  readonly workgroupSize: number;
  /** Contiguous elements per thread per tile (a multiple of 4). */
  readonly itemsPerThread: number;
  readonly subgroups: boolean;
  readonly minSubgroupSize: number;
}

/**
 * Pass 1 of ordered reductions of struct accumulators (tuples), in order and near bandwidth:
 * each thread loads `itemsPerThread` contiguous elements (vec4 loads where aligned: a subgroup
 * reads one contiguous run, CUB's blocked vectorized load) and folds them in registers from its
 * first element with the raw operator (no flag tests, no identity). Then:
 *  - subgroups: each subgroup owns a contiguous part of the workgroup's range and walks it in rows
 *    of `sg_size * itemsPerThread` elements; a row's lane folds are reduced in lane order with one
 *    shuffle per struct field per step (lane 0 gets the row's value) and appended to the subgroup's
 *    accumulator. No barrier until the end, where the subgroups' values are folded in order (one
 *    barrier).
 *  - no subgroups: per tile, the thread folds go to workgroup memory and are folded in order in two
 *    levels (groups of 16 threads, then thread 0): two barriers per tile.
 * Only each thread's (or subgroup's) last, partial run tests flags.
 */
export function blockedKernel(p: BlockedKernelParams): WgslFragment {
  const w = p.workgroupSize;
  const k = p.itemsPerThread;
  const c = p.combiner;
  const s = c.wgslType;
  const comb = c.combine.name;
  const raw = p.tuple.raw.name;
  const none = p.inTypes.length === 0;
  if (k % 4 !== 0) throw new Error('transform-reduce engine: blocked items per thread must be a multiple of 4');
  if (p.inTypes.length > TR_MAX_INPUTS || (p.vec && none)) {
    throw new Error('transform-reduce engine: bad inputs for the blocked path');
  }
  const ldAt = (e: string) =>
    `${p.load.name}(${[...p.inTypes.map((_, j) => `in${j}_s[prm.base${j} + ${e}]`), `prm.seg_start + ${e}`].join(', ')})`;
  const comps = ['x', 'y', 'z', 'w'];
  /** Folds the `k` elements from `e` (all in range) into `v`, in registers. */
  const fullFold = () => {
    const lines: string[] = [];
    for (let q = 0; q < k; q++) {
      let load: string;
      if (p.vec) {
        if (q % 4 === 0) {
          lines.push(...p.inTypes.map((_, j) => `let v${j}_${q / 4} = in${j}_v[vb${j} + e / 4u + ${q / 4}u];`));
        }
        const args = p.inTypes.map((_, j) => `v${j}_${Math.floor(q / 4)}.${comps[q % 4]}`);
        load = `${p.load.name}(${[...args, `prm.seg_start + e + ${q}u`].join(', ')})`;
      } else {
        load = ldAt(`e + ${q}u`);
      }
      lines.push(q === 0 ? `var v = ${load};` : `v = ${raw}(v, ${load});`);
    }
    return lines.join('\n      ');
  };
  /** Folds the elements from `e` before `lim` into `v` (flagged; `v` starts empty). */
  const partialFold = `var v = ${c.identity};
      for (var q = 0u; q < ${k}u; q++) {
        if (e + q < lim) { v = ${comb}(v, ${ldAt('e + q')}); }
      }`;
  const vbs = p.vec ? p.inTypes.map((_, j) => `  let vb${j} = prm.base${j} / 4u;`).join('\n') : '';
  const fields = Array.from({ length: p.tuple.fields }, (_, f) => `c${f}`);
  /** The struct `x` of the lane `d` above (its flag too where `flagged`; else 1). */
  const shuffle = (x: string, d: string, flagged: boolean) =>
    `${s}(${[...fields.map((f) => `subgroupShuffleDown(${x}.${f}, ${d})`), flagged ? `subgroupShuffleDown(${x}.ok, ${d})` : '1u'].join(', ')})`;
  let body: string;
  let scratch: string;
  let bytes: number;
  const name = mangle(
    'tr_blocked',
    p.vec ? 'vec' : 'scalar',
    p.inTypes.join('_') || 'none',
    p.load.name,
    c.name,
    raw,
    w,
    k,
    p.subgroups ? `sg${p.minSubgroupSize}` : 'wg',
  );
  const ws = `${name}_s`;
  if (p.subgroups) {
    const count = Math.max(1, w / p.minSubgroupSize);
    scratch = `var<workgroup> ${ws}: array<${s}, ${count}>;`;
    bytes = count * c.bytes;
    // Lane 0 of a row ends with lanes 0..sg_size-1 folded in order; the other lanes' values (out of
    // range shuffles included) never reach it, so every lane combines unconditionally.
    body = `  let row = ids.sg_size * ${k}u;
  let sfirst = first + ids.sg_id * prm.tiles_per_wg * row;
  let send = min(sfirst + prm.tiles_per_wg * row, end);
  var acc = ${c.identity};
  var b = sfirst;
  loop {
    if (b + row > send) { break; }
    {
      let e = b + ids.lane * ${k}u;
      ${fullFold()}
      for (var d = 1u; d < ids.sg_size; d = d << 1u) { v = ${raw}(v, ${shuffle('v', 'd', false)}); }
      acc = ${comb}(acc, v);
    }
    b += row;
  }
  if (b < send) {
    let e = b + ids.lane * ${k}u;
    let lim = send;
    ${partialFold}
    for (var d = 1u; d < ids.sg_size; d = d << 1u) { v = ${comb}(v, ${shuffle('v', 'd', true)}); }
    acc = ${comb}(acc, v);
  }
  if (ids.lane == 0u) { ${ws}[ids.sg_id] = acc; }
  workgroupBarrier();
  var total = ${c.identity};
  if (ids.lid == 0u) {
    for (var j = 0u; j < ${w}u / ids.sg_size; j++) { total = ${comb}(total, ${ws}[j]); }
  }`;
  } else {
    const groups = Math.max(1, w / 16);
    const per = w / groups;
    scratch = `var<workgroup> ${ws}: array<${s}, ${w}>;\nvar<workgroup> ${ws}2: array<${s}, ${groups}>;`;
    bytes = (w + groups) * c.bytes;
    body = `  let tile = ${w * k}u;
  var total = ${c.identity};
  for (var t = first; t < end; t += tile) {
    let e = t + ids.lid * ${k}u;
    if (t + tile <= end) {
      ${fullFold()}
      ${ws}[ids.lid] = v;
    } else {
      let lim = end;
      ${partialFold}
      ${ws}[ids.lid] = v;
    }
    workgroupBarrier();
    if (ids.lid < ${groups}u) {
      var g = ${ws}[ids.lid * ${per}u];
      for (var j = 1u; j < ${per}u; j++) { g = ${comb}(g, ${ws}[ids.lid * ${per}u + j]); }
      ${ws}2[ids.lid] = g;
    }
    workgroupBarrier();
    if (ids.lid == 0u) {
      for (var j = 0u; j < ${groups}u; j++) { total = ${comb}(total, ${ws}2[j]); }
    }
  }`;
  }
  return fragment({
    name,
    deps: [threadIds(p.subgroups), p.load, c.combine, p.tuple.raw],
    enables: p.subgroups ? ['subgroups'] : [],
    workgroupBytes: bytes,
    code: `${bindings(p.inTypes, p.vec, s)}
${scratch}
@compute @workgroup_size(${w}) fn main(${entryParams(p.subgroups)}) {
${entryPrologue(p.subgroups)}
  if (wg_index >= prm.num_wg) { return; }
  let tile_elems = ${w * k}u;
  let first = wg_index * prm.tiles_per_wg * tile_elems;
  let end = min(first + prm.tiles_per_wg * tile_elems, prm.n);
${vbs}
${body}
  if (ids.lid == 0u) { partials[prm.out_offset + wg_index] = total; }
}`,
  });
}
