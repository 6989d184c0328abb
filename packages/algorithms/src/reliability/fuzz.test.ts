/**
 * Fuzzed bad input (issue 13): fast-check builds a valid call of a public algorithm, then replaces
 * one argument (sometimes two) with a bad value: a wrong type (strings, numbers, plain arrays,
 * Float64Array, Int8Array, objects, null/undefined), a wrong length, a destroyed or foreign
 * DeviceArray, an overlapping view, a non-function operator, a function of the wrong arity. Each
 * call must reject with a WebdplError whose message names the argument at fault (`<argument>: ...`),
 * leave every array it was given untouched, and leave the device usable.
 */
import { DeviceArray, enumerateDevices, type GpuDevice, openDevice, plus, WebdplError } from '@webdpl/core';
import { execution, makeDevicePolicy, type Policy } from '@webdpl/policies';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as A from '../index';
import { testDevice } from '../testing/matrix';

/**
 * Slot kinds; `fnIdx`: a unary function or an index lambda `(x, i) => ...` (both valid); `map`: u32
 * indices in range; `outAny`: an output of any length (scatter, the stencil copies); `optPred`: a
 * predicate that may be omitted.
 */
type Kind =
  | 'in'
  | 'out'
  | 'outAny'
  | 'data'
  | 'map'
  | 'fn1'
  | 'fnIdx'
  | 'fn2'
  | 'pred'
  | 'optPred'
  | 'comp'
  | 'num'
  | 'optNum'
  | 'optFn2'
  | 'optComp';

/** One argument of a signature: its name in error messages and what it is. */
interface Slot {
  readonly name: string;
  readonly kind: Kind;
}

interface Signature {
  readonly name: string;
  readonly call: (policy: Policy, ...args: unknown[]) => Promise<unknown>;
  readonly slots: readonly Slot[];
}

const s = (name: string, kind: Kind): Slot => ({ name, kind });
const call = (f: unknown) => f as (policy: Policy, ...args: unknown[]) => Promise<unknown>;

// The transform scans' op is required by their types but defaults to plus at run time like the
// plain scans' (undefined is accepted, so it is an optional slot here).
const SIGNATURES: readonly Signature[] = [
  { name: 'reduce', call: call(A.reduce), slots: [s('input', 'in'), s('init', 'optNum'), s('op', 'optFn2')] },
  {
    name: 'transformReduce',
    call: call(A.transformReduce),
    slots: [s('input', 'in'), s('init', 'num'), s('reduceOp', 'fn2'), s('transformFn', 'fnIdx')],
  },
  {
    name: 'transformReduce (binary)',
    call: call(A.transformReduce),
    slots: [s('input1', 'in'), s('input2', 'in'), s('init', 'num'), s('reduceOp', 'fn2'), s('transformFn2', 'fn2')],
  },
  {
    name: 'innerProduct',
    call: call(A.innerProduct),
    slots: [s('a', 'in'), s('b', 'in'), s('init', 'optNum'), s('reduceOp', 'optFn2'), s('productOp', 'optFn2')],
  },
  { name: 'count', call: call(A.count), slots: [s('input', 'in'), s('value', 'num')] },
  { name: 'countIf', call: call(A.countIf), slots: [s('input', 'in'), s('pred', 'pred')] },
  { name: 'minElement', call: call(A.minElement), slots: [s('input', 'in')] },
  { name: 'maxElement', call: call(A.maxElement), slots: [s('input', 'in')] },
  { name: 'minmaxElement', call: call(A.minmaxElement), slots: [s('input', 'in')] },
  { name: 'findIf', call: call(A.findIf), slots: [s('input', 'in'), s('pred', 'pred')] },
  { name: 'anyOf', call: call(A.anyOf), slots: [s('input', 'in'), s('pred', 'pred')] },
  { name: 'allOf', call: call(A.allOf), slots: [s('input', 'in'), s('pred', 'pred')] },
  { name: 'noneOf', call: call(A.noneOf), slots: [s('input', 'in'), s('pred', 'pred')] },
  {
    name: 'inclusiveScan',
    call: call(A.inclusiveScan),
    slots: [s('input', 'in'), s('output', 'out'), s('op', 'optFn2'), s('init', 'optNum')],
  },
  {
    name: 'exclusiveScan',
    call: call(A.exclusiveScan),
    slots: [s('input', 'in'), s('output', 'out'), s('init', 'num'), s('op', 'optFn2')],
  },
  {
    name: 'transformInclusiveScan',
    call: call(A.transformInclusiveScan),
    slots: [s('input', 'in'), s('output', 'out'), s('op', 'optFn2'), s('transformFn', 'fn1'), s('init', 'optNum')],
  },
  {
    name: 'transformExclusiveScan',
    call: call(A.transformExclusiveScan),
    slots: [s('input', 'in'), s('output', 'out'), s('init', 'num'), s('op', 'optFn2'), s('transformFn', 'fn1')],
  },
  { name: 'copyIf', call: call(A.copyIf), slots: [s('input', 'in'), s('output', 'out'), s('pred', 'pred')] },
  { name: 'removeIf', call: call(A.removeIf), slots: [s('data', 'data'), s('pred', 'pred')] },
  {
    name: 'copyIf (stencil)',
    call: call(A.copyIf),
    slots: [s('input', 'in'), s('stencil', 'in'), s('output', 'outAny'), s('pred', 'optPred')],
  },
  {
    name: 'removeIf (stencil)',
    call: call(A.removeIf),
    slots: [s('input', 'in'), s('stencil', 'in'), s('output', 'outAny'), s('pred', 'optPred')],
  },
  { name: 'gather', call: call(A.gather), slots: [s('map', 'map'), s('input', 'in'), s('output', 'out')] },
  {
    name: 'gatherIf',
    call: call(A.gatherIf),
    slots: [s('map', 'map'), s('stencil', 'in'), s('input', 'in'), s('output', 'out'), s('pred', 'optPred')],
  },
  { name: 'scatter', call: call(A.scatter), slots: [s('input', 'in'), s('map', 'map'), s('output', 'outAny')] },
  {
    name: 'scatterIf',
    call: call(A.scatterIf),
    slots: [s('input', 'in'), s('map', 'map'), s('stencil', 'in'), s('output', 'outAny'), s('pred', 'optPred')],
  },
  { name: 'partition', call: call(A.partition), slots: [s('data', 'data'), s('pred', 'pred')] },
  { name: 'stablePartition', call: call(A.stablePartition), slots: [s('data', 'data'), s('pred', 'pred')] },
  { name: 'unique', call: call(A.unique), slots: [s('data', 'data')] },
  { name: 'transform', call: call(A.transform), slots: [s('input', 'in'), s('output', 'out'), s('fn', 'fnIdx')] },
  {
    name: 'transform (binary)',
    call: call(A.transform),
    slots: [s('input1', 'in'), s('input2', 'in'), s('output', 'out'), s('fn', 'fn2')],
  },
  { name: 'forEach', call: call(A.forEach), slots: [s('data', 'data'), s('fn', 'fnIdx')] },
  { name: 'fill', call: call(A.fill), slots: [s('data', 'data'), s('value', 'num')] },
  { name: 'iota', call: call(A.iota), slots: [s('data', 'data'), s('start', 'optNum')] },
  { name: 'copy', call: call(A.copy), slots: [s('input', 'in'), s('output', 'out')] },
  {
    name: 'adjacentDifference',
    call: call(A.adjacentDifference),
    slots: [s('input', 'in'), s('output', 'out'), s('op', 'optFn2')],
  },
  { name: 'sort', call: call(A.sort), slots: [s('data', 'data'), s('comp', 'optComp')] },
  { name: 'stableSort', call: call(A.stableSort), slots: [s('data', 'data'), s('comp', 'optComp')] },
  {
    name: 'sortByKey',
    call: call(A.sortByKey),
    slots: [s('keys', 'data'), s('values', 'data'), s('comp', 'optComp')],
  },
  { name: 'isSorted', call: call(A.isSorted), slots: [s('data', 'in'), s('comp', 'optComp')] },
  { name: 'isSortedUntil', call: call(A.isSortedUntil), slots: [s('data', 'in'), s('comp', 'optComp')] },
  ...(['lowerBound', 'upperBound', 'binarySearch'] as const).map((name) => ({
    name,
    call: call(A[name]),
    slots: [s('sorted', 'in'), s('queries', 'in'), s('result', 'out'), s('comp', 'optComp')],
  })),
  // Issue 16's algorithms (merge and setUnion are left out: their outputs need 2N elements, and a
  // foreign DeviceArray is found after the output's length is checked).
  { name: 'equal', call: call(A.equal), slots: [s('a', 'in'), s('b', 'in'), s('pred', 'optFn2')] },
  { name: 'mismatch', call: call(A.mismatch), slots: [s('a', 'in'), s('b', 'in'), s('pred', 'optFn2')] },
  { name: 'adjacentFind', call: call(A.adjacentFind), slots: [s('input', 'in'), s('pred', 'optFn2')] },
  { name: 'isPartitioned', call: call(A.isPartitioned), slots: [s('input', 'in'), s('pred', 'pred')] },
  {
    name: 'replaceIf',
    call: call(A.replaceIf),
    slots: [s('input', 'data'), s('pred', 'pred'), s('newValue', 'num')],
  },
  { name: 'replace', call: call(A.replace), slots: [s('input', 'data'), s('oldValue', 'num'), s('newValue', 'num')] },
  { name: 'generate', call: call(A.generate), slots: [s('output', 'data'), s('gen', 'fn1')] },
  { name: 'reverse', call: call(A.reverse), slots: [s('input', 'data')] },
  { name: 'rotate', call: call(A.rotate), slots: [s('input', 'data'), s('middle', 'num')] },
  {
    name: 'histogram',
    call: (policy, input) => A.histogram(policy, input as Uint32Array, { bins: 6, lo: 0, hi: 100 }),
    slots: [s('input', 'in')],
  },
  ...[A.setIntersection, A.setDifference].map((f) => ({
    name: f.name,
    call: call(f),
    slots: [s('a', 'in'), s('b', 'in'), s('output', 'out'), s('comp', 'optComp')],
  })),
];

const N = 8;
/** Valid values per kind (u32 data; the result of a search is u32 too). */
const GOOD_FN1 = (x: number) => x + 1;
const GOOD_FN2 = plus;
const GOOD_PRED = (x: number) => x > 3;

/** A bad value for a slot, as a recipe (DeviceArrays are made per run and destroyed after). */
type Bad =
  | { readonly kind: 'value'; readonly label: string; readonly value: unknown }
  | { readonly kind: 'short' }
  | { readonly kind: 'destroyed' }
  | { readonly kind: 'foreign' }
  | { readonly kind: 'overlap' }
  | { readonly kind: 'wrongType' };

const badValue = (label: string, value: unknown): Bad => ({ kind: 'value', label, value });

const NOT_ARRAYS: Bad[] = [
  badValue('a string', 'abc'),
  badValue('a number', 42),
  badValue('NaN', Number.NaN),
  badValue('a plain array', [1, 2, 3, 4, 5, 6, 7, 8]),
  badValue('a Float64Array', new Float64Array(N)),
  badValue('an Int8Array', new Int8Array(N)),
  badValue('a Uint8Array', new Uint8Array(N)),
  badValue('an object', { length: N }),
  badValue('null', null),
  badValue('a function', GOOD_FN1),
];
const NOT_FUNCTIONS: Bad[] = [
  badValue('a string', 'plus'),
  badValue('a number', 1),
  badValue('an object', {}),
  badValue('an object with js only', { js: (a: number, b: number) => a + b }),
  badValue('null', null),
  badValue('an array', [plus]),
];
const NOT_NUMBERS: Bad[] = [
  badValue('a string', '5'),
  badValue('an object', {}),
  badValue('null', null),
  badValue('a bigint', 5n),
  badValue('an array', [5]),
];

function badsFor(slot: Slot, gpu: boolean, foreign: boolean): Bad[] {
  // A DeviceArray of another device is bad under a device policy (auto runs a call on its arrays'
  // device, which is valid when that array is the only one).
  const deviceBads: Bad[] = gpu ? [{ kind: 'destroyed' }, ...(foreign ? [{ kind: 'foreign' } as const] : [])] : [];
  switch (slot.kind) {
    case 'in':
      return [...NOT_ARRAYS, badValue('undefined', undefined), ...deviceBads];
    case 'map':
      // (Out-of-range indices are an error on the CPU and skipped on the GPU: gather.test.ts.)
      return [
        ...NOT_ARRAYS,
        badValue('undefined', undefined),
        badValue('f32 indices', new Float32Array(N)),
        ...deviceBads,
      ];
    case 'outAny':
      return [
        ...NOT_ARRAYS,
        badValue('undefined', undefined),
        { kind: 'overlap' },
        { kind: 'wrongType' },
        ...deviceBads,
      ];
    case 'data':
      return [...NOT_ARRAYS, badValue('undefined', undefined), ...deviceBads];
    case 'out':
      // An omitted result of a search is created: undefined is valid there.
      return [
        ...NOT_ARRAYS.filter((b) => !(slot.name === 'result' && b.kind === 'value' && b.label === 'a function')),
        ...(slot.name === 'result' ? [] : [badValue('undefined', undefined)]),
        { kind: 'short' },
        { kind: 'overlap' },
        { kind: 'wrongType' },
        ...deviceBads,
      ];
    case 'fn1':
    case 'pred':
    case 'optPred':
      return [
        ...NOT_FUNCTIONS,
        ...(slot.kind === 'optPred' ? [] : [badValue('undefined', undefined)]),
        badValue('a function of 2 parameters', (a: number, b: number) => a + b),
        badValue('a function of 3 parameters', (a: number, b: number, c: number) => a + b + c),
      ];
    case 'fnIdx':
      // A function of 2 parameters is an index lambda here.
      return [
        ...NOT_FUNCTIONS,
        badValue('undefined', undefined),
        badValue('a function of 3 parameters', (a: number, b: number, c: number) => a + b + c),
      ];
    case 'fn2':
    case 'optFn2':
      return [
        ...NOT_FUNCTIONS,
        ...(slot.kind === 'fn2' ? [badValue('undefined', undefined)] : []),
        badValue('a function of 1 parameter', (a: number) => a),
        badValue('a function of 3 parameters', (a: number, b: number, c: number) => a + b + c),
      ];
    case 'comp':
    case 'optComp':
      return [
        ...NOT_FUNCTIONS.filter((b) => !(b.kind === 'value' && b.label === 'an object with js only')),
        badValue('a function of 1 parameter', (a: number) => a > 0),
        badValue('a three-way comparator', (a: number, b: number) => a - b),
      ];
    case 'num':
      return [...NOT_NUMBERS, badValue('undefined', undefined)];
    case 'optNum':
      return NOT_NUMBERS;
  }
}

let foreignDevice: GpuDevice | undefined;

beforeAll(async () => {
  if (!testDevice) return;
  // A second device: opened with a feature disabled, so it is not the cached test device.
  const candidate = (await enumerateDevices()).find((c) => c.info.backend === 'webgpu');
  if (candidate) foreignDevice = (await openDevice(candidate, { disableFeatures: ['timestamp-query'] })) as GpuDevice;
  expect(foreignDevice).not.toBe(testDevice);
});

afterAll(() => foreignDevice?.destroy());

interface Built {
  readonly args: unknown[];
  /** Every array given, with a copy of its contents before the call. */
  readonly arrays: { readonly array: Uint32Array | DeviceArray; readonly before: Uint32Array }[];
  readonly owned: DeviceArray[];
}

function data(seed: number, n = N): Uint32Array {
  return Uint32Array.from({ length: n }, (_, i) => (((i + seed) * 2654435761) >>> 0) % 100);
}

/** Builds the arguments of `sig` with `bads` replacing some slots; DeviceArrays when `onDevice`. */
function build(sig: Signature, bads: ReadonlyMap<number, Bad>, onDevice: boolean, seed: number): Built {
  const owned: DeviceArray[] = [];
  const arrays: Built['arrays'] = [];
  const dev = testDevice as GpuDevice;
  const arr = (host: Uint32Array, device = onDevice): Uint32Array | DeviceArray => {
    if (!device) {
      arrays.push({ array: host, before: host.slice() });
      return host;
    }
    const d = DeviceArray.from(dev, host);
    owned.push(d);
    arrays.push({ array: d, before: host.slice() });
    return d;
  };
  // The first array argument: outputs that overlap it are views of the same memory.
  let first: { host: Uint32Array; dev?: DeviceArray } | undefined;
  const args = sig.slots.map((slot, k): unknown => {
    const bad = bads.get(k);
    if (bad) {
      switch (bad.kind) {
        case 'value':
          return bad.value;
        case 'short':
          return arr(new Uint32Array(N - 3));
        case 'wrongType': {
          const x = new Int32Array(N);
          if (onDevice) {
            const d = DeviceArray.from(dev, x);
            owned.push(d);
            return d;
          }
          return x;
        }
        case 'destroyed': {
          const d = DeviceArray.from(dev, data(seed + k));
          d.destroy();
          return d;
        }
        case 'foreign': {
          const d = DeviceArray.from(foreignDevice as GpuDevice, data(seed + k));
          owned.push(d);
          return d;
        }
        case 'overlap': {
          // Starts 2 elements into the first array and runs past its end: overlaps without being it.
          if (onDevice) {
            const base = DeviceArray.from(dev, new Uint32Array(N + 2));
            owned.push(base);
            return base; // replaced below once the first array exists
          }
          return undefined;
        }
      }
    }
    return goodValue(slot, k);
  });
  function goodValue(slot: Slot, k: number): unknown {
    switch (slot.kind) {
      case 'in':
      case 'data': {
        const host = data(seed + k);
        const a = arr(host);
        if (!first) first = { host, dev: a instanceof DeviceArray ? a : undefined };
        return a;
      }
      case 'out':
      case 'outAny':
        return arr(new Uint32Array(N));
      case 'map':
        return arr(Uint32Array.from({ length: N }, (_, i) => (i * 5 + seed) % N));
      case 'fn1':
      case 'fnIdx':
        return GOOD_FN1;
      case 'pred':
        return GOOD_PRED;
      case 'fn2':
        return GOOD_FN2;
      case 'num':
        return 3;
      case 'optNum':
      case 'optFn2':
      case 'optComp':
      case 'optPred':
      case 'comp':
        return undefined;
    }
  }
  // Overlapping outputs: a view (or subarray) of the first array's memory shifted by 2 elements.
  for (const [k, bad] of bads) {
    if (bad.kind !== 'overlap' || !first) continue;
    if (onDevice) {
      // A DeviceArray of N + 2 elements holding the first array's data, the input a view of it.
      const base = args[k] as DeviceArray;
      const whole = new Uint32Array(N + 2);
      whole.set(first.host);
      base.write(whole);
      const inputIndex = args.findIndex((a) => a === first?.dev);
      args[inputIndex] = base.view(0, N);
      args[k] = base.view(2, N);
      arrays.push({ array: base, before: whole });
    } else {
      const buf = new Uint32Array(N + 2);
      buf.set(first.host);
      const inputIndex = args.findIndex((a) => a === first?.host);
      args[inputIndex] = buf.subarray(0, N);
      args[k] = buf.subarray(2, N + 2);
      arrays.push({ array: buf, before: buf.slice() });
    }
  }
  return { args, arrays, owned };
}

function policyFor(kind: 'seq' | 'par' | 'device' | 'auto'): Policy {
  if (kind === 'seq') return execution.seq;
  if (kind === 'par') return execution.par;
  if (kind === 'auto') return execution.auto;
  return makeDevicePolicy(testDevice as GpuDevice, { fallback: 'error' });
}

/** Argument names of the unary reading of the binary forms, by position. */
const UNARY_READING: Record<string, readonly string[]> = {
  'transformReduce (binary)': ['input', 'init', 'reduceOp', 'transformFn', 'transformFn'],
  'transform (binary)': ['input', 'output', 'fn', 'fn'],
};

/**
 * Calls that legitimately succeed with a bad-looking argument, decided per case: none is
 * accepted unless listed here, with the reason.
 */
function mayNameInstead(sig: Signature, slot: Slot, bad: Bad): string[] {
  // transform and transformReduce choose their binary form when the third (second) argument is an
  // array-like value: an array-like in the function's place reads as the binary form, whose
  // errors name that form's arguments.
  const arrayLike =
    bad.kind === 'value' &&
    (Array.isArray(bad.value) || ArrayBuffer.isView(bad.value) || bad.value instanceof DeviceArray);
  if (sig.name === 'transform' && slot.name === 'fn' && arrayLike) return ['fn', 'output'];
  if (sig.name === 'transform' && slot.name === 'output' && arrayLike) return ['output', 'input2'];
  if (sig.name === 'transformReduce' && slot.name === 'init' && arrayLike) return ['init', 'input2'];
  // copyIf and removeIf choose their stencil forms when the predicate's place holds a typed array
  // or DeviceArray: its errors name the stencil form's arguments.
  const typedLike = arrayLike && !Array.isArray((bad as { value?: unknown }).value);
  if (sig.name === 'copyIf' && slot.name === 'pred' && typedLike) return ['pred', 'output'];
  if (sig.name === 'removeIf' && slot.name === 'pred' && typedLike) return ['pred', 'stencil'];
  // And the other way: a stencil form whose output (copyIf) or stencil (removeIf) is not an array
  // reads as the predicate form, whose errors name the predicate in that place.
  const notTyped = !(bad.kind !== 'value' || typedLike);
  if (sig.name === 'copyIf (stencil)' && slot.name === 'output' && notTyped) return ['output', 'pred'];
  if (sig.name === 'removeIf (stencil)' && slot.name === 'stencil' && notTyped && !Array.isArray(bad.value)) {
    return ['stencil', 'pred'];
  }
  // The binary forms with an input2 that is not array-like read as the unary form, whose errors
  // name the unary form's argument at the same place.
  const unary = UNARY_READING[sig.name];
  if (unary && !arrayLike) return [slot.name, unary[sig.slots.indexOf(slot)] as string];
  // A function in a search's result place is taken as the comparator (documented).
  if (slot.name === 'result' && bad.kind === 'value' && typeof bad.value === 'function') return ['result', 'comp'];
  return [slot.name];
}

async function expectUntouched(built: Built, what: string): Promise<void> {
  for (const { array, before } of built.arrays) {
    if (array instanceof DeviceArray && array.destroyed) continue;
    const now = array instanceof DeviceArray ? await array.read() : array;
    expect(Array.from(now as Uint32Array), `${what}: an argument was modified`).toEqual(Array.from(before));
  }
}

async function deviceStillWorks(): Promise<void> {
  if (!testDevice) return;
  const p = makeDevicePolicy(testDevice, { fallback: 'error' });
  expect(await A.reduce(p, Uint32Array.from([1, 2, 3]))).toBe(6);
}

const gpu = !!testDevice;
const policyKinds = gpu ? (['seq', 'par', 'device', 'auto'] as const) : (['seq', 'par'] as const);

/** One example: a signature, a policy, whether arrays live on the device, one or two bad slots. */
const example = fc
  .record({
    sig: fc.integer({ min: 0, max: SIGNATURES.length - 1 }),
    policy: fc.constantFrom(...policyKinds),
    onDevice: fc.boolean(),
    picks: fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 2 }),
    seed: fc.nat(1000),
  })
  .map(({ sig, policy, onDevice, picks, seed }) => {
    const signature = SIGNATURES[sig] as Signature;
    const usesGpu = policy === 'device' || policy === 'auto';
    const dev = usesGpu && onDevice;
    const bads = new Map<number, Bad>();
    for (const [slotPick, badPick] of picks) {
      const k = slotPick % signature.slots.length;
      const choices = badsFor(signature.slots[k] as Slot, usesGpu, policy === 'device');
      bads.set(k, choices[badPick % choices.length] as Bad);
    }
    return { signature, policy, onDevice: dev, bads, seed };
  });

function describeBad(b: Bad): string {
  return b.kind === 'value' ? b.label : b.kind;
}

describe('fuzzed bad input', () => {
  it('every public algorithm: a WebdplError naming the argument, data untouched, device usable', async () => {
    await fc.assert(
      fc.asyncProperty(example, async ({ signature, policy, onDevice, bads, seed }) => {
        const built = build(signature, bads, onDevice, seed);
        const what = `${signature.name}(${policy}${onDevice ? ', DeviceArrays' : ''}) with ${[...bads]
          .map(([k, b]) => `${signature.slots[k]?.name} = ${describeBad(b)}`)
          .join(', ')}`;
        try {
          let error: unknown;
          try {
            await signature.call(policyFor(policy), ...built.args);
          } catch (e) {
            error = e;
          }
          expect(error, `${what}: should reject`).toBeDefined();
          expect(error, `${what}: ${String(error)}`).toBeInstanceOf(WebdplError);
          const names = [...bads].flatMap(([k, b]) => mayNameInstead(signature, signature.slots[k] as Slot, b));
          const message = (error as Error).message;
          expect(
            names.some((n) => message.startsWith(`${n}:`)),
            `${what}: the message should name ${names.join(' or ')}: ${message}`,
          ).toBe(true);
          await expectUntouched(built, what);
        } finally {
          for (const d of built.owned) d.destroy();
        }
        await deviceStillWorks();
      }),
      { numRuns: 1000, seed: 1313 },
    );
  });

  // Regressions found by the property.
  it('a search result sharing memory with sorted or queries is an error, and nothing is written', async () => {
    const buf = Uint32Array.from([1, 3, 5, 7, 9, 0, 0, 0]);
    const before = buf.slice();
    await expect(
      A.lowerBound(execution.seq, buf.subarray(0, 5), buf.subarray(2, 5), buf.subarray(3, 6)),
    ).rejects.toThrow(/^result: expected memory that does not overlap sorted/);
    await expect(
      A.upperBound(execution.seq, buf.subarray(0, 4), buf.subarray(4, 6), buf.subarray(5, 7)),
    ).rejects.toThrow(/^result: expected memory that does not overlap queries/);
    expect(buf).toEqual(before);
  });

  it('a function of 3 parameters is an ArgumentError naming the argument, not a LambdaError', async () => {
    const f3 = (a: number, b: number, c: number) => a + b + c;
    await expect(A.reduce(execution.seq, Uint32Array.from([1]), 0, f3)).rejects.toThrow(
      /^op: expected a function of 2/,
    );
    await expect(A.transform(execution.seq, Uint32Array.of(1), new Uint32Array(1), f3)).rejects.toThrow(
      /^fn: expected/,
    );
  });

  it('a binary transform whose output is not an array is an error, not a unary transform into input2', async () => {
    const x = Uint32Array.from([1, 2]);
    const y = Uint32Array.from([3, 4]);
    const f = (a: number) => a + 1;
    await expect(A.transform(execution.seq, x, y, f as never, plus)).rejects.toThrow(/^output: expected/);
    await expect(A.transformReduce(execution.seq, x, 0 as never, 0, plus, plus)).rejects.toThrow(/^input2: expected/);
    expect(Array.from(y)).toEqual([3, 4]);
  });

  // Regression: selectBackend checked DeviceArrays without their argument names, so a foreign array
  // was reported as "array: ..." (dispatch now passes the names).
  (testDevice ? it : it.skip)('a foreign DeviceArray: the ForeignArrayError names the argument', async () => {
    const x = DeviceArray.from(foreignDevice as GpuDevice, Uint32Array.from([1, 2, 3]));
    try {
      const p = makeDevicePolicy(testDevice as GpuDevice, { fallback: 'error' });
      await expect(A.reduce(p, x)).rejects.toThrow(/^input: DeviceArray belongs to device/);
      expect(Array.from(await x.read())).toEqual([1, 2, 3]);
    } finally {
      x.destroy();
    }
    await deviceStillWorks();
  });
});
