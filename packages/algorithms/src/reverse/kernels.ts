/**
 * The reverse kernel: dst[base_out + j] = src[base_in + count - 1 - j] for j < count, moving bits
 * (one pipeline for u32, i32 and f32). Each thread moves `itemsPerThread` elements strided by the
 * workgroup size, so reads (descending) and writes (ascending) are both coalesced.
 * Bindings: REV. Workgroup memory: none.
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
 * The reverse kernel's interface: `count` elements moved, the output's first element `base_out` and
 * the input's `base_in` (in their windows); the source `rev_src` and the destination `rev_dst` (u32
 * bits of any 4-byte type).
 */
export const REV = kernelInterface({
  name: 'reverse',
  params: { struct: 'RevParams', name: 'rev', binding: 0, fields: { count: 'u32', base_out: 'u32', base_in: 'u32' } },
  bindings: {
    rev_src: { binding: 1, access: 'read', type: 'u32' },
    rev_dst: { binding: 2, access: 'read_write', type: 'u32' },
  },
});

export function reverseKernel(p: { readonly workgroupSize: number; readonly itemsPerThread: number }): WgslFragment {
  const w = p.workgroupSize;
  const code = `${REV.wgsl()}

@compute @workgroup_size(${w})
fn main(${entryParams(false)}) {
${entryPrologue(false)}
  let base = wg_index * ${w * p.itemsPerThread}u;
  for (var k = 0u; k < ${p.itemsPerThread}u; k++) {
    let j = base + k * ${w}u + ids.lid;
    if (j < rev.count) { rev_dst[rev.base_out + j] = rev_src[rev.base_in + rev.count - 1u - j]; }
  }
}`;
  return fragment({ name: mangle('reverse', w, p.itemsPerThread), code, deps: [threadIds(false)] });
}
