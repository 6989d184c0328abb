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

/** Body of `fn(k: u32) -> u32` for ascending bits of `type`. */
function ascendingBody(type: RadixKeyType): string {
  switch (type) {
    case 'u32':
      return 'return k;';
    case 'i32':
      return 'return k ^ 0x80000000u;';
    case 'f32':
      return `if ((k & 0x7fffffffu) > 0x7f800000u) { return 0xffffffffu; }
  return select(k ^ 0x80000000u, ~k, (k & 0x80000000u) != 0u);`;
  }
}

/**
 * `fn NAME(k: u32) -> u32`: the order-preserving bits of a key given as its raw u32 bits.
 * Needs nothing; a handful of ALU operations per key.
 */
export function keyBitsFragment(type: RadixKeyType, descending: boolean): WgslFragment {
  const name = mangle('rs_key_bits', type, descending ? 'desc' : 'asc');
  let body: string;
  if (!descending) body = ascendingBody(type);
  else if (type === 'f32') {
    body = `if ((k & 0x7fffffffu) > 0x7f800000u) { return 0xffffffffu; }
  return ~select(k ^ 0x80000000u, ~k, (k & 0x80000000u) != 0u);`;
  } else body = type === 'u32' ? 'return ~k;' : 'return k ^ 0x7fffffffu;';
  return fragment({ name, code: `fn ${name}(k: u32) -> u32 {\n  ${body}\n}` });
}

/** The run-time key mode of `runtimeKeyBits`: 2 * type (u32 0, i32 1, f32 2) + descending. */
export function keyMode(type: RadixKeyType, descending: boolean): number {
  return 2 * (type === 'u32' ? 0 : type === 'i32' ? 1 : 2) + (descending ? 1 : 0);
}

/**
 * `fn rs_key_bits_rt(k: u32, mode: u32) -> u32`: keyBitsFragment's mapping with the key type and
 * order chosen at run time (keyMode), so one pipeline serves every key type and order. A few
 * selects per key; it keeps the number of pipelines (and their compile time, seconds each on
 * lavapipe) down.
 */
export function runtimeKeyBitsFragment(): WgslFragment {
  const name = 'rs_key_bits_rt';
  return fragment({
    name,
    code: `fn ${name}(k: u32, mode: u32) -> u32 {
  var b = k;
  if (mode >= 4u) {
    if ((k & 0x7fffffffu) > 0x7f800000u) { return 0xffffffffu; }
    b = select(k ^ 0x80000000u, ~k, (k & 0x80000000u) != 0u);
  } else if (mode >= 2u) {
    b = k ^ 0x80000000u;
  }
  return select(b, ~b, (mode & 1u) != 0u);
}`,
  });
}
