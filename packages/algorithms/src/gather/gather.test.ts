import { DeviceArray, type HostArray, lambda } from '@webdpl/core';
import { allocShared, execution, makeDevicePolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { counting } from '../common/counting';
import { iota } from '../iota/index';
import { expectSameArray } from '../testing/arrays';
import { isEngineVariant, itIf, parPool, place } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, randomSizes, rng, TINY_MAP_TILES, testDevice } from '../testing/matrix';
import { transform } from '../transform/index';
import { gather, gatherIf, scatter, scatterIf } from './index';

/** A lambda capture (passed in `captures`, never read from this scope). */
declare const last: number;

const DEFAULT_TILES = [256 * 4 * 4, 256 * 8];
const sizes = edgeSizes([...TINY_MAP_TILES, ...DEFAULT_TILES], [123457, ...randomSizes(2, 15)]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

type T3 = 'u32' | 'i32' | 'f32';

function alloc(type: T3, n: number): HostArray {
  return type === 'u32' ? new Uint32Array(n) : type === 'i32' ? new Int32Array(n) : new Float32Array(n);
}

/** `n` random indices in [0, m) (repeats allowed), as u32 or i32. */
function randomMap(n: number, m: number, seed: number, type: 'u32' | 'i32' = 'u32'): Uint32Array | Int32Array {
  const r = rng(seed);
  const out = type === 'u32' ? new Uint32Array(n) : new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = r() % m;
  return out;
}

/** A random permutation of [0, n) (Fisher-Yates with a fixed seed), optionally shifted by `shift`. */
function permutation(n: number, seed: number, shift = 0): Uint32Array {
  const r = rng(seed);
  const p = new Uint32Array(n);
  for (let i = 0; i < n; i++) p[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = r() % (i + 1);
    const t = p[i] as number;
    p[i] = p[j] as number;
    p[j] = t;
  }
  for (let i = 0; i < n; i++) p[i] = (p[i] as number) + shift;
  return p;
}

/** Stencil values: about a third zero, some NaN for f32 (NaN is falsy). */
function stencilData(type: T3, n: number, seed: number): HostArray {
  const r = rng(seed);
  const s = alloc(type, n);
  for (let i = 0; i < n; i++) {
    const v = r() % 3;
    s[i] = type === 'f32' && v === 2 && i % 2 === 0 ? Number.NaN : v === 0 ? 0 : type === 'i32' ? -v : v;
  }
  return s;
}

const truthy = (v: number) => !!v;

function refGather(map: HostArray, input: HostArray, out: HostArray, st?: HostArray, pred = truthy): HostArray {
  for (let i = 0; i < map.length; i++) if (!st || pred(st[i] as number)) out[i] = input[map[i] as number] as number;
  return out;
}

function refScatter(input: HostArray, map: HostArray, out: HostArray, st?: HostArray, pred = truthy): HostArray {
  for (let i = 0; i < input.length; i++) if (!st || pred(st[i] as number)) out[map[i] as number] = input[i] as number;
  return out;
}

/** Output filled with a recognizable value (7), so unwritten elements are checked too. */
function filled(type: T3, n: number): HostArray {
  return alloc(type, n).fill(7);
}

describe.each(matrix)('gather and scatter under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);
  for (const type of variant ? (['u32'] as const) : (['u32', 'i32', 'f32'] as const)) {
    it(`gather / scatter ${type} at edge sizes (u32 maps, random and permutation)`, async () => {
      for (const n of sizes) {
        // gather: n random indices (repeats) into an input of another length.
        const m = Math.max(1, (n >> 1) + 3);
        const input = makeData(type, m, 'random', n + 11);
        const map = randomMap(n, m, n + 5);
        const out = filled(type, n + 2);
        await gather(policy, map, input, out);
        expectSameArray(out, refGather(map, input, filled(type, n + 2)), `gather n=${n}`);

        // scatter: a permutation into a longer output (3 elements never written).
        const src = makeData(type, n, 'random', n + 3);
        const perm = permutation(n, n + 9, 1);
        const dst = filled(type, n + 3);
        await scatter(policy, src, perm, dst);
        expectSameArray(dst, refScatter(src, perm, filled(type, n + 3)), `scatter n=${n}`);
        expectSameArray(perm, permutation(n, n + 9, 1), 'map untouched');
      }
    });
  }

  it('gatherIf / scatterIf at edge sizes: default predicate on an f32 stencil (NaN falsy), a lambda on i32', async () => {
    const gt = lambda((s: number) => s < -1);
    for (const n of sizes) {
      if (variant && n % 2 === 0 && n > 16) continue;
      const input = makeData('u32', n + 1, 'random', n + 1);
      const map = randomMap(n, n + 1, n + 2, 'i32');
      const sf = stencilData('f32', n, n + 3);
      const out = filled('u32', n);
      await gatherIf(policy, map, sf, input, out);
      expectSameArray(out, refGather(map, input, filled('u32', n), sf), `gatherIf n=${n}`);

      const si = stencilData('i32', n, n + 4);
      const perm = permutation(n, n + 5);
      const dst = filled('u32', n);
      const src = input.subarray(0, n);
      await scatterIf(policy, src, perm, si, dst, gt);
      expectSameArray(
        dst,
        refScatter(src, perm, filled('u32', n), si, (s) => s < -1),
        `scatterIf n=${n}`,
      );
    }
  });

  itIf(!variant)('i32 maps, an out-of-range index under a failing stencil, shared arrays', async () => {
    for (const n of [1, 7, 100, 4099]) {
      const input = makeData('f32', n, 'random');
      const map = randomMap(n, n, 3, 'i32');
      const st = new Uint32Array(n).fill(1);
      // Indices under a zero stencil are never read: out of range there is fine everywhere.
      st[n - 1] = 0;
      map[n - 1] = -5;
      const out = filled('f32', n);
      await gatherIf(policy, map, st, input, out);
      expectSameArray(out, refGather(map, input, filled('f32', n), st), `gatherIf skips n=${n}`);
      const perm = Int32Array.from(permutation(n, 4));
      perm[n - 1] = n;
      const dst = filled('f32', n);
      await scatterIf(policy, input, perm, st, dst);
      expectSameArray(dst, refScatter(input, perm, filled('f32', n), st), `scatterIf skips n=${n}`);

      // Arrays from allocShared (par runs on the pool; GPU policies upload them through staging).
      const sm = allocShared('u32', n);
      sm.set(permutation(n, 17));
      const si = allocShared('i32', n);
      si.set(makeData('i32', n, 'random'));
      const so = allocShared('i32', n);
      await gather(policy, sm, si, so);
      expectSameArray(so, refGather(sm, si, new Int32Array(n)), `shared gather n=${n}`);
      so.fill(0);
      await scatter(policy, si, sm, so);
      expectSameArray(so, refScatter(si, sm, new Int32Array(n)), `shared scatter n=${n}`);
    }
  });

  if (gpu && testDevice) {
    const device = testDevice;
    it('DeviceArray views at offsets (unaligned paths), padding untouched; out-of-range indices skipped', async () => {
      const fallback = name === 'auto' ? undefined : policy;
      for (const n of [1, 3, 4, 7, 64, 257, 1000, 4099]) {
        const input = makeData('u32', n + 2, 'random');
        const map = randomMap(n, n + 2, 5);
        const perm = permutation(n, 6);
        for (const [a, b] of [
          [0, 0],
          [1, 0],
          [0, 3],
          [4, 8],
        ] as const) {
          const din = place(device, input, a);
          const dmap = place(device, map, b);
          const dout = place(device, filled('u32', n), a + b);
          await gather(policy, dmap.view, din.view, dout.view);
          expectSameArray(await dout.read(), refGather(map, input, filled('u32', n)), `gather n=${n} @${a},${b}`);
          const dperm = place(device, perm, a);
          const dst = place(device, filled('u32', n + 2), b);
          await scatter(policy, din.view.view(0, n), dperm.view, dst.view);
          expectSameArray(
            await dst.read(),
            refScatter(input.subarray(0, n), perm, filled('u32', n + 2)),
            `scatter n=${n} @${a},${b}`,
          );
          expectSameArray(await din.read(), input, 'input untouched');
          for (const p of [din, dmap, dout, dperm, dst]) p.parent.destroy();
        }
        if (!fallback) continue;
        // On the GPU an index out of range (here: every third one, u32 past the end and i32 negative) is skipped.
        const bad = Int32Array.from(map, (x, i) => (i % 3 === 0 ? (i % 2 ? -1 - i : n + 2 + i) : x));
        const dbad = DeviceArray.from(device, bad);
        const dinput = DeviceArray.from(device, input);
        const dout = DeviceArray.from(device, filled('u32', n) as Uint32Array);
        await gather(fallback, dbad, dinput, dout);
        const want = filled('u32', n);
        for (let i = 0; i < n; i++) if (i % 3 !== 0) want[i] = input[bad[i] as number] as number;
        expectSameArray(await dout.read(), want, `gather skips out-of-range n=${n}`);
        // (scatter: a permutation, so no index repeats.)
        const badPerm = Int32Array.from(perm, (x, i) => (i % 3 === 0 ? (i % 2 ? -1 - i : n + 2 + i) : x));
        const hostOut = filled('u32', n + 2);
        await scatter(fallback, input.subarray(0, n), badPerm, hostOut);
        const want2 = filled('u32', n + 2);
        for (let i = 0; i < n; i++) if (i % 3 !== 0) want2[badPerm[i] as number] = input[i] as number;
        expectSameArray(hostOut, want2, `scatter skips out-of-range n=${n}`);
        for (const d of [dbad, dinput, dout]) d.destroy();
      }
    });

    // (auto may run host arrays on either side, where the two differ: an error or a skip.)
    itIf(name !== 'auto')('an empty gathered input or scattered output: every index is skipped', async () => {
      const o2 = new Uint32Array(2).fill(9);
      const toEmpty = new Uint32Array(0);
      await gather(policy, Uint32Array.of(0, 5), toEmpty, o2);
      expect([...o2]).toEqual([9, 9]);
      await scatter(policy, Uint32Array.of(1, 2, 3), Uint32Array.of(0, 1, 2), toEmpty);
    });

    it('a gathered input in the output buffer (read from a copy)', async () => {
      const n = 300;
      const data = makeData('u32', 2 * n, 'random');
      const both = place(device, data, 1);
      const map = permutation(n, 3);
      await gather(policy, map, both.view.view(0, n), both.view.view(n, n));
      const got = await both.read();
      expectSameArray(got.subarray(n), refGather(map, data.subarray(0, n), new Uint32Array(n)), 'same buffer');
      both.parent.destroy();
      // A map and a stencil in the output's buffer (streamed arrays read from copies), and scatter.
      const input = makeData('u32', n, 'random', 5);
      const all = place(device, Uint32Array.from([...map, ...new Uint32Array(n).fill(1), ...new Uint32Array(n)]), 3);
      const [dmap, dst, dout] = [0, 1, 2].map((k) => all.view.view(k * n, n)) as [
        DeviceArray,
        DeviceArray,
        DeviceArray,
      ];
      await gatherIf(policy, dmap, dst, input, dout);
      expectSameArray(
        (await all.read()).subarray(2 * n),
        refGather(map, input, new Uint32Array(n)),
        'map in out buffer',
      );
      await scatter(policy, input, dmap, dout);
      expectSameArray(
        (await all.read()).subarray(2 * n),
        refScatter(input, map, new Uint32Array(n)),
        'scatter, map in out buffer',
      );
      expectSameArray((await all.read()).subarray(0, n), map, 'map untouched');
      all.parent.destroy();
    });
  }
});

describe('gather / scatter: the unrolled CPU loops (blocks of 8 and their tails)', () => {
  // Sizes around multiples of the unroll (8) and the par pool's chunks (minChunk 64): every block
  // and tail of the generated loops and of the check loop.
  const ns = [1, 5, 7, 8, 9, 15, 16, 17, 63, 64, 65, 127, 129, 1003];
  const odd = lambda((i: number) => i % 3 !== 1);
  for (const [name, policy] of [
    ['seq', execution.seq],
    ['par pool', parPool],
  ] as const) {
    it(`${name}: gather / scatter, repeated scatter indices (seq: the last write), stencil forms`, async () => {
      for (const n of ns) {
        const input = makeData('u32', n + 3, 'random', n);
        const map = randomMap(n, n + 3, n + 1, 'i32');
        const out = filled('u32', n);
        await gather(policy, map, input, out);
        expectSameArray(out, refGather(map, input, filled('u32', n)), `gather n=${n}`);

        // Few distinct indices, so most are repeated within a block of 8 and across blocks.
        const src = input.subarray(0, n);
        const few = randomMap(n, 3, n + 2);
        const dst = filled('u32', 5);
        await scatter(policy, src, few, dst);
        if (policy === execution.seq) {
          expectSameArray(dst, refScatter(src, few, filled('u32', 5)), `scatter repeats n=${n}`);
        } else {
          // par: one of the values scattered to each index (7 where none was).
          for (let k = 0; k < 3; k++) {
            const vals = [...src].filter((_, i) => few[i] === k);
            expect(vals.length === 0 ? [7] : vals).toContain(dst[k]);
          }
          expect([dst[3], dst[4]]).toEqual([7, 7]);
        }

        // Stencils: out-of-range indices where the stencil fails (never read), in blocks and tails.
        const st = stencilData('i32', n, n + 4);
        const bad = Int32Array.from(map);
        for (let i = 0; i < n; i++) if (st[i] === 0) bad[i] = i % 2 === 0 ? -1 - i : n + 3 + i;
        const g = filled('u32', n);
        await gatherIf(policy, bad, st, input, g);
        expectSameArray(g, refGather(bad, input, filled('u32', n), st), `gatherIf n=${n}`);
        const gc = filled('u32', n);
        await gatherIf(policy, map, counting(n), input, gc, odd);
        const want = filled('u32', n);
        for (let i = 0; i < n; i++) if (i % 3 !== 1) want[i] = input[map[i] as number] as number;
        expectSameArray(gc, want, `gatherIf counting n=${n}`);
        const perm = Int32Array.from(permutation(n, n + 5));
        for (let i = 0; i < n; i++) if (st[i] === 0) perm[i] = -7;
        const sc = filled('u32', n);
        await scatterIf(policy, src, perm, st, sc);
        expectSameArray(sc, refScatter(src, perm, filled('u32', n), st), `scatterIf n=${n}`);
      }
    });
  }

  it('scatter into an output past the unrolled limit (the plain loop), repeated indices keep the last', async () => {
    const n = 1003;
    const big = filled('u32', (1 << 21) + 5);
    const input = makeData('u32', n, 'random', 9);
    const map = randomMap(n, 11, 10);
    for (let i = 0; i < n; i += 4) map[i] = (1 << 21) + 4 - (i % 3);
    await scatter(execution.seq, input, map, big);
    const want = filled('u32', (1 << 21) + 5);
    refScatter(input, map, want);
    expectSameArray(big, want, 'scatter big');
  });

  it('par: the check in chunks reports the first bad index of the first failing chunk, output untouched', async () => {
    const n = 1003;
    const input = makeData('u32', n, 'random', 5);
    for (const shared of [false, true]) {
      const map = shared ? allocShared('u32', n) : new Uint32Array(n);
      map.set(randomMap(n, n, 6));
      map[700] = n;
      map[900] = n + 5;
      map[950] = 2 * n;
      const out = filled('u32', n);
      for (const policy of [parPool, execution.par]) {
        await expect(gather(policy, map, input, out)).rejects.toThrow(`got map[700] = ${n}`);
        await expect(scatter(policy, input, map, out)).rejects.toThrow(`got map[700] = ${n}`);
        const st = shared ? allocShared('u32', n).fill(1) : new Uint32Array(n).fill(1);
        st[700] = 0;
        await expect(gatherIf(policy, map, st, input, out)).rejects.toThrow(`got map[900] = ${n + 5}`);
        await expect(scatterIf(policy, input, map, st, out)).rejects.toThrow(`got map[900] = ${n + 5}`);
        expect(out.every((v) => v === 7)).toBe(true);
      }
    }
  });

  it('the check finds the first bad index in a block, in the tail, and only where the stencil passes', async () => {
    const input = makeData('u32', 40, 'random', 3);
    for (const at of [0, 3, 8, 13, 31, 32, 36, 39]) {
      for (const type of ['u32', 'i32'] as const) {
        const map = randomMap(40, 40, at, type);
        map[at] = type === 'u32' ? 40 : -1;
        if (at + 2 < 40) map[at + 2] = type === 'u32' ? 4000000000 : 41;
        const out = filled('u32', 40);
        await expect(gather(execution.seq, map, input, out)).rejects.toThrow(`got map[${at}] = ${map[at]}`);
        const st = new Uint32Array(40).fill(1);
        st[at] = 0;
        const want = at + 2 < 40 ? `got map[${at + 2}]` : undefined;
        const call = gatherIf(execution.seq, map, st, input, out);
        if (want) await expect(call).rejects.toThrow(want);
        else await call;
        if (want) expect([...out]).toEqual(new Array(40).fill(7));
      }
    }
  });
});

describe('gather / scatter: bad input', () => {
  const seq = execution.seq;
  it('names the argument; out-of-range indices on the CPU leave the output untouched', async () => {
    for (const policy of [execution.seq, execution.par, parPool]) {
      const input = Uint32Array.from([10, 11, 12, 13]);
      const out = new Uint32Array(4).fill(9);
      await expect(gather(policy, Uint32Array.from([0, 4, 1, 2]), input, out)).rejects.toThrow(
        /map: expected indices in \[0, 4\) \(the length of input\), got map\[1\] = 4/,
      );
      await expect(gather(policy, Int32Array.from([0, 1, -1, 2]), input, out)).rejects.toThrow(/got map\[2\] = -1/);
      await expect(gather(policy, Uint32Array.of(0), new Uint32Array(0), out)).rejects.toThrow(
        /expected indices in \[0, 0\) \(the length of input\), got map\[0\] = 0/,
      );
      await expect(scatter(policy, input, Uint32Array.from([3, 2, 1, 9]), out)).rejects.toThrow(
        /map: expected indices in \[0, 4\) \(the length of output\), got map\[3\] = 9/,
      );
      await expect(
        gatherIf(policy, Uint32Array.from([0, 1, 7, 2]), Uint32Array.from([0, 1, 1, 0]), input, out),
      ).rejects.toThrow(/got map\[2\] = 7/);
      await expect(
        scatterIf(policy, input, Int32Array.from([0, -3, 1, 2]), Float32Array.from([1, 2, 0, 1]), out),
      ).rejects.toThrow(/got map\[1\] = -3/);
      expect([...out]).toEqual([9, 9, 9, 9]);
      expect([...input]).toEqual([10, 11, 12, 13]);
    }
  });

  it('wrong types, lengths and aliasing', async () => {
    const input = Uint32Array.from([10, 11, 12, 13]);
    const map = Uint32Array.from([3, 2, 1, 0]);
    const out = new Uint32Array(4).fill(9);
    await expect(gather(seq, Float32Array.from([0, 1]), input, out)).rejects.toThrow(
      /map: expected a u32 or i32 array of indices, got f32 elements/,
    );
    await expect(gather(seq, [0, 1] as unknown as Uint32Array, input, out)).rejects.toThrow(/map: expected/);
    await expect(gather(seq, map, input, new Uint32Array(3))).rejects.toThrow(/output: expected at least 4 elements/);
    await expect(gather(seq, map, input, new Int32Array(4))).rejects.toThrow(/output: expected an array of u32/);
    await expect(scatter(seq, input, map.subarray(0, 3), out)).rejects.toThrow(/map: expected 4 elements/);
    await expect(scatter(seq, input, map, new Float32Array(4))).rejects.toThrow(/output: expected an array of u32/);
    await expect(gatherIf(seq, map, new Uint32Array(3), input, out)).rejects.toThrow(/stencil: expected 4 elements/);
    await expect(scatterIf(seq, input, map, new Uint32Array(4), out, 5 as never)).rejects.toThrow(/pred/);
    await expect(gather(seq, map, input, input)).rejects.toThrow(/output: expected memory that does not overlap input/);
    await expect(scatter(seq, input, map, map)).rejects.toThrow(/output: expected memory that does not overlap map/);
    await expect(gather({} as never, map, input, out)).rejects.toThrow(/policy/);
    expect([...out]).toEqual([9, 9, 9, 9]);
    expect([...map]).toEqual([3, 2, 1, 0]);
  });

  if (testDevice) {
    const device = testDevice;
    it('DeviceArrays need a device policy', async () => {
      const d = DeviceArray.from(device, Uint32Array.from([1, 2, 3]));
      await expect(gather(seq, Uint32Array.from([0]), d, new Uint32Array(1))).rejects.toThrow(/policy/);
      d.destroy();
    });
  }
});

describe.runIf(testDevice)('gather / scatter at 2^24+1 (2-D grids past 65,535 workgroups, store writes)', () => {
  it('a reversing map on DeviceArrays, generated with counting(n)', async () => {
    const device = testDevice as NonNullable<typeof testDevice>;
    const policy = makeDevicePolicy(device, {
      fallback: 'error',
      tuning: { map: { workgroupSize: 32, vecsPerThread: 1, itemsPerThread: 1 } },
    });
    const n = 2 ** 24 + 1;
    const src = DeviceArray.create(device, 'u32', n);
    const map = DeviceArray.create(device, 'u32', n);
    const dst = DeviceArray.create(device, 'u32', n);
    try {
      await iota(policy, src, 7);
      await transform(
        policy,
        counting(n),
        map,
        lambda((i: number) => last - i, { captures: { last: n - 1 } }),
      );
      for (const kind of ['gather', 'scatter'] as const) {
        if (kind === 'gather') await gather(policy, map, src, dst);
        else await scatter(policy, src, map, dst);
        const got = await dst.read();
        let bad = -1;
        for (let i = 0; i < n; i++) {
          if (got[i] !== 7 + (n - 1 - i)) {
            bad = i;
            break;
          }
        }
        expect(bad, `${kind}: first wrong element`).toBe(-1);
        await iota(policy, dst, 0);
      }
    } finally {
      src.destroy();
      map.destroy();
      dst.destroy();
    }
  });
});

describe.runIf(testDevice)('gather: masked vec4 writes', () => {
  it('into outputs longer than the map (host and device), a stencil failing inside vec4s, at offsets', async () => {
    const device = testDevice as NonNullable<typeof testDevice>;
    const policy = makeDevicePolicy(device, { fallback: 'error' });
    for (const n of [1, 4, 5, 8, 37, 1031]) {
      const input = makeData('f32', n + 3, 'random');
      const map = randomMap(n, n + 3, 11);
      const st = Uint32Array.from({ length: n }, (_, i) => (i % 5 === 2 || i % 7 === 0 ? 0 : 1));
      // Host output of n + 6 elements: the 6 past the map keep their values.
      const host = filled('f32', n + 6);
      await gather(policy, map, input, host);
      expectSameArray(host, refGather(map, input, filled('f32', n + 6)), `host n=${n}`);
      for (const off of [0, 2, 4]) {
        const dout = place(device, filled('f32', n + 6), off);
        const dmap = place(device, map, off);
        const dst = place(device, st, off);
        await gatherIf(policy, dmap.view, dst.view, input, dout.view);
        expectSameArray(await dout.read(), refGather(map, input, filled('f32', n + 6), st), `gatherIf n=${n} @${off}`);
        for (const p of [dout, dmap, dst]) p.parent.destroy();
      }
    }
  });
});

describe.runIf(testDevice)('scatter: indexed vec4 writes', () => {
  it('blocked maps (each aligned vec4 filled in any order) and mixed ones, stencils failing inside vec4s, at offsets', async () => {
    const device = testDevice as NonNullable<typeof testDevice>;
    const policy = makeDevicePolicy(device, { fallback: 'error' });
    for (const n of [4, 7, 64, 1030]) {
      const input = makeData('i32', n, 'random');
      const m = n - (n % 4);
      // i ^ 3 and i ^ 1 inside the whole vec4s (the tail maps to itself), then a shifted map.
      const maps = [
        Uint32Array.from({ length: n }, (_, i) => (i < m ? i ^ 3 : i)),
        Uint32Array.from({ length: n }, (_, i) => (i < m ? i ^ 1 : i)),
        Uint32Array.from({ length: n }, (_, i) => (i + 1) % n),
      ];
      const st = Uint32Array.from({ length: n }, (_, i) => (i % 6 === 5 ? 0 : 1));
      for (const [k, map] of maps.entries()) {
        for (const off of [0, 1, 4]) {
          const dout = place(device, filled('i32', n + 2), off);
          await scatter(policy, input, map, dout.view);
          expectSameArray(await dout.read(), refScatter(input, map, filled('i32', n + 2)), `map ${k} n=${n} @${off}`);
          dout.parent.destroy();
          const dout2 = place(device, filled('i32', n + 2), off);
          await scatterIf(policy, input, map, st, dout2.view);
          expectSameArray(
            await dout2.read(),
            refScatter(input, map, filled('i32', n + 2), st),
            `if map ${k} n=${n} @${off}`,
          );
          dout2.parent.destroy();
        }
      }
    }
  });
});
