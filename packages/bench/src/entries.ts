/**
 * The benchmark entries: one small declarative record per algorithm variant. Each says how to make
 * its input (cub_anchor's data), the plain-JS code a JS developer would write instead, how to call
 * the webdpl algorithm (the same call for every policy), the bytes of compulsory traffic per element,
 * and how to check a result. The runner does the rest.
 *
 * Calls go through the exports of `@webdpl/algorithms` looked up by name, so an algorithm that has
 * not landed yet skips its entry with a note instead of breaking the build.
 */
import { DeviceArray, type HostArray, plus } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { copyKernel } from './copy-kernel';
import { fillF32, fillU32 } from './data';

/** An algorithm of `@webdpl/algorithms`: policy first, returns a Promise. */
export type AlgorithmFn = (policy: Policy, ...args: unknown[]) => Promise<unknown>;

/** The exports of `@webdpl/algorithms`, by name. */
export type AlgorithmApi = Readonly<Record<string, unknown>>;

/** An array argument: a host typed array (host policies, end to end) or a DeviceArray (resident). */
export type AnyArray = HostArray | DeviceArray;

/** Element types the entries use. */
export type BenchType = 'u32' | 'f32';

/** Which default runs include an entry. */
export type EntrySet = 'default' | 'device';

/** The inputs of one size, made once and shared by every series. */
export interface HostCase {
  readonly n: number;
  /** Inputs, never written: in-place entries run on copies restored before each call. */
  readonly inputs: readonly HostArray[];
  /** Outputs the call writes (allocated per series). */
  readonly outputs: readonly { readonly type: BenchType; readonly length: number }[];
  /** Expected scalar result, if the call returns one that matters. */
  readonly value?: number;
  /** Expected contents of the observed arrays (outputs, or inputs for in-place entries). */
  readonly arrays?: readonly HostArray[];
}

/** Plain JS the way a JS developer would write it, set up once per size. */
export interface Baseline {
  /** Series id suffix: 'for-loop' becomes 'js:for-loop'. */
  readonly name: string;
  /** Short label for tables and charts. */
  readonly label: string;
  /** Largest log2 size it runs at (slow comparator sorts). @default no limit */
  readonly maxLog2?: number;
  /** Builds the timed closure (untimed: plain arrays, output buffers), and `before` for in-place work. */
  setup(c: HostCase): { run: () => unknown; before?: () => void };
}

/** One benchmark entry. */
export interface BenchEntry {
  /** Unique id, `--algorithms` accepts it: 'reduce-u32'. */
  readonly id: string;
  /** The algorithm's export name, `--algorithms` accepts it too: 'reduce'. */
  readonly algorithm: string;
  /** What exactly runs: 'reduce u32 sum'. */
  readonly label: string;
  /** The matching row name of cub_anchor's output, if any. */
  readonly cub?: string;
  readonly type: BenchType;
  /** Runs that include it without --algorithms: 'default' (pnpm bench), 'device' (--device-only, the CUB set). */
  readonly sets: readonly EntrySet[];
  /** Exports it cannot run without; a missing one skips the entry. */
  readonly requires: readonly string[];
  /** Bytes of compulsory traffic per element (what must cross memory at least once). */
  readonly bytesPerElement: number;
  /** How `bytesPerElement` is counted. */
  readonly traffic: string;
  /** The call changes its inputs (sort): they are restored before each timed call. */
  readonly inPlace?: boolean;
  /** Only the resident GPU series apply (a bench kernel, not a library call). @default false */
  readonly residentOnly?: boolean;
  /** Makes the inputs and expected results of size `n`. */
  make(n: number): HostCase;
  readonly baselines: readonly Baseline[];
  /** The webdpl call, identical for every policy; arrays are host or device arrays alike. */
  call(api: AlgorithmApi, policy: Policy, inputs: readonly AnyArray[], outputs: readonly AnyArray[]): Promise<unknown>;
  /** Checks a call's result and observed arrays against the case: a message when wrong. */
  verify(result: unknown, observed: readonly HostArray[], c: HostCase): string | undefined;
}

/** An export the entry needs is missing from `@webdpl/algorithms`. */
export class MissingExportError extends Error {
  override name = 'MissingExportError';
  constructor(readonly exportName: string) {
    super(`@webdpl/algorithms does not export '${exportName}' yet`);
  }
}

/** The export `name` of `api` as an algorithm, or a MissingExportError. */
export function algorithmOf(api: AlgorithmApi, name: string): AlgorithmFn {
  const f = api[name];
  if (typeof f !== 'function') throw new MissingExportError(name);
  return f as AlgorithmFn;
}

// ---------------------------------------------------------------------------------------------
// Checks. Floats get two tolerances: within 1e-3 of the double-precision reference is 'ok'; within
// 10% is 'imprecise' (a sequential f32 accumulator over millions of elements drifts that far, and
// that is the element type's semantics, not a bug); beyond is wrong.

const F32_CLOSE = 1e-3;
const F32_LOOSE = 0.1;

function relativeError(got: number, want: number, scale: number): number {
  return Math.abs(got - want) / Math.max(1, scale);
}

function imprecise(got: number, want: number, err: number, where = ''): string {
  return `imprecise: ${where}got ${got}, expected ${want} (${(err * 100).toPrecision(2)}% off the double-precision result)`;
}

/** Checks a scalar result. */
export function checkScalar(type: BenchType, got: unknown, want: number): string | undefined {
  if (typeof got !== 'number') return `expected a number, got ${typeof got}`;
  if (type === 'u32') return got === want ? undefined : `got ${got}, expected ${want}`;
  const err = relativeError(got, want, Math.abs(want));
  if (err <= F32_CLOSE) return undefined;
  return err <= F32_LOOSE ? imprecise(got, want, err) : `got ${got}, expected ${want}`;
}

/** Checks the first `count` elements of `got` against `want` (floats relative to the running magnitude). */
export function checkArray(
  type: BenchType,
  got: HostArray | undefined,
  want: HostArray,
  count: number = want.length,
): string | undefined {
  if (!got) return 'no output';
  if (got.length < count) return `output has ${got.length} elements, expected at least ${count}`;
  let scale = 0;
  let worst = 0;
  let worstAt = -1;
  for (let i = 0; i < count; i++) {
    const w = want[i] as number;
    const g = got[i] as number;
    if (type === 'u32') {
      if (g !== w) return `element ${i}: got ${g}, expected ${w}`;
      continue;
    }
    scale = Math.max(scale, Math.abs(w));
    const err = relativeError(g, w, scale);
    if (!(err <= F32_LOOSE)) return `element ${i}: got ${g}, expected ${w}`;
    if (err > worst) [worst, worstAt] = [err, i];
  }
  return worst > F32_CLOSE
    ? imprecise(got[worstAt] as number, want[worstAt] as number, worst, `element ${worstAt}: `)
    : undefined;
}

function checkArrays(type: BenchType, observed: readonly HostArray[], c: HostCase): string | undefined {
  for (const [k, want] of (c.arrays ?? []).entries()) {
    const why = checkArray(type, observed[k], want);
    if (why) return observed.length > 1 ? `array ${k}: ${why}` : why;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Data, cached per size: every entry of one size uses the same bits (as cub_anchor does).

let cached: { n: number; u32?: Uint32Array; f32?: Float32Array } = { n: -1 };

/** cub_anchor's u32 data of size n (shared: never write it). */
function dataU32(n: number): Uint32Array {
  if (cached.n !== n) cached = { n };
  cached.u32 ??= fillU32(n);
  return cached.u32;
}

/** cub_anchor's f32 data of size n, uniform in [0, 1) (shared: never write it). */
function dataF32(n: number): Float32Array {
  if (cached.n !== n) cached = { n };
  cached.f32 ??= fillF32(n);
  return cached.f32;
}

function data(type: BenchType, n: number): HostArray {
  return type === 'u32' ? dataU32(n) : dataF32(n);
}

/** A zeroed host array of `type`. */
export function alloc(type: BenchType, n: number): HostArray {
  return type === 'u32' ? new Uint32Array(n) : new Float32Array(n);
}

/** Sum of a typed array as the algorithm defines it: u32 wraps, f32 in double precision. */
function sumOf(type: BenchType, a: HostArray): number {
  let s = 0;
  if (type === 'u32') for (let i = 0; i < a.length; i++) s = (s + (a[i] as number)) >>> 0;
  else for (let i = 0; i < a.length; i++) s += a[i] as number;
  return s;
}

// ---------------------------------------------------------------------------------------------
// Entries by family.

function reduceEntry(type: BenchType, sets: readonly EntrySet[]): BenchEntry {
  const add = type === 'u32' ? (s: number, x: number) => (s + x) >>> 0 : (s: number, x: number) => s + x;
  return {
    id: `reduce-${type}`,
    algorithm: 'reduce',
    label: `reduce ${type} sum`,
    cub: `reduce ${type} sum`,
    type,
    sets,
    requires: ['reduce'],
    bytesPerElement: 4,
    traffic: 'read n',
    make(n) {
      const a = data(type, n);
      return { n, inputs: [a], outputs: [], value: sumOf(type, a) };
    },
    baselines: [
      {
        name: 'array-reduce',
        label: 'Array#reduce',
        setup: (c) => {
          const plain = Array.from(c.inputs[0] as HostArray);
          return { run: () => plain.reduce(add, 0) };
        },
      },
      {
        name: 'for-loop',
        label: 'for loop',
        setup: (c) => {
          const a = c.inputs[0] as HostArray;
          return { run: () => sumOf(type, a) };
        },
      },
    ],
    call: (api, policy, inputs) => algorithmOf(api, 'reduce')(policy, inputs[0]),
    verify: (result, _observed, c) => checkScalar(type, result, c.value as number),
  };
}

const square = (x: number) => x * x;
const aboveHalf = (x: number) => x > 0.5;
const axpb = (x: number) => x * 2 + 1;

function transformReduceEntry(): BenchEntry {
  return {
    id: 'transformReduce-f32',
    algorithm: 'transformReduce',
    label: 'transformReduce f32 sum of x*x',
    type: 'f32',
    sets: ['default'],
    requires: ['transformReduce'],
    bytesPerElement: 4,
    traffic: 'read n',
    make(n) {
      const a = dataF32(n);
      let s = 0;
      for (let i = 0; i < n; i++) s += (a[i] as number) * (a[i] as number);
      return { n, inputs: [a], outputs: [], value: s };
    },
    baselines: [
      {
        name: 'typed-reduce',
        label: 'TypedArray#reduce',
        setup: (c) => {
          const a = c.inputs[0] as Float32Array;
          return { run: () => a.reduce((s, x) => s + x * x, 0) };
        },
      },
      {
        name: 'for-loop',
        label: 'for loop',
        setup: (c) => {
          const a = c.inputs[0] as Float32Array;
          return {
            run: () => {
              let s = 0;
              for (let i = 0; i < a.length; i++) s += (a[i] as number) * (a[i] as number);
              return s;
            },
          };
        },
      },
    ],
    call: (api, policy, inputs) => algorithmOf(api, 'transformReduce')(policy, inputs[0], 0, plus, square),
    verify: (result, _observed, c) => checkScalar('f32', result, c.value as number),
  };
}

function countIfEntry(): BenchEntry {
  return {
    id: 'countIf-f32',
    algorithm: 'countIf',
    label: 'countIf f32 x > 0.5',
    type: 'f32',
    sets: ['default'],
    requires: ['countIf'],
    bytesPerElement: 4,
    traffic: 'read n',
    make(n) {
      const a = dataF32(n);
      let k = 0;
      for (let i = 0; i < n; i++) if ((a[i] as number) > 0.5) k++;
      return { n, inputs: [a], outputs: [], value: k };
    },
    baselines: [
      {
        name: 'filter-length',
        label: 'filter().length',
        setup: (c) => {
          const a = c.inputs[0] as Float32Array;
          return { run: () => a.filter((x) => x > 0.5).length };
        },
      },
      {
        name: 'for-loop',
        label: 'for loop',
        setup: (c) => {
          const a = c.inputs[0] as Float32Array;
          return {
            run: () => {
              let k = 0;
              for (let i = 0; i < a.length; i++) if ((a[i] as number) > 0.5) k++;
              return k;
            },
          };
        },
      },
    ],
    call: (api, policy, inputs) => algorithmOf(api, 'countIf')(policy, inputs[0], aboveHalf),
    verify: (result, _observed, c) => checkScalar('u32', result, c.value as number),
  };
}

function minElementEntry(): BenchEntry {
  return {
    id: 'minElement-f32',
    algorithm: 'minElement',
    label: 'minElement f32',
    type: 'f32',
    sets: ['default'],
    requires: ['minElement'],
    bytesPerElement: 4,
    traffic: 'read n',
    make(n) {
      const a = dataF32(n);
      let m = 0;
      for (let i = 1; i < n; i++) if ((a[i] as number) < (a[m] as number)) m = i;
      return { n, inputs: [a], outputs: [], value: m };
    },
    baselines: [
      {
        name: 'typed-reduce',
        label: 'TypedArray#reduce',
        setup: (c) => {
          const a = c.inputs[0] as Float32Array;
          return { run: () => a.reduce((m, x, i, arr) => (x < (arr[m] as number) ? i : m), 0) };
        },
      },
      {
        name: 'for-loop',
        label: 'for loop',
        setup: (c) => {
          const a = c.inputs[0] as Float32Array;
          return {
            run: () => {
              let m = 0;
              for (let i = 1; i < a.length; i++) if ((a[i] as number) < (a[m] as number)) m = i;
              return m;
            },
          };
        },
      },
    ],
    call: (api, policy, inputs) => algorithmOf(api, 'minElement')(policy, inputs[0]),
    verify: (result, _observed, c) => {
      // The index of the first minimum; an { index, value } result is accepted too.
      const index = typeof result === 'object' && result !== null ? (result as { index?: unknown }).index : result;
      return checkScalar('u32', index, c.value as number);
    },
  };
}

function scanEntry(kind: 'inclusive' | 'exclusive', type: BenchType): BenchEntry {
  const algorithm = kind === 'inclusive' ? 'inclusiveScan' : 'exclusiveScan';
  const scan = (a: HostArray, out: HostArray) => {
    let s = 0;
    if (type === 'u32') {
      for (let i = 0; i < a.length; i++) {
        if (kind === 'exclusive') out[i] = s;
        s = (s + (a[i] as number)) >>> 0;
        if (kind === 'inclusive') out[i] = s;
      }
    } else {
      for (let i = 0; i < a.length; i++) {
        if (kind === 'exclusive') out[i] = s;
        s += a[i] as number;
        if (kind === 'inclusive') out[i] = s;
      }
    }
    return out;
  };
  return {
    id: `${algorithm}-${type}`,
    algorithm,
    label: `${algorithm} ${type} sum`,
    cub: `${kind}_scan ${type}`,
    type,
    sets: ['default', 'device'],
    requires: [algorithm],
    bytesPerElement: 8,
    traffic: 'read n + write n',
    make(n) {
      const a = data(type, n);
      return { n, inputs: [a], outputs: [{ type, length: n }], arrays: [scan(a, alloc(type, n))] };
    },
    baselines: [
      {
        name: 'for-loop',
        label: 'scan loop',
        setup: (c) => {
          const a = c.inputs[0] as HostArray;
          const out = alloc(type, c.n);
          return { run: () => scan(a, out) };
        },
      },
      {
        name: 'map-accumulate',
        label: 'map + running sum',
        setup: (c) => {
          const a = c.inputs[0] as HostArray;
          if (type === 'u32') {
            return {
              run: () => {
                let s = 0;
                return kind === 'inclusive'
                  ? a.map((x) => (s = (s + x) >>> 0))
                  : a.map((x) => {
                      const prev = s;
                      s = (s + x) >>> 0;
                      return prev;
                    });
              },
            };
          }
          return {
            run: () => {
              let s = 0;
              return kind === 'inclusive'
                ? a.map((x) => (s += x))
                : a.map((x) => {
                    const prev = s;
                    s += x;
                    return prev;
                  });
            },
          };
        },
      },
    ],
    call: (api, policy, inputs, outputs) =>
      kind === 'inclusive'
        ? algorithmOf(api, algorithm)(policy, inputs[0], outputs[0])
        : algorithmOf(api, algorithm)(policy, inputs[0], outputs[0], 0),
    verify: (_result, observed, c) => checkArrays(type, observed, c),
  };
}

function copyIfEntry(): BenchEntry {
  const keep = (a: Float32Array, out: Float32Array) => {
    let k = 0;
    for (let i = 0; i < a.length; i++) if ((a[i] as number) > 0.5) out[k++] = a[i] as number;
    return k;
  };
  return {
    id: 'copyIf-f32',
    algorithm: 'copyIf',
    label: 'copyIf f32 x > 0.5 (50%)',
    cub: 'copy_if f32 (50%)',
    type: 'f32',
    sets: ['default', 'device'],
    requires: ['copyIf'],
    bytesPerElement: 6,
    traffic: 'read n + write the ~n/2 kept (CUB counts 6 B/elem)',
    make(n) {
      const a = dataF32(n);
      const out = new Float32Array(n);
      const k = keep(a, out);
      return { n, inputs: [a], outputs: [{ type: 'f32', length: n }], value: k, arrays: [out.subarray(0, k)] };
    },
    baselines: [
      {
        name: 'filter',
        label: 'TypedArray#filter',
        setup: (c) => {
          const a = c.inputs[0] as Float32Array;
          return { run: () => a.filter((x) => x > 0.5) };
        },
      },
      {
        name: 'for-loop',
        label: 'for loop',
        setup: (c) => {
          const a = c.inputs[0] as Float32Array;
          const out = new Float32Array(c.n);
          return { run: () => keep(a, out) };
        },
      },
    ],
    call: (api, policy, inputs, outputs) => algorithmOf(api, 'copyIf')(policy, inputs[0], outputs[0], aboveHalf),
    verify: (result, observed, c) => checkScalar('u32', result, c.value as number) ?? checkArrays('f32', observed, c),
  };
}

function transformEntry(): BenchEntry {
  return {
    id: 'transform-f32',
    algorithm: 'transform',
    label: 'transform f32 x*2+1',
    cub: 'transform f32 x*2+1',
    type: 'f32',
    sets: ['default', 'device'],
    requires: ['transform'],
    bytesPerElement: 8,
    traffic: 'read n + write n',
    make(n) {
      const a = dataF32(n);
      return { n, inputs: [a], outputs: [{ type: 'f32', length: n }], arrays: [a.map(axpb)] };
    },
    baselines: [
      {
        name: 'map',
        label: 'TypedArray#map',
        setup: (c) => {
          const a = c.inputs[0] as Float32Array;
          return { run: () => a.map((x) => x * 2 + 1) };
        },
      },
      {
        name: 'for-loop',
        label: 'for loop',
        setup: (c) => {
          const a = c.inputs[0] as Float32Array;
          const out = new Float32Array(c.n);
          return {
            run: () => {
              for (let i = 0; i < a.length; i++) out[i] = (a[i] as number) * 2 + 1;
              return out;
            },
          };
        },
      },
    ],
    call: (api, policy, inputs, outputs) => algorithmOf(api, 'transform')(policy, inputs[0], outputs[0], axpb),
    verify: (_result, observed, c) => checkArrays('f32', observed, c),
  };
}

const FILL_VALUE = 7;

function fillEntry(): BenchEntry {
  return {
    id: 'fill-u32',
    algorithm: 'fill',
    label: 'fill u32',
    type: 'u32',
    sets: ['default'],
    requires: ['fill'],
    bytesPerElement: 4,
    traffic: 'write n',
    make(n) {
      return { n, inputs: [], outputs: [{ type: 'u32', length: n }], arrays: [new Uint32Array(n).fill(FILL_VALUE)] };
    },
    baselines: [
      {
        name: 'typed-fill',
        label: 'TypedArray#fill',
        setup: (c) => {
          const out = new Uint32Array(c.n);
          return { run: () => out.fill(FILL_VALUE) };
        },
      },
      {
        name: 'for-loop',
        label: 'for loop',
        setup: (c) => {
          const out = new Uint32Array(c.n);
          return {
            run: () => {
              for (let i = 0; i < out.length; i++) out[i] = FILL_VALUE;
              return out;
            },
          };
        },
      },
    ],
    call: (api, policy, _inputs, outputs) => algorithmOf(api, 'fill')(policy, outputs[0], FILL_VALUE),
    verify: (_result, observed, c) => checkArrays('u32', observed, c),
  };
}

function copyEntry(): BenchEntry {
  return {
    id: 'copy-u32',
    algorithm: 'copy',
    label: 'copy u32',
    type: 'u32',
    sets: ['default'],
    requires: ['copy'],
    bytesPerElement: 8,
    traffic: 'read n + write n',
    make(n) {
      const a = dataU32(n);
      return { n, inputs: [a], outputs: [{ type: 'u32', length: n }], arrays: [a] };
    },
    baselines: [
      {
        name: 'set',
        label: 'TypedArray#set',
        setup: (c) => {
          const a = c.inputs[0] as Uint32Array;
          const out = new Uint32Array(c.n);
          return { run: () => out.set(a) };
        },
      },
      {
        name: 'slice',
        label: 'TypedArray#slice',
        setup: (c) => {
          const a = c.inputs[0] as Uint32Array;
          return { run: () => a.slice() };
        },
      },
      {
        name: 'for-loop',
        label: 'for loop',
        setup: (c) => {
          const a = c.inputs[0] as Uint32Array;
          const out = new Uint32Array(c.n);
          return {
            run: () => {
              for (let i = 0; i < a.length; i++) out[i] = a[i] as number;
              return out;
            },
          };
        },
      },
    ],
    call: (api, policy, inputs, outputs) => algorithmOf(api, 'copy')(policy, inputs[0], outputs[0]),
    verify: (_result, observed, c) => checkArrays('u32', observed, c),
  };
}

/**
 * The permutation of cub_catalogue.cu (scripts/probe): map[i] = (i * 2654435761) & (n - 1), a
 * random-looking permutation for power-of-two n (odd multiplier mod 2^k); other n get the reversal
 * n - 1 - i (still a permutation, so scatter's result is defined).
 */
function permutationMap(n: number): Uint32Array {
  const m = new Uint32Array(n);
  const pow2 = n > 0 && (n & (n - 1)) === 0;
  for (let i = 0; i < n; i++) m[i] = pow2 ? Math.imul(i, 2654435761) & (n - 1) : n - 1 - i;
  return m;
}

/** Sources compiled by `closedOverLoop` so far (each gets its own number). */
let closedOverLoops = 0;

/**
 * The plain loop of gather / scatter as a closure over its three arrays, compiled from a source of
 * its own at every size. V8 specializes an optimized closure on the values it closes over (here: the
 * arrays, so their lengths and data pointers become constants and the bounds checks on `m[i]` and
 * `out[i]` go) only while it is the sole closure made from its source. Written inline in `setup`, the
 * loop got that form at the first size a process ran and a generic one at every later size (`pnpm
 * bench --sizes 20,22,24`: gather's loop 0.86 ms at 2^20, then 92 ms at 2^22 and 421 ms at 2^24,
 * against 8-14 and 122 ms in its specialized form; docs/benchmarks/cpu-gather-2026-11-24j.md), so
 * the ratio to seq depended on the order of the sizes. This is the fastest form of the plain loop
 * at every size.
 */
function closedOverLoop(
  kind: 'gather' | 'scatter',
  a: Uint32Array,
  m: Uint32Array,
  out: Uint32Array,
): () => Uint32Array {
  const store = kind === 'gather' ? 'out[i] = a[m[i]]' : 'out[m[i]] = a[i]';
  closedOverLoops++;
  const make = new Function(
    'a',
    'm',
    'out',
    `'use strict'; return () => { /* ${kind} ${closedOverLoops} */ for (let i = 0; i < m.length; i++) ${store}; return out; };`,
  ) as (a: Uint32Array, m: Uint32Array, out: Uint32Array) => () => Uint32Array;
  return make(a, m, out);
}

/**
 * gather as a plain-JS function that takes its arrays as arguments, as a reusable gather (and every
 * webdpl call) does: the same optimized code at every size, with V8's checks on each array in the
 * loop (docs/benchmarks/cpu-gather-2026-11-24j.md).
 */
function gatherLoop(a: Uint32Array, m: Uint32Array, out: Uint32Array): Uint32Array {
  for (let i = 0; i < m.length; i++) out[i] = a[m[i] as number] as number;
  return out;
}

/** scatter as a plain-JS function over its arguments (see `gatherLoop`). */
function scatterLoop(a: Uint32Array, m: Uint32Array, out: Uint32Array): Uint32Array {
  for (let i = 0; i < m.length; i++) out[m[i] as number] = a[i] as number;
  return out;
}

/**
 * gather (`output[i] = input[map[i]]`) or scatter (`output[map[i]] = input[i]`) of u32 through a
 * random permutation, measured beside `copy` and the roofline (issue 15: >= 0.8x a plain copy's
 * bandwidth on the H100). The CUB counterparts are cub_catalogue.cu's 'gather u32 random' and
 * 'scatter u32 random' rows (scripts/probe), not part of cub_anchor's output.
 */
function gatherScatterEntry(kind: 'gather' | 'scatter'): BenchEntry {
  return {
    id: `${kind}-u32`,
    algorithm: kind,
    label: `${kind} u32, random permutation`,
    type: 'u32',
    sets: ['default', 'device'],
    requires: [kind],
    bytesPerElement: 12,
    traffic: `read map n + read n + write n (${kind === 'gather' ? 'reads' : 'writes'} at random)`,
    make(n) {
      const a = dataU32(n);
      const m = permutationMap(n);
      const want = new Uint32Array(n);
      for (let i = 0; i < n; i++) {
        if (kind === 'gather') want[i] = a[m[i] as number] as number;
        else want[m[i] as number] = a[i] as number;
      }
      return { n, inputs: [a, m], outputs: [{ type: 'u32', length: n }], arrays: [want] };
    },
    baselines: [
      {
        name: 'for-loop',
        label: 'for loop',
        setup: (c) => {
          const [a, m] = c.inputs as [Uint32Array, Uint32Array];
          return { run: closedOverLoop(kind, a, m, new Uint32Array(c.n)) };
        },
      },
      {
        name: 'for-loop-args',
        label: 'for loop over arguments',
        setup: (c) => {
          const [a, m] = c.inputs as [Uint32Array, Uint32Array];
          const out = new Uint32Array(c.n);
          const loop = kind === 'gather' ? gatherLoop : scatterLoop;
          return { run: () => loop(a, m, out) };
        },
      },
    ],
    call: (api, policy, inputs, outputs) =>
      kind === 'gather'
        ? algorithmOf(api, 'gather')(policy, inputs[1], inputs[0], outputs[0])
        : algorithmOf(api, 'scatter')(policy, inputs[0], inputs[1], outputs[0]),
    verify: (_result, observed, c) => checkArrays('u32', observed, c),
  };
}

/**
 * histogram of u32 samples a[i] >> 8 in [0, 2^24) into 256 even bins over [0, 2^24), the data and
 * bins of cub_catalogue.cu's 'histogram u32 256 bins' row (scripts/probe; issue 16: >= 0.7x CUB's
 * HistogramEven on the H100).
 */
function histogramEntry(): BenchEntry {
  const bins = { bins: 256, lo: 0, hi: 2 ** 24 };
  return {
    id: 'histogram-u32',
    algorithm: 'histogram',
    label: 'histogram u32, 256 even bins',
    type: 'u32',
    sets: ['default', 'device'],
    requires: ['histogram'],
    bytesPerElement: 4,
    traffic: 'read n (the 1 KiB of counts aside)',
    make(n) {
      const a = dataU32(n);
      const s = new Uint32Array(n);
      const want = new Uint32Array(256);
      for (let i = 0; i < n; i++) {
        const x = (a[i] as number) >>> 8;
        s[i] = x;
        want[x >>> 16] = (want[x >>> 16] as number) + 1;
      }
      return { n, inputs: [s], outputs: [{ type: 'u32', length: 256 }], arrays: [want] };
    },
    baselines: [
      {
        name: 'for-loop',
        label: 'for loop',
        setup: (c) => {
          const s = c.inputs[0] as Uint32Array;
          const counts = new Uint32Array(256);
          return {
            run: () => {
              counts.fill(0);
              for (let i = 0; i < s.length; i++)
                counts[(s[i] as number) >>> 16] = (counts[(s[i] as number) >>> 16] as number) + 1;
              return counts;
            },
          };
        },
      },
    ],
    call: (api, policy, inputs, outputs) => algorithmOf(api, 'histogram')(policy, inputs[0], bins, outputs[0]),
    verify: (_result, observed, c) => checkArrays('u32', observed, c),
  };
}

/**
 * merge of two sorted halves of the u32 data (n/2 keys each), cub_catalogue.cu's 'merge u32 keys'
 * row (issue 16: >= 0.5x CUB's DeviceMerge on the H100).
 */
function mergeEntry(): BenchEntry {
  return {
    id: 'merge-u32',
    algorithm: 'merge',
    label: 'merge u32, two sorted halves',
    type: 'u32',
    sets: ['default', 'device'],
    requires: ['merge'],
    bytesPerElement: 8,
    traffic: 'read n + write n',
    make(n) {
      const a = dataU32(n);
      const h = n >> 1;
      const lo = a.slice(0, h).sort();
      const hi = a.slice(h).sort();
      return { n, inputs: [lo, hi], outputs: [{ type: 'u32', length: n }], arrays: [a.slice().sort()] };
    },
    baselines: [
      {
        name: 'for-loop',
        label: 'for loop',
        setup: (c) => {
          const [x, y] = c.inputs as [Uint32Array, Uint32Array];
          const out = new Uint32Array(c.n);
          return {
            run: () => {
              let i = 0;
              let j = 0;
              let k = 0;
              while (i < x.length && j < y.length)
                out[k++] = (y[j] as number) < (x[i] as number) ? (y[j++] as number) : (x[i++] as number);
              while (i < x.length) out[k++] = x[i++] as number;
              while (j < y.length) out[k++] = y[j++] as number;
              return out;
            },
          };
        },
      },
    ],
    call: (api, policy, inputs, outputs) => algorithmOf(api, 'merge')(policy, inputs[0], inputs[1], outputs[0]),
    verify: (_result, observed, c) => checkArrays('u32', observed, c),
  };
}

/** cub_catalogue.cu's by-key keys: keys[i] = i >> 4 (runs of 16). */
function runs16Keys(n: number): Uint32Array {
  const k = new Uint32Array(n);
  for (let i = 0; i < n; i++) k[i] = i >>> 4;
  return k;
}

/**
 * reduceByKey (plus) or inclusiveScanByKey (plus) of the u32 data over keys[i] = i >> 4, the data of
 * cub_catalogue.cu's 'reduce_by_key u32 runs16' and 'scan_by_key u32 runs16' rows (scripts/probe;
 * issue 16: >= 0.7x CUB's ReduceByKey / InclusiveScanByKey on the H100).
 */
function byKeyEntry(kind: 'reduceByKey' | 'inclusiveScanByKey'): BenchEntry {
  const reduce = kind === 'reduceByKey';
  return {
    id: reduce ? 'reduce-by-key-u32' : 'scan-by-key-u32',
    algorithm: kind,
    label: `${kind} u32 plus, runs of 16`,
    type: 'u32',
    sets: ['default', 'device'],
    requires: [kind],
    bytesPerElement: reduce ? 8.5 : 12,
    traffic: reduce ? 'read keys n + values n + write 2 n / 16' : 'read keys n + values n + write n',
    make(n) {
      const k = runs16Keys(n);
      const a = dataU32(n);
      const runs = Math.ceil(n / 16);
      const sums = new Uint32Array(reduce ? runs : n);
      for (let i = 0; i < n; i++) {
        if (reduce) sums[i >>> 4] = ((sums[i >>> 4] as number) + (a[i] as number)) >>> 0;
        else sums[i] = (i & 15) === 0 ? (a[i] as number) : ((sums[i - 1] as number) + (a[i] as number)) >>> 0;
      }
      const unique = Uint32Array.from({ length: runs }, (_, r) => r);
      return reduce
        ? {
            n,
            inputs: [k, a],
            // n-element outputs, as cub_catalogue.cu's (the engine then writes them directly).
            outputs: [
              { type: 'u32', length: n },
              { type: 'u32', length: n },
            ],
            value: runs,
            arrays: [unique, sums],
          }
        : { n, inputs: [k, a], outputs: [{ type: 'u32', length: n }], arrays: [sums] };
    },
    baselines: [
      {
        name: 'for-loop',
        label: 'for loop',
        setup: (c) => {
          const [k, a] = c.inputs as [Uint32Array, Uint32Array];
          const ko = new Uint32Array(c.n);
          const vo = new Uint32Array(c.n);
          return {
            run: reduce
              ? () => {
                  let r = -1;
                  for (let i = 0; i < k.length; i++) {
                    if (i === 0 || k[i] !== k[i - 1]) {
                      r++;
                      ko[r] = k[i] as number;
                      vo[r] = a[i] as number;
                    } else vo[r] = ((vo[r] as number) + (a[i] as number)) >>> 0;
                  }
                  return r + 1;
                }
              : () => {
                  let acc = 0;
                  for (let i = 0; i < k.length; i++) {
                    acc = i === 0 || k[i] !== k[i - 1] ? (a[i] as number) : (acc + (a[i] as number)) >>> 0;
                    vo[i] = acc;
                  }
                  return vo;
                },
          };
        },
      },
    ],
    call: (api, policy, inputs, outputs) =>
      reduce
        ? algorithmOf(api, kind)(policy, inputs[0], inputs[1], outputs[0], outputs[1])
        : algorithmOf(api, kind)(policy, inputs[0], inputs[1], outputs[0]),
    verify: (result, observed, c) =>
      (reduce ? checkScalar('u32', result, c.value as number) : undefined) ?? checkArrays('u32', observed, c),
  };
}

function rooflineEntry(): BenchEntry {
  return {
    id: 'roofline-u32',
    algorithm: 'roofline',
    label: 'vec4 copy kernel (memory roofline)',
    cub: 'copy (r+w)',
    type: 'u32',
    sets: ['device'],
    residentOnly: true,
    // The bench's own kernel, not a library call: what WebGPU on this device can move at all, the
    // counterpart of cub_anchor's copy4 kernel. (A DeviceArray `copy` may be a buffer-to-buffer
    // copy, which has no compute pass for timestamps.) It runs on DeviceArrays only.
    requires: [],
    bytesPerElement: 8,
    traffic: 'read n + write n',
    make(n) {
      const a = dataU32(n);
      return { n, inputs: [a], outputs: [{ type: 'u32', length: n }], arrays: [a] };
    },
    baselines: [],
    call: (_api, _policy, inputs, outputs) => {
      const [src, dst] = [inputs[0], outputs[0]];
      if (DeviceArray.isDeviceArray(src) && DeviceArray.isDeviceArray(dst)) return copyKernel(src, dst);
      throw new Error('the roofline kernel runs on resident DeviceArrays only');
    },
    verify: (_result, observed, c) => checkArrays('u32', observed, c),
  };
}

/** Order-independent fingerprint of a multiset of 32-bit patterns: wrapping sum and xor. */
function fingerprint(a: HostArray): [number, number] {
  const bits = new Uint32Array(a.buffer, a.byteOffset, a.length);
  let sum = 0;
  let xor = 0;
  for (let i = 0; i < bits.length; i++) {
    const b = bits[i] as number;
    sum = (sum + b) >>> 0;
    xor = (xor ^ b) >>> 0;
  }
  return [sum, xor];
}

/**
 * Checks that `got` is `input` sorted ascending: in order, and the same multiset by fingerprint.
 * O(n) without a reference sort, so it stays cheap at 2^28.
 */
function checkSorted(got: HostArray | undefined, input: HostArray): string | undefined {
  if (!got) return 'no output';
  if (got.length !== input.length) return `output has ${got.length} elements, expected ${input.length}`;
  for (let i = 1; i < got.length; i++) {
    if ((got[i] as number) < (got[i - 1] as number)) return `not sorted at ${i}: ${got[i - 1]} then ${got[i]}`;
  }
  const [s1, x1] = fingerprint(got);
  const [s2, x2] = fingerprint(input);
  return s1 === s2 && x1 === x2 ? undefined : 'sorted output is not a permutation of the input';
}

function sortEntry(type: BenchType, sets: readonly EntrySet[]): BenchEntry {
  return {
    id: `sort-${type}`,
    algorithm: 'sort',
    label: `sort ${type} keys`,
    cub: `sort ${type} keys`,
    type,
    sets,
    requires: ['sort'],
    bytesPerElement: 8,
    traffic: 'read n + write n keys (CUB: 8 B/elem)',
    inPlace: true,
    make(n) {
      return { n, inputs: [data(type, n)], outputs: [] };
    },
    baselines: [
      {
        name: 'typed-sort',
        label: 'TypedArray#sort',
        setup: (c) => {
          const a = c.inputs[0] as HostArray;
          const work = a.slice();
          return { run: () => work.sort(), before: () => work.set(a) };
        },
      },
      {
        name: 'array-sort',
        label: 'Array#sort((a, b) => a - b)',
        maxLog2: 20,
        setup: (c) => {
          const a = c.inputs[0] as HostArray;
          const work = Array.from(a);
          return {
            run: () => work.sort((x, y) => x - y),
            before: () => {
              for (let i = 0; i < a.length; i++) work[i] = a[i] as number;
            },
          };
        },
      },
    ],
    call: (api, policy, inputs) => algorithmOf(api, 'sort')(policy, inputs[0]),
    verify: (_result, observed, c) => checkSorted(observed[0], c.inputs[0] as HostArray),
  };
}

function sortByKeyEntry(): BenchEntry {
  return {
    id: 'sortByKey-u32',
    algorithm: 'sortByKey',
    label: 'sortByKey u32/u32',
    cub: 'sort_by_key u32/u32',
    type: 'u32',
    sets: ['default', 'device'],
    requires: ['sortByKey'],
    bytesPerElement: 16,
    traffic: 'read + write n keys and n values (CUB: 16 B/elem)',
    inPlace: true,
    make(n) {
      // cub_anchor sorts pairs whose values are the keys themselves.
      const keys = dataU32(n);
      return { n, inputs: [keys, keys.slice()], outputs: [] };
    },
    baselines: [
      {
        name: 'index-sort',
        label: 'sort indices, then gather',
        maxLog2: 22,
        setup: (c) => {
          const [keys, values] = c.inputs as [Uint32Array, Uint32Array];
          const idx = new Uint32Array(c.n);
          const outKeys = new Uint32Array(c.n);
          const outValues = new Uint32Array(c.n);
          return {
            before: () => {
              for (let i = 0; i < idx.length; i++) idx[i] = i;
            },
            run: () => {
              idx.sort((i, j) => (keys[i] as number) - (keys[j] as number) || i - j);
              for (let i = 0; i < idx.length; i++) {
                outKeys[i] = keys[idx[i] as number] as number;
                outValues[i] = values[idx[i] as number] as number;
              }
              return outKeys;
            },
          };
        },
      },
    ],
    call: (api, policy, inputs) => algorithmOf(api, 'sortByKey')(policy, inputs[0], inputs[1]),
    verify: (_result, observed, c) => {
      const [keys, values] = observed;
      const why = checkSorted(keys, c.inputs[0] as HostArray);
      if (why) return `keys: ${why}`;
      // Every value equals its key here, so sorted pairs leave values equal to keys.
      const v = checkArray('u32', values, keys as HostArray, c.n);
      return v ? `values did not move with their keys: ${v}` : undefined;
    },
  };
}

/** A plain JS quickselect (Hoare partition, middle pivot): a[k] becomes the k-th smallest. */
function quickselect(a: Uint32Array, k: number): void {
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const p = a[(lo + hi) >>> 1] as number;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while ((a[i] as number) < p) i++;
      while ((a[j] as number) > p) j--;
      if (i <= j) {
        const t = a[i] as number;
        a[i++] = a[j] as number;
        a[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return;
  }
}

/** Sizes of the selection entries' k: the median for nthElement, 1000 (or n) for topK. */
const TOPK = 1000;

/**
 * nthElement of the u32 data at its median (in place) and topK (the 1000 smallest, sorted, into an
 * output), against the plain JS a developer would write: sort a copy and index/slice it, or a
 * hand-written quickselect (then a sort of the first k for topK).
 */
function selectEntry(algorithm: 'nthElement' | 'topK', sets: readonly EntrySet[]): BenchEntry {
  const nth = algorithm === 'nthElement';
  const kOf = (n: number) => (nth ? n >> 1 : Math.min(TOPK, n));
  return {
    id: nth ? 'nth-element-u32' : 'top-k-u32',
    algorithm,
    label: nth ? 'nthElement u32, the median' : `topK u32, the ${TOPK} smallest`,
    type: 'u32',
    sets,
    requires: [algorithm],
    bytesPerElement: nth ? 8 : 4,
    traffic: nth ? 'read n + write n (in place)' : 'read n',
    inPlace: nth,
    make(n) {
      const sorted = dataU32(n).slice().sort();
      return nth
        ? { n, inputs: [dataU32(n)], outputs: [], arrays: [sorted] }
        : { n, inputs: [dataU32(n)], outputs: [{ type: 'u32', length: kOf(n) }], arrays: [sorted.subarray(0, kOf(n))] };
    },
    baselines: [
      {
        name: 'sort-then-slice',
        label: 'copy, TypedArray#sort, index/slice',
        setup: (c) => {
          const a = c.inputs[0] as Uint32Array;
          const k = kOf(c.n);
          return { run: () => (nth ? a.slice().sort()[k] : a.slice().sort().slice(0, k)) };
        },
      },
      {
        name: 'quickselect',
        label: nth ? 'quickselect loop' : 'quickselect loop, then sort of k',
        setup: (c) => {
          const a = c.inputs[0] as Uint32Array;
          const work = a.slice();
          const k = kOf(c.n);
          return {
            run: () => {
              if (!nth) work.set(a);
              quickselect(work, nth ? k : k - 1);
              return nth ? work[k] : work.subarray(0, k).sort();
            },
            before: nth ? () => work.set(a) : undefined,
          };
        },
      },
    ],
    call: (api, policy, inputs, outputs) =>
      nth
        ? algorithmOf(api, 'nthElement')(policy, inputs[0], kOf(inputs[0]?.length ?? 0))
        : algorithmOf(api, 'topK')(policy, inputs[0], kOf(inputs[0]?.length ?? 0), outputs[0]),
    verify: (_result, observed, c) => {
      const want = c.arrays?.[0] as HostArray;
      const got = observed[0];
      if (!nth) return checkArray('u32', got, want, want.length);
      if (!got) return 'no output';
      const k = kOf(c.n);
      const p = got[k] as number;
      if (p !== want[k]) return `element ${k} is ${p}, expected ${want[k]}`;
      for (let i = 0; i < got.length; i++) {
        const x = got[i] as number;
        if ((i < k && x > p) || (i > k && x < p)) return `${x} at ${i} is on the wrong side of the n-th (${p})`;
      }
      return undefined;
    },
  };
}

/** Every entry, in report order. */
/** `zip` of `@webdpl/algorithms` (not an algorithm: no policy), over a list of arrays. */
function zipOf(api: AlgorithmApi): (arrays: readonly AnyArray[]) => unknown {
  const f = api.zip;
  if (typeof f !== 'function') throw new MissingExportError('zip');
  return (arrays) => (f as (...a: readonly AnyArray[]) => unknown)(...arrays);
}

/** Data of the zip entries: x, y from the f32 data, z = the data reversed. */
function zipData(n: number): [Float32Array, Float32Array, Float32Array] {
  const a = dataF32(n);
  const b = a.slice().reverse();
  return [a, b, a.map((v, i) => v - (b[i] as number))];
}

/** zip(x, y, z) -> x * y + z (issue 15: a zipped transform of 3 arrays). */
function zipTransformEntry(): BenchEntry {
  const fma = (x: number, y: number, z: number) => x * y + z;
  return {
    id: 'zip-transform-f32',
    algorithm: 'zip',
    label: 'transform zip(x, y, z) f32 x*y+z',
    type: 'f32',
    sets: [],
    requires: ['transform', 'zip'],
    bytesPerElement: 16,
    traffic: 'read 3n + write n',
    make(n) {
      const [x, y, z] = zipData(n);
      const want = x.map((v, i) => Math.fround(Math.fround(v * (y[i] as number)) + (z[i] as number)));
      return { n, inputs: [x, y, z], outputs: [{ type: 'f32', length: n }], arrays: [want] };
    },
    baselines: [
      {
        name: 'for-loop',
        label: 'for loop',
        setup: (c) => {
          const [x, y, z] = c.inputs as Float32Array[];
          const out = new Float32Array(c.n);
          return {
            run: () => {
              for (let i = 0; i < out.length; i++)
                out[i] = (x as Float32Array)[i]! * (y as Float32Array)[i]! + (z as Float32Array)[i]!;
              return out;
            },
          };
        },
      },
    ],
    call: (api, policy, inputs, outputs) => algorithmOf(api, 'transform')(policy, zipOf(api)(inputs), outputs[0], fma),
    verify: (_result, observed, c) => checkArrays('f32', observed, c),
  };
}

/** Bounding box of points zip(x, y) in one transformReduce with a tuple of 4 (issue 15). */
function zipBoundingBoxEntry(): BenchEntry {
  const init = [Infinity, -Infinity, Infinity, -Infinity];
  const op = (a: number[], b: number[]) => [
    Math.min(a[0] as number, b[0] as number),
    Math.max(a[1] as number, b[1] as number),
    Math.min(a[2] as number, b[2] as number),
    Math.max(a[3] as number, b[3] as number),
  ];
  const point = (x: number, y: number) => [x, x, y, y];
  const box = (x: Float32Array, y: Float32Array) => {
    let x0 = Infinity;
    let x1 = -Infinity;
    let y0 = Infinity;
    let y1 = -Infinity;
    for (let i = 0; i < x.length; i++) {
      const u = x[i] as number;
      const v = y[i] as number;
      if (u < x0) x0 = u;
      if (u > x1) x1 = u;
      if (v < y0) y0 = v;
      if (v > y1) y1 = v;
    }
    return [x0, x1, y0, y1];
  };
  let want: number[] = [];
  return {
    id: 'zip-bbox-f32',
    algorithm: 'zip',
    label: 'transformReduce zip(x, y) f32 bounding box',
    type: 'f32',
    sets: [],
    requires: ['transformReduce', 'zip'],
    bytesPerElement: 8,
    traffic: 'read 2n',
    make(n) {
      const [x, y] = zipData(n);
      want = box(x, y);
      return { n, inputs: [x, y], outputs: [] };
    },
    baselines: [
      {
        name: 'for-loop',
        label: 'for loop',
        setup: (c) => {
          const [x, y] = c.inputs as Float32Array[];
          return { run: () => box(x as Float32Array, y as Float32Array) };
        },
      },
    ],
    call: (api, policy, inputs) => algorithmOf(api, 'transformReduce')(policy, zipOf(api)(inputs), init, op, point),
    verify: (result) =>
      Array.isArray(result) && result.every((v, k) => Object.is(v, want[k]))
        ? undefined
        : `got ${String(result)}, expected ${want.join(',')}`,
  };
}

export const ENTRIES: readonly BenchEntry[] = [
  reduceEntry('u32', ['default', 'device']),
  reduceEntry('f32', ['device']),
  transformReduceEntry(),
  countIfEntry(),
  minElementEntry(),
  scanEntry('inclusive', 'u32'),
  scanEntry('exclusive', 'f32'),
  copyIfEntry(),
  transformEntry(),
  zipTransformEntry(),
  zipBoundingBoxEntry(),
  fillEntry(),
  copyEntry(),
  gatherScatterEntry('gather'),
  gatherScatterEntry('scatter'),
  histogramEntry(),
  mergeEntry(),
  byKeyEntry('reduceByKey'),
  byKeyEntry('inclusiveScanByKey'),
  rooflineEntry(),
  sortEntry('u32', ['default', 'device']),
  sortEntry('f32', ['default', 'device']),
  sortByKeyEntry(),
  selectEntry('nthElement', ['default']),
  selectEntry('topK', []),
];

/**
 * The entries a run uses: those matching `names` (an entry id or an algorithm name, any case) when
 * given, else those of the run's set. Unknown names are returned in `unknown`.
 */
export function selectEntries(
  names: readonly string[] | undefined,
  set: EntrySet,
  entries: readonly BenchEntry[] = ENTRIES,
): { entries: BenchEntry[]; unknown: string[] } {
  if (!names) return { entries: entries.filter((e) => e.sets.includes(set)), unknown: [] };
  const wanted = names.map((s) => s.toLowerCase());
  const unknown = names.filter(
    (_, i) => !entries.some((e) => e.id.toLowerCase() === wanted[i] || e.algorithm.toLowerCase() === wanted[i]),
  );
  const picked = entries.filter(
    (e) => wanted.includes(e.id.toLowerCase()) || wanted.includes(e.algorithm.toLowerCase()),
  );
  return { entries: picked, unknown };
}
