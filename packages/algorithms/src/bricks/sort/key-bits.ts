/**
 * Order-preserving key bits on the CPU, the same mapping as the GPU's keyBitsFragment: keys are
 * sorted as u32 bits whose unsigned order is the sort order. Applied in place over a Uint32Array
 * view of the keys; `fromKeyBits` restores the keys (every NaN comes back as the canonical quiet
 * NaN 0x7fc00000, as TypedArray#sort may also do).
 */
import type { NumericType } from '@webdpl/core';

/** Maps keys (their raw bits in `bits[begin, end)`) to order-preserving bits, in place. */
export function toKeyBits(
  bits: Uint32Array,
  type: NumericType,
  descending: boolean,
  begin = 0,
  end = bits.length,
): void {
  if (type === 'u32') {
    if (descending) for (let i = begin; i < end; i++) bits[i] = ~(bits[i] as number);
  } else if (type === 'i32') {
    const m = descending ? 0x7fffffff : 0x80000000;
    for (let i = begin; i < end; i++) bits[i] = (bits[i] as number) ^ m;
  } else {
    const flip = descending ? -1 : 0;
    for (let i = begin; i < end; i++) {
      const b = bits[i] as number;
      if ((b & 0x7fffffff) > 0x7f800000) bits[i] = 0xffffffff;
      else bits[i] = (b & 0x80000000 ? ~b : b ^ 0x80000000) ^ flip;
    }
  }
}

/** Inverse of toKeyBits: in place, or from `src` (same indices) into `bits`. */
export function fromKeyBits(
  bits: Uint32Array,
  type: NumericType,
  descending: boolean,
  begin = 0,
  end = bits.length,
  src: Uint32Array = bits,
): void {
  if (type === 'u32') {
    if (descending) for (let i = begin; i < end; i++) bits[i] = ~(src[i] as number);
    else if (src !== bits) bits.set(src.subarray(begin, end), begin);
  } else if (type === 'i32') {
    const m = descending ? 0x7fffffff : 0x80000000;
    for (let i = begin; i < end; i++) bits[i] = (src[i] as number) ^ m;
  } else {
    const flip = descending ? -1 : 0;
    for (let i = begin; i < end; i++) {
      const t0 = src[i] as number;
      if (t0 === 0xffffffff) bits[i] = 0x7fc00000;
      else {
        const t = t0 ^ flip;
        bits[i] = t & 0x80000000 ? t ^ 0x80000000 : ~t;
      }
    }
  }
}

/** A Uint32Array over the same memory as `a`. */
export function bitsView(a: Uint32Array | Int32Array | Float32Array): Uint32Array {
  return a instanceof Uint32Array ? a : new Uint32Array(a.buffer, a.byteOffset, a.length);
}
