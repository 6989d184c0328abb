/**
 * Thread identity inside a workgroup. With subgroups, a thread's logical index is
 * `sg_id * sg_size + lane`, where `sg_id` is handed out by an atomic counter in workgroup memory:
 * we never assume any mapping between subgroup_invocation_id and local_invocation_index. Without
 * subgroups, the logical index is local_invocation_index and every thread is its own "subgroup".
 *
 * Entry points declare `entryParams(subgroups)` and begin with `entryPrologue(subgroups)`, which
 * defines `ids: WdplIds` and `wg_index` (the linear workgroup index of 2-D grids, see gridFor()).
 */
import { fragment, type WgslFragment } from './fragment';

/** Workgroup bytes of the subgroup-id counter. */
const COUNTER_BYTES = 4;

/** Declares `struct WdplIds` and `wdpl_make_ids(...)`. Needs subgroups for the subgroup variant. */
export function threadIds(subgroups: boolean): WgslFragment {
  if (!subgroups) {
    return fragment({
      name: 'wdpl_ids_wg',
      code: `struct WdplIds { lid: u32, lane: u32, sg_size: u32, sg_id: u32 }
fn wdpl_make_ids(li: u32) -> WdplIds {
  return WdplIds(li, 0u, 1u, li);
}`,
    });
  }
  return fragment({
    name: 'wdpl_ids_sg',
    enables: ['subgroups'],
    workgroupBytes: COUNTER_BYTES,
    code: `struct WdplIds { lid: u32, lane: u32, sg_size: u32, sg_id: u32 }
var<workgroup> wdpl_sg_counter: atomic<u32>;
fn wdpl_make_ids(li: u32, lane: u32, sg_size: u32) -> WdplIds {
  var id = 0u;
  if (subgroupElect()) { id = atomicAdd(&wdpl_sg_counter, 1u); }
  let sg = subgroupBroadcastFirst(id);
  return WdplIds(sg * sg_size + lane, lane, sg_size, sg);
}`,
  });
}

/** Builtin parameters every webdpl entry point declares. */
export function entryParams(subgroups: boolean): string {
  const common =
    '@builtin(local_invocation_index) wdpl_li: u32, @builtin(workgroup_id) wdpl_wid: vec3<u32>, @builtin(num_workgroups) wdpl_nwg: vec3<u32>';
  return subgroups
    ? `${common}, @builtin(subgroup_invocation_id) wdpl_lane: u32, @builtin(subgroup_size) wdpl_sgs: u32`
    : common;
}

/** First lines of every webdpl entry point: `ids` and `wg_index`. */
export function entryPrologue(subgroups: boolean): string {
  return `  let ids = ${subgroups ? 'wdpl_make_ids(wdpl_li, wdpl_lane, wdpl_sgs)' : 'wdpl_make_ids(wdpl_li)'};
  let wg_index = wdpl_wid.x + wdpl_wid.y * wdpl_nwg.x;`;
}
