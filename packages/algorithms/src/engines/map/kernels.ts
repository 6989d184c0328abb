/**
 * WGSL of the map engine: out[i] = elem(in0[i], in1[i], i, c) over a range of elements.
 *
 *  - 'vec': every array starts on a 16-byte boundary and the range is a multiple of 4 elements.
 *    Each thread loads `vecsPerThread` vec4s per input (coalesced: consecutive threads read
 *    consecutive vec4s) before computing and storing any, so that many 16-byte loads are in flight
 *    per thread; full tiles have no bounds checks, only the last (partial) tile does.
 *  - 'scalar': any alignment; the same shape with `itemsPerThread` coalesced scalar accesses.
 * Workgroup w runs tiles w, w + num_wg, ... (one tile each unless the tuning caps the grid);
 * `wg_index` comes from the 2-D grid (see gridFor), workgroups past `num_wg` return at once. An input that is the output itself (in place) is read through the
 * output's binding, so no buffer is bound twice in one dispatch.
 * Workgroup memory: none. Subgroups: not used.
 */
import {
  entryParams,
  entryPrologue,
  fragment,
  mangle,
  type NumericType,
  threadIds,
  type WgslFragment,
} from '@webdpl/core';

export type MapPath = 'vec' | 'scalar';

/** Where input k is read from: its own binding, or the output's (the input is the output). */
export type InputSource = 'binding' | 'output';

export interface MapKernelParams {
  /** Element types of the inputs (0, 1 or 2). */
  readonly inTypes: readonly NumericType[];
  readonly sources: readonly InputSource[];
  readonly outType: NumericType;
  /** Declares `fn <elem.name>([x0: T0, [x1: T1,]] i: u32, c: vec2<u32>) -> outType`. */
  readonly elem: WgslFragment;
  readonly path: MapPath;
  readonly workgroupSize: number;
  readonly vecsPerThread: number;
  readonly itemsPerThread: number;
}

/** Uniform parameters (12 u32). `n` is the length of the dispatched range in elements. */
export const MAP_PARAMS_STRUCT = `struct MapParams {
  n: u32,
  base_out: u32,
  base0: u32,
  base1: u32,
  index_start: u32,
  num_wg: u32,
  c0: u32,
  c1: u32,
  num_tiles: u32,
  pad0: u32,
  pad1: u32,
  pad2: u32,
}`;

/** Builds the kernel. Bindings: 0 params, 1 output, 2 + k input k (when read from its own binding). */
export function mapKernel(p: MapKernelParams): WgslFragment {
  const w = p.workgroupSize;
  const vec = p.path === 'vec';
  const per = vec ? p.vecsPerThread : p.itemsPerThread;
  const tile = w * per;
  const vt = (t: NumericType) => (vec ? `vec4<${t}>` : t);
  const lines = [
    '@group(0) @binding(0) var<uniform> prm: MapParams;',
    `@group(0) @binding(1) var<storage, read_write> out_d: array<${vt(p.outType)}>;`,
  ];
  p.inTypes.forEach((t, k) => {
    if (p.sources[k] === 'binding') {
      lines.push(`@group(0) @binding(${2 + k}) var<storage, read> in${k}_d: array<${vt(t)}>;`);
    }
  });
  const div = vec ? ' / 4u' : '';
  const load = (k: number, idx: string) =>
    p.sources[k] === 'output' ? `out_d[ob + ${idx}]` : `in${k}_d[b${k} + ${idx}]`;
  const call = (args: string[], idx: string) => `${p.elem.name}(${[...args, idx, 'c'].join(', ')})`;
  const ks = p.inTypes.map((_, k) => k);
  const comps = ['x', 'y', 'z', 'w'];
  const value = (j: string, idxVar: string) => {
    if (!vec)
      return call(
        ks.map((k) => `a${k}_${j}`),
        `prm.index_start + ${idxVar}`,
      );
    const parts = comps.map((cc, q) =>
      call(
        ks.map((k) => `a${k}_${j}.${cc}`),
        `prm.index_start + ${idxVar} * 4u + ${q}u`,
      ),
    );
    return `vec4<${p.outType}>(\n      ${parts.join(',\n      ')})`;
  };
  // Full tile: every load first, then every store.
  const full: string[] = [];
  for (let j = 0; j < per; j++) full.push(`let v${j} = t + ${j * w}u + ids.lid;`);
  for (let j = 0; j < per; j++) for (const k of ks) full.push(`let a${k}_${j} = ${load(k, `v${j}`)};`);
  for (let j = 0; j < per; j++) full.push(`out_d[ob + v${j}] = ${value(String(j), `v${j}`)};`);
  const partial = [
    `for (var j = 0u; j < ${per}u; j++) {`,
    `  let v = t + j * ${w}u + ids.lid;`,
    '  if (v < count) {',
    ...ks.map((k) => `    let a${k}_p = ${load(k, 'v')};`),
    `    out_d[ob + v] = ${value('p', 'v')};`,
    '  }',
    '}',
  ];
  const name = mangle(
    'map',
    p.path,
    p.inTypes.map((t, k) => `${t}${p.sources[k] === 'output' ? 'o' : 'b'}`).join('_') || 'none',
    p.outType,
    p.elem.name,
    w,
    per,
  );
  return fragment({
    name,
    deps: [threadIds(false), p.elem],
    code: `${MAP_PARAMS_STRUCT}
${lines.join('\n')}
@compute @workgroup_size(${w}) fn main(${entryParams(false)}) {
${entryPrologue(false)}
  if (wg_index >= prm.num_wg) { return; }
  let c = vec2<u32>(prm.c0, prm.c1);
  let count = prm.n${div};
  let ob = prm.base_out${div};
${ks.map((k) => `  let b${k} = prm.base${k}${div};`).join('\n')}
  for (var tl = wg_index; tl < prm.num_tiles; tl += prm.num_wg) {
    let t = tl * ${tile}u;
    if (t + ${tile}u <= count) {
      ${full.join('\n      ')}
    } else {
      ${partial.join('\n      ')}
    }
  }
}`,
  });
}
