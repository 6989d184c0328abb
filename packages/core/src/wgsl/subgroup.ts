/**
 * Subgroup building blocks: reduce, inclusive scan, exclusive scan for any operator. Built-in
 * operators with a matching subgroup built-in use it (subgroupAdd, subgroupInclusiveAdd...); others
 * use shuffles in lane order, so non-commutative operators are honoured. Any subgroup size works.
 *
 * Needs: the `subgroups` feature. Workgroup memory: none. Call from subgroup-uniform control flow;
 * the shuffle loops use select() rather than branches so they stay subgroup-uniform.
 */
import { UnsupportedTypeError } from '../errors';
import { type GpuFunction, wgslLiteral } from '../operators';
import type { NumericType } from '../types';
import { fragment, mangle, type WgslFragment } from './fragment';

export interface OpParams {
  readonly type: NumericType;
  readonly op: GpuFunction;
}

/** The identity of `op` over `type` as a WGSL literal, or an error naming the operator. */
export function identityLiteral(p: OpParams): string {
  const id = p.op.identity(p.type);
  if (id === undefined) {
    throw new UnsupportedTypeError(
      `operator '${p.op.name}' has no identity for ${p.type}; GPU reductions and scans need one (give the lambda { identity })`,
    );
  }
  return wgslLiteral(p.type, id);
}

/** `fn NAME(x: T, lane: u32, sg_size: u32) -> T`: the reduction of x over the subgroup, in lane order. */
export function subgroupReduce(p: OpParams): WgslFragment {
  const { type: t, op } = p;
  const name = mangle('sg_reduce', t, op.name);
  const builtin = op.subgroupOp(t);
  if (builtin) {
    return fragment({
      name,
      enables: ['subgroups'],
      code: `fn ${name}(x: ${t}, lane: u32, sg_size: u32) -> ${t} { return subgroup${builtin}(x); }`,
    });
  }
  const f = op.wgsl([t, t]);
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
  const { type: t, op } = p;
  const name = mangle('sg_incl_scan', t, op.name);
  const builtin = op.subgroupOp(t);
  if (builtin === 'Add' || builtin === 'Mul') {
    return fragment({
      name,
      enables: ['subgroups'],
      code: `fn ${name}(x: ${t}, lane: u32, sg_size: u32) -> ${t} { return subgroupInclusive${builtin}(x); }`,
    });
  }
  const f = op.wgsl([t, t]);
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
  const { type: t, op } = p;
  const name = mangle('sg_excl_scan', t, op.name);
  const id = identityLiteral(p);
  const builtin = op.subgroupOp(t);
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
