/**
 * Workgroup building blocks: reduce, inclusive scan and exclusive scan of one value per thread, in
 * logical thread order (`ids.lid`, see ids.ts), for any associative operator with an identity.
 * One front, two variants chosen when the kernel is generated:
 *  - subgroups: a subgroup scan, per-subgroup totals in workgroup memory, one more ordered pass.
 *    Workgroup memory: (workgroupSize / minSubgroupSize) elements. 2 barriers.
 *  - workgroup memory: a Kogge-Stone scan (reduce: an ordered tree) over workgroupSize elements.
 *    Workgroup memory: workgroupSize elements. 2*log2(workgroupSize) barriers.
 * Every function starts with a barrier, so calls may follow each other on the same scratch.
 * Call from workgroup-uniform control flow (they contain barriers).
 */
import { WebdplError } from '../errors';
import { fragment, mangle, type WgslFragment } from './fragment';
import { type OpParams, subgroupExclusiveScan, subgroupInclusiveScan, subgroupReduce } from './subgroup';

export interface WorkgroupParams extends OpParams {
  /** Threads per workgroup: a power of two. */
  readonly workgroupSize: number;
  /** Use the subgroup variant (the device must have the `subgroups` feature). */
  readonly subgroups: boolean;
  /** Smallest subgroup size the device may use (sizes the scratch). @default 4 */
  readonly minSubgroupSize?: number;
}

function check(p: WorkgroupParams): void {
  const w = p.workgroupSize;
  if (!Number.isInteger(w) || w < 1 || (w & (w - 1)) !== 0) {
    throw new WebdplError(`workgroupSize must be a power of two, got ${w}`);
  }
}

function key(kind: string, p: WorkgroupParams): string {
  return mangle(kind, p.combiner.name, p.workgroupSize, p.subgroups ? `sg${p.minSubgroupSize ?? 4}` : 'wg');
}

function partialCount(p: WorkgroupParams): number {
  return Math.max(1, Math.ceil(p.workgroupSize / Math.min(p.minSubgroupSize ?? 4, p.workgroupSize)));
}

/**
 * An ordered fold of `partials[0..count)` done by one subgroup: lane i folds a contiguous chunk,
 * then an ordered subgroup reduce combines the chunks. Loop bounds are uniform.
 */
function subgroupFold(p: WorkgroupParams, scratch: string, maxCount: number): WgslFragment {
  const t = p.combiner.wgslType;
  const name = mangle('sg_fold', scratch);
  const red = subgroupReduce(p);
  const f = p.combiner.combine;
  const id = p.combiner.identity;
  return fragment({
    name,
    deps: [red, f],
    code: `fn ${name}(count: u32, lane: u32, sg_size: u32) -> ${t} {
  let k = (${maxCount}u + sg_size - 1u) / sg_size;
  var acc = ${id};
  for (var j = 0u; j < k; j++) {
    let i = lane * k + j;
    if (i < count) { acc = ${f.name}(acc, ${scratch}[i]); }
  }
  return ${red.name}(acc, lane, sg_size);
}`,
  });
}

/** `fn NAME(x: T, ids: WdplIds) -> T`: the reduction of x over the workgroup, returned to every thread. */
export function workgroupReduce(p: WorkgroupParams): WgslFragment {
  check(p);
  const t = p.combiner.wgslType;
  const bytes = p.combiner.bytes;
  const name = key('wg_reduce', p);
  const scratch = `${name}_s`;
  const f = p.combiner.combine;
  const w = p.workgroupSize;
  if (p.subgroups) {
    const n = partialCount(p);
    const red = subgroupReduce(p);
    const fold = subgroupFold(p, scratch, n);
    return fragment({
      name,
      deps: [red, fold],
      enables: ['subgroups'],
      workgroupBytes: n * bytes,
      code: `var<workgroup> ${scratch}: array<${t}, ${n}>;
fn ${name}(x: ${t}, ids: WdplIds) -> ${t} {
  let s = ${red.name}(x, ids.lane, ids.sg_size);
  workgroupBarrier();
  if (ids.lane == 0u) { ${scratch}[ids.sg_id] = s; }
  workgroupBarrier();
  return ${fold.name}(${w}u / ids.sg_size, ids.lane, ids.sg_size);
}`,
    });
  }
  return fragment({
    name,
    deps: [f],
    workgroupBytes: (w + 1) * bytes,
    code: `var<workgroup> ${scratch}: array<${t}, ${w + 1}>;
fn ${name}(x: ${t}, ids: WdplIds) -> ${t} {
  workgroupBarrier();
  ${scratch}[ids.lid] = x;
  for (var d = 1u; d < ${w}u; d = d << 1u) {
    workgroupBarrier();
    if ((ids.lid & (2u * d - 1u)) == 0u && ids.lid + d < ${w}u) {
      ${scratch}[ids.lid] = ${f.name}(${scratch}[ids.lid], ${scratch}[ids.lid + d]);
    }
  }
  workgroupBarrier();
  if (ids.lid == 0u) { ${scratch}[${w}u] = ${scratch}[0]; }
  workgroupBarrier();
  return ${scratch}[${w}u];
}`,
  });
}

function workgroupScan(p: WorkgroupParams, exclusive: boolean): WgslFragment {
  check(p);
  const t = p.combiner.wgslType;
  const bytes = p.combiner.bytes;
  const name = key(exclusive ? 'wg_excl_scan' : 'wg_incl_scan', p);
  const scratch = `${name}_s`;
  const f = p.combiner.combine;
  const id = p.combiner.identity;
  const w = p.workgroupSize;
  if (p.subgroups) {
    const n = partialCount(p);
    const incl = subgroupInclusiveScan(p);
    const excl = exclusive ? subgroupExclusiveScan(p) : undefined;
    const fold = subgroupFold(p, scratch, n);
    const local = exclusive
      ? `let e = ${excl?.name}(x, ids.lane, ids.sg_size);\n  let s = ${f.name}(e, x);`
      : `let s = ${incl.name}(x, ids.lane, ids.sg_size);`;
    return fragment({
      name,
      deps: [incl, excl, fold, f],
      enables: ['subgroups'],
      workgroupBytes: n * bytes,
      code: `var<workgroup> ${scratch}: array<${t}, ${n}>;
/** Scan of x in logical thread order; *total receives the workgroup's reduction. */
fn ${name}(x: ${t}, ids: WdplIds, total: ptr<function, ${t}>) -> ${t} {
  ${local}
  workgroupBarrier();
  if (ids.lane == ids.sg_size - 1u) { ${scratch}[ids.sg_id] = s; }
  workgroupBarrier();
  let prefix = ${fold.name}(ids.sg_id, ids.lane, ids.sg_size);
  *total = ${fold.name}(${w}u / ids.sg_size, ids.lane, ids.sg_size);
  return ${f.name}(prefix, ${exclusive ? 'e' : 's'});
}`,
    });
  }
  return fragment({
    name,
    deps: [f],
    workgroupBytes: w * bytes,
    code: `var<workgroup> ${scratch}: array<${t}, ${w}>;
/** Scan of x in logical thread order; *total receives the workgroup's reduction. */
fn ${name}(x: ${t}, ids: WdplIds, total: ptr<function, ${t}>) -> ${t} {
  workgroupBarrier();
  ${scratch}[ids.lid] = x;
  var v = x;
  for (var d = 1u; d < ${w}u; d = d << 1u) {
    workgroupBarrier();
    if (ids.lid >= d) { v = ${f.name}(${scratch}[ids.lid - d], v); }
    workgroupBarrier();
    ${scratch}[ids.lid] = v;
  }
  workgroupBarrier();
  *total = ${scratch}[${w - 1}u];
  ${exclusive ? `if (ids.lid == 0u) { return ${id}; }\n  return ${scratch}[ids.lid - 1u];` : 'return v;'}
}`,
  });
}

/** `fn NAME(x: T, ids: WdplIds, total: ptr<function, T>) -> T`: inclusive scan over the workgroup. */
export function workgroupInclusiveScan(p: WorkgroupParams): WgslFragment {
  return workgroupScan(p, false);
}

/** `fn NAME(x: T, ids: WdplIds, total: ptr<function, T>) -> T`: exclusive scan (thread 0 gets the identity). */
export function workgroupExclusiveScan(p: WorkgroupParams): WgslFragment {
  return workgroupScan(p, true);
}

/**
 * `fn NAME(x0: T, .., x{R-1}: T, ids: WdplIds) -> NAME_r`: exclusive scans of R values per thread
 * ("rows": row r scans every thread's x{r} in logical thread order), independent of each other; the
 * result's `p{r}` is row r's exclusive prefix for this thread and `t{r}` row r's total. With
 * subgroups all rows share one exchange: R subgroup scans, the rows' subgroup totals to workgroup
 * memory, 2 barriers, then each thread folds the totals of the subgroups before its own (in order,
 * so non-commutative operators keep theirs) from broadcast reads; one workgroupExclusiveScan per row
 * costs 2 barriers and two ordered subgroup folds each. Workgroup memory: R x (workgroupSize /
 * minSubgroupSize) values; without subgroups one workgroupExclusiveScan, called once per row.
 */
export function workgroupExclusiveScanRows(p: WorkgroupParams, rows: number): WgslFragment {
  check(p);
  if (!Number.isInteger(rows) || rows < 1) throw new WebdplError(`rows must be a positive integer, got ${rows}`);
  const t = p.combiner.wgslType;
  const name = mangle(key('wg_excl_scan_rows', p), rows);
  const f = p.combiner.combine;
  const id = p.combiner.identity;
  const w = p.workgroupSize;
  const each = (g: (r: number) => string, sep = '\n  ') => Array.from({ length: rows }, (_, r) => g(r)).join(sep);
  const struct = `struct ${name}_r { ${each((r) => `p${r}: ${t}`, ', ')}, ${each((r) => `t${r}: ${t}`, ', ')} }`;
  const params = `${each((r) => `x${r}: ${t}`, ', ')}, ids: WdplIds`;
  const result = `${name}_r(${each((r) => `p${r}`, ', ')}, ${each((r) => `t${r}`, ', ')})`;
  if (!p.subgroups) {
    const one = workgroupExclusiveScan(p);
    return fragment({
      name,
      deps: [one],
      code: `${struct}
fn ${name}(${params}) -> ${name}_r {
  ${each((r) => `var t${r}: ${t};\n  let p${r} = ${one.name}(x${r}, ids, &t${r});`)}
  return ${result};
}`,
    });
  }
  const n = partialCount(p);
  const scratch = `${name}_s`;
  const excl = subgroupExclusiveScan(p);
  return fragment({
    name,
    deps: [excl, f],
    enables: ['subgroups'],
    workgroupBytes: rows * n * p.combiner.bytes,
    code: `${struct}
var<workgroup> ${scratch}: array<${t}, ${rows * n}>;
fn ${name}(${params}) -> ${name}_r {
  ${each((r) => `let e${r} = ${excl.name}(x${r}, ids.lane, ids.sg_size);`)}
  workgroupBarrier();
  if (ids.lane == ids.sg_size - 1u) {
    ${each((r) => `${scratch}[${r * n}u + ids.sg_id] = ${f.name}(e${r}, x${r});`, '\n    ')}
  }
  workgroupBarrier();
  ${each((r) => `var b${r} = ${id};\n  var t${r} = ${id};`)}
  for (var g = 0u; g < ${w}u / ids.sg_size; g++) {
    let before = g < ids.sg_id;
    ${each((r) => `let a${r} = ${scratch}[${r * n}u + g];\n    b${r} = select(b${r}, ${f.name}(b${r}, a${r}), before);\n    t${r} = ${f.name}(t${r}, a${r});`, '\n    ')}
  }
  ${each((r) => `let p${r} = ${f.name}(b${r}, e${r});`)}
  return ${result};
}`,
  });
}
