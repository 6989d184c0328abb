/**
 * Early GPU-machine probe (lead's tool, not the bench): device time of the transform-reduce engine
 * over a sweep of tunings, a plain vec4 copy kernel for the bandwidth ceiling, and the empty-submit
 * floor. Prints one JSON line per measurement. Bundle: node scripts/probe/build.mjs
 */

import { identityLoad, transformReduceDevice } from '../../packages/algorithms/src/engines/transform-reduce';
import * as algorithms from '../../packages/algorithms/src/index';
import { CUB_SEED, fillU32 as fill } from '../../packages/bench/src/data';
import { generateOnDevice } from '../../packages/bench/src/gpu-data';
import {
  combinerOf,
  DeviceArray,
  type GpuDevice,
  gpuSelector,
  plus,
  releaseDevices,
  selectDevice,
} from '../../packages/core/src/index';
import { makeDevicePolicy } from '../../packages/policies/src/index';
import { out, runProbe, timeCopy, timeIt } from './timing';

/** The u32 sum of `a` through the transform-reduce engine (default tuning). */
async function sumU32(device: GpuDevice, a: DeviceArray): Promise<ArrayBuffer> {
  const rb = await transformReduceDevice(device, {
    label: 'r',
    inputs: [a],
    load: identityLoad('u32'),
    combiner: combinerOf(plus, 'u32'),
    commutative: true,
  });
  return rb.data();
}

async function main() {
  const device = (await selectDevice(gpuSelector)) as GpuDevice;
  out({
    device: device.info.name,
    vendor: device.info.vendor,
    sub: [device.info.subgroupMinSize, device.info.subgroupMaxSize],
  });
  const big = Number(process.env.PROBE_MAX_LOG ?? 28);
  // floor: empty submit + wait
  {
    const ts: number[] = [];
    for (let r = 0; r < 50; r++) {
      const t0 = performance.now();
      await device.queue.submit('empty', () => {});
      await device.queue.finish();
      ts.push(performance.now() - t0);
    }
    ts.sort((a, b) => a - b);
    out({ case: 'empty submit+wait', ms: ts[25] });
  }
  device.queue.setProfiling(true);
  if (process.env.PROBE_SWEEP === 'first') {
    // Allocation order: the largest buffers first, in a fresh process.
    const order = (process.env.PROBE_ORDER ?? '28,28,27,26,28').split(',').map(Number);
    const keep: DeviceArray[] = [];
    for (const lg of order) {
      const n = 2 ** lg;
      const a = process.env.PROBE_GPUFILL
        ? await generateOnDevice(device, 'u32', n, CUB_SEED)
        : DeviceArray.from(device, fill(n));
      keep.push(a);
      const ms2 = await timeIt(device, 10, () => sumU32(device, a));
      out({ case: 'reduce alloc order', lg, index: keep.length, ms: ms2, gbs: (4 * n) / ms2 / 1e6 });
    }
    // and again, on the same buffers, after all allocations
    for (const a of keep) {
      const ms2 = await timeIt(device, 10, () => sumU32(device, a));
      out({ case: 'reduce again', n: a.length, ms: ms2, gbs: (4 * a.length) / ms2 / 1e6 });
    }
    releaseDevices();
    return;
  }
  if (process.env.PROBE_SWEEP === 'alloc') {
    for (const lg of [26, 27, 28]) {
      const n = 2 ** lg;
      const host = fill(n);
      for (const padElems of [0, 16, 2 ** 19 - 4, 2 ** 19, 2 ** 22, n]) {
        const big = DeviceArray.create(device, 'u32', n + padElems);
        const a = big.view(0, n);
        a.write(host);
        const ms2 = await timeIt(device, 10, () => sumU32(device, a));
        out({ case: 'reduce alloc', lg, padElems, bytes: (n + padElems) * 4, ms: ms2, gbs: (4 * n) / ms2 / 1e6 });
        big.destroy();
      }
      // many small buffers: the same data in 64 MiB DeviceArrays
      const parts: DeviceArray[] = [];
      const per = 2 ** 24;
      for (let o = 0; o < n; o += per) parts.push(DeviceArray.from(device, host.subarray(o, o + per)));
      const ms3 = await timeIt(device, 10, async () => {
        for (const p of parts) await sumU32(device, p);
      });
      out({ case: 'reduce in 64MiB buffers (separate submits)', lg, ms: ms3, gbs: (4 * n) / ms3 / 1e6 });
      for (const p of parts) p.destroy();
    }
    releaseDevices();
    return;
  }
  const sizes = (process.env.PROBE_SIZES ?? `20,24,${big}`).split(',').map(Number);
  for (const lg of sizes) {
    const n = 2 ** lg;
    const gpuData = process.env.PROBE_GPUFILL === '1';
    const host = gpuData ? new Uint32Array(0) : fill(n);
    const a = gpuData ? await generateOnDevice(device, 'u32', n, CUB_SEED) : DeviceArray.from(device, host);
    const b = DeviceArray.create(device, 'u32', n);
    const ms = await timeCopy(device, lg >= 28 ? 10 : 30, a, b);
    out({ case: 'copy vec4', lg, ms, gbs: (8 * n) / ms / 1e6 });
    let want = 0;
    for (let i = 0; i < host.length; i++) want = (want + (host[i] as number)) >>> 0;
    const sweep: Record<string, number | boolean>[] | null =
      process.env.PROBE_SWEEP === 'binding'
        ? [
            {},
            { maxBindingBytes: 2 ** 26 },
            { maxBindingBytes: 2 ** 27 },
            { maxBindingBytes: 2 ** 28 },
            { maxBindingBytes: 2 ** 29 },
            { maxBindingBytes: 2 ** 28, vecsPerThread: 8 },
          ]
        : null;
    const defaultOnly = process.env.PROBE_TUNINGS === 'default';
    for (const tuning of sweep ??
      (defaultOnly
        ? [{}]
        : ([
            {},
            { maxWorkgroups: 1024 },
            { maxWorkgroups: 4096 },
            { maxWorkgroups: 8192 },
            { vecsPerThread: 2 },
            { vecsPerThread: 8 },
            { workgroupSize: 512, vecsPerThread: 2 },
            { workgroupSize: 128, vecsPerThread: 4, maxWorkgroups: 4096 },
            { subgroups: false },
          ] as Record<string, number | boolean>[]))) {
      let got = 0;
      const ms2 = await timeIt(device, lg >= 28 ? 10 : 30, async () => {
        const r = await transformReduceDevice(device, {
          label: 'reduce',
          inputs: [a],
          load: identityLoad('u32'),
          combiner: combinerOf(plus, 'u32'),
          commutative: true,
          tuning,
        });
        got = r.word(0);
      });
      out({ case: 'reduce u32 engine', lg, tuning, ms: ms2, gbs: (4 * n) / ms2 / 1e6, ok: gpuData || got === want });
    }
    // whatever algorithms exist now, at default tuning (PROBE_API_TUNING: a policy's tuning
    // overrides as JSON, e.g. '{"copyIf":{"itemsPerThread":24}}'; PROBE_API_ONLY: a regular
    // expression the case names must match)
    const apiTuning = process.env.PROBE_API_TUNING;
    const policy = makeDevicePolicy(device, apiTuning ? { tuning: JSON.parse(apiTuning) } : {});
    const only = process.env.PROBE_API_ONLY ? new RegExp(process.env.PROBE_API_ONLY) : undefined;
    const alg = algorithms as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const tries: [string, number, () => Promise<unknown>][] = [];
    if (alg.reduce) tries.push(['reduce u32 (API)', 4, () => alg.reduce!(policy, a)]);
    if (alg.inclusiveScan) tries.push(['inclusiveScan u32', 8, () => alg.inclusiveScan!(policy, a, b)]);
    if (alg.exclusiveScan) tries.push(['exclusiveScan u32', 8, () => alg.exclusiveScan!(policy, a, b, 0)]);
    if (alg.transform)
      tries.push(['transform u32 x*2+1', 8, () => alg.transform!(policy, a, b, (x: number) => x * 2 + 1)]);
    if (alg.copyIf) tries.push(['copyIf u32 50%', 6, () => alg.copyIf!(policy, a, b, (x: number) => x > 2147483648)]);
    if (alg.sort) tries.push(['sort u32 (sorted input after the first call)', 8, () => alg.sort!(policy, b)]);
    if (alg.sort && alg.copy) {
      tries.push([
        'sort u32 (copy of random input + sort, minus a separately timed copy)',
        8,
        async () => {
          await alg.copy!(policy, a, b);
          await alg.sort!(policy, b);
        },
      ]);
    }
    for (const [name, bytes, f] of tries) {
      if (only && !only.test(name)) continue;
      try {
        const ms3 = await timeIt(device, lg >= 28 ? 5 : 10, f);
        out({ case: name, lg, ms: ms3, gbs: (bytes * n) / ms3 / 1e6, ...(apiTuning ? { tuning: apiTuning } : {}) });
      } catch (e) {
        out({ case: name, lg, error: (e as Error).message.slice(0, 300) });
      }
    }
    a.destroy();
    b.destroy();
  }
  releaseDevices();
}

runProbe(main);
