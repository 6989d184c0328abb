/**
 * Host arrays over shared memory (`allocShared`, what par users hold) under GPU policies: the pattern
 * layer uploads shared inputs (and host outputs it copies in first) and reads results back into
 * shared outputs. Every call is compared bit for bit with the same call on plain arrays.
 */
import { DeviceArray, type HostArray, lambda } from '@webdpl/core';
import { allocShared, isShared } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { copyIf } from '../compaction/index';
import { gather } from '../gather/index';
import { reduce } from '../reduce/index';
import { exclusiveScan, inclusiveScan } from '../scans/index';
import { sort } from '../sort/index';
import { sortByKey } from '../sort-by-key/index';
import { expectSameArray } from '../testing/arrays';
import { makeData, policyMatrix, testDevice } from '../testing/matrix';
import { transform } from '../transform/index';
import { transformIf } from '../transform-if/index';

type T3 = 'u32' | 'i32' | 'f32';

function shared<T extends HostArray>(data: T): T {
  const s = allocShared(data instanceof Uint32Array ? 'u32' : data instanceof Int32Array ? 'i32' : 'f32', data.length);
  s.set(data);
  return s as T;
}

const odd = lambda((x: number) => x % 2 !== 0);
const twice = lambda((x: number) => x * 2);
const sum2 = lambda((x: number, y: number) => x + y);

/** Runs `call` on plain copies and on shared copies of `arrays`; the arrays after it and the results must match. */
async function same(label: string, arrays: HostArray[], call: (a: HostArray[]) => Promise<unknown>): Promise<void> {
  const plain = arrays.map((a) => a.slice());
  const sh = arrays.map(shared);
  expect(sh.every(isShared)).toBe(true);
  const want = await call(plain);
  const got = await call(sh);
  expect(got, label).toEqual(want);
  for (let k = 0; k < arrays.length; k++) expectSameArray(sh[k] as HostArray, plain[k] as HostArray, `${label} #${k}`);
}

const gpuPolicies = policyMatrix().filter((p) => p.gpu);

describe.skipIf(!testDevice)('allocShared arrays under GPU policies', () => {
  for (const { name, policy } of gpuPolicies) {
    it(`${name}: reduce, scans, copyIf, sort, sortByKey, transform, gather, transformIf`, async () => {
      for (const n of [1, 5, 1000, 70001]) {
        for (const t of ['u32', 'i32', 'f32'] as T3[]) {
          const x = makeData(t, n, 'small', 3);
          const y = makeData(t, n, 'small', 4);
          const out = makeData(t, n, 'small', 5);
          const l = `${name} ${t} n=${n}`;
          await same(`reduce ${l}`, [x], ([a]) => reduce(policy, a as HostArray));
          await same(`inclusiveScan ${l}`, [x, out], ([a, o]) => inclusiveScan(policy, a as HostArray, o as HostArray));
          await same(`exclusiveScan ${l}`, [x, out], ([a, o]) =>
            exclusiveScan(policy, a as HostArray, o as HostArray, 7),
          );
          await same(`copyIf ${l}`, [x, out], ([a, o]) => copyIf(policy, a as HostArray, o as HostArray, odd));
          await same(`sort ${l}`, [x], ([a]) => sort(policy, a as HostArray));
          await same(`sortByKey ${l}`, [x, y], ([k, v]) => sortByKey(policy, k as HostArray, v as HostArray));
          await same(`transform ${l}`, [x, out], ([a, o]) => transform(policy, a as HostArray, o as HostArray, twice));
          await same(`transform2 ${l}`, [x, y, out], ([a, b, o]) =>
            transform(policy, a as HostArray, b as HostArray, o as HostArray, sum2),
          );
          await same(`transformIf ${l}`, [x, out], ([a, o]) =>
            transformIf(policy, a as HostArray, o as HostArray, twice, odd),
          );
        }
        const map = new Uint32Array(n);
        for (let i = 0; i < n; i++) map[i] = (i * 7919) % n;
        await same(`gather ${name} n=${n}`, [map, makeData('f32', n, 'random'), new Float32Array(n)], ([m, s, o]) =>
          gather(policy, m as HostArray, s as HostArray, o as HostArray),
        );
      }
    });
  }

  it('results of plain inputs read back into shared outputs; DeviceArrays from and to shared arrays', async () => {
    const device = testDevice as NonNullable<typeof testDevice>;
    const policy = gpuPolicies[0]?.policy;
    const n = 4099;
    const x = makeData('i32', n, 'random') as Int32Array;
    const o = allocShared('i32', n);
    await inclusiveScan(policy, x, o);
    const want = new Int32Array(n);
    await inclusiveScan(policy, x, want);
    expectSameArray(o, want, 'plain in, shared out');
    const d = DeviceArray.from(device, o);
    const s = allocShared('i32', n);
    await transform(policy, d, d, twice);
    s.set(await d.read());
    d.write(s);
    await transform(policy, d, d, twice);
    expectSameArray(
      await d.read(),
      want.map((v) => Math.imul(v, 4)),
      'DeviceArray of a shared array',
    );
    d.destroy();
  });
});
