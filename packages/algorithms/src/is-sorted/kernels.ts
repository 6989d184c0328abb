/**
 * The isSortedUntil kernel: every thread checks `itemsPerThread` adjacent pairs (a[i-1], a[i]) for
 * comp(a[i], a[i-1]); the first violation wins through an atomicMax of n - i (0: none) in workgroup
 * memory, then one global atomicMax per workgroup. Bindings: 0 uniform {n}, 1 data, 2 result.
 * Workgroup memory: 4 bytes. Traffic: one read of the data (each element read twice, cached).
 */
import { entryParams, entryPrologue, fragment, mangle, threadIds, type WgslFragment } from '@webdpl/core';

export function isSortedKernel(p: {
  readonly type: string;
  readonly comparator: WgslFragment;
  readonly workgroupSize: number;
  readonly itemsPerThread: number;
}): WgslFragment {
  const w = p.workgroupSize;
  const cmp = p.comparator.name;
  const code = `struct IsParams { n: u32, pad0: u32, pad1: u32, pad2: u32 }
@group(0) @binding(0) var<uniform> is_params: IsParams;
@group(0) @binding(1) var<storage, read> data: array<${p.type}>;
@group(0) @binding(2) var<storage, read_write> result: array<atomic<u32>>;
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
