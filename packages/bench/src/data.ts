/**
 * Input data, generated exactly as `cub_anchor.cu` does so our figures and CUB's are over the same
 * bits: `fill_u32` (a multiplicative hash of the index, seed 1234) and f32 = (u >> 8) / 2^24, uniform
 * in [0, 1) with 24 significant bits.
 */

import { tagGenerated } from './gpu-data';

/** The seed cub_anchor.cu uses. */
export const CUB_SEED = 1234;

/** One element of cub_anchor's `fill_u32(a, n, seed)`. */
export function hashU32(i: number, seed: number = CUB_SEED): number {
  let x = (Math.imul(i, 2654435761) ^ seed) >>> 0;
  x ^= x >>> 13;
  x = Math.imul(x, 0x5bd1e995) >>> 0;
  x ^= x >>> 15;
  return x >>> 0;
}

/** `n` u32 values of cub_anchor's `fill_u32`. */
export function fillU32(n: number, seed: number = CUB_SEED): Uint32Array {
  const a = new Uint32Array(n);
  for (let i = 0; i < n; i++) a[i] = hashU32(i, seed);
  return tagGenerated(a, seed);
}

/** `n` f32 values of cub_anchor's `u32_to_f32(fill_u32(...))`: uniform in [0, 1). */
export function fillF32(n: number, seed: number = CUB_SEED): Float32Array {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = (hashU32(i, seed) >>> 8) * (1 / 16777216);
  return tagGenerated(a, seed);
}
