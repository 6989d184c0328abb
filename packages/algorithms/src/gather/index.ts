/**
 * gather, scatter, gatherIf, scatterIf (Thrust's gather / scatter and their stencil forms):
 *
 *   gather(policy, map, input, output):                    output[i] = input[map[i]], i < map.length
 *   gatherIf(policy, map, stencil, input, output, pred?):  the same where pred(stencil[i])
 *   scatter(policy, input, map, output):                   output[map[i]] = input[i], i < input.length
 *   scatterIf(policy, input, map, stencil, output, pred?): the same where pred(stencil[i])
 *
 * Maps are u32 or i32 arrays. `pred` defaults to the stencil's truthiness (non-zero and not NaN);
 * elements whose stencil fails are not written. Out-of-range indices (negative, or >= the length of
 * the gathered input / the scattered output): on the CPU an ArgumentError naming `map`, the
 * position and the index, thrown before anything is written; on the GPU the element is skipped (a
 * bounds check; nothing is read or written for it). Scatter with repeated indices writes one of
 * the values (seq: the last; par and GPU: unspecified). The output must not overlap the other
 * arrays; its other elements are left as they were.
 *
 * Strategy: CPU: one generated loop (bricks/gather.ts), preceded by the index check. GPU: the map
 * engine with its open hooks: the map (and stencil) are streamed inputs, gather's input is a
 * gathered array read at any index; gather's element returns input[map[i]] and whether to write it
 * (the engine's 'masked' write: one vec4 store where four in a row are written), scatter's element
 * writes the output itself at map[i] ('store'). Host outputs are uploaded first (their unwritten
 * elements keep their values) and read back in the same submission. Size tiers: n = 0 returns at
 * once; otherwise one map-engine call (vec4 loads of the streamed arrays where aligned). The arrays
 * read or written at any index are bound whole, so on the GPU they are limited to one storage
 * binding (device policies with a CPU fallback run larger calls on the CPU).
 */
import {
  ArgumentError,
  type DeviceArray,
  fragment,
  type GpuDevice,
  type GpuFunction,
  type HostArray,
  mangle,
  type NumericType,
  type WgslFragment,
} from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { cpuGather, type GatherKind, type Stencil } from '../bricks/gather';
import {
  type ArrayArg,
  type CheckedArray,
  checkArray,
  checkNoAlias,
  checkOutput,
  checkSameLength,
} from '../common/args';
import { type Counting, checkStencilArg } from '../common/counting';
import { predicateFragment, resultTypeOf } from '../common/predicates';
import { checkPredicate, type PredicateArg, stencilTruthy } from '../compaction/index';
import { mapDevice } from '../engines/map/index';
import { dispatch, type Pattern } from '../pattern/dispatch';

function checkMap(x: unknown): CheckedArray {
  const m = checkArray(x, 'map');
  if (m.type === 'f32') throw new ArgumentError('map', 'a u32 or i32 array of indices', 'f32 elements');
  return m;
}

/** Why an array bound whole cannot run on `device`, if it cannot. */
function wholeLimit(device: GpuDevice, arrays: readonly [CheckedArray, string][]): string | undefined {
  const max = device.limits.maxStorageBufferBindingSize;
  for (const [a, name] of arrays) {
    // A view may start anywhere within an aligned window: allow for that offset.
    if (a.length * 4 + 256 > max) {
      return `${name} (${a.length} elements) is read or written at any index and exceeds one storage binding (${max} bytes)`;
    }
  }
  return undefined;
}

/**
 * The map engine's element: gather `fn(m: M, [s: S,] i, c, ok) -> T { ok = j < c.x && pred(s); load0(j) }`
 * ('masked'), scatter `fn(x: T, m: M, [s: S,] i, c) { if (j < c.x && pred(s)) store(j, x) }` ('store'),
 * with j = u32(m).
 */
function gatherElement(
  kind: GatherKind,
  mapType: NumericType,
  type: NumericType,
  pred?: WgslFragment,
  st?: NumericType | 'counting',
): WgslFragment {
  const name = mangle(`elem_${kind}`, mapType, type, pred?.name ?? 'all', st ?? '-');
  // A counting stencil is not streamed: the predicate gets the element's index.
  const stParam = st === undefined || st === 'counting' ? undefined : st;
  const params =
    kind === 'gather'
      ? [`x0: ${mapType}`, ...(stParam ? [`x1: ${stParam}`] : [])]
      : [`x0: ${type}`, `x1: ${mapType}`, ...(stParam ? [`x2: ${stParam}`] : [])];
  const m = kind === 'gather' ? 'x0' : 'x1';
  const s = st === 'counting' ? 'i' : kind === 'gather' ? 'x1' : 'x2';
  const test = pred ? ` && ${pred.name}(${s})` : '';
  if (kind === 'gather') {
    // The map engine's 'masked' write: out[i] = input[j] where ok (a vec4 store for four in a row).
    return fragment({
      name,
      deps: pred ? [pred] : [],
      code: `fn ${name}(${params.join(', ')}, i: u32, c: vec2<u32>, ok: ptr<function, bool>) -> ${type} {
  let j = bitcast<u32>(${m});
  *ok = j < c.x${test};
  if (*ok) { return map_load0(j); }
  return ${type}();
}`,
    });
  }
  // The map engine's 'store' write: out[j] = x0 where j is in range (and the stencil passes).
  return fragment({
    name,
    deps: pred ? [pred] : [],
    code: `fn ${name}(${params.join(', ')}, i: u32, c: vec2<u32>) {
  let j = bitcast<u32>(${m});
  if (j < c.x${test}) { map_store(j, x0); }
}`,
  });
}

interface GatherArgs {
  readonly kind: GatherKind;
  readonly algorithm: string;
  readonly map: CheckedArray;
  readonly input: CheckedArray;
  readonly output: CheckedArray;
  /** The stencil (`arg` undefined: counting(n), the predicate gets the index) and its predicate. */
  readonly stencil?: { readonly arg: CheckedArray | undefined; readonly pred: GpuFunction; readonly type: NumericType };
}

function gatherPattern(g: GatherArgs): Pattern<void> {
  const { kind, map, input, output, stencil } = g;
  const n = map.length;
  // gather reads input[map[i]]; scatter writes output[map[i]].
  const limit = kind === 'gather' ? input.length : output.length;
  const limitName = kind === 'gather' ? 'input' : 'output';
  const t = input.type;
  const streamed = kind === 'gather' ? [map] : [input, map];
  if (stencil?.arg) streamed.push(stencil.arg);
  const inputs = kind === 'gather' ? [...streamed, input] : streamed;
  return {
    algorithm: g.algorithm,
    engine: 'map',
    n,
    inputs,
    // Upload a host output: the elements not written keep the caller's values.
    outputs: [{ arg: output, upload: true, length: kind === 'gather' ? n : output.length }],
    functions: stencil ? [{ fn: stencil.pred, argTypes: [stencil.type] }] : [],
    gpuCheck: (device) =>
      wholeLimit(
        device,
        kind === 'gather'
          ? [
              [input, 'input'],
              [output, 'output'],
            ]
          : [[output, 'output']],
      ),
    empty: () => undefined,
    cpu: async ({ backend, inputs: hosts, outputs: [out] }) => {
      const m = hosts[kind === 'gather' ? 0 : 1] as HostArray;
      const x = hosts[kind === 'gather' ? hosts.length - 1 : 0] as HostArray;
      const st: Stencil | undefined = stencil
        ? { array: stencil.arg ? (hosts[kind === 'gather' ? 1 : 2] as HostArray) : undefined, pred: stencil.pred }
        : undefined;
      // The whole map is checked before anything is written (par: in chunks on the pool).
      const bad = await cpuGather(backend, kind, m, x, out as HostArray, limit, st);
      if (bad >= 0) {
        throw new ArgumentError(
          'map',
          `indices in [0, ${limit}) (the length of ${limitName})`,
          `map[${bad}] = ${m[bad]}`,
        );
      }
    },
    gpu: async ({ device, tuning, inputs: sides, outputs: [o], readBack, deliver }) => {
      const dst = o as DeviceArray;
      const st = stencil ? (stencil.arg ? stencil.type : 'counting') : undefined;
      const pred = stencil ? predicateFragment(stencil.pred, [stencil.type]) : undefined;
      const bytes = await mapDevice(device, {
        label: g.algorithm,
        n,
        inputs: sides.slice(0, streamed.length),
        gathered: kind === 'gather' ? [sides[streamed.length] as DeviceArray] : [],
        // gather writes out[i], i < n: the engine's 'masked' write over the first n elements (vec4
        // stores); scatter writes anywhere in the output ('store', bound whole).
        output: kind === 'gather' && dst.length !== n ? dst.view(0, n) : dst,
        write: kind === 'gather' ? 'masked' : 'store',
        elem: gatherElement(kind, map.type, t, pred, st),
        constants: [limit, 0],
        tuning,
        tuningName: g.algorithm,
        readBack: readBack(0),
      });
      deliver(0, bytes, kind === 'gather' ? n : dst.length);
    },
  };
}

function checkStencil(stencilArg: unknown, predArg: unknown, against: CheckedArray, name: string) {
  const { array: arg, type } = checkStencilArg(stencilArg, against.length, name);
  const pred = predArg === undefined ? stencilTruthy : checkPredicate(predArg, type);
  resultTypeOf(pred, [type], 'pred');
  return { arg, pred, type };
}

/** Checks gather's arrays (output: at least map.length elements of the input's type, disjoint). */
function gatherArgs(
  algorithm: string,
  mapArg: unknown,
  inputArg: unknown,
  outputArg: unknown,
  stencil?: { readonly arg: unknown; readonly pred: unknown },
): GatherArgs {
  const map = checkMap(mapArg);
  const s = stencil ? checkStencil(stencil.arg, stencil.pred, map, 'map') : undefined;
  const input = checkArray(inputArg, 'input');
  const output = checkOutput(outputArg, 'output', map.length, input.type);
  checkNoAlias(map, output, 'map', 'output');
  checkNoAlias(input, output, 'input', 'output');
  if (s?.arg) checkNoAlias(s.arg, output, 'stencil', 'output');
  return { kind: 'gather', algorithm, map, input, output, stencil: s };
}

/** Checks scatter's arrays (map and stencil: input.length elements; output of the input's type, disjoint). */
function scatterArgs(
  algorithm: string,
  inputArg: unknown,
  mapArg: unknown,
  outputArg: unknown,
  stencil?: { readonly arg: unknown; readonly pred: unknown },
): GatherArgs {
  const input = checkArray(inputArg, 'input');
  const map = checkMap(mapArg);
  checkSameLength(input, map, 'input', 'map');
  const s = stencil ? checkStencil(stencil.arg, stencil.pred, input, 'input') : undefined;
  const output = checkOutput(outputArg, 'output', 0, input.type);
  checkNoAlias(input, output, 'input', 'output');
  checkNoAlias(map, output, 'map', 'output');
  if (s?.arg) checkNoAlias(s.arg, output, 'stencil', 'output');
  return { kind: 'scatter', algorithm, map, input, output, stencil: s };
}

/**
 * Writes `input[map[i]]` to `output[i]` for every i < map.length.
 * @param map u32 or i32 indices into `input`
 * @param output at least map.length elements of the input's type, not overlapping the other arrays
 * @throws ArgumentError naming `policy`, `map`, `input` or `output` (an index out of range on the CPU)
 */
export function gather(policy: Policy, map: ArrayArg, input: ArrayArg, output: ArrayArg): Promise<void> {
  return dispatch(policy, () => gatherPattern(gatherArgs('gather', map, input, output)));
}

/**
 * Writes `input[map[i]]` to `output[i]` for every i < map.length where `pred(stencil[i])` is truthy;
 * the other elements of `output` are left as they were (and their indices are not read).
 * @param stencil map.length elements of any type
 * @param pred a predicate over the stencil's type @default the stencil's truthiness
 * @throws ArgumentError naming `policy`, `map`, `stencil`, `input`, `output` or `pred`
 */
export function gatherIf(
  policy: Policy,
  map: ArrayArg,
  stencil: ArrayArg | Counting,
  input: ArrayArg,
  output: ArrayArg,
  pred?: PredicateArg,
): Promise<void> {
  return dispatch(policy, () =>
    gatherPattern(gatherArgs('gatherIf', map, input, output, { arg: stencil, pred: pred })),
  );
}

/**
 * Writes `input[i]` to `output[map[i]]` for every i < input.length; the other elements of `output`
 * are left as they were.
 * @param map input.length u32 or i32 indices into `output`
 * @param output an array of the input's type, not overlapping the other arrays
 * @throws ArgumentError naming `policy`, `input`, `map` or `output` (an index out of range on the CPU)
 */
export function scatter(policy: Policy, input: ArrayArg, map: ArrayArg, output: ArrayArg): Promise<void> {
  return dispatch(policy, () => gatherPattern(scatterArgs('scatter', input, map, output)));
}

/**
 * Writes `input[i]` to `output[map[i]]` for every i < input.length where `pred(stencil[i])` is truthy.
 * @param stencil input.length elements of any type
 * @param pred a predicate over the stencil's type @default the stencil's truthiness
 * @throws ArgumentError naming `policy`, `input`, `map`, `stencil`, `output` or `pred`
 */
export function scatterIf(
  policy: Policy,
  input: ArrayArg,
  map: ArrayArg,
  stencil: ArrayArg | Counting,
  output: ArrayArg,
  pred?: PredicateArg,
): Promise<void> {
  return dispatch(policy, () =>
    gatherPattern(scatterArgs('scatterIf', input, map, output, { arg: stencil, pred: pred })),
  );
}
