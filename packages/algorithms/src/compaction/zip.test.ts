import {
  ArgumentError,
  DeviceArray,
  type GpuDevice,
  gpuSelector,
  type OpenOptions,
  openDevice,
  selectCandidate,
} from '@webdpl/core';
import { makeDevicePolicy } from '@webdpl/policies';
import { afterAll, describe, expect, it } from 'vitest';
import { zip } from '../common/zip';
import { expectSameArray } from '../testing/arrays';
import { isEngineVariant, itIf, parPool } from '../testing/device-data';
import { edgeSizes, makeData, policyMatrix, TINY_SCAN_TILE, testDevice } from '../testing/matrix';
import { copyIf, partition, removeIf, stablePartition, unique } from './index';

const sizes = edgeSizes([TINY_SCAN_TILE, 256 * 24], [123457]);
const matrix = [...policyMatrix(), { name: 'par pool', policy: parPool, gpu: false }];

/** The elements of each array at the indices where keep(i) holds. */
function kept<T extends Uint32Array | Int32Array | Float32Array>(a: T, keep: (i: number) => boolean): T {
  return a.filter((_, i) => keep(i)) as T;
}

describe.each(matrix)('copyIf and removeIf over zip(...) under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);

  it('copyIf and the copying removeIf of zip(u32, f32, i32); removeIf in place', async () => {
    for (const n of variant ? sizes.filter((s) => s < 5000) : sizes) {
      const a = makeData('u32', n, 'random');
      const b = makeData('f32', n, 'random', n + 2);
      const c = makeData('i32', n, n % 3 === 0 ? 'constant' : 'random', n + 3);
      const keep = (i: number) => (a[i]! & 3) === 0 || b[i]! > 0.5;
      const oa = new Uint32Array(n);
      const ob = new Float32Array(n);
      const oc = new Int32Array(n + 1).fill(-7);
      const count = await copyIf(
        policy,
        zip(a, b, c),
        zip(oa, ob, oc.subarray(0, n)),
        (x: number, y: number, _z: number) => (x & 3) === 0 || y > 0.5,
      );
      const want = kept(a, keep);
      expect(count, `count n=${n}`).toBe(want.length);
      expectSameArray(oa.subarray(0, count), want, `[0] n=${n}`);
      expectSameArray(ob.subarray(0, count), kept(b, keep), `[1] n=${n}`);
      expectSameArray(oc.subarray(0, count), kept(c, keep), `[2] n=${n}`);
      expect(oc[n]).toBe(-7);
      const ra = new Uint32Array(n);
      const rc = new Int32Array(n);
      const rest = await removeIf(
        policy,
        zip(a, c),
        zip(ra, rc),
        (x: number, _z: number, i: number) => (x & 3) === 0 || i % 5 === 0,
      );
      const drop = (i: number) => !((a[i]! & 3) === 0 || i % 5 === 0);
      expect(rest).toBe(kept(a, drop).length);
      expectSameArray(ra.subarray(0, rest), kept(a, drop), `removeIf copy [0] n=${n}`);
      expectSameArray(rc.subarray(0, rest), kept(c, drop), `removeIf copy [1] n=${n}`);
      const a2 = a.slice();
      const b2 = b.slice();
      const m = await removeIf(policy, zip(a2, b2), (x: number, y: number) => (x & 3) === 0 || y > 0.5);
      const stay = (i: number) => !keep(i);
      expect(m).toBe(kept(a, stay).length);
      expectSameArray(a2.subarray(0, m), kept(a, stay), `in place [0] n=${n}`);
      expectSameArray(b2.subarray(0, m), kept(b, stay), `in place [1] n=${n}`);
    }
  });

  itIf(gpu && !variant)('DeviceArrays: inputs, outputs (one shorter than n), in place, stablePartition', async () => {
    const device = testDevice as NonNullable<typeof testDevice>;
    for (const n of [1, 5, 1000, 4099]) {
      const a = makeData('u32', n, 'random');
      const b = makeData('f32', n, 'random', 4);
      const keep = (i: number) => (a[i]! & 1) === 1;
      const want = kept(a, keep);
      const da = DeviceArray.from(device, a);
      const db = DeviceArray.from(device, b);
      const oa = DeviceArray.create(device, 'u32', n);
      const ob = DeviceArray.create(device, 'f32', Math.max(want.length, 1));
      const count = await copyIf(
        policy,
        zip(da, db),
        zip(oa.view(0, ob.length), ob),
        (x: number, _y: number) => (x & 1) === 1,
      );
      expect(count).toBe(want.length);
      expectSameArray((await oa.read()).subarray(0, count), want, `[0] n=${n}`);
      expectSameArray((await ob.read()).subarray(0, count), kept(b, keep), `[1] n=${n}`);
      const m = await removeIf(policy, zip(da, db), (x: number, _y: number) => (x & 1) === 1);
      expect(m).toBe(n - want.length);
      expectSameArray(
        (await da.read()).subarray(0, m),
        kept(a, (i) => !keep(i)),
        `in place [0] n=${n}`,
      );
      expectSameArray(
        (await db.read()).subarray(0, m),
        kept(b, (i) => !keep(i)),
        `in place [1] n=${n}`,
      );
      const pa = DeviceArray.from(device, a);
      const pb = DeviceArray.from(device, b);
      const pc = await stablePartition(policy, zip(pa, pb), (x: number, _y: number) => (x & 1) === 1);
      expect(pc).toBe(want.length);
      const not = (i: number) => !keep(i);
      expectSameArray(Array.from(await pa.read()), [...want, ...kept(a, not)], `stablePartition [0] n=${n}`);
      expectSameArray(Array.from(await pb.read()), [...kept(b, keep), ...kept(b, not)], `stablePartition [1] n=${n}`);
      for (const x of [da, db, oa, ob, pa, pb]) x.destroy();
    }
  });
});

describe('copyIf / removeIf over zip(...): argument errors', () => {
  const seq = matrix[0]?.policy as (typeof matrix)[number]['policy'];
  it('outputs, arity and short outputs are ArgumentErrors; nothing is written', async () => {
    const a = Uint32Array.of(1, 2, 3, 4);
    const b = Float32Array.of(1, 2, 3, 4);
    const oa = new Uint32Array(4).fill(9);
    const ob = new Float32Array(4).fill(9);
    await expect(copyIf(seq, zip(a, b), oa as never, (x: number) => x > 0)).rejects.toThrow(/output.*zip/);
    await expect(copyIf(seq, zip(a, b), zip(oa, oa), (x: number) => x > 0)).rejects.toThrow(ArgumentError);
    await expect(copyIf(seq, zip(a, b), zip(ob, oa), (x: number, _y: number) => x > 0)).rejects.toThrow(
      /output\[0\].*u32/,
    );
    await expect(
      copyIf(seq, zip(a, b), zip(oa, ob), (x: number, y: number, z: number, w: number) => x + y + z + w),
    ).rejects.toThrow(/pred.*2 parameter/);
    await expect(
      copyIf(seq, zip(a, b), zip(oa.subarray(0, 2), ob.subarray(0, 2)), (x: number, _y: number) => x > 0),
    ).rejects.toThrow(/at least 4 elements/);
    expectSameArray(oa, new Uint32Array(4).fill(9), 'untouched');
    await expect(removeIf(seq, zip(a, a), (x: number, _y: number) => x > 0)).rejects.toThrow(/data\[1\]/);
  });
});

describe.each(matrix)('partition, stablePartition and unique over zip(...) under $name', ({ name, policy, gpu }) => {
  const variant = isEngineVariant(name);

  it('partition and stablePartition of zip(u32, f32, i32): kept first, both groups in order', async () => {
    for (const n of variant ? sizes.filter((s) => s < 5000) : sizes) {
      for (const part of [partition, stablePartition]) {
        const a = makeData('u32', n, 'random');
        const b = makeData('f32', n, 'random', n + 2);
        const c = makeData('i32', n, 'random', n + 3);
        const keep = (i: number) => (a[i]! & 3) === 0 || b[i]! > 0.5;
        const not = (i: number) => !keep(i);
        const want = [a, b, c].map((x) => [...kept(x, keep), ...kept(x, not)]);
        const count = await part(policy, zip(a, b, c), (x: number, y: number, _z: number) => (x & 3) === 0 || y > 0.5);
        expect(count, `${part.name} count n=${n}`).toBe(kept(a, keep).length);
        [a, b, c].forEach((got, k) => {
          expectSameArray(Array.from(got), want[k]!, `${part.name} [${k}] n=${n}`);
        });
      }
    }
  });

  it('unique of zip(u32, f32): a tuple is a duplicate when every element is (===: NaN never, -0 === +0)', async () => {
    for (const n of variant ? sizes.filter((s) => s < 5000) : sizes) {
      // Runs of equal first elements, the second deciding within them; f32 with NaN and both zeros.
      const r = makeData('u32', n, 'random', n + 5);
      const a = Uint32Array.from(r, (v, i) => (i >> 2) + (v % 5 === 0 ? 1 : 0));
      const specials = [0, -0, Number.NaN, 1];
      const b = Float32Array.from(r, (v, i) => specials[(i >> 3) % 2 === 0 ? v % 2 : v % 4]!);
      const keepIdx: number[] = [];
      for (let i = 0; i < n; i++) if (i === 0 || a[i] !== a[i - 1] || b[i] !== b[i - 1]) keepIdx.push(i);
      const wantA = keepIdx.map((i) => a[i]!);
      const wantB = keepIdx.map((i) => b[i]!);
      if (gpu && n <= 5000) {
        const device = testDevice as NonNullable<typeof testDevice>;
        const da = DeviceArray.from(device, a);
        const db = DeviceArray.from(device, b);
        const m = await unique(policy, zip(da, db));
        expect(m, `device count n=${n}`).toBe(keepIdx.length);
        expectSameArray(Array.from((await da.read()).subarray(0, m)), wantA, `device [0] n=${n}`);
        expectSameArray(Array.from((await db.read()).subarray(0, m)), wantB, `device [1] n=${n}`);
        da.destroy();
        db.destroy();
      }
      const m = await unique(policy, zip(a, b));
      expect(m, `count n=${n}`).toBe(keepIdx.length);
      expectSameArray(Array.from(a.subarray(0, m)), wantA, `[0] n=${n}`);
      expectSameArray(Array.from(b.subarray(0, m)), wantB, `[1] n=${n}`);
    }
  });
});

describe('partition and unique over zip(...): argument errors', () => {
  const seq = matrix[0]?.policy as (typeof matrix)[number]['policy'];
  it('a predicate of the wrong arity, overlapping arrays: errors before anything moves', async () => {
    const a = Uint32Array.of(3, 1, 2);
    const b = Float32Array.of(1, 2, 3);
    await expect(
      partition(seq, zip(a, b), (x: number, y: number, i: number, j: number) => x + y + i + j > 0),
    ).rejects.toThrow(/^pred/);
    await expect(stablePartition(seq, zip(a, a), (x: number, y: number) => x > y)).rejects.toThrow(
      /data\[1\].*overlap/,
    );
    await expect(unique(seq, zip(b, a, a))).rejects.toThrow(/data\[2\].*overlap/);
    expectSameArray(a, Uint32Array.of(3, 1, 2), 'a untouched');
    expectSameArray(b, Float32Array.of(1, 2, 3), 'b untouched');
  });
});

/** Counts calls of `target`'s methods `names` while `f` runs. */
async function countCalls(target: object, names: readonly string[], f: () => Promise<unknown>): Promise<number> {
  const t = target as Record<string, unknown>;
  let count = 0;
  for (const name of names) {
    const original = t[name] as (...a: unknown[]) => unknown;
    t[name] = (...args: unknown[]) => {
      count++;
      return original.apply(t, args);
    };
  }
  try {
    await f();
  } finally {
    for (const name of names) delete t[name];
  }
  return count;
}

/** Counts the device's queue submissions while `f` runs. */
function countSubmits(device: GpuDevice, f: () => Promise<unknown>): Promise<number> {
  return countCalls(device.gpu.queue, ['submit'], f);
}

describe.skipIf(!testDevice)(
  'copyIf, removeIf and partitions over zip(...) on the GPU: one pass of the scan engine',
  () => {
    const opened: GpuDevice[] = [];
    afterAll(() => {
      for (const d of opened) d.destroy();
    });
    async function deviceWith(options: OpenOptions): Promise<GpuDevice> {
      const d = (await openDevice(await selectCandidate(gpuSelector), options)) as GpuDevice;
      opened.push(d);
      return d;
    }

    /** copyIf, copying removeIf and in-place removeIf over a zip of `k` arrays: submissions of each, checked. */
    async function submitsOf(device: GpuDevice, k: number): Promise<number[]> {
      const policy = makeDevicePolicy(device, {
        fallback: 'error',
        tuning: { scan: { workgroupSize: 32, itemsPerThread: 4 } },
      });
      const n = 3001;
      const arrays = [
        makeData('u32', n, 'random', 1),
        makeData('f32', n, 'random', 2),
        makeData('i32', n, 'random', 3),
        makeData('u32', n, 'random', 4),
      ].slice(0, k);
      const a = arrays[0] as Uint32Array;
      const keep = (i: number) => (a[i]! & 3) !== 0;
      // The predicate takes one parameter per array.
      const pred = [
        (x: number, _y: number) => (x & 3) !== 0,
        (x: number, _y: number, _z: number) => (x & 3) !== 0,
        (x: number, _y: number, _z: number, _w: number) => (x & 3) !== 0,
      ][k - 2] as (x: number, y: number) => boolean;
      const outs = arrays.map((x) => x.slice().fill(0));
      const data = arrays.map((x) => x.slice());
      /** Each array's first `c` elements of `got` are its elements where `which` holds. */
      const check = (got: typeof arrays, c: number, which: (i: number) => boolean, what: string) => {
        for (const [j, x] of arrays.entries()) {
          expectSameArray((got[j] as Uint32Array).subarray(0, c), kept(x, which), `${what} [${j}] of ${k}`);
        }
      };
      const z = (xs: typeof arrays) => zip(...(xs as [Uint32Array, Float32Array]));
      return [
        await countSubmits(device, async () => {
          const c = await copyIf(policy, z(arrays), z(outs), pred);
          expect(c).toBe(kept(a, keep).length);
          check(outs, c, keep, 'copyIf');
        }),
        await countSubmits(device, async () => {
          check(outs, await removeIf(policy, z(arrays), z(outs), pred), (i) => !keep(i), 'removeIf copy');
        }),
        await countSubmits(device, async () => {
          check(data, await removeIf(policy, z(data), pred), (i) => !keep(i), 'removeIf');
        }),
        await countSubmits(device, async () => {
          const parts = arrays.map((x) => x.slice());
          const c = await stablePartition(policy, z(parts), pred);
          expect(c).toBe(kept(a, keep).length);
          const rest = arrays.map((x) => x.slice(c).fill(0));
          for (const [j, x] of parts.entries()) (rest[j] as Uint32Array).set(x.subarray(c));
          check(parts, c, keep, 'stablePartition');
          check(rest, n - c, (i) => !keep(i), 'stablePartition, the rest');
        }),
      ];
    }

    it('zips of 2 and 3 arrays take one submission (one compaction), zips of 4 the K + 1 passes', async () => {
      const device = testDevice as GpuDevice;
      // copyIf, copying removeIf, in-place removeIf, stablePartition
      expect(await submitsOf(device, 2)).toEqual([1, 1, 1, 1]);
      expect(await submitsOf(device, 3)).toEqual([1, 1, 1, 1]);
      expect(await submitsOf(device, 4)).toEqual([5, 5, 5, 5]);
    });

    it('a second identical call on DeviceArrays builds nothing (no buffer, bind group, pipeline, parameter write)', async () => {
      const device = testDevice as GpuDevice;
      const policy = makeDevicePolicy(device, { fallback: 'error' });
      const n = 5000;
      const a = makeData('u32', n, 'random', 5) as Uint32Array;
      const c = makeData('i32', n, 'random', 7) as Int32Array;
      const ins = [
        DeviceArray.from(device, a),
        DeviceArray.from(device, makeData('f32', n, 'random', 6)),
        DeviceArray.from(device, c),
      ];
      const outs = [
        DeviceArray.create(device, 'u32', n),
        DeviceArray.create(device, 'f32', n),
        DeviceArray.create(device, 'i32', n),
      ];
      const z = (xs: DeviceArray[]) => zip(...(xs as [DeviceArray, DeviceArray, DeviceArray]));
      const call = () => copyIf(policy, z(ins), z(outs), (x: number, _y: number, _z: number) => (x & 1) === 1);
      const creators = [
        'createBuffer',
        'createBindGroup',
        'createComputePipeline',
        'createComputePipelineAsync',
        'createShaderModule',
      ];
      try {
        const first = await call();
        let second = 0;
        let writes = 0;
        const made = await countCalls(device.gpu, creators, async () => {
          writes = await countCalls(device.gpu.queue, ['writeBuffer'], async () => {
            second = await call();
          });
        });
        expect([made, writes]).toEqual([0, 0]);
        expect(second).toBe(first);
        expectSameArray(
          (await (outs[2] as DeviceArray).read()).subarray(0, first),
          kept(c, (i) => (a[i]! & 1) === 1),
          '[2]',
        );
      } finally {
        for (const x of [...ins, ...outs]) x.destroy();
      }
    });

    it('where the device allows fewer storage buffers than the kernel binds, the K + 1 passes', async () => {
      // 7: a zip of 3 binds 8 (scalar path: state, ctrl, input, 2 streamed, 3 outputs), a zip of 2 binds
      // 7 on the vec4 path (the input twice). 6: the zip of 2 runs on the scalar path (6).
      const seven = await deviceWith({ limits: { maxStorageBuffersPerShaderStage: 7 } });
      expect(seven.limits.maxStorageBuffersPerShaderStage).toBe(7);
      expect(await submitsOf(seven, 3)).toEqual([4, 4, 4, 4]);
      expect(await submitsOf(seven, 2)).toEqual([1, 1, 1, 1]);
      const six = await deviceWith({ limits: { maxStorageBuffersPerShaderStage: 6 } });
      expect(await submitsOf(six, 2)).toEqual([1, 1, 1, 1]);
      expect(await submitsOf(six, 3)).toEqual([4, 4, 4, 4]);
    });
  },
);
