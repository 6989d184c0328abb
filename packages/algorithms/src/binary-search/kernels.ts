/**
 * The vectorized search kernel: one thread per query, a branch-light binary search over the sorted
 * input in global memory (log2(n) dependent loads; the top levels stay in cache across threads).
 *  - lower: the first index i with !comp(sorted[i], q) (n if none);
 *  - upper: the first index i with comp(q, sorted[i]) (n if none);
 *  - binary: 1 when the lower bound holds an element equivalent to q, else 0.
 * Bindings: SEARCH. No workgroup memory.
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
 * The search kernel's interface: `n` sorted elements, `m` queries; `sorted` and `queries` of the
 * kernel's type, one u32 `result` per query.
 */
export const SEARCH = kernelInterface({
  name: 'search',
  params: { struct: 'BsParams', name: 'bs_params', binding: 0, fields: { n: 'u32', m: 'u32' } },
  bindings: {
    sorted: { binding: 1, access: 'read' },
    queries: { binding: 2, access: 'read' },
    result: { binding: 3, access: 'read_write', type: 'u32' },
  },
});

/** Which search. */
export type SearchKind = 'lower' | 'upper' | 'binary';

export function searchKernel(p: {
  readonly kind: SearchKind;
  readonly type: string;
  readonly comparator: WgslFragment;
  readonly workgroupSize: number;
}): WgslFragment {
  const cmp = p.comparator.name;
  const w = p.workgroupSize;
  const step =
    p.kind === 'upper'
      ? `if (${cmp}(x, sorted[mid])) { hi = mid; } else { lo = mid + 1u; }`
      : `if (${cmp}(sorted[mid], x)) { lo = mid + 1u; } else { hi = mid; }`;
  const out =
    p.kind === 'binary'
      ? `var found = 0u;
  if (lo < n) { if (!${cmp}(x, sorted[lo])) { found = 1u; } }
  result[q] = found;`
      : 'result[q] = lo;';
  const code = `${SEARCH.wgsl({}, { sorted: p.type, queries: p.type })}

@compute @workgroup_size(${w})
fn main(${entryParams(false)}) {
${entryPrologue(false)}
  let q = wg_index * ${w}u + ids.lid;
  if (q >= bs_params.m) { return; }
  let n = bs_params.n;
  let x = queries[q];
  var lo = 0u;
  var hi = n;
  while (lo < hi) {
    let mid = lo + ((hi - lo) >> 1u);
    ${step}
  }
  ${out}
}`;
  return fragment({
    name: mangle('search', p.kind, p.type, cmp, w),
    code,
    deps: [threadIds(false), p.comparator],
  });
}
