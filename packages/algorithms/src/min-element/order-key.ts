/**
 * Order keys: each element maps to a u32 whose unsigned order is the elements' total order, the
 * same order sort uses: u32 as is; i32 with the sign bit flipped; f32 numeric with -0 before +0 and
 * every NaN (either sign, any payload) after +Infinity. Keys make min/max one u32 comparison and
 * let (key, index) pairs combine as a lexicographic minimum: commutative and associative, with the
 * first occurrence winning ties.
 */
import { type Combiner, fragment, mangle, type NumericType, type WgslFragment } from '@webdpl/core';

/** `fn wdpl_order_key_T(x: T) -> u32`. */
export function orderKeyFragment(type: NumericType): WgslFragment {
  const name = mangle('wdpl_order_key', type);
  const body =
    type === 'u32'
      ? 'return x;'
      : type === 'i32'
        ? 'return bitcast<u32>(x) ^ 0x80000000u;'
        : `let b = bitcast<u32>(x);
  if ((b & 0x7fffffffu) > 0x7f800000u) { return 0xffffffffu; }
  return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);`;
  return fragment({ name, code: `fn ${name}(x: ${type}) -> u32 {\n  ${body}\n}` });
}

/** The element value of an order key (f32: NaN for the NaN key). */
export function valueOfKey(type: NumericType, key: number): number {
  switch (type) {
    case 'u32':
      return key >>> 0;
    case 'i32':
      return (key ^ 0x80000000) | 0;
    case 'f32': {
      if (key >>> 0 === 0xffffffff) return Number.NaN;
      const bits = key & 0x80000000 ? key & 0x7fffffff : ~key >>> 0;
      const f = new Float32Array(1);
      new Uint32Array(f.buffer)[0] = bits;
      return f[0] as number;
    }
  }
}

const ARG_MIN = fragment({
  name: 'wdpl_argmin',
  code: `/** The smaller (key, index) pair: least key, then least index. */
fn wdpl_argmin(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  return select(a, b, b.x < a.x || (b.x == a.x && b.y < a.y));
}`,
});

const ARG_MAX = fragment({
  name: 'wdpl_argmax',
  code: `/** The (key, index) pair with the greatest key, then the least index. */
fn wdpl_argmax(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  return select(a, b, b.x > a.x || (b.x == a.x && b.y < a.y));
}`,
});

/** (key, index) pairs: the first least element. */
export const argMinCombiner: Combiner = {
  name: 'argmin_v2u32',
  wgslType: 'vec2<u32>',
  bytes: 8,
  identity: 'vec2<u32>(0xffffffffu, 0xffffffffu)',
  combine: ARG_MIN,
};

/** (key, index) pairs: the first greatest element. */
export const argMaxCombiner: Combiner = {
  name: 'argmax_v2u32',
  wgslType: 'vec2<u32>',
  bytes: 8,
  identity: 'vec2<u32>(0u, 0xffffffffu)',
  combine: ARG_MAX,
};

/** (minKey, minIndex, maxKey, maxIndex): both at once. */
export const argMinMaxCombiner: Combiner = {
  name: 'argminmax_v4u32',
  wgslType: 'vec4<u32>',
  bytes: 16,
  identity: 'vec4<u32>(0xffffffffu, 0xffffffffu, 0u, 0xffffffffu)',
  combine: fragment({
    name: 'wdpl_argminmax',
    deps: [ARG_MIN, ARG_MAX],
    code: `fn wdpl_argminmax(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
  return vec4<u32>(wdpl_argmin(a.xy, b.xy), wdpl_argmax(a.zw, b.zw));
}`,
  }),
};
