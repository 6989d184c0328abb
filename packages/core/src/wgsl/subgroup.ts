/**
 * Subgroup building blocks: reduce, inclusive scan, exclusive scan for any operator. Built-in
 * operators with a matching subgroup built-in use it (subgroupAdd, subgroupInclusiveAdd...); others
 * use shuffles in lane order, so non-commutative operators are honoured. Any subgroup size works.
 *
 * Needs: the `subgroups` feature. Workgroup memory: none. Call from subgroup-uniform control flow;
 * the shuffle loops use select() rather than branches so they stay subgroup-uniform.
 */
import { UnsupportedTypeError } from '../errors';
import { type GpuFunction, type SubgroupOp, wgslLiteral } from '../operators';
import { byteSize, type NumericType } from '../types';
import { fragment, mangle, type WgslFragment } from './fragment';

/**
 * An associative combine over some WGSL value type: a numeric element type with an operator
 * (`combinerOf`), or any scalar/vector accumulator an engine defines (e.g. vec2<u32> value+index
 * pairs for minElement). Subgroup variants shuffle values, so the type must be a scalar or vector.
 */
export interface Combiner {
  /** Mangling key: unique per type and combine function. */
  readonly name: string;
  /** WGSL type of the values. */
  readonly wgslType: string;
  /** Bytes of one value in workgroup memory. */
  readonly bytes: number;
  /** WGSL expression of the identity. */
  readonly identity: string;
  /** Declares `fn <combine.name>(a: T, b: T) -> T`, associative (not necessarily commutative). */
  readonly combine: WgslFragment;
  /** A subgroup built-in with the same result (subgroupAdd...), if any. */
  readonly subgroupOp?: SubgroupOp;
}

/** The combiner of a numeric operator over `type`; throws when the operator has no identity for it. */
export function combinerOf(op: GpuFunction, type: NumericType): Combiner {
  let byType = combiners.get(op);
  const hit = byType?.get(type);
  if (hit) return hit;
  const c = buildCombiner(op, type);
  if (!byType) {
    byType = new Map();
    combiners.set(op, byType);
  }
  byType.set(type, c);
  return c;
}

/** combinerOf's memo: one Combiner per (operator, type), so calls build no WGSL on the hot path. */
const combiners = new WeakMap<GpuFunction, Map<NumericType, Combiner>>();

function buildCombiner(op: GpuFunction, type: NumericType): Combiner {
  const id = op.identity(type);
  if (id === undefined) {
    throw new UnsupportedTypeError(
      `operator '${op.name}' has no identity for ${type}; GPU reductions and scans need one (give the lambda { identity })`,
    );
  }
  return {
    name: mangle(type, op.name),
    wgslType: type,
    bytes: byteSize(type),
    identity: wgslLiteral(type, id),
    combine: op.wgsl([type, type]),
    subgroupOp: op.subgroupOp(type),
  };
}

/** Building-block parameters: the combiner. */
export interface OpParams {
  readonly combiner: Combiner;
}

/** `fn NAME(x: T, lane: u32, sg_size: u32) -> T`: the reduction of x over the subgroup, in lane order. */
export function subgroupReduce(p: OpParams): WgslFragment {
  const c = p.combiner;
  const t = c.wgslType;
  const name = mangle('sg_reduce', c.name);
  const builtin = c.subgroupOp;
  if (builtin) {
    return fragment({
      name,
      enables: ['subgroups'],
      code: `fn ${name}(x: ${t}, lane: u32, sg_size: u32) -> ${t} { return subgroup${builtin}(x); }`,
    });
  }
  const f = c.combine;
  return fragment({
    name,
    enables: ['subgroups'],
    deps: [f],
    code: `fn ${name}(x0: ${t}, lane: u32, sg_size: u32) -> ${t} {
  var x = x0;
  for (var d = 1u; d < sg_size; d = d << 1u) {
    let y = subgroupShuffleDown(x, d);
    x = select(x, ${f.name}(x, y), lane + d < sg_size);
  }
  return subgroupBroadcast(x, 0u);
}`,
  });
}

/** `fn NAME(x: T, lane: u32, sg_size: u32) -> T`: inclusive scan of x over the subgroup's lanes. */
export function subgroupInclusiveScan(p: OpParams): WgslFragment {
  const c = p.combiner;
  const t = c.wgslType;
  const name = mangle('sg_incl_scan', c.name);
  const builtin = c.subgroupOp;
  if (builtin === 'Add' || builtin === 'Mul') {
    return fragment({
      name,
      enables: ['subgroups'],
      code: `fn ${name}(x: ${t}, lane: u32, sg_size: u32) -> ${t} { return subgroupInclusive${builtin}(x); }`,
    });
  }
  const f = c.combine;
  return fragment({
    name,
    enables: ['subgroups'],
    deps: [f],
    code: `fn ${name}(x0: ${t}, lane: u32, sg_size: u32) -> ${t} {
  var x = x0;
  for (var d = 1u; d < sg_size; d = d << 1u) {
    let y = subgroupShuffleUp(x, d);
    x = select(x, ${f.name}(y, x), lane >= d);
  }
  return x;
}`,
  });
}

/** `fn NAME(x: T, lane: u32, sg_size: u32) -> T`: exclusive scan (lane 0 gets the identity). */
export function subgroupExclusiveScan(p: OpParams): WgslFragment {
  const c = p.combiner;
  const t = c.wgslType;
  const name = mangle('sg_excl_scan', c.name);
  const id = c.identity;
  const builtin = c.subgroupOp;
  if (builtin === 'Add' || builtin === 'Mul') {
    return fragment({
      name,
      enables: ['subgroups'],
      code: `fn ${name}(x: ${t}, lane: u32, sg_size: u32) -> ${t} { return subgroupExclusive${builtin}(x); }`,
    });
  }
  const incl = subgroupInclusiveScan(p);
  return fragment({
    name,
    enables: ['subgroups'],
    deps: [incl],
    code: `fn ${name}(x: ${t}, lane: u32, sg_size: u32) -> ${t} {
  let s = ${incl.name}(x, lane, sg_size);
  let y = subgroupShuffleUp(s, 1u);
  return select(${id}, y, lane > 0u);
}`,
  });
}
