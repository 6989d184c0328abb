/**
 * The keep-flags kernel of the GPU set operations: for element i of x (sorted), its rank among the
 * equivalent elements of x before it (i - lowerBound(x, x[i])) and the number of equivalent
 * elements of y (upperBound(y, x[i]) - lowerBound(y, x[i])), both by binary search with the
 * comparator; flags[i] = rank < count ('first': the elements matched in y, intersection) or
 * rank >= count ('rest': the elements left over, difference and the parts of union and symmetric
 * difference). One thread per element. Bindings: SET_FLAGS.
 * Workgroup memory: none.
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
 * The flags kernel's interface: `nx` elements of `set_x` flagged against `ny` of `set_y` (the
 * kernel's type) into one u32 of `set_flags` each.
 */
export const SET_FLAGS = kernelInterface({
  name: 'set-flags',
  params: { struct: 'SetParams', name: 'sp', binding: 0, fields: { nx: 'u32', ny: 'u32' } },
  bindings: {
    set_x: { binding: 1, access: 'read' },
    set_y: { binding: 2, access: 'read' },
    set_flags: { binding: 3, access: 'read_write', type: 'u32' },
  },
});

/** Threads per workgroup of the flags kernel. */
export const SET_FLAGS_THREADS = 64;

export function setFlagsKernel(p: {
  readonly type: string;
  /** Declares `fn <name>(a: T, b: T) -> bool`: "a goes before b". */
  readonly comparator: WgslFragment;
  readonly keep: 'first' | 'rest';
}): WgslFragment {
  const t = p.type;
  const cmp = p.comparator.name;
  const search = (name: string, arr: string, test: string) => `fn ${name}(v: ${t}, n: u32) -> u32 {
  var lo = 0u;
  var hi = n;
  while (lo < hi) {
    let mid = (lo + hi) >> 1u;
    if (${test.replaceAll('E', `${arr}[mid]`)}) { lo = mid + 1u; } else { hi = mid; }
  }
  return lo;
}`;
  const code = `${SET_FLAGS.wgsl({}, { set_x: t, set_y: t })}

${search('lower_x', 'set_x', `${cmp}(E, v)`)}
${search('lower_y', 'set_y', `${cmp}(E, v)`)}
${search('upper_y', 'set_y', `!${cmp}(v, E)`)}

@compute @workgroup_size(${SET_FLAGS_THREADS})
fn main(${entryParams(false)}) {
${entryPrologue(false)}
  let i = wg_index * ${SET_FLAGS_THREADS}u + ids.lid;
  if (i >= sp.nx) { return; }
  let v = set_x[i];
  let rank = i - lower_x(v, i);
  let count = upper_y(v, sp.ny) - lower_y(v, sp.ny);
  set_flags[i] = select(0u, 1u, ${p.keep === 'first' ? 'rank < count' : 'rank >= count'});
}`;
  return fragment({
    name: mangle('set_flags', t, p.comparator.name, p.keep),
    code,
    deps: [threadIds(false), p.comparator],
  });
}
