/**
 * minElement, maxElement, minmaxElement: the first least / first greatest element and its index.
 *
 * Order: the total order sort uses. Integers numerically; f32 numerically with -0 before +0 and NaN
 * (any sign or payload) greater than everything, +Infinity included. So minElement of [0, -0] is -0
 * at index 1, and maxElement of data holding NaN is the first NaN.
 * Ties: the first occurrence, for min and for max (note: std::minmax_element returns the LAST
 * greatest element; minmaxElement here returns the first, like maxElement).
 *
 * Strategy: each element maps to a u32 order key (order-key.ts). CPU: one pass over the keys, seq
 * or per chunk on the worker pool. GPU: the transform-reduce engine over (key, index) pairs
 * (vec2<u32>, vec4<u32> for both) with a lexicographic min/max combine, which is commutative, so the
 * engine's vec4-load path runs where the input is aligned.
 * Size tiers: n = 0 returns index -1 at once; otherwise see the engine.
 */

import type { HostArray, NumericType } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuMinMaxIndex, type Want } from '../bricks/min-element';
import { type ArrayArg, checkArray } from '../common/args';
import { transformReduceDevice } from '../engines/transform-reduce';
import { dispatch } from '../pattern/dispatch';
import { loadFragment, reducePattern } from '../transform-reduce/load';
import { argMaxCombiner, argMinCombiner, argMinMaxCombiner, orderKeyFragment, valueOfKey } from './order-key';

/** An element and its index; index -1 and value undefined for empty input. */
export interface ElementAt {
  readonly index: number;
  readonly value: number | undefined;
}

/** The least and greatest elements. */
export interface MinMax {
  readonly min: ElementAt;
  readonly max: ElementAt;
}

const NONE: ElementAt = Object.freeze({ index: -1, value: undefined });

function minMax(policy: Policy, algorithm: string, input: ArrayArg, want: Want): Promise<[ElementAt, ElementAt]> {
  return dispatch(policy, () => {
    const a = checkArray(input, 'input');
    const t: NumericType = a.type;
    return reducePattern<[ElementAt, ElementAt]>([a], {
      algorithm,
      empty: () => [NONE, NONE],
      cpu: async ({ backend, inputs: [h] }) => {
        const x = h as HostArray;
        const [mi, ma] = await cpuMinMaxIndex(backend, x, t, want);
        const at = (i: number): ElementAt => (i < 0 ? NONE : { index: i, value: x[i] });
        return [at(mi), at(ma)];
      },
      gpu: async ({ device, tuning, inputs: arrays }) => {
        const key = orderKeyFragment(t);
        const combiner = want === 1 ? argMinCombiner : want === 2 ? argMaxCombiner : argMinMaxCombiner;
        const acc = want === 3 ? 'vec4<u32>' : 'vec2<u32>';
        const body =
          want === 3
            ? `let k = ${key.name}(x0);\n  return vec4<u32>(k, i, k, i);`
            : `return vec2<u32>(${key.name}(x0), i);`;
        const bytes = await transformReduceDevice(device, {
          label: algorithm,
          inputs: arrays,
          load: loadFragment('load_minmax', [t], acc, body, [key], [want]),
          combiner,
          commutative: true,
          tuning,
          tuningName: algorithm,
        });
        const r = new Uint32Array(bytes.data());
        const at = (k: number): ElementAt => ({ index: r[k + 1] as number, value: valueOfKey(t, r[k] as number) });
        if (want === 1) return [at(0), NONE];
        if (want === 2) return [NONE, at(0)];
        return [at(0), at(2)];
      },
    });
  });
}

/**
 * The first least element of `input` and its index (see the module comment for the order of f32
 * values: -0 before +0, NaN greatest). Empty input: `{ index: -1, value: undefined }`.
 */
export async function minElement(policy: Policy, input: ArrayArg): Promise<ElementAt> {
  return (await minMax(policy, 'minElement', input, 1))[0];
}

/**
 * The first greatest element of `input` and its index (f32: NaN is greater than everything, +0
 * greater than -0). Empty input: `{ index: -1, value: undefined }`.
 */
export async function maxElement(policy: Policy, input: ArrayArg): Promise<ElementAt> {
  return (await minMax(policy, 'maxElement', input, 2))[1];
}

/**
 * The first least and the first greatest element in one pass (unlike std::minmax_element, whose
 * max is the last greatest). Empty input: both `{ index: -1, value: undefined }`.
 */
export async function minmaxElement(policy: Policy, input: ArrayArg): Promise<MinMax> {
  const [min, max] = await minMax(policy, 'minmaxElement', input, 3);
  return { min, max };
}
