/**
 * The reverse kernel: dst[base_out + j] = src[base_in + count - 1 - j] for j < count, moving bits
 * (one pipeline for u32, i32 and f32). Each thread moves `itemsPerThread` elements strided by the
 * workgroup size, so reads (descending) and writes (ascending) are both coalesced.
 * Bindings: 0 uniform {count, base_out, base_in}, 1 src (read), 2 dst. Workgroup memory: none.
 */
import { entryParams, entryPrologue, fragment, mangle, threadIds, type WgslFragment } from '@webdpl/core';

export function reverseKernel(p: { readonly workgroupSize: number; readonly itemsPerThread: number }): WgslFragment {
  const w = p.workgroupSize;
  const code = `struct RevParams { count: u32, base_out: u32, base_in: u32, pad: u32 }
@group(0) @binding(0) var<uniform> rev: RevParams;
@group(0) @binding(1) var<storage, read> rev_src: array<u32>;
@group(0) @binding(2) var<storage, read_write> rev_dst: array<u32>;

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
