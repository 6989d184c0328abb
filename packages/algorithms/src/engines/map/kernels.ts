/**
 * WGSL of the map engine: out[i] = elem(in0[i], in1[i], ..., i, c) over a range of elements.
 *
 * Hooks (fragments with fixed signatures, so gather/scatter and the like are new element functions,
 * not new kernels):
 *  - "generate input": up to 4 streamed inputs read at the element's index (x0..x3), plus up to 2
 *    `gathered` arrays bound whole and read at any index through `fn map_load<k>(j: u32) -> T`;
 *  - "write output": 'value' stores the element function's result at the element's index; 'store'
 *    binds the output whole and leaves the write to the element function, through
 *    `fn map_store(j: u32, v: O)` (any index, or none: scatter, conditional writes); with up to 3
 *    `extraOuts` (zip outputs), 'value' stores element k of the element function's `vecK<u32>`
 *    result (the bits of each output's element) in output k, all at the element's index.
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
  type InterfaceTypes,
  type InterfaceUse,
  kernelInterface,
  mangle,
  type NumericType,
  threadIds,
  type WgslFragment,
} from '@webdpl/core';

export type MapPath = 'vec' | 'scalar';

/** Where input k is read from: its own binding, or the output's (the input is the output). */
export type InputSource = 'binding' | 'output';

/**
 * How the output is written: 'value', out[i] = elem(...); 'store', elem(...) returns nothing and
 * writes through `map_store(j, v)` (the output bound whole); 'masked', out[i] = elem(..., &ok)
 * where the element sets ok (else out[i] keeps its value): a vec4 store where all four are set, the
 * set components otherwise (gathers). (An 'indexed' write for scatters, four elements filling one
 * aligned vec4 in any order as one vec4 store, lost the device on Chromium's SwiftShader, with
 * dynamic component indices and with static ones alike; scatters use 'store'.)
 */
export type MapWrite = 'value' | 'store' | 'masked';

/** Most streamed inputs, gathered arrays and outputs beside the first of one kernel. */
export const MAP_MAX_INPUTS = 4;
export const MAP_MAX_GATHERED = 2;
export const MAP_MAX_EXTRA_OUTPUTS = 3;

export interface MapKernelParams {
  /** Element types of the streamed inputs (0 to MAP_MAX_INPUTS). */
  readonly inTypes: readonly NumericType[];
  readonly sources: readonly InputSource[];
  readonly outType: NumericType;
  /**
   * Declares `fn <elem.name>([x0: T0, ...,] i: u32, c: vec2<u32>) -> outType` ('value'), the same
   * without a result ('store'), or with a last parameter `ok: ptr<function, bool>` ('masked').
   */
  readonly elem: WgslFragment;
  /** @default 'value' */
  readonly write?: MapWrite;
  /** Element types of the gathered arrays (bound whole, read through `map_load<k>`). @default [] */
  readonly gathered?: readonly NumericType[];
  /**
   * Element types of outputs 1.. ('value' only; never read as inputs): the element function then
   * returns `vec{1 + extraOuts.length}<u32>`, output k's element bits in component k. @default []
   */
  readonly extraOuts?: readonly NumericType[];
  readonly path: MapPath;
  readonly workgroupSize: number;
  readonly vecsPerThread: number;
  readonly itemsPerThread: number;
}

const read = (binding: number) => ({ binding, access: 'read', optional: true }) as const;
const written = (binding: number) => ({ binding, access: 'read_write', optional: true }) as const;

/**
 * The map kernel's interface. Uniform: `n` is the length of the dispatched range in elements;
 * `base*` the index of each array's first element of the range in its binding (`base_out` and
 * `gbase*`: of the whole array, for bindings of whole arrays). Bindings: the output `out_d`,
 * streamed input k `in<k>_d` (when read from its own binding), gathered array k `gat<k>_d`, output
 * k >= 1 `out<k>_d` (zip outputs); element types per kernel (vec4 on the vec path).
 */
export const MAP = kernelInterface({
  name: 'map',
  params: {
    struct: 'MapParams',
    name: 'prm',
    binding: 0,
    fields: {
      n: 'u32',
      base_out: 'u32',
      base0: 'u32',
      base1: 'u32',
      base2: 'u32',
      base3: 'u32',
      index_start: 'u32',
      num_wg: 'u32',
      c0: 'u32',
      c1: 'u32',
      num_tiles: 'u32',
      gbase0: 'u32',
      gbase1: 'u32',
      base_o1: 'u32',
      base_o2: 'u32',
      base_o3: 'u32',
    },
  },
  bindings: {
    out_d: { binding: 1, access: 'read_write' },
    in0_d: read(2),
    in1_d: read(3),
    in2_d: read(4),
    in3_d: read(5),
    gat0_d: read(6),
    gat1_d: read(7),
    out1_d: written(8),
    out2_d: written(9),
    out3_d: written(10),
  },
});

/** MAP's optional binding names. */
export type MapBinding = `in${0 | 1 | 2 | 3}_d` | `gat${0 | 1}_d` | `out${1 | 2 | 3}_d`;
/** The binding of streamed input k, gathered array k and output k >= 1. */
export const mapInputName = (k: number) => `in${k}_d` as MapBinding;
export const mapGatheredName = (k: number) => `gat${k}_d` as MapBinding;
export const mapOutputName = (k: number) => `out${k}_d` as MapBinding;

/**
 * MAP's variant: the streamed inputs read from their own binding, `gathered` gathered arrays and
 * `extraOuts` outputs beside the first.
 */
export function mapUse(
  sources: readonly InputSource[],
  gathered: number,
  extraOuts: number,
): InterfaceUse<typeof MAP.spec> {
  const use: Partial<Record<MapBinding, boolean>> = {};
  sources.forEach((s, k) => {
    if (s === 'binding') use[mapInputName(k)] = true;
  });
  for (let k = 0; k < gathered; k++) use[mapGatheredName(k)] = true;
  for (let k = 1; k <= extraOuts; k++) use[mapOutputName(k)] = true;
  return use;
}

/** Builds the kernel. Bindings: MAP (params, the output, inputs, gathered arrays, more outputs). */
export function mapKernel(p: MapKernelParams): WgslFragment {
  const w = p.workgroupSize;
  const vec = p.path === 'vec';
  const store = p.write === 'store';
  const gathered = p.gathered ?? [];
  if (p.inTypes.length > MAP_MAX_INPUTS || gathered.length > MAP_MAX_GATHERED) {
    throw new Error(`map engine: at most ${MAP_MAX_INPUTS} inputs and ${MAP_MAX_GATHERED} gathered arrays`);
  }
  if (store && p.sources.includes('output')) throw new Error('map engine: store kernels never read the output');
  const extra = p.extraOuts ?? [];
  if (extra.length > MAP_MAX_EXTRA_OUTPUTS || (extra.length > 0 && (store || gathered.length > 0))) {
    throw new Error(
      `map engine: at most ${MAP_MAX_EXTRA_OUTPUTS} more outputs, with 'value' writes and no gathered arrays`,
    );
  }
  const per = vec ? p.vecsPerThread : p.itemsPerThread;
  const tile = w * per;
  const vt = (t: NumericType) => (vec ? `vec4<${t}>` : t);
  const types: Partial<Record<MapBinding | 'out_d', string>> = { out_d: store ? p.outType : vt(p.outType) };
  p.inTypes.forEach((t, k) => {
    types[mapInputName(k)] = vt(t);
  });
  gathered.forEach((t, k) => {
    types[mapGatheredName(k)] = t;
  });
  extra.forEach((t, k) => {
    types[mapOutputName(k + 1)] = vt(t);
  });
  const lines = [MAP.wgsl(mapUse(p.sources, gathered.length, extra.length), types as InterfaceTypes<typeof MAP.spec>)];
  gathered.forEach((t, k) => {
    lines.push(`fn map_load${k}(j: u32) -> ${t} { return gat${k}_d[prm.gbase${k} + j]; }`);
  });
  if (store) lines.push(`fn map_store(j: u32, v: ${p.outType}) { out_d[prm.base_out + j] = v; }`);
  const div = vec ? ' / 4u' : '';
  const load = (k: number, idx: string) =>
    p.sources[k] === 'output' ? `out_d[ob + ${idx}]` : `in${k}_d[b${k} + ${idx}]`;
  const masked = p.write === 'masked';
  const call = (args: string[], idx: string, ok?: string) =>
    `${p.elem.name}(${[...args, idx, 'c', ...(ok ? [`&${ok}`] : [])].join(', ')})`;
  const ks = p.inTypes.map((_, k) => k);
  const comps = ['x', 'y', 'z', 'w'];
  const value = (j: string, idxVar: string) => {
    if (!vec)
      return call(
        ks.map((k) => `a${k}_${j}`),
        `prm.index_start + ${idxVar}`,
      );
    if (store) {
      return comps
        .map((cc, q) =>
          call(
            ks.map((k) => `a${k}_${j}.${cc}`),
            `prm.index_start + ${idxVar} * 4u + ${q}u`,
          ),
        )
        .join(';\n      ');
    }
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
  const outTypes = [p.outType, ...extra];
  const outArr = (k: number) => (k === 0 ? 'out_d' : `out${k}_d`);
  const outBase = (k: number) => (k === 0 ? 'ob' : `ob${k}`);
  /** Zip outputs: the element's tuple(s), then each output's element (or vec4 of four elements). */
  const multiWrite = (j: string, idxVar: string) => {
    if (!vec) {
      const r = `r_${j}`;
      const call0 = call(
        ks.map((k) => `a${k}_${j}`),
        `prm.index_start + ${idxVar}`,
      );
      return [
        `let ${r} = ${call0};`,
        ...outTypes.map((t, k) => `${outArr(k)}[${outBase(k)} + ${idxVar}] = bitcast<${t}>(${r}[${k}]);`),
      ].join('\n      ');
    }
    const rs = comps.map((cc, q) => {
      const c0 = call(
        ks.map((k) => `a${k}_${j}.${cc}`),
        `prm.index_start + ${idxVar} * 4u + ${q}u`,
      );
      return `let r_${j}_${q} = ${c0};`;
    });
    const stores = outTypes.map(
      (t, k) =>
        `${outArr(k)}[${outBase(k)} + ${idxVar}] = bitcast<vec4<${t}>>(vec4<u32>(${comps.map((_, q) => `r_${j}_${q}[${k}]`).join(', ')}));`,
    );
    return [...rs, ...stores].join('\n      ');
  };
  // Masked: each element's result and flag; a vec4 store when all four are set, else the set ones.
  const maskedWrite = (j: string, idxVar: string) => {
    if (!vec) {
      return `{
        var ok = false;
        let r = ${call(
          ks.map((k) => `a${k}_${j}`),
          `prm.index_start + ${idxVar}`,
          'ok',
        )};
        if (ok) { out_d[ob + ${idxVar}] = r; }
      }`;
    }
    const each = comps.map(
      (cc, q) => `var ok${q} = false;
        let r${q} = ${call(
          ks.map((k) => `a${k}_${j}.${cc}`),
          `prm.index_start + ${idxVar} * 4u + ${q}u`,
          `ok${q}`,
        )};`,
    );
    return `{
        ${each.join('\n        ')}
        if (ok0 && ok1 && ok2 && ok3) {
          out_d[ob + ${idxVar}] = vec4<${p.outType}>(r0, r1, r2, r3);
        } else {
          ${comps.map((cc, q) => `if (ok${q}) { out_d[ob + ${idxVar}].${cc} = r${q}; }`).join('\n          ')}
        }
      }`;
  };
  const write = (j: string, idxVar: string) =>
    extra.length > 0
      ? multiWrite(j, idxVar)
      : masked
        ? maskedWrite(j, idxVar)
        : store
          ? `${value(j, idxVar)};`
          : `out_d[ob + ${idxVar}] = ${value(j, idxVar)};`;
  for (let j = 0; j < per; j++) full.push(write(String(j), `v${j}`));
  const partial = [
    `for (var j = 0u; j < ${per}u; j++) {`,
    `  let v = t + j * ${w}u + ids.lid;`,
    '  if (v < count) {',
    ...ks.map((k) => `    let a${k}_p = ${load(k, 'v')};`),
    `    ${write('p', 'v')}`,
    '  }',
    '}',
  ];
  const name = mangle(
    'map',
    p.path,
    p.inTypes.map((t, k) => `${t}${p.sources[k] === 'output' ? 'o' : 'b'}`).join('_') || 'none',
    gathered.join('_') || 'nog',
    p.write ?? 'value',
    [p.outType, ...extra].join('_'),
    p.elem.name,
    w,
    per,
  );
  return fragment({
    name,
    deps: [threadIds(false), p.elem],
    code: `${lines.join('\n')}
@compute @workgroup_size(${w}) fn main(${entryParams(false)}) {
${entryPrologue(false)}
  if (wg_index >= prm.num_wg) { return; }
  let c = vec2<u32>(prm.c0, prm.c1);
  let count = prm.n${div};
  let ob = prm.base_out${store ? '' : div};
${extra.map((_, k) => `  let ob${k + 1} = prm.base_o${k + 1}${div};`).join('\n')}
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
