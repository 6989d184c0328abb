import { DeviceArray, type GpuDevice, gpuForTests } from '@webdpl/core';
import { describe, expect, it } from 'vitest';
import { rng } from '../../testing/matrix';
import { sortReference } from '../../testing/sort-reference';
import { radixSortDevice, radixSortTuningFor } from '.';

const gpu = await gpuForTests();

type Keys = Uint32Array | Int32Array | Float32Array;

/** Stable reference for pairs: indices sorted by key order, ties by index. */
function stableOrder(keys: Keys, descending: boolean): number[] {
  const idx = Array.from(keys, (_, i) => i);
  const rank = (x: number) => (Number.isNaN(x) ? 2 : 0);
  const cmp = (a: number, b: number) => {
    const x = keys[a] as number;
    const y = keys[b] as number;
    const na = rank(x);
    const nb = rank(y);
    if (na || nb) return na - nb || a - b;
    if (x !== y) return descending ? (x > y ? -1 : 1) : x < y ? -1 : 1;
    if (x === 0 && Object.is(x, -0) !== Object.is(y, -0)) {
      const xNeg = Object.is(x, -0);
      return (descending ? !xNeg : xNeg) ? -1 : 1;
    }
    return a - b;
  };
  return idx.sort(cmp);
}

function bitsOf(a: Keys): Uint32Array {
  return new Uint32Array(a.buffer, a.byteOffset, a.length);
}

/** Compares as bits, except NaNs compare as NaN (payloads irrelevant). */
function expectSameKeys(got: Keys, want: Keys, what: string): void {
  expect(got.length).toBe(want.length);
  const g = bitsOf(got);
  const w = bitsOf(want);
  for (let i = 0; i < want.length; i++) {
    if (g[i] !== w[i] && !(Number.isNaN(got[i] as number) && Number.isNaN(want[i] as number))) {
      throw new Error(
        `${what}: index ${i}: got ${got[i]} (0x${g[i]?.toString(16)}), want ${want[i]} (0x${w[i]?.toString(16)})`,
      );
    }
  }
}

function makeKeys(type: 'u32' | 'i32' | 'f32', n: number, kind: string, seed: number): Keys {
  const r = rng(seed);
  const out = type === 'u32' ? new Uint32Array(n) : type === 'i32' ? new Int32Array(n) : new Float32Array(n);
  const bits = bitsOf(out);
  const specials = [
    0x7fc00000, 0xffc00000, 0x7f800001, 0x80000000, 0, 0x7f800000, 0xff800000, 1, 0x80000001, 0x007fffff,
  ];
  for (let i = 0; i < n; i++) {
    switch (kind) {
      case 'random':
        bits[i] = r();
        if (type === 'f32' && Number.isNaN(out[i] as number) && r() % 2) bits[i] = 0x3f800000;
        break;
      case 'dups':
        out[i] = (r() % 7) - 3;
        break;
      case 'equal':
        out[i] = 5;
        break;
      case 'sorted':
        out[i] = i - (n >> 1);
        break;
      case 'reversed':
        out[i] = n - i;
        break;
      case 'small':
        bits[i] = r() & 0x3ff;
        break;
      case 'specials':
        bits[i] = r() % 3 === 0 ? (specials[r() % specials.length] as number) : r();
        break;
      default:
        throw new Error(kind);
    }
  }
  return out;
}

async function sortOnDevice(
  device: GpuDevice,
  keys: Keys,
  opts: { values?: boolean; descending?: boolean; tuning?: Record<string, number | boolean> },
) {
  const k = DeviceArray.from(device, keys);
  const v = opts.values
    ? DeviceArray.from(
        device,
        Uint32Array.from(keys, (_, i) => i),
      )
    : undefined;
  try {
    await radixSortDevice(device, k, v, { descending: opts.descending, tuning: opts.tuning });
    const gotKeys = (await k.read()) as Keys;
    const gotVals = v ? ((await v.read()) as Uint32Array) : undefined;
    return { gotKeys, gotVals };
  } finally {
    k.destroy();
    v?.destroy();
  }
}

async function check(
  device: GpuDevice,
  keys: Keys,
  opts: { values?: boolean; descending?: boolean; tuning?: Record<string, number | boolean> },
  what: string,
) {
  const { gotKeys, gotVals } = await sortOnDevice(device, keys, opts);
  expectSameKeys(gotKeys, sortReference(keys, opts.descending ?? false), what);
  if (gotVals) {
    const want = stableOrder(keys, opts.descending ?? false);
    for (let i = 0; i < want.length; i++) {
      if (gotVals[i] !== want[i]) throw new Error(`${what}: value ${i}: got ${gotVals[i]}, want ${want[i]}`);
    }
  }
}

const TINY = {
  workgroupSize: 32,
  keysPerThread: 2,
  histogramWorkgroupSize: 32,
  histogramKeysPerThread: 2,
  histogramMaxWorkgroups: 3,
};

describe.skipIf(!gpu)('radixSortDevice', () => {
  const device = gpu as GpuDevice;
  const sgVariants = device?.features.has('subgroups') ? [true, false] : [false];
  for (const subgroups of sgVariants) {
    const tag = subgroups ? 'subgroup ranking' : 'workgroup-memory ranking';
    it(`${tag}, tiny tiles: sizes 0..16, tile +-1, many tiles, every type and kind`, async () => {
      const tuning = { ...TINY, subgroups };
      const sizes = [...Array.from({ length: 17 }, (_, i) => i), 63, 64, 65, 127, 129, 1000, 4099];
      for (const type of ['u32', 'i32', 'f32'] as const) {
        for (const kind of ['random', 'dups', 'equal', 'sorted', 'reversed', 'small', 'specials']) {
          for (const n of sizes) {
            const keys = makeKeys(type, n, kind, n * 31 + kind.length);
            await check(device, keys, { tuning, values: n % 2 === 1 }, `${type} ${kind} n=${n}`);
          }
        }
      }
    });
    it(`${tag}, default tiles: single workgroup and multi-tile, descending, pairs`, async () => {
      const tuning = { subgroups };
      const d = radixSortTuningFor(device);
      const tile = d.workgroupSize * d.keysPerThread;
      for (const type of ['u32', 'i32', 'f32'] as const) {
        for (const n of [100, tile - 1, tile, tile + 1, 2 * tile - 1, 2 * tile, 2 * tile + 1, 20000, 100003]) {
          const keys = makeKeys(type, n, type === 'f32' ? 'specials' : 'random', n);
          await check(device, keys, { tuning, values: true }, `${type} n=${n}`);
          await check(device, keys, { tuning, descending: true, values: n > 5000 }, `${type} desc n=${n}`);
        }
      }
    });
    it(`${tag}, look-back fallback forced`, async () => {
      const tuning = { ...TINY, subgroups, lookbackForceFallback: true };
      for (const n of [65, 500, 3001]) {
        await check(device, makeKeys('f32', n, 'specials', n), { tuning, values: true }, `ff n=${n}`);
      }
      const spins0 = { ...TINY, subgroups, lookbackSpins: 0 };
      await check(device, makeKeys('u32', 5000, 'random', 9), { tuning: spins0, values: true }, 'spins 0');
    });
    // Hardware GPUs' default: tile ids from the workgroup index (lavapipe's default keeps the ticket).
    it(`${tag}, tile ids from the workgroup index, with and without the fallback`, async () => {
      for (const spins of [256, 0]) {
        const tuning = { ...TINY, subgroups, atomicTileIds: false, lookbackSpins: spins };
        for (const n of [5, 64, 65, 1000, 4099]) {
          for (const kind of ['random', 'dups', 'specials']) {
            const keys = makeKeys('f32', n, kind, n + kind.length);
            await check(device, keys, { tuning, values: n % 2 === 1 }, `wgid ${kind} n=${n} spins=${spins}`);
          }
        }
      }
      const tuning = { subgroups, atomicTileIds: false };
      await check(device, makeKeys('u32', 100003, 'random', 5), { tuning, values: true }, 'wgid default tiles');
    });
    // The H100 defaults (subgroup ranking, two scatter rounds): keys only 36 keys per thread, pairs 28.
    // Each such pipeline takes lavapipe's compiler tens of seconds, so keys only run one key mode
    // compiled in and pairs one pipeline for both orders (the mode a uniform).
    if (subgroups)
      it(`${tag}, 36 keys per thread in two scatter rounds (the H100 default's unrolled tile, keys only)`, async () => {
        const workgroupSize = radixSortTuningFor(device).workgroupSize;
        // The key mode compiled in (one mode: a pipeline each).
        const keysOnly = { subgroups, workgroupSize, keysPerThread: 36, scatterRounds: 2, staticKeyMode: true };
        const tile36 = workgroupSize * 36;
        for (const n of [tile36 - 1, tile36 + 1, 3 * tile36 + 5]) {
          await check(device, makeKeys('f32', n, 'specials', n), { tuning: keysOnly }, `k36 n=${n}`);
        }
      });
    if (subgroups)
      it(`${tag}, 28 keys per thread in two scatter rounds (the H100 default's unrolled tile, pairs)`, async () => {
        const workgroupSize = radixSortTuningFor(device).workgroupSize;
        // The mode from the uniform (one pipeline for both orders).
        const pairs = { subgroups, workgroupSize, keysPerThread: 28, scatterRounds: 2, staticKeyMode: false };
        const tile28 = workgroupSize * 28;
        for (const n of [tile28 - 1, tile28 + 1, 3 * tile28 + 5]) {
          const keys = makeKeys('f32', n, 'specials', n);
          await check(device, keys, { tuning: pairs, values: true }, `k28 n=${n}`);
          await check(device, keys, { tuning: pairs, values: true, descending: true }, `k28 desc n=${n}`);
        }
      });
    // Two scatter rounds (the stage holds half the tile): subgroup ranking only; the workgroup-memory
    // ranking ignores the field, so its runs check that too. Even and odd keys per thread (k0 =
    // ceil(K/2) positions in the first round), partial tiles, the fallback and the workgroup index.
    it(`${tag}, two scatter rounds`, async () => {
      const extras: Record<string, number | boolean>[] = [
        {},
        { lookbackForceFallback: true },
        { atomicTileIds: false, lookbackSpins: 0 },
      ];
      for (const keysPerThread of [2, 3, 5]) {
        for (const extra of extras) {
          const tuning = { ...TINY, subgroups, keysPerThread, scatterRounds: 2, ...extra };
          for (const n of [1, 31, 64, 65, 96 * keysPerThread + 7, 4099]) {
            for (const kind of ['random', 'dups', 'specials']) {
              const keys = makeKeys('f32', n, kind, n + kind.length + keysPerThread);
              const what = `rounds 2 k=${keysPerThread} ${JSON.stringify(extra)} ${kind} n=${n}`;
              await check(device, keys, { tuning, values: n % 2 === 1, descending: n % 3 === 0 }, what);
            }
          }
        }
      }
      const d = radixSortTuningFor(device);
      const tuning = { subgroups, scatterRounds: 2 };
      const n = 3 * d.workgroupSize * d.keysPerThread + 5;
      await check(device, makeKeys('u32', n, 'random', 3), { tuning, values: true }, 'rounds 2 default tiles');
      await check(device, makeKeys('i32', n, 'dups', 4), { tuning }, 'rounds 2 default tiles, keys only');
    });
    // The key type and order compiled in (hardware GPUs' default): a digit pass and a histogram per
    // key mode, with the look-back's fallback too (a uniform). The mode's code is the rankings'
    // shared head, so every type and order runs on the subgroup ranking and one on the other
    // (each mode is a pipeline, seconds of lavapipe's compiler).
    it(`${tag}, the key mode compiled in (staticKeyMode)`, async () => {
      const modes = subgroups
        ? (['u32', 'i32', 'f32'] as const).flatMap((type) => [false, true].map((d) => [type, d] as const))
        : ([['f32', true]] as const);
      for (const force of [false, true]) {
        const tuning = { ...TINY, subgroups, staticKeyMode: true, lookbackForceFallback: force };
        for (const [type, descending] of modes) {
          for (const n of [65, 4099]) {
            const keys = makeKeys(type, n, 'specials', n + type.length);
            const what = `static ${type} ${descending ? 'desc' : 'asc'} n=${n} force=${force}`;
            await check(device, keys, { tuning, values: true, descending }, what);
          }
        }
      }
      // With the diagnostic workgroup padding: the same results.
      const padded = { ...TINY, subgroups, staticKeyMode: true, padWords: 512 };
      await check(device, makeKeys('f32', 4099, 'random', 8), { tuning: padded, values: true }, 'padded');
    });
    it(`${tag}, early counts (published before ranking), with and without the fallback`, async () => {
      for (const force of [false, true]) {
        const tuning = { ...TINY, subgroups, earlyCounts: true, lookbackForceFallback: force };
        for (const n of [7, 64, 65, 1000, 4099]) {
          for (const kind of ['random', 'dups', 'specials']) {
            const keys = makeKeys('f32', n, kind, n + kind.length);
            await check(device, keys, { tuning, values: n % 2 === 1 }, `early ${kind} n=${n} force=${force}`);
          }
        }
      }
    });
  }
  it('2^20 random u32 pairs and f32 keys', async () => {
    const n = 1 << 20;
    await check(device, makeKeys('u32', n, 'random', 1), { values: true }, 'u32 2^20');
    await check(device, makeKeys('f32', n + 3, 'specials', 2), {}, 'f32 2^20+3');
  });
  it('more than 65,535 tiles (a 2-D indirect grid): 32-key tiles over 2,097,149 keys with one live digit', async () => {
    // 65,536 tiles: their two look-back tables (2 KiB per tile) just fit lavapipe's 128 MiB binding.
    const n = 65536 * 32 - 3;
    const r = rng(17);
    const keys = Uint32Array.from({ length: n }, () => (r() & 0xff) << 8);
    const tuning = { workgroupSize: 32, keysPerThread: 1, histogramWorkgroupSize: 64, lookbackSpins: 64 };
    await check(device, keys, { tuning, values: true }, 'grid');
    // Tile ids from the 2-D grid's workgroup index (hardware GPUs' default); other keys, so the
    // scratch left by the call above cannot hold this call's answer.
    const r2 = rng(18);
    const keys2 = Uint32Array.from({ length: n }, () => (r2() & 0xff) << 16);
    await check(device, keys2, { tuning: { ...tuning, atomicTileIds: false } }, 'grid, workgroup index');
  });
  it('tiles whose two look-back tables exceed one binding: UnsupportedOnDeviceError, keys untouched', async () => {
    const limit = device.limits.maxStorageBufferBindingSize;
    const n = (Math.floor(limit / 2048) + 1) * 32;
    if (n * 4 > limit) return; // the keys themselves would not fit: the engine's own check answers first
    const keys = Uint32Array.from({ length: n }, (_, i) => (n - i) * 7);
    const d = DeviceArray.from(device, keys);
    try {
      const tuning = { workgroupSize: 32, keysPerThread: 1, histogramWorkgroupSize: 64 };
      await expect(radixSortDevice(device, d, undefined, { tuning })).rejects.toThrow(/look-back tables/);
      expect(await d.read()).toEqual(keys);
    } finally {
      d.destroy();
    }
  });
  it('sorts views at unaligned offsets in place, leaving the rest of the buffer alone', async () => {
    const all = makeKeys('u32', 9000, 'random', 77) as Uint32Array;
    const d = DeviceArray.from(device, all);
    try {
      const view = d.view(3, 8000);
      await radixSortDevice(device, view);
      const got = await d.read();
      const want = all.slice();
      want.subarray(3, 8003).sort();
      expectSameKeys(got, want, 'view');
    } finally {
      d.destroy();
    }
  });
});
