/**
 * transformReduce over zipped arrays and with tuple accumulators:
 * - `transformReduce(policy, zip(xs, ys), 0, plus, (x, y) => x * y)`: a number accumulator;
 * - `transformReduce(policy, zip(xs, ys), [Infinity, -Infinity, Infinity, -Infinity],
 *   (a, b) => [Math.min(a[0], b[0]), Math.max(a[1], b[1]), Math.min(a[2], b[2]), Math.max(a[3], b[3])],
 *   (x, y) => [x, x, y, y])`: an array `init` of 1 to 4 numbers makes the accumulator a tuple; the
 *   transform returns a tuple of that length and `reduceOp` folds two tuples into one. The result is
 *   an array. The input may also be one array.
 *
 * Strategy: CPU: one generated loop folding in order (bricks zip.ts). GPU: the transform-reduce engine
 * with a load over up to 4 inputs (the scalar 'strided'/'ordered' paths past 2 inputs). A number
 * accumulator whose operator has an identity reduces as usual (subgroups where tuned); tuples, and
 * operators without identity, reduce a struct `{ c0, .., ok }` whose `ok` flag makes an empty value
 * the identity, so no identity is needed, through the engine's ordered blocked kernel: each thread
 * folds its contiguous elements from the first with the raw operator (no flag tests), subgroups
 * fold rows by per-field shuffles (see engines/transform-reduce/kernels.ts `blockedKernel`); only
 * partial runs and the partials test flags. `init` is folded in on the host. Size tiers: those of the engine.
 */
import {
  ArgumentError,
  type Combiner,
  coerce,
  combinerOf,
  describe,
  fragment,
  type GpuFunction,
  mangle,
  type NumericType,
  tupleFunction,
} from '@webdpl/core';
import { cpuZipReduce, foldTuples, type ZipReduce } from '../bricks/zip';
import { type CheckedArray, checkFunction } from '../common/args';
import { valueFragment, valueTypeOf } from '../common/predicates';
import { checkArrays, checkZipFunction, isZip, tupleParams } from '../common/zip';
import { type TupleShape, transformReduceDevice } from '../engines/transform-reduce';
import type { Pattern } from '../pattern/dispatch';
import { loadFragment, reducePattern } from './load';

/** Decodes the accumulator's elements (little-endian words, as read back). */
function decode(types: readonly NumericType[], bytes: ArrayBuffer): number[] {
  const v = new DataView(bytes);
  return types.map((t, k) =>
    t === 'f32' ? v.getFloat32(4 * k, true) : t === 'i32' ? v.getInt32(4 * k, true) : v.getUint32(4 * k, true),
  );
}

/**
 * The struct combiner of a tuple reduction: `{ c0: T0, .., ok: u32 }`, where `ok == 0` is the
 * identity (combined with anything, it gives the other operand).
 */
function tupleCombiner(z: ZipReduce): Combiner & { readonly tuple: TupleShape } {
  const types = [...z.acc, ...z.acc];
  const fns = z.reduce.map((r) => r.wgsl(types));
  const name = mangle('zacc', ...z.acc, ...fns.map((f) => f.name));
  const s = `${name}_t`;
  const fields = z.acc.map((t, k) => `c${k}: ${t}`).join(', ');
  const args = [...z.acc.map((_, k) => `a.c${k}`), ...z.acc.map((_, k) => `b.c${k}`)].join(', ');
  const raw = fragment({
    name: `${name}_raw`,
    deps: fns,
    code: `struct ${s} { ${fields}, ok: u32 }
fn ${name}_raw(a: ${s}, b: ${s}) -> ${s} {
  return ${s}(${fns.map((f) => `${f.name}(${args})`).join(', ')}, 1u);
}`,
  });
  const combine = fragment({
    name,
    deps: [raw],
    code: `fn ${name}(a: ${s}, b: ${s}) -> ${s} {
  if (a.ok == 0u) { return b; }
  if (b.ok == 0u) { return a; }
  return ${name}_raw(a, b);
}`,
  });
  return {
    tuple: { fields: z.acc.length, raw },
    name,
    wgslType: s,
    bytes: 4 * (z.acc.length + 1),
    identity: `${s}(${z.acc.map((t) => `${t}()`).join(', ')}, 0u)`,
    combine,
  };
}

/**
 * The pattern of transformReduce over an array or a zip (`inputArg`), with `init` a number or an
 * array of 1 to 4 numbers (a tuple accumulator; the pattern's result is then an array).
 */
export function zipTransformReducePattern(
  inputArg: unknown,
  init: unknown,
  reduceArg: unknown,
  transformArg: unknown,
): Pattern<number | number[]> {
  const inputs = checkArrays(inputArg, 'input');
  const tuple = Array.isArray(init);
  if (tuple && (init.length < 1 || init.length > 4 || !init.every((v) => typeof v === 'number'))) {
    throw new ArgumentError('init', 'a number, or an array of 1 to 4 numbers (a tuple accumulator)', describe(init));
  }
  if (!tuple && typeof init !== 'number')
    throw new ArgumentError('init', 'a number or an array of numbers', describe(init));
  const width = tuple ? (init as number[]).length : 0;
  const inTypes = inputs.map((a) => a.type);
  const { shape, argTypes, indexed, what } = tupleParams(transformArg, inTypes, isZip(inputArg));
  // An array init with a transformFn returning a number: the init is what is off (a number init
  // with a tuple-valued transformFn names transformFn below).
  if (width > 0 && tupleFunction(transformArg, 'transformFn').width === 0) {
    throw new ArgumentError('init', 'a number (transformFn returns a number, not a tuple)', describe(init));
  }
  const t = checkZipFunction(transformArg, 'transformFn', shape, argTypes, width, what);
  const acc = t.resultTypes.map(valueTypeOf);
  let reduce: readonly GpuFunction[];
  if (tuple) {
    const r = checkZipFunction(reduceArg, 'reduceOp', [width, width], [...acc, ...acc], width, 'two tuples');
    r.resultTypes.forEach((rt, k) => {
      if (rt !== acc[k]) {
        throw new ArgumentError(
          'reduceOp',
          `a function whose result [${k}] has the accumulator's type ${acc[k]} (transformFn's result [${k}])`,
          `one giving ${rt}`,
        );
      }
    });
    reduce = r.parts;
  } else {
    reduce = [checkFunction(reduceArg, 'reduceOp', 2)];
  }
  const z: ZipReduce = { transform: t.parts, transformTypes: argTypes, indexed, reduce, acc };
  const start = (tuple ? (init as number[]) : [init as number]).map((v, k) => coerce(acc[k] as NumericType, v));
  const answer = (v: readonly number[]): number | number[] => (tuple ? [...v] : (v[0] as number));
  const single = !tuple && reduce[0]?.identity(acc[0] as NumericType) !== undefined;
  return reducePattern<number | number[]>(inputs, {
    algorithm: 'transformReduce',
    functions: [
      ...t.parts.map((fn) => ({ fn, argTypes })),
      ...reduce.map((fn) => ({ fn, argTypes: [...acc, ...acc] })),
    ],
    empty: () => answer(start),
    cpu: async ({ backend, inputs: hosts }) =>
      answer(await cpuZipReduce(backend, hosts, (inputs[0] as CheckedArray).length, z, start)),
    gpu: async ({ device, tuning, inputs: arrays }) => {
      const vals = t.parts.map((p, k) => valueFragment(p, argTypes, acc[k] as NumericType));
      const tc = single ? undefined : tupleCombiner(z);
      const combiner = tc ?? combinerOf(reduce[0] as GpuFunction, acc[0] as NumericType);
      const call = (v: (typeof vals)[number]) =>
        `${v.name}(${[...inTypes.map((_, k) => `x${k}`), ...(indexed ? ['i'] : [])].join(', ')})`;
      const body = single
        ? `return ${call(vals[0] as (typeof vals)[number])};`
        : `return ${combiner.wgslType}(${vals.map(call).join(', ')}, 1u);`;
      const bytes = await transformReduceDevice(device, {
        label: 'transformReduce',
        inputs: arrays,
        load: loadFragment(
          'load_zip',
          inTypes,
          combiner.wgslType,
          body,
          [...vals, combiner.combine],
          [combiner.name, ...vals.map((v) => v.name)],
        ),
        combiner,
        commutative: single && (reduce[0] as GpuFunction).commutative,
        ...(tc ? { tuple: tc.tuple } : {}),
        tuning,
        tuningName: 'transformReduce',
      });
      return answer(foldTuples(z, start, [decode(acc, bytes.data())]));
    },
  });
}
