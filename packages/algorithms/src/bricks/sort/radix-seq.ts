/**
 * Single-thread LSD radix sort of u32 key bits (with optional u32 value bits moving along):
 * 3 passes of 11, 11 and 10 bits; all three histograms come from one read of the keys, and a pass
 * whose digit is the same for every key is skipped. Stable. O(n) with ~2 reads + 1 write per pass.
 */

/** Digit layout: [shift, bits] of the three passes. */
export const RADIX_PASSES: readonly (readonly [number, number])[] = [
  [0, 11],
  [11, 11],
  [22, 10],
];

/**
 * Sorts `keys` (u32 bits) ascending, stably, permuting `values` along when given. `tmpKeys` (and
 * `tmpValues`) are scratch of the same length. The result is always left in `keys` / `values`.
 */
export function radixSortBits(
  keys: Uint32Array,
  values: Uint32Array | undefined,
  tmpKeys: Uint32Array,
  tmpValues: Uint32Array | undefined,
): void {
  const n = keys.length;
  if (n < 2) return;
  const h0 = new Uint32Array(2048);
  const h1 = new Uint32Array(2048);
  const h2 = new Uint32Array(1024);
  for (let i = 0; i < n; i++) {
    const k = keys[i] as number;
    h0[k & 0x7ff]++;
    h1[(k >>> 11) & 0x7ff]++;
    h2[k >>> 22]++;
  }
  const hists = [h0, h1, h2];
  let srcK = keys;
  let dstK = tmpKeys;
  let srcV = values;
  let dstV = tmpValues;
  for (let p = 0; p < 3; p++) {
    const [shift, bits] = RADIX_PASSES[p] as readonly [number, number];
    const mask = (1 << bits) - 1;
    const h = hists[p] as Uint32Array;
    if (h[((srcK[0] as number) >>> shift) & mask] === n) continue;
    let sum = 0;
    for (let d = 0; d <= mask; d++) {
      const c = h[d] as number;
      h[d] = sum;
      sum += c;
    }
    if (srcV && dstV) {
      for (let i = 0; i < n; i++) {
        const k = srcK[i] as number;
        const o = h[(k >>> shift) & mask]++ as number;
        dstK[o] = k;
        dstV[o] = srcV[i] as number;
      }
    } else {
      for (let i = 0; i < n; i++) {
        const k = srcK[i] as number;
        dstK[h[(k >>> shift) & mask]++ as number] = k;
      }
    }
    const tk = srcK;
    srcK = dstK;
    dstK = tk;
    const tv = srcV;
    srcV = dstV;
    dstV = tv;
  }
  if (srcK !== keys) {
    keys.set(srcK);
    if (values && srcV) values.set(srcV);
  }
}
