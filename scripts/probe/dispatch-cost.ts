/**
 * What a second dispatch costs after a streaming one, in one compute pass (device time, medians):
 *  - copy: a vec4 copy of n u32 (4096 workgroups), alone;
 *  - copy+dep: then one workgroup reading a word the copy wrote (Dawn puts a barrier between them);
 *  - copy+indep: then one workgroup touching only buffers of its own (no dependency);
 *  - copy+dep (pass): the dependent workgroup in a compute pass of its own;
 *  - copy x2 halves: the copy as two dispatches of half the range each (independent);
 *  - clear+copy: a 16-byte clearBuffer of another buffer before the pass.
 * Variants interleave call by call (rounds of PROBE_REPS calls each, rotating). Env: PROBE_SIZES
 * (log2, default 20,22,24), PROBE_ROUNDS (default 7), PROBE_REPS (default 15).
 * Bundle: node scripts/probe/build.mjs; run: node .probe/dispatch-cost.mjs
 */
import { DeviceArray, fragment, getPipeline } from '../../packages/core/src/index';
import { openProbe, out, probeSizes, runProbe, timeIt } from './timing';

const COPY = fragment({
  name: 'dc_copy',
  code: `@group(0) @binding(0) var<storage, read> a: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> b: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> range: vec4<u32>;
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  for (var i = range.x + g.x; i < range.y; i += nw.x * 256u) { b[i] = a[i]; }
}`,
});

const ONE = fragment({
  name: 'dc_one',
  code: `@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(256) fn main(@builtin(local_invocation_index) l: u32) {
  if (l == 0u) { dst[0] = src[0] + 1u; }
}`,
});

runProbe(async () => {
  const { device } = await openProbe({}, {});
  const copy = await getPipeline(device, COPY);
  const one = await getPipeline(device, ONE);
  const rounds = Number(process.env.PROBE_ROUNDS ?? 7);
  const reps = Number(process.env.PROBE_REPS ?? 15);
  const small = DeviceArray.create(device, 'u32', 16);
  const small2 = DeviceArray.create(device, 'u32', 16);
  for (const lg of probeSizes('20,22,24')) {
    const n = 2 ** lg;
    const a = DeviceArray.from(device, new Uint32Array(n).fill(3));
    const b = DeviceArray.create(device, 'u32', n);
    const bytes = n * 4;
    const uniform = (lo: number, hi: number) => {
      const u = device.gpu.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM, mappedAtCreation: true });
      new Uint32Array(u.getMappedRange()).set([lo, hi, 0, 0]);
      u.unmap();
      return u;
    };
    const copyGroup = (lo: number, hi: number) =>
      device.gpu.createBindGroup({
        layout: copy.getBindGroupLayout(0),
        entries: [
          { binding: 0, resource: { buffer: a.buffer, offset: 0, size: bytes } },
          { binding: 1, resource: { buffer: b.buffer, offset: 0, size: bytes } },
          { binding: 2, resource: { buffer: uniform(lo, hi) } },
        ],
      });
    const whole = copyGroup(0, n / 4);
    const lower = copyGroup(0, n / 8);
    const upper = copyGroup(n / 8, n / 4);
    const oneGroup = (src: DeviceArray, dst: DeviceArray) =>
      device.gpu.createBindGroup({
        layout: one.getBindGroupLayout(0),
        entries: [
          { binding: 0, resource: { buffer: src.buffer, offset: 0, size: src.length * 4 } },
          { binding: 1, resource: { buffer: dst.buffer, offset: 0, size: dst.length * 4 } },
        ],
      });
    const dep = oneGroup(b, small);
    const indep = oneGroup(small2, small);
    type Step = { g: GPUBindGroup; one?: boolean; wgs: number };
    const run = (steps: Step[], opts: { ownPass?: boolean; clear?: boolean } = {}) =>
      device.queue.submit('dispatch-cost', (rec) => {
        if (opts.clear) rec.encoder.clearBuffer(small2.buffer, 0, 16);
        let p = rec.beginPass();
        for (const [k, s] of steps.entries()) {
          if (opts.ownPass && k > 0) {
            p.end();
            p = rec.beginPass();
          }
          p.setPipeline(s.one ? one : copy);
          p.setBindGroup(0, s.g);
          p.dispatchWorkgroups(s.wgs);
        }
        p.end();
      });
    const variants: Record<string, () => Promise<unknown>> = {
      copy: () => run([{ g: whole, wgs: 4096 }]),
      'copy+dep': () =>
        run([
          { g: whole, wgs: 4096 },
          { g: dep, one: true, wgs: 1 },
        ]),
      'copy+indep': () =>
        run([
          { g: whole, wgs: 4096 },
          { g: indep, one: true, wgs: 1 },
        ]),
      'copy+dep (pass)': () =>
        run(
          [
            { g: whole, wgs: 4096 },
            { g: dep, one: true, wgs: 1 },
          ],
          { ownPass: true },
        ),
      'copy x2 halves': () =>
        run([
          { g: lower, wgs: 2048 },
          { g: upper, wgs: 2048 },
        ]),
      'clear+copy': () => run([{ g: whole, wgs: 4096 }], { clear: true }),
    };
    const names = Object.keys(variants);
    const times: Record<string, number[]> = {};
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(k + r) % names.length] as string;
        (times[name] ??= []).push(await timeIt(device, reps, variants[name] as () => Promise<unknown>));
      }
    }
    const med = (x: number[]) => [...x].sort((p, q) => p - q)[Math.floor(x.length / 2)] as number;
    const base = med(times.copy as number[]);
    for (const name of names) {
      const m = med(times[name] as number[]);
      out({ lg, variant: name, ms: m, extraUs: Number(((m - base) * 1000).toFixed(2)) });
    }
    a.destroy();
    b.destroy();
  }
});
