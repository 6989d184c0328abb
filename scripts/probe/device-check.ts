/**
 * GPU-machine check of results (not timings): each algorithm below runs on the device (under each
 * scan tuning of TUNINGS, a JSON array, default [{}]) and on `execution.seq`, on the same host
 * arrays, and the two results (returned values and every output array) must be equal element for
 * element. The timing probes check little, and a kernel variant was once right on lavapipe and
 * SwiftShader but wrong on the H100 (docs/benchmarks/h100-2026-11-24b.md), so this runs where the
 * GPU is. One line per (size, tuning, algorithm); the last line counts the mismatches.
 * Bundle: node scripts/probe/build.mjs; run: PROBE_SIZES=20,24 node .probe/device-check.mjs
 */
import * as alg from '../../packages/algorithms/src/index';
import { type GpuDevice, gpuSelector, releaseDevices, selectDevice } from '../../packages/core/src/index';
import { execution, makeDevicePolicy, type Policy } from '../../packages/policies/src/index';
import { runProbe } from './timing';

type Result = readonly (number | ArrayLike<number>)[];
type Case = readonly [string, (p: Policy) => Promise<Result>];

function data(n: number, seed: number): Uint32Array {
  const a = new Uint32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    a[i] = s;
  }
  return a;
}

/** Runs `f` over `a` and gives `a` as the result. */
async function filled(a: Uint32Array, f: (a: Uint32Array) => Promise<unknown>): Promise<Result> {
  await f(a);
  return [a];
}

/** Runs `f` over `a` and gives its count and `a`. */
async function counted(a: Uint32Array, f: (a: Uint32Array) => Promise<number>): Promise<Result> {
  return [await f(a), a];
}

function cases(n: number): Case[] {
  const h = data(n, 1);
  const st = data(n, 2);
  const keys = new Uint32Array(n);
  for (let i = 0, k = 0; i < n; i++) {
    if ((h[i] as number) % 5 === 0) k++;
    keys[i] = k;
  }
  const perm = new Uint32Array(n);
  for (let i = 0; i < n; i++) perm[i] = (i ^ 31) < n ? i ^ 31 : i;
  const half = n >> 1;
  const sortedA = Uint32Array.from(h.subarray(0, half)).sort();
  const sortedB = Uint32Array.from(h.subarray(half))
    .map((x) => x & 0xfffff)
    .sort();
  const keep = (x: number) => x > 2147483648;
  const out = () => new Uint32Array(n);
  return [
    ['reduce', async (p) => [await alg.reduce(p, h)]],
    ['inclusiveScan', async (p) => filled(out(), (o) => alg.inclusiveScan(p, h, o))],
    ['exclusiveScan', async (p) => filled(out(), (o) => alg.exclusiveScan(p, h, o, 7))],
    ['transform', async (p) => filled(out(), (o) => alg.transform(p, h, o, (x: number) => x * 3 + 1))],
    ['copyIf', async (p) => counted(out(), (o) => alg.copyIf(p, h, o, keep))],
    ['copyIf stencil', async (p) => counted(out(), (o) => alg.copyIf(p, h, st, o, keep))],
    [
      'copyIf counting(n) stencil',
      async (p) => counted(out(), (o) => alg.copyIf(p, h, alg.counting(n), o, (i: number) => i % 3 === 0)),
    ],
    ['removeIf', async (p) => counted(h.slice(), (d) => alg.removeIf(p, d, keep))],
    ['stablePartition', async (p) => counted(h.slice(), (d) => alg.stablePartition(p, d, keep))],
    ['unique', async (p) => counted(keys.slice(), (d) => alg.unique(p, d))],
    ['countIf', async (p) => [await alg.countIf(p, h, keep)]],
    [
      'reduceByKey',
      async (p) => {
        const ko = out();
        const vo = out();
        return [await alg.reduceByKey(p, keys, h, ko, vo), ko, vo];
      },
    ],
    [
      'uniqueByKey',
      async (p) => {
        const ko = out();
        const vo = out();
        return [await alg.uniqueByKey(p, keys, h, ko, vo), ko, vo];
      },
    ],
    ['inclusiveScanByKey', async (p) => filled(out(), (o) => alg.inclusiveScanByKey(p, keys, h, o))],
    ['exclusiveScanByKey', async (p) => filled(out(), (o) => alg.exclusiveScanByKey(p, keys, h, o, 3))],
    ['gather', async (p) => filled(out(), (o) => alg.gather(p, perm, h, o))],
    ['scatter', async (p) => filled(out(), (o) => alg.scatter(p, h, perm, o))],
    ['sort', async (p) => filled(h.slice(), (d) => alg.sort(p, d))],
    [
      'sortByKey',
      async (p) => {
        const k = keys.slice().reverse();
        const v = h.slice();
        await alg.sortByKey(p, k, v);
        return [k, v];
      },
    ],
    ['merge', async (p) => filled(out(), (o) => alg.merge(p, sortedA, sortedB, o))],
    ['setUnion', async (p) => counted(out(), (o) => alg.setUnion(p, sortedA, sortedB, o))],
    ['histogram', async (p) => [await alg.histogram(p, h, { bins: 256, lo: 0, hi: 2 ** 32 })]],
  ];
}

function same(a: Result, b: Result): string | undefined {
  if (a.length !== b.length) return `result lengths ${a.length} / ${b.length}`;
  for (let r = 0; r < a.length; r++) {
    const x = a[r] as number | ArrayLike<number>;
    const y = b[r] as number | ArrayLike<number>;
    if (typeof x === 'number' || typeof y === 'number') {
      if (x !== y) return `result ${r}: ${String(x)} / ${String(y)}`;
      continue;
    }
    if (x.length !== y.length) return `result ${r}: lengths ${x.length} / ${y.length}`;
    for (let i = 0; i < x.length; i++) {
      if (x[i] !== y[i]) return `result ${r}[${i}]: ${x[i]} / ${y[i]}`;
    }
  }
  return undefined;
}

async function main(): Promise<void> {
  const device = (await selectDevice(gpuSelector)) as GpuDevice;
  console.log(`device ${device.info.name}, subgroups ${device.info.subgroupMinSize}-${device.info.subgroupMaxSize}`);
  const tunings: Record<string, number | boolean>[] = JSON.parse(process.env.TUNINGS ?? '[{}]');
  let bad = 0;
  for (const lg of (process.env.PROBE_SIZES ?? '20').split(',').map(Number)) {
    const n = 2 ** lg + 123;
    const all = cases(n);
    const want = new Map<string, Result>();
    for (const [name, f] of all) want.set(name, await f(execution.seq));
    for (const tun of tunings) {
      const policy = makeDevicePolicy(device, { fallback: 'error', tuning: { scan: tun } });
      for (const [name, f] of all) {
        let msg: string | undefined;
        try {
          msg = same(await f(policy), want.get(name) as Result);
        } catch (e) {
          msg = `error: ${(e as Error).message.slice(0, 160)}`;
        }
        if (msg) bad++;
        console.log(`2^${lg}+123 ${JSON.stringify(tun)} ${name}: ${msg ?? 'ok'}`);
      }
    }
  }
  console.log(`mismatches: ${bad}`);
  releaseDevices();
}

runProbe(main);
