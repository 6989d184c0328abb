/**
 * Order-preserving key bits: a u32 per key whose unsigned order is the sort order, so the radix sort
 * only ever sorts unsigned integers. The sort moves the original key bits; digits come from these.
 *
 *  - u32: the key itself. i32: the sign bit flipped.
 *  - f32: negatives get every bit flipped, non-negatives the sign bit flipped, so -Inf < ... < -0 <
 *    +0 < ... < +Inf; every NaN (either sign, any payload) maps to 0xffffffff, after +Inf. That is
 *    TypedArray#sort's order; NaNs tie, so a stable sort keeps them in input order.
 *  - descending (`greater`): the bits inverted, except that NaN stays 0xffffffff (last).
 */
import { fragment, mangle, type WgslFragment } from '@webdpl/core';

/** Key element types the radix sort handles. */
export type RadixKeyType = 'u32' | 'i32' | 'f32';

/**
 * `fn NAME(k: u32) -> u32`: the order-preserving bits of a key given as its raw u32 bits.
 * Needs nothing; a handful of ALU operations per key, without branches: the f32 NaN test as an
 * early return made the H100's 36-key digit pass (the key mode compiled in) 40% slower than for
 * i32 keys (2^28: 10.28 vs 7.37 ms, docs/benchmarks/h100-2026-11-25b.md).
 */
export function keyBitsFragment(type: RadixKeyType, descending: boolean): WgslFragment {
  const name = mangle('rs_key_bits', type, descending ? 'desc' : 'asc');
  let body: string;
  if (type === 'f32') {
    const flip = 'select(k ^ 0x80000000u, ~k, (k & 0x80000000u) != 0u)';
    body = `return select(${descending ? `~${flip}` : flip}, 0xffffffffu, (k & 0x7fffffffu) > 0x7f800000u);`;
  } else if (type === 'u32') body = descending ? 'return ~k;' : 'return k;';
  else body = descending ? 'return k ^ 0x7fffffffu;' : 'return k ^ 0x80000000u;';
  return fragment({ name, code: `fn ${name}(k: u32) -> u32 {\n  ${body}\n}` });
}

/** The run-time key mode of `runtimeKeyBits`: 2 * type (u32 0, i32 1, f32 2) + descending. */
export function keyMode(type: RadixKeyType, descending: boolean): number {
  return 2 * (type === 'u32' ? 0 : type === 'i32' ? 1 : 2) + (descending ? 1 : 0);
}

/**
 * `fn rs_key_bits_rt(k: u32, mode: u32) -> u32`: keyBitsFragment's mapping with the key type and
 * order chosen at run time (keyMode), so one pipeline serves every key type and order. A few
 * selects per key, no branches; it keeps the number of pipelines (and their compile time, seconds
 * each on lavapipe) down.
 */
export function runtimeKeyBitsFragment(): WgslFragment {
  const name = 'rs_key_bits_rt';
  return fragment({
    name,
    code: `fn ${name}(k: u32, mode: u32) -> u32 {
  let f = select(k ^ 0x80000000u, ~k, (k & 0x80000000u) != 0u);
  let a = select(select(k, k ^ 0x80000000u, mode >= 2u), f, mode >= 4u);
  let b = select(a, ~a, (mode & 1u) != 0u);
  return select(b, 0xffffffffu, mode >= 4u && (k & 0x7fffffffu) > 0x7f800000u);
}`,
  });
}
