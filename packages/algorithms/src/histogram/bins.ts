/**
 * Bins of a histogram on the host: the caller's `{ bins, lo, hi }` or `{ boundaries }` checked and
 * turned into the edges every backend compares elements against, in the element type.
 *
 * An element x falls in bin k when edge[k] <= x < edge[k + 1]. Even bins have the edges
 * lo + (hi - lo) * k / bins evaluated in double precision (edge[bins] = hi); explicit boundaries are
 * the caller's. Each edge becomes the least value of the element type that is >= it (the ceiling
 * for integers, the next f32 up for floats), so comparing x with it in the element type decides
 * exactly as comparing with the real edge: every backend bins alike, whatever arithmetic estimates
 * the bin first. Integer edges below the type's range clamp to its least value; edges above its
 * range end the edges on the device ('open': elements from the last edge on count in its bin, when
 * a larger real edge follows it).
 */
import { ArgumentError, describe, type NumericType } from '@webdpl/core';

/** Even bins over [lo, hi), or explicit sorted boundaries (bin i is [b[i], b[i + 1])). */
export type HistogramBins =
  | { readonly bins: number; readonly lo: number; readonly hi: number }
  | { readonly boundaries: ArrayLike<number> };

/** Bins checked and converted for one element type. */
export interface BinEdges {
  /** Bins the caller asked for (the length of the counts). */
  readonly bins: number;
  /** Whether the bins are even (an arithmetic estimate then finds the bin before the edge check). */
  readonly even: boolean;
  /** lo and bins / (hi - lo) of even bins (0 otherwise). */
  readonly lo: number;
  readonly scale: number;
  /** Edges in the element type that the type can hold (at most bins + 1). */
  readonly edges: readonly number[];
  /** Whether elements >= the last edge count in its bin (a real edge beyond the type's range follows). */
  readonly open: boolean;
}

const MAX_BINS = 1 << 24;

const f32Bits = new Float32Array(1);
const u32Bits = new Uint32Array(f32Bits.buffer);

/** The least f32 >= e (e not NaN). */
function ceilF32(e: number): number {
  const f = Math.fround(e);
  if (f >= e) return f;
  // f < e: the next f32 up (f is finite: fround only rounds to -Infinity below -max, where e is too).
  if (f === 0) return 2 ** -149;
  f32Bits[0] = f;
  u32Bits[0] = f > 0 ? (u32Bits[0] as number) + 1 : (u32Bits[0] as number) - 1;
  return f32Bits[0] as number;
}

/** The least value of `type` >= e, or undefined when the type has none. */
function ceilTo(type: NumericType, e: number): number | undefined {
  if (type === 'f32') return ceilF32(e);
  const [min, max] = type === 'u32' ? [0, 2 ** 32 - 1] : [-(2 ** 31), 2 ** 31 - 1];
  const c = Math.ceil(e);
  if (c > max) return undefined;
  return Math.max(c, min);
}

function checkFinite(x: unknown, argument: string): number {
  if (typeof x !== 'number' || !Number.isFinite(x)) throw new ArgumentError(argument, 'a finite number', describe(x));
  return x;
}

/** Checks `spec` (named `bins` in errors) and computes its edges for elements of `type`. */
export function binEdges(spec: unknown, type: NumericType): BinEdges {
  if (typeof spec !== 'object' || spec === null) {
    throw new ArgumentError('bins', '{ bins, lo, hi } or { boundaries }', describe(spec));
  }
  const s = spec as Record<string, unknown>;
  let real: number[];
  let even = false;
  let lo = 0;
  let scale = 0;
  if ('boundaries' in s) {
    const b = s.boundaries as ArrayLike<unknown> | undefined;
    if (typeof b !== 'object' || b === null || typeof b.length !== 'number') {
      throw new ArgumentError('bins.boundaries', 'an array of sorted numbers', describe(b));
    }
    if (b.length < 2 || b.length > MAX_BINS + 1) {
      throw new ArgumentError('bins.boundaries', `2 to ${MAX_BINS + 1} numbers`, `${b.length}`);
    }
    real = Array.from(b, (x, i) => {
      if (typeof x !== 'number' || Number.isNaN(x)) {
        throw new ArgumentError(`bins.boundaries[${i}]`, 'a number (not NaN)', describe(x));
      }
      return x;
    });
    for (let i = 1; i < real.length; i++) {
      if ((real[i] as number) < (real[i - 1] as number)) {
        throw new ArgumentError('bins.boundaries', 'numbers in ascending order', `${real[i]} after ${real[i - 1]}`);
      }
    }
  } else {
    const bins = s.bins;
    if (typeof bins !== 'number' || !Number.isInteger(bins) || bins < 1 || bins > MAX_BINS) {
      throw new ArgumentError('bins.bins', `an integer in [1, ${MAX_BINS}]`, describe(bins));
    }
    lo = checkFinite(s.lo, 'bins.lo');
    const hi = checkFinite(s.hi, 'bins.hi');
    if (!(hi > lo)) throw new ArgumentError('bins.hi', `a number greater than lo (${lo})`, describe(hi));
    even = true;
    scale = bins / (hi - lo);
    real = Array.from({ length: bins + 1 }, (_, k) => (k === bins ? hi : lo + ((hi - lo) * k) / bins));
  }
  const edges: number[] = [];
  for (const e of real) {
    const c = ceilTo(type, e);
    if (c === undefined) break;
    edges.push(c);
  }
  return { bins: real.length - 1, even, lo, scale, edges, open: edges.length < real.length };
}

/** Exact integer bins (see exactBins): lo in the u32 key order, the width, log2 of it or -1. */
export interface ExactBins {
  readonly ulo: number;
  readonly width: number;
  readonly shift: number;
}

/**
 * Integer even bins whose edges are exactly lo + k * width (width an integer, in the u32 key order
 * of the type: i32 keys are biased by 2^31): the GPU kernel and the CPU loop divide (or shift when width
 * is a power of two) instead of reading edges. Checked against the edges every backend uses, so the bins are the
 * same. A hi one past the type's greatest value (open: the last bin runs to its end) fits too.
 */
export function exactBins(type: NumericType, b: BinEdges): ExactBins | undefined {
  if (!b.even || type === 'f32') return undefined;
  const [min, max] = type === 'u32' ? [0, 2 ** 32 - 1] : [-(2 ** 31), 2 ** 31 - 1];
  const lo = b.edges[0] as number;
  const width = ((b.edges[1] ?? max + 1) as number) - lo;
  if (!(width >= 1 && width < 2 ** 32) || b.lo !== lo || lo < min) return undefined;
  if (b.edges.length !== (b.open ? b.bins : b.bins + 1)) return undefined;
  for (let k = 0; k < b.edges.length; k++) if (b.edges[k] !== lo + k * width) return undefined;
  // Open: the real last edge lies beyond the type, so the last bin must end at the type's end.
  if (b.open && lo + b.bins * width !== max + 1) return undefined;
  const shift = Number.isInteger(Math.log2(width)) ? Math.log2(width) : -1;
  return { ulo: lo - min, width, shift };
}
