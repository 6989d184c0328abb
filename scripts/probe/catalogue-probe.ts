/**
 * GPU-machine probe for the catalogue (issues 15/16): device time of gather, scatter, histogram and
 * merge through the public API on DeviceArrays, beside a plain vec4 copy kernel, with the data that
 * scripts/probe/cub_catalogue.cu makes (see its header), so the two runs move the same bytes. Every
 * timed set starts on warm clocks (>= 0.5 s of GPU work first). Each result is checked on the host
 * against a reference at the sizes where that is cheap (2^20, 2^24). One JSON line per measurement.
 * Bundle: node scripts/probe/build.mjs; run: PROBE_SIZES=20,24,26,28 node .probe/catalogue-probe.mjs
 */
import * as algorithms from '../../packages/algorithms/src/index';
import { CUB_SEED } from '../../packages/bench/src/data';
import { generateOnDevice } from '../../packages/bench/src/gpu-data';
import { GpuWarmth } from '../../packages/bench/src/warm';
import {
  DeviceArray,
  fragment,
  type GpuDevice,
  getPipeline,
  gpuSelector,
  releaseDevices,
  selectDevice,
} from '../../packages/core/src/index';
import { makeDevicePolicy } from '../../packages/policies/src/index';

const out = (o: object) => console.log(JSON.stringify(o));
let warmth: GpuWarmth | undefined;

/** Device time (ms, median of `reps`) of `f` on warm clocks. */
async function timeIt(device: GpuDevice, reps: number, f: () => Promise<unknown>): Promise<number> {
  await f();
  warmth ??= new GpuWarmth(device);
  await warmth.before();
  const ts: number[] = [];
  for (let r = 0; r < reps; r++) {
    device.queue.resetDeviceTime();
    await f();
    await device.queue.finish();
    ts.push(device.queue.totalDeviceTimeNs);
  }
  warmth.after();
  ts.sort((a, b) => a - b);
  return (ts[Math.floor(ts.length / 2)] as number) / 1e6;
}

/** Fills `a` on the GPU with a WGSL expression of the index `i` and `n` (u32). */
async function fillExpr(device: GpuDevice, a: DeviceArray, expr: string, name: string): Promise<void> {
  const k = fragment({
    name: `probe_fill_${name}`,
    code: `struct P { n: u32, pad: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> a: array<u32>;
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  let n = p.n;
  for (var i = g.x; i < n; i += nw.x * 256u) { a[i] = ${expr}; }
}`,
  });
  const pipeline = await getPipeline(device, k);
  await device.queue.submit(`fill ${name}`, (rec) => {
    const pass = rec.beginPass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(
      0,
      device.gpu.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: [
          { binding: 0, resource: { buffer: rec.uniform(new Uint32Array([a.length, 0])) } },
          { binding: 1, resource: { buffer: a.buffer, offset: a.offset * 4, size: a.length * 4 } },
        ],
      }),
    );
    pass.dispatchWorkgroups(Math.min(4096, Math.ceil(a.length / 256)));
    pass.end();
  });
}

async function main() {
  const device = (await selectDevice(gpuSelector)) as GpuDevice;
  const policy = makeDevicePolicy(device, { fallback: 'error' });
  out({ device: device.info.name, sub: [device.info.subgroupMinSize, device.info.subgroupMaxSize] });
  device.queue.setProfiling(true);
  const api = algorithms as unknown as Record<string, ((...a: unknown[]) => Promise<unknown>) | undefined>;
  const copyK = fragment({
    name: 'probe_copy',
    code: `@group(0) @binding(0) var<storage, read> a: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> b: array<vec4<u32>>;
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  let n = arrayLength(&a);
  for (var i = g.x; i < n; i += nw.x * 256u) { b[i] = a[i]; }
}`,
  });
  const copyP = await getPipeline(device, copyK);
  const sizes = (process.env.PROBE_SIZES ?? '20,24,26,28').split(',').map(Number);
  for (const lg of sizes) {
    const n = 2 ** lg;
    const reps = lg >= 28 ? 10 : 30;
    const check = lg <= 24;
    const a = await generateOnDevice(device, 'u32', n, CUB_SEED);
    const b = DeviceArray.create(device, 'u32', n);
    const ms = await timeIt(device, reps, () =>
      device.queue.submit('copy', (rec) => {
        const p = rec.beginPass();
        p.setPipeline(copyP);
        p.setBindGroup(
          0,
          device.gpu.createBindGroup({
            layout: copyP.getBindGroupLayout(0),
            entries: [
              { binding: 0, resource: { buffer: a.buffer, size: n * 4 } },
              { binding: 1, resource: { buffer: b.buffer, size: n * 4 } },
            ],
          }),
        );
        p.dispatchWorkgroups(4096);
        p.end();
      }),
    );
    out({ case: 'copy vec4', lg, ms, gbs: (8 * n) / ms / 1e6 });
    const host = check ? await a.read() : undefined;

    const map = DeviceArray.create(device, 'u32', n);
    for (const kind of ['random', 'blocked'] as const) {
      const expr = kind === 'random' ? '(i * 2654435761u) & (n - 1u)' : 'i ^ 31u';
      await fillExpr(device, map, expr, kind);
      const m = check ? ((await map.read()) as Uint32Array) : undefined;
      for (const op of ['gather', 'scatter'] as const) {
        const f = api[op];
        if (!f) {
          out({ case: `${op} u32 ${kind}`, lg, missing: true });
          continue;
        }
        const t = await timeIt(device, reps, () => (op === 'gather' ? f(policy, map, a, b) : f(policy, a, map, b)));
        let ok: boolean | undefined;
        if (host && m) {
          const got = (await b.read()) as Uint32Array;
          ok = true;
          for (let i = 0; i < n && ok; i++) {
            const want = op === 'gather' ? host[m[i] as number] : host[i];
            const at = op === 'gather' ? i : (m[i] as number);
            if (got[at] !== want) ok = false;
          }
        }
        out({ case: `${op} u32 ${kind}`, lg, ms: t, gbs: (12 * n) / t / 1e6, vsCopy: ms / t, ok });
      }
    }
    map.destroy();

    // histogram: samples a[i] >> 8 in [0, 2^24), 256 even bins over [0, 2^24)
    if (api.histogram) {
      const s = DeviceArray.create(device, 'u32', n);
      await (api.transform as (...x: unknown[]) => Promise<unknown>)(policy, a, s, (x: number) => x >>> 8);
      const hist = DeviceArray.create(device, 'u32', 256);
      const hf = api.histogram;
      const t = await timeIt(device, reps, () => hf(policy, s, { bins: 256, lo: 0, hi: 2 ** 24 }, hist));
      let ok: boolean | undefined;
      if (host) {
        const want = new Uint32Array(256);
        for (let i = 0; i < n; i++) (want[(host[i] as number) >>> 24] as number)++;
        const got = (await hist.read()) as Uint32Array;
        ok = want.every((v, i) => v === got[i]);
      }
      out({ case: 'histogram u32 256 bins', lg, ms: t, gbs: (4 * n) / t / 1e6, ok });
      s.destroy();
      hist.destroy();
    } else out({ case: 'histogram u32 256 bins', lg, missing: true });

    // merge: two sorted halves of n/2 random keys each
    if (api.merge && api.sort) {
      const h = n / 2;
      const u = DeviceArray.create(device, 'u32', n);
      await (api.copy as (...x: unknown[]) => Promise<unknown>)(policy, a, u);
      const lo = u.view(0, h);
      const hi = u.view(h, h);
      await api.sort(policy, lo);
      await api.sort(policy, hi);
      const mf = api.merge;
      const t = await timeIt(device, reps, () => mf(policy, lo, hi, b));
      let ok: boolean | undefined;
      if (host) {
        const want = Uint32Array.from(host).sort();
        const got = (await b.read()) as Uint32Array;
        ok = want.every((v, i) => v === got[i]);
      }
      out({ case: 'merge u32 keys', lg, ms: t, gbs: (8 * n) / t / 1e6, ok });
      u.destroy();
    } else out({ case: 'merge u32 keys', lg, missing: true });
    a.destroy();
    b.destroy();
  }
  releaseDevices();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
