/**
 * The test matrix of DESIGN.md: every policy (seq, par, device, auto), the GPU with subgroups on and
 * off, default and tiny tuning (tiny tiles and a tiny binding limit so multi-pass and segmented paths
 * run at small n); and the sizes: 0..16, then x pi up to ~1e5, tile-1/tile/tile+1, random sizes.
 */
import { type GpuDevice, gpuForTests } from '@webdpl/core';
import { execution, makeDevicePolicy, type Policy, type TuningOverrides } from '@webdpl/policies';

/** Tiny tuning for every engine: tiles of a few dozen elements, bindings of 4 KiB. */
export const TINY_TUNING: TuningOverrides = {
  'transform-reduce': {
    workgroupSize: 32,
    vecsPerThread: 1,
    itemsPerThread: 2,
    maxWorkgroups: 5,
    // One workgroup for up to 5 tiles (one pass), then 2 to 5 workgroups of 3 or more tiles.
    minTilesPerWorkgroup: 3,
    // The atomic one-pass fold of integer plus/or/xor/max (off by default on software adapters).
    atomicFold: true,
    maxBindingBytes: 4096,
  },
  map: {
    workgroupSize: 32,
    vecsPerThread: 2,
    itemsPerThread: 2,
    maxWorkgroups: 3,
    maxBindingBytes: 4096,
  },
  scan: {
    workgroupSize: 32,
    itemsPerThread: 4,
    maxSpins: 2,
    maxBindingBytes: 4096,
  },
};

/** Tiny tuning of the sort engines: tiles of a few dozen keys, so multi-tile passes run at small n. */
export const TINY_SORT_TUNING: TuningOverrides = {
  'radix-sort': {
    workgroupSize: 32,
    keysPerThread: 2,
    histogramWorkgroupSize: 32,
    histogramKeysPerThread: 2,
    histogramMaxWorkgroups: 3,
  },
  'merge-sort': { workgroupSize: 32, itemsPerThread: 2 },
  // The selection algorithms' radix select at every size, in tiles of 64 (select/tuning.ts).
  ...Object.fromEntries(
    ['nthElement', 'partialSort', 'topK'].map((a) => [
      a,
      { fullSortMax: 0, selectWorkgroupSize: 32, selectItemsPerThread: 2, selectMaxWorkgroups: 3 },
    ]),
  ),
};

/** The tile of the tiny scan tuning in elements (32 threads x 4 items). */
export const TINY_SCAN_TILE = 32 * 4;

/** The tiles of the tiny map tuning in elements (vec path: 32 threads x 2 vec4; scalar: 32 x 2). */
export const TINY_MAP_TILES = [32 * 2 * 4, 32 * 2] as const;

/** The tile of the tiny transform-reduce tuning in elements (vec path), for edge sizes. */
export const TINY_TILE = 32 * 4;

export interface NamedPolicy {
  readonly name: string;
  readonly policy: Policy;
  readonly gpu: boolean;
}

const gpu = await gpuForTests();

/** The GPU device under test, if any. */
export const testDevice: GpuDevice | undefined = gpu;

/** Policies every algorithm is checked under. GPU variants only when a GPU exists (else skipped with a reason). */
export function policyMatrix(extraTuning: TuningOverrides = {}): NamedPolicy[] {
  const list: NamedPolicy[] = [
    { name: 'seq', policy: execution.seq, gpu: false },
    { name: 'unseq', policy: execution.unseq, gpu: false },
    { name: 'par', policy: execution.par, gpu: false },
  ];
  if (gpu) {
    const noSg = Object.fromEntries(
      Object.keys({ ...TINY_TUNING, ...extraTuning }).map((k) => [k, { subgroups: false }]),
    );
    const tiny = { ...TINY_TUNING, ...extraTuning };
    const tinyNoSg = Object.fromEntries(Object.entries(tiny).map(([k, v]) => [k, { ...v, subgroups: false }]));
    list.push(
      { name: 'device', policy: makeDevicePolicy(gpu, { fallback: 'error' }), gpu: true },
      { name: 'device no-subgroups', policy: makeDevicePolicy(gpu, { fallback: 'error', tuning: noSg }), gpu: true },
      { name: 'device tiny', policy: makeDevicePolicy(gpu, { fallback: 'error', tuning: tiny }), gpu: true },
      {
        name: 'device tiny no-subgroups',
        policy: makeDevicePolicy(gpu, { fallback: 'error', tuning: tinyNoSg }),
        gpu: true,
      },
      { name: 'auto', policy: execution.auto, gpu: true },
    );
  }
  return list;
}

/** Edge sizes: 0..16, x pi up to ~1e5, around `tiles`, plus `extra`. */
export function edgeSizes(tiles: readonly number[] = [], extra: readonly number[] = []): number[] {
  const s = new Set<number>();
  for (let i = 0; i <= 16; i++) s.add(i);
  for (let x = 17; x < 1e5; x *= Math.PI) s.add(Math.floor(x));
  for (const t of tiles) for (const d of [-1, 0, 1]) if (t + d >= 0) s.add(t + d);
  for (const e of extra) s.add(e);
  return [...s].sort((a, b) => a - b);
}

/** `count` sizes in [100,000, 1,100,000) from a fixed seed: DESIGN.md's "random larger sizes". */
export function randomSizes(count: number, seed: number): number[] {
  const r = rng(seed);
  return Array.from({ length: count }, () => 100_000 + (r() % 1_000_000));
}

/** A seeded generator of u32 values (LCG + xorshift output). */
export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    let x = s;
    x ^= x >>> 16;
    x = Math.imul(x, 0x45d9f3b) >>> 0;
    x ^= x >>> 16;
    return x >>> 0;
  };
}

export type DataKind = 'random' | 'constant' | 'small';

/** Test data of `type`: random bits (ints) / [-1,1) floats, a constant, or small values (exact float sums). */
export function makeData(
  type: 'u32' | 'i32' | 'f32',
  n: number,
  kind: DataKind,
  seed = n + 1,
): Uint32Array | Int32Array | Float32Array {
  const r = rng(seed);
  const gen =
    kind === 'constant'
      ? () => 3
      : kind === 'small'
        ? () => (r() % 17) - 8
        : type === 'f32'
          ? () => r() / 2 ** 31 - 1
          : () => r();
  const out = type === 'u32' ? new Uint32Array(n) : type === 'i32' ? new Int32Array(n) : new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = gen();
  return out;
}

/** Relative tolerance for float reductions over n terms (order of combination differs by policy). */
export function floatTolerance(n: number, magnitude: number): number {
  return Math.max(1e-6, 2 ** -22 * Math.sqrt(Math.max(n, 1)) * 4) * Math.max(1, magnitude);
}
