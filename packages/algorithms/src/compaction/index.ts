/**
 * copyIf, removeIf, partition, stablePartition, unique: stream compaction (oneDPL's copy_if,
 * remove_if, partition, stable_partition, unique), all on the scan-scatter engine.
 *
 * Semantics: copyIf writes the elements with a truthy `pred(x)` in order to output[0, count) and
 * returns count; `output` needs room for them (checked after counting: an output too short is an
 * error and is left untouched). The stencil forms (Thrust's copy_if / remove_copy_if with a
 * stencil) test `pred(stencil[i])` instead, copy to an output and leave the input as it is:
 * `copyIf(policy, input, stencil, output, pred?)` and `removeIf(policy, input, stencil, output,
 * pred?)`, told from the other forms by their third argument being an array. removeIf and unique work in place and return the new length; the
 * elements from the new length on are unspecified (the GPU leaves the old values). partition puts the
 * elements with a truthy predicate first and returns how many (the other elements follow, in an
 * unspecified order); stablePartition keeps the input order within both groups. unique removes
 * consecutive duplicates compared with `===`: NaNs are never equal (each NaN is kept), +0 equals -0;
 * or with an equality `eq(prev, x)` of neighbours (oneDPL's unique with a binary predicate).
 * Predicates follow JS truthiness on every backend (non-zero and not NaN).
 *
 * Strategy: CPU: one loop (seq), count-then-scatter on the worker pool (par). GPU: the engine's
 * chained scan over 1/0 keep flags with the scatter fused in (one read of the input; the count read
 * back in the same submission); the stencil forms read the flags from the stencil (a second
 * binding: the streamed input of the engine's 'element' hook, `stencilKeep`). In-place algorithms
 * compact into a temporary and copy it back with a small kernel in the same command buffer (the
 * chained scan's fallback re-reads predecessor tiles, so it never writes over its own input).
 * unique with an equality is the engine's 'adjacent' generate hook with the equality as its
 * fragment (striped like unique); on the CPU the unique loop with the equality. Size tiers: n = 0 returns 0 at once; otherwise see the engine. The compaction output is bound whole, so on the GPU n is limited by one storage binding
 * (device policies fall back to the CPU beyond it).
 */
import {
  ArgumentError,
  type DeviceArray,
  type GpuDevice,
  type GpuFunction,
  type HostArray,
  lambda,
  type NumericType,
} from '@webdpl/core';
import { type CpuKeep, cpuCompact, scratchHost } from '../bricks/compaction';
import { type ArrayArg, type CheckedArray, checkArray, checkFunction, checkNoAlias, isArrayArg } from '../common/args';
import { type Counting, checkStencilArg, isCounting } from '../common/counting';
import { copyInto } from '../common/gpu-io';
import { negatePredicate, predicateFragment, resultTypeOf } from '../common/predicates';
import { isZip, type Zip } from '../common/zip';
import { iotaElement } from '../engines/map/elements';
import { mapDevice } from '../engines/map/index';
import {
  type CompactDeviceRequest,
  compactDevice,
  compactionLimit,
  type FinishMode,
  SCAN_ENGINE,
  stencilKeep,
} from '../engines/scan';
import { dispatch, type FunctionUse, type Pattern } from '../pattern/dispatch';
import { zipCopyPattern, zipRemovePattern } from './zip';
import { zipPartition, zipUnique } from './zip-reorder';

/** A predicate argument: a lambda `x => ...` (number or bool result) or a GpuFunction. */
export type PredicateArg = GpuFunction | ((x: number) => boolean | number) | object;

/**
 * What to keep: a predicate (possibly negated), "not equal to the previous element" under an
 * equality `eq`, or (undefined) "differs from the previous element".
 */
type Keep =
  | { readonly pred: GpuFunction; readonly negate: boolean; readonly eq?: undefined }
  | { readonly eq: GpuFunction; readonly pred?: undefined }
  | undefined;

/** Checks a unary predicate over elements of type `t` (named `pred` in errors). */
export function checkPredicate(pred: unknown, t: NumericType): GpuFunction {
  const fn = checkFunction(pred, 'pred', 1);
  if (!fn.supports([t])) throw new ArgumentError('pred', `a predicate defined for ${t}`, `'${fn.name}'`);
  resultTypeOf(fn, [t], 'pred');
  return fn;
}

const zero = () => 0;
const U32_ONLY: readonly NumericType[] = ['u32'];

/** The functions a compaction runs, with their argument types. */
function compactionFunctions(keep: Keep, t: NumericType): FunctionUse[] {
  return keep?.eq ? [{ fn: keep.eq, argTypes: [t, t] }] : keep ? [{ fn: keep.pred, argTypes: [t] }] : [];
}

function cpuKeep(keep: Keep, t: NumericType): CpuKeep {
  if (!keep) return { kind: 'adjacent-different' };
  if (keep.eq) return { kind: 'adjacent-equal', fn: keep.eq, type: t };
  return { kind: 'predicate', fn: keep.negate ? negatePredicate(keep.pred) : keep.pred, type: t };
}

function gpuKeep(keep: Keep, t: NumericType): CompactDeviceRequest['keep'] {
  if (!keep) return { kind: 'adjacent-different' };
  // The scan engine's neighbours hook with the equality as its fragment: fn(prev, x) -> bool.
  if (keep.eq) return { kind: 'adjacent', fn: predicateFragment(keep.eq, [t, t]) };
  return { kind: 'element', fn: predicateFragment(keep.pred, [t], keep.negate) };
}

/**
 * In-place compaction of `data` (removeIf, unique, partitions): CPU in place; GPU into a temporary
 * copied back by the finish kernel (DeviceArray) or read back (host array).
 */
function inPlace(
  policy: unknown,
  algorithm: string,
  dataArg: unknown,
  keepArg: (t: NumericType) => Keep,
  mode: 'compact' | 'partition' | 'stable-partition',
): Promise<number> {
  return dispatch(policy, () => {
    const data = checkArray(dataArg, 'data');
    const t = data.type;
    const keep = keepArg(t);
    const n = data.length;
    return {
      algorithm,
      engine: SCAN_ENGINE,
      n,
      functions: compactionFunctions(keep, t),
      gpuCheck: (device: GpuDevice) => compactionLimit(device, n),
      empty: zero,
      inputs: [data],
      cpu: ({ backend, inputs: [x] }) =>
        cpuCompact(
          backend,
          x as HostArray,
          x as HostArray,
          cpuKeep(keep, t),
          mode === 'compact' ? 'compact' : 'partition',
        ),
      gpu: async ({ device, tuning, inputs: [side], temp }) => {
        const finishMode: FinishMode =
          mode === 'compact' ? 'prefix' : mode === 'partition' ? 'all' : 'stable-partition';
        const r = await compactDevice(device, {
          label: algorithm,
          input: side as DeviceArray,
          output: temp(t, n),
          keep: gpuKeep(keep, t),
          write: mode === 'compact' ? 'compact' : 'partition',
          finish: data.kind === 'device' ? { dst: data.array, mode: finishMode } : undefined,
          readBack: data.kind === 'host',
          tuning,
          tuningName: algorithm,
        });
        if (data.kind === 'host' && r.bytes) {
          const host = data.array;
          if (mode === 'compact' || mode === 'partition') copyInto(host, r.bytes, mode === 'compact' ? r.count : n);
          else {
            const src = new (host.constructor as Uint32ArrayConstructor)(r.bytes, 0, n);
            host.set(src.subarray(0, r.count));
            for (let q = 0; q < n - r.count; q++) host[r.count + q] = src[n - 1 - q] as number;
          }
        }
        return r.count;
      },
    };
  });
}

/**
 * copyIf and the copying forms with a stencil: the elements of `input` kept by `keep` (applied to
 * the stencil's elements when there is one), in order, to output[0, count); returns count.
 */
function copyPattern(
  algorithm: string,
  inputArg: unknown,
  stencilArg: unknown,
  outputArg: unknown,
  predArg: unknown,
  negate: boolean,
): Pattern<number> {
  // counting(n): the u32 indices, never allocated on the CPU (a device temporary on the GPU).
  const counted = isCounting(inputArg) ? inputArg : undefined;
  const inp: CheckedArray | Counting = counted ?? checkArray(inputArg, 'input');
  // A counting(n) stencil: the predicate gets each element's index (no array on the CPU).
  const st = stencilArg !== undefined ? checkStencilArg(stencilArg, inp.length, 'input') : undefined;
  const stCounted = st?.counted === true;
  const stencil = st?.array;
  const stenciled = st !== undefined;
  const out = checkArray(outputArg, 'output');
  const t: NumericType = counted ? 'u32' : (inp as CheckedArray).type;
  if (out.type !== t)
    throw new ArgumentError('output', `an array of ${t} elements (the input's type)`, `${out.type} elements`);
  if (!counted) checkNoAlias(inp as CheckedArray, out, 'input', 'output');
  if (stencil) checkNoAlias(stencil, out, 'stencil', 'output');
  // The predicate's argument type: the stencil's elements (u32 indices for counting), or the input's.
  const pt: NumericType = st ? st.type : t;
  const pred = stenciled && predArg === undefined ? stencilTruthy : checkPredicate(predArg, pt);
  const keep: Keep = { pred, negate };
  const n = inp.length;
  const tooShort = (count: number) =>
    new ArgumentError('output', `at least ${count} elements (the number of elements kept)`, `${out.length}`);
  const inputs: CheckedArray[] = [];
  if (!counted) inputs.push(inp as CheckedArray);
  if (stencil) inputs.push(stencil);
  // A literal with every field, no spread: a pattern object spread from another object was ~5 us of
  // host time per call on the VM (its creation and the pattern layer's reads of it), issue 12.
  return {
    algorithm,
    engine: SCAN_ENGINE,
    n,
    functions: compactionFunctions(keep, pt),
    gpuCheck: (device: GpuDevice) => compactionLimit(device, n),
    empty: zero,
    inputs,
    types: counted ? U32_ONLY : undefined,
    // A host output is backed by an n-element temporary; a DeviceArray output of n or more
    // elements is written directly, a shorter one through a temporary and a capped copy.
    outputs: [{ arg: out, length: Math.min(n, out.length) }],
    cpu: async ({ backend, inputs: hosts, outputs: [y] }) => {
      const src = counted ? n : (hosts[0] as HostArray);
      const s = stCounted ? 'counting' : hosts[counted ? 0 : 1];
      const dst = y as HostArray;
      const ck = cpuKeep(keep, pt);
      if (dst.length >= n) return cpuCompact(backend, src, dst, ck, 'compact', s);
      const tmp = scratchHost(t, n);
      const count = await cpuCompact(backend, src, tmp, ck, 'compact', s);
      if (count > dst.length) throw tooShort(count);
      dst.set(tmp.subarray(0, count));
      return count;
    },
    gpu: ({ device, tuning, inputs: sides, outputs: [o], readBack, deliver, temp }) => {
      // No async function: the engine's promise, then the count (issue 12: an async frame and its
      // promise steps per call).
      const compact = (input: DeviceArray): Promise<number> => {
        const direct = out.length >= n;
        const fn = stenciled ? predicateFragment(pred, [pt], negate) : undefined;
        return compactDevice(
          device,
          {
            label: algorithm,
            input,
            output: direct ? (o as DeviceArray) : temp(t, n),
            keep: stCounted
              ? { kind: 'element', fn, element: false, index: true }
              : fn
                ? stencilKeep(fn, pt)
                : gpuKeep(keep, t),
            inputs: stencil ? [sides[counted ? 0 : 1] as DeviceArray] : undefined,
            write: 'compact',
            finish: !direct && out.kind === 'device' ? { dst: out.array, mode: 'prefix', cap: out.length } : undefined,
            // Read back whichever array the kept elements went to.
            readBack: readBack(0),
            tuning,
            tuningName: algorithm,
          },
          // Where the readback arrives (no promise step of its own).
          (r) => {
            if (r.count > out.length) throw tooShort(r.count);
            deliver(0, r.bytes, r.count);
            return r.count;
          },
        );
      };
      // A counting input is written into a device temporary (the engine loads its input from a
      // binding); a counting stencil is the element's index in the element hook (`index: true`).
      return counted ? deviceCounting(device, n, temp).then(compact) : compact(sides[0] as DeviceArray);
    },
  };
}

/**
 * counting(n) on the device: the indices in a temporary written by the map engine's iota element
 * (the scan engine loads its input from a binding).
 */
async function deviceCounting(
  device: GpuDevice,
  n: number,
  temp: (type: NumericType, n: number) => DeviceArray,
): Promise<DeviceArray> {
  const idx = temp('u32', n);
  await mapDevice(device, { label: 'counting', n, inputs: [], output: idx, elem: iotaElement('u32') });
  return idx;
}

/** The default predicate of the stencil forms: the stencil's truthiness (non-zero and not NaN). */
export const stencilTruthy: GpuFunction = lambda((s: number) => s);

/**
 * Whether a call is a stencil form: a further argument follows the place of the other form's
 * predicate (so its errors name the stencil form's arguments), or that place holds an array (a
 * typed array or DeviceArray; a plain JS array there with nothing after it reads as a bad
 * predicate, which is what it more likely is).
 */
function stencilForm(third: unknown, fourth: unknown): boolean {
  if (fourth !== undefined) return true;
  return isArrayArg(third) && !Array.isArray(third);
}

export function copyIf(
  policy: unknown,
  input: ArrayArg | Counting,
  output: ArrayArg,
  pred: PredicateArg,
): Promise<number>;
/**
 * Copies the elements i of zipped arrays (see `zip`) for which `pred(a[i], b[i], ..)` is truthy, each
 * array's element to the matching array of the `output` zip, in order, and returns count (Thrust's
 * copy_if over zip iterators). `pred` takes one parameter per array (then optionally the index, u32);
 * output k has input k's type, does not overlap any input or other output, and needs at least count
 * elements (else an error, with the outputs left untouched).
 */
export function copyIf(policy: unknown, input: Zip, output: Zip, pred: PredicateArg): Promise<number>;
/**
 * Copies the elements `input[i]` for which `pred(stencil[i])` is truthy, in order, to
 * output[0, count) and returns count (Thrust's copy_if with a stencil). `stencil` has the input's
 * length and any element type; `output` must not overlap `input` or `stencil` and needs at least
 * count elements (an output too short is an error, and is then left untouched).
 * @param pred a predicate over the stencil's type @default the stencil's truthiness
 * @throws ArgumentError naming `policy`, `input`, `stencil`, `output` or `pred`
 */
export function copyIf(
  policy: unknown,
  input: ArrayArg | Counting,
  stencil: ArrayArg | Counting,
  output: ArrayArg,
  pred?: PredicateArg,
): Promise<number>;
/**
 * Copies the elements of `input` for which `pred` is truthy, in order, to output[0, count) and
 * returns count. `output` must not overlap `input`; it needs at least count elements (an output too
 * short is an error, and is then left untouched).
 * @throws ArgumentError naming `policy`, `input`, `output` or `pred`
 */
export function copyIf(policy: unknown, ...args: unknown[]): Promise<number> {
  return dispatch(policy, () => {
    if (isZip(args[0])) return zipCopyPattern('copyIf', args[0], args[1], args[2], false);
    if (stencilForm(args[2], args[3])) return copyPattern('copyIf', args[0], args[1], args[2], args[3], false);
    return copyPattern('copyIf', args[0], undefined, args[1], args[2], false);
  });
}

export function removeIf(policy: unknown, data: ArrayArg, pred: PredicateArg): Promise<number>;
/**
 * Removes, from every zipped array together, the elements i for which `pred(a[i], b[i], ..)` is
 * truthy, in place (stable); returns the new length. With a zip of outputs as the second argument it
 * copies the other elements there instead and leaves the input as it is (as copyIf with the predicate
 * negated).
 */
export function removeIf(policy: unknown, data: Zip, pred: PredicateArg): Promise<number>;
export function removeIf(policy: unknown, input: Zip, output: Zip, pred: PredicateArg): Promise<number>;
/**
 * Copies the elements `input[i]` for which `pred(stencil[i])` is NOT truthy, in order, to
 * output[0, count) and returns count (Thrust's remove_copy_if with a stencil); the input is left
 * as it is. Same rules as the stencil form of copyIf.
 * @param pred a predicate over the stencil's type @default the stencil's truthiness
 * @throws ArgumentError naming `policy`, `input`, `stencil`, `output` or `pred`
 */
export function removeIf(
  policy: unknown,
  input: ArrayArg | Counting,
  stencil: ArrayArg | Counting,
  output: ArrayArg,
  pred?: PredicateArg,
): Promise<number>;
/**
 * Removes the elements for which `pred` is truthy, keeping the order of the others (stable), in
 * place; returns the new length. Elements from the new length on are unspecified.
 * @throws ArgumentError naming `policy`, `data` or `pred`
 */
export function removeIf(policy: unknown, ...args: unknown[]): Promise<number> {
  if (isZip(args[0])) {
    return dispatch(policy, () =>
      isZip(args[1]) ? zipCopyPattern('removeIf', args[0], args[1], args[2], true) : zipRemovePattern(args[0], args[1]),
    );
  }
  if (stencilForm(args[1], args[2])) {
    return dispatch(policy, () => copyPattern('removeIf', args[0], args[1], args[2], args[3], true));
  }
  const [data, pred] = args;
  return inPlace(policy, 'removeIf', data, (t) => ({ pred: checkPredicate(pred, t), negate: true }), 'compact');
}

/**
 * Reorders `data` so the elements for which `pred` is truthy come first; returns their number (the
 * split point). The order within each group is unspecified (the CPU keeps it; the GPU writes the
 * second group from the end). Over `zip(a, b, ..)` every array moves together, `pred` takes one
 * parameter per array (then optionally the index), and both groups keep their order.
 * @throws ArgumentError naming `policy`, `data` or `pred`
 */
export function partition(policy: unknown, data: ArrayArg | Zip, pred: PredicateArg): Promise<number> {
  if (isZip(data)) return zipPartition(policy, data, pred);
  return inPlace(policy, 'partition', data, (t) => ({ pred: checkPredicate(pred, t), negate: false }), 'partition');
}

/**
 * As partition, keeping the input order within both groups.
 * @throws ArgumentError naming `policy`, `data` or `pred`
 */
export function stablePartition(policy: unknown, data: ArrayArg | Zip, pred: PredicateArg): Promise<number> {
  if (isZip(data)) return zipPartition(policy, data, pred);
  return inPlace(
    policy,
    'stablePartition',
    data,
    (t) => ({ pred: checkPredicate(pred, t), negate: false }),
    'stable-partition',
  );
}

export function unique(policy: unknown, data: ArrayArg, eq?: EqualityArg): Promise<number>;
/**
 * Removes consecutive duplicate tuples of zipped arrays in place (duplicates when every array's
 * elements are `===`), every array moving together; returns the new length.
 */
export function unique(policy: unknown, data: Zip): Promise<number>;
/**
 * Removes consecutive duplicates in place and returns the new length (oneDPL's unique): element i
 * is removed when `eq(data[i - 1], data[i])` is truthy, by default when they are `===` (NaNs are
 * never equal, +0 equals -0). `eq` should be an equivalence relation (it is applied to neighbours).
 * Elements from the new length on are unspecified.
 * @param eq a binary predicate over the elements' type @default `===`
 * @throws ArgumentError naming `policy`, `data` or `eq`
 */
export function unique(policy: unknown, data: ArrayArg | Zip, eq?: EqualityArg): Promise<number> {
  if (isZip(data)) {
    if (eq !== undefined) {
      return dispatch(policy, () => {
        throw new ArgumentError('eq', 'no equality over a zip (tuples compare with ===)', 'an equality');
      });
    }
    return zipUnique(policy, data);
  }
  return inPlace(
    policy,
    'unique',
    data,
    (t) => (eq === undefined ? undefined : { eq: checkEquality(eq, t) }),
    'compact',
  );
}

/** An equality argument: a lambda `(a, b) => boolean` or a GpuFunction. */
export type EqualityArg = GpuFunction | ((a: number, b: number) => boolean | number) | object;

/** Checks a binary equality over elements of type `t` (named `eq` in errors). */
function checkEquality(eq: unknown, t: NumericType): GpuFunction {
  const fn = checkFunction(eq, 'eq', 2);
  if (!fn.supports([t, t]))
    throw new ArgumentError('eq', `an equality (a, b) => boolean defined for ${t}`, `'${fn.name}'`);
  resultTypeOf(fn, [t, t], 'eq');
  return fn;
}
