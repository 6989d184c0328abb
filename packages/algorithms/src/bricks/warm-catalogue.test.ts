/**
 * The catalogue's self-warming kernels (bricks/warm.ts): the merge and set-operation piece kernels
 * (merge-path.ts), the histogram kernels (histogram.ts) and the radix select's histogram and
 * partition kernels (radix-select.ts), optimized by V8 right after they are compiled (on the
 * feedback of their warm-up calls alone), run real calls without deoptimizing: pieces of every
 * shape (either input running out first, runs of equal keys, empty inputs), u32 keys above 2^31,
 * f32 with -0, +0 and NaN. Without the warm-up the optimized code deoptimizes at once
 * (mutation-checked by dropping the warm-up calls of each file).
 *
 * Uses V8's natives syntax (test-natives.ts). Each case compiles a kernel of its own here (a comparator source tagged per case, or a
 * type and order no other case uses).
 */
import type { NumericType } from '@webdpl/core';
import { compileOnce } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { checkComparator, cpuComparator } from '../sort/comparator-arg';
import { greater } from '../sort/comparators';
import { rng } from '../testing/matrix';
import { type CpuBinKind, histogramSource } from './histogram';
import type { Kernel } from './kernels';
import { mergeKernel, type SetKernel, type SetOp, setSource } from './merge-path';
import { histSource, scatterSource } from './radix-select';
import type { KeyArray } from './sort/index';
import { callsOptimized } from './test-natives';
import { sortedData } from './test-sorted';

function arrayOf(type: NumericType, n: number, gen: (i: number) => number): KeyArray {
  const a = type === 'u32' ? new Uint32Array(n) : type === 'i32' ? new Int32Array(n) : new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = gen(i);
  return a;
}

/** Pieces like a par call's: both inputs long, either one short or empty, runs of ties. */
function pieces(type: NumericType, descending: boolean): [KeyArray, KeyArray][] {
  const out: [KeyArray, KeyArray][] = [];
  for (const [k, [na, nb]] of [
    [5000, 5003],
    [4099, 17],
    [17, 4099],
    [0, 3000],
    [3000, 0],
    [2048, 2048],
  ].entries()) {
    for (const spread of [7, 100_000]) {
      out.push([
        sortedData(type, na as number, 2 * k + 1, spread, descending),
        sortedData(type, nb as number, 2 * k + 2, spread, descending),
      ]);
    }
  }
  return out;
}

const TYPES: readonly NumericType[] = ['u32', 'i32', 'f32'];
const OPS: readonly SetOp[] = ['union', 'intersection', 'difference', 'symmetricDifference'];

describe('the catalogue kernels warm themselves and stay optimized on real calls', () => {
  for (const type of TYPES) {
    for (const descending of [false, true]) {
      const comp = cpuComparator(checkComparator(descending ? greater : undefined, 'comp'), type);
      const order = descending ? 'greater' : 'less';
      for (const values of [false, true]) {
        it(`merge ${type} ${order}${values ? ' with values' : ''}`, () => {
          const source = `${comp.source} /* warm-catalogue merge ${type} ${order} ${values} */`;
          const kernel = mergeKernel(source, values, type);
          const calls = pieces(type, descending).map(([a, b]) => {
            const o = arrayOf(type, a.length + b.length, () => 0);
            const va = new Uint32Array(a.length);
            const vb = new Uint32Array(b.length);
            const ov = new Uint32Array(a.length + b.length);
            return values ? () => kernel(a, b, va, vb, o, ov) : () => kernel(a, b, undefined, undefined, o, undefined);
          });
          expect(callsOptimized(kernel, calls)).toBe(calls.length);
        });
      }
      for (const op of OPS) {
        it(`set ${op} ${type} ${order}`, () => {
          const source = `${comp.source} /* warm-catalogue ${op} ${type} ${order} */`;
          const kernel = compileOnce<SetKernel>(setSource(source, op, type));
          const calls = pieces(type, descending).map(([a, b]) => {
            const o = arrayOf(type, a.length + b.length, () => 0);
            return () => kernel(a, b, o);
          });
          expect(callsOptimized(kernel, calls)).toBe(calls.length);
        });
      }
      it(`radix select ${type} ${order}: the histogram rounds and the partition`, () => {
        const hist = compileOnce<Kernel>(histSource(type, descending));
        const scatter = compileOnce<Kernel>(scatterSource(type, descending));
        const r = rng(5);
        const n = 40_000;
        // Element bits of keys that share their high bits in part (candidates of every round).
        const bits = arrayOf('u32', n, (i) => (i % 3 === 0 ? 0x40000000 + (r() % 5000) : r())) as Uint32Array;
        const f = new Uint32Array(4 * 2048);
        const P = new Uint32Array(3 + 4);
        const y = new Uint32Array(n);
        const calls: (() => void)[] = [];
        for (const round of [0, 1, 3, 2]) {
          calls.push(() => {
            P[0] = round;
            P[1] = round === 2 ? 0x40000000 >>> 10 : 0x40000000 >>> 21;
            for (let c = 0; c < 4; c++) P[3 + c] = (c * n) / 8;
            for (let c = 0; c < 4; c++)
              hist(bits, P, y, (c * n) / 4, ((c + 1) * n) / 4 - (c === 3 ? 3 : 0), false, c * 2048, f);
          });
        }
        expect(callsOptimized(hist, calls)).toBe(calls.length);
        // The partition around keys of the data, each class into a region of its own (in bounds
        // whatever the counts), and over an empty range; both loops (a branch on equal keys or not).
        const part: (() => void)[] = [];
        const z = new Uint32Array(3 * n);
        for (const [at, branch] of [
          [7, 1],
          [3, 0],
          [0, 1],
          [5, 0],
        ] as const) {
          part.push(() => {
            P[1] = branch;
            P[2] = bits[at] as number;
            scatter(bits, P, z, 0, n, false, 0, new Uint32Array([0, n, 2 * n]));
            scatter(bits, P, z, 0, 0, false, 0, new Uint32Array([0, n, 2 * n]));
          });
        }
        expect(callsOptimized(scatter, part)).toBe(part.length);
      });
    }
    for (const kind of ['shift', 'div', 'even', 'edges'] as const satisfies readonly CpuBinKind[]) {
      if (type === 'f32' && (kind === 'shift' || kind === 'div')) continue;
      it(`histogram ${type} ${kind}`, () => {
        const kernel = compileOnce<Kernel>(histogramSource(type, kind));
        const r = rng(3);
        const x = arrayOf(type, 100_003, () => (type === 'f32' ? (r() / 2 ** 32) * 300 - 10 : r()));
        const counts = new Uint32Array(3 * 1000);
        const calls: (() => void)[] = [];
        // 'shift' also over bins of 2^20 (most values beyond them: the per-element side of its loop).
        for (const [bins, shift] of [
          [256, 24],
          [1000, 24],
          [256, 20],
        ] as const) {
          if (shift !== 24 && kind !== 'shift') continue;
          for (const open of [0, 1]) {
            // Bins of width 2^shift ('shift'), 3e6 (div and the integer 'even' / 'edges'), 0.25 (f32).
            const width = type === 'f32' ? 0.25 : kind === 'shift' ? 2 ** shift : 3e6;
            const w = kind === 'shift' ? shift : kind === 'div' ? width : 1 / width;
            const lo = type === 'i32' ? -(2 ** 31) : type === 'f32' ? -5 : 0;
            const edges = Array.from({ length: bins + 1 }, (_, k) => lo + k * width);
            const P = new Float64Array([edges[0] as number, w, bins + 1, open, ...edges]);
            calls.push(() => kernel(x, P as never, undefined, 0, x.length, false, 0, counts));
            calls.push(() => kernel(x, P as never, undefined, 5, 5 + bins - 1, false, bins, counts));
            // Too few elements for 'shift''s wide loop (16 per word of 2^(32 - w)): the checked loop.
            calls.push(() => kernel(x, P as never, undefined, 7, 3007, false, 0, counts));
          }
        }
        expect(callsOptimized(kernel, calls)).toBe(calls.length);
      });
    }
  }
});
