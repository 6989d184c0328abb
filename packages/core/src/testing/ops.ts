/** Operators for tests. */
import type { GpuFunction } from '../operators';
import type { NumericType } from '../types';
import { fragment, mangle } from '../wgsl/fragment';

/**
 * "Last non-zero": (a, b) => b !== 0 ? b : a. Associative, NOT commutative, identity 0: any
 * reordering of a scan or reduce shows up in the result.
 */
export const lastNonZero: GpuFunction = {
  kind: 'function',
  arity: 2,
  name: 'lastNonZero',
  builtin: false,
  commutative: false,
  supports: () => true,
  resultType: (t) => t[0] as NumericType,
  identity: () => 0,
  js: () => (a: number, b: number) => (b !== 0 ? b : a),
  jsSource: () => '(a, b) => (b !== 0 ? b : a)',
  wgsl: (t) => {
    const ty = t[0] as NumericType;
    const name = mangle('op_lnz', ty);
    return fragment({ name, code: `fn ${name}(a: ${ty}, b: ${ty}) -> ${ty} { return select(a, b, b != ${ty}(0)); }` });
  },
  subgroupOp: () => undefined,
};
