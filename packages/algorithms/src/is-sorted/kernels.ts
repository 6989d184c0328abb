/**
 * The isSortedUntil kernel: every thread checks `itemsPerThread` adjacent pairs (a[i-1], a[i]) for
 * comp(a[i], a[i-1]); the first violation wins through an atomicMax of n - i (0: none) in workgroup
 * memory, then one global atomicMax per workgroup. Bindings: IS_SORTED.
 * Workgroup memory: 4 bytes. Traffic: one read of the data (each element read twice, cached).
 */
import {
  entryParams,
  entryPrologue,
  fragment,
  kernelInterface,
  mangle,
  threadIds,
  type WgslFragment,
} from '@webdpl/core';

/**
 * The isSortedUntil kernel's interface: `n` elements in `data` (element type per kernel);
 * `result[0]`, cleared before the dispatch, gets n - i of the first unsorted pair (i - 1, i).
 */
export const IS_SORTED = kernelInterface({
  name: 'is-sorted',
  params: { struct: 'IsParams', name: 'is_params', binding: 0, fields: { n: 'u32' } },
  bindings: {
    data: { binding: 1, access: 'read' },
    result: { binding: 2, access: 'read_write', type: 'u32', form: 'atomic' },
  },
});

export function isSortedKernel(p: {
  readonly type: string;
  readonly comparator: WgslFragment;
  readonly workgroupSize: number;
  readonly itemsPerThread: number;
}): WgslFragment {
  const w = p.workgroupSize;
  const cmp = p.comparator.name;
  const code = `${IS_SORTED.wgsl({}, { data: p.type })}
var<workgroup> is_best: atomic<u32>;

@compute @workgroup_size(${w})
fn main(${entryParams(false)}) {
${entryPrologue(false)}
  let n = is_params.n;
  let base = wg_index * ${w * p.itemsPerThread}u;
  var best = 0u;
  for (var k = 0u; k < ${p.itemsPerThread}u; k++) {
    let i = base + k * ${w}u + ids.lid;
    if (i >= 1u && i < n && best == 0u) {
      if (${cmp}(data[i], data[i - 1u])) { best = n - i; }
    }
  }
  if (best != 0u) { atomicMax(&is_best, best); }
  workgroupBarrier();
  if (ids.lid == 0u) {
    let b = atomicLoad(&is_best);
    if (b != 0u) { atomicMax(&result[0], b); }
  }
}`;
  return fragment({
    name: mangle('is_sorted', p.type, p.comparator.name, w, p.itemsPerThread),
    code,
    deps: [threadIds(false), p.comparator],
    workgroupBytes: 4,
  });
}
