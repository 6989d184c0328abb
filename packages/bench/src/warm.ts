/**
 * Warm clocks: the H100 drops its SM clock from 1980 to 345 MHz after ~2 s without GPU work under
 * Dawn/Vulkan, and the kernels after that run at ~55% bandwidth for a while: 0.5 s of streaming work
 * was enough after short idles, after idles of several seconds 1.5 s was needed (2026-11-24). So
 * every timed GPU set starts right after >= 0.5 s of GPU work (1.5 s after an idle of more than a
 * second, on hardware GPUs): `GpuWarmth.before()` keeps the GPU busy with a streaming kernel over
 * buffers larger than any L2 until that much has run, unless the GPU has been busy without a gap for
 * that long already (the previous timed GPU set ended just now and was itself warm).
 */
import { fragment, type GpuDevice, getPipeline, kernelInterface } from '@webdpl/core';

/** GPU work that must precede a timed set, in milliseconds. */
export const WARM_MS = 500;
/**
 * GPU work after an idle of more than LONG_GAP_MS. H100, 2026-11-24 (readback-probe host-6: ~4 s of
 * host work, then a 1 GiB copy timed): after the 0.5 s warm-up the copy took 1.00-1.35 ms, after
 * 1.5 s of GPU work 0.758 ms, as fresh.
 */
export const LONG_WARM_MS = 1500;
/** An idle longer than this needs LONG_WARM_MS of work. */
const LONG_GAP_MS = 1000;
/** A gap longer than this since the last GPU work counts as idle. */
const MAX_GAP_MS = 100;
/**
 * Elements (vec4<u32>) the warm-up kernel streams per dispatch on a hardware GPU: 256 MiB read + 256
 * MiB written, far beyond any L2, so the memory is busy too. With 16 MiB buffers (which fit the
 * H100's 50 MiB L2) a 1 GiB copy timed after 2.4-6.5 s of host work still ran at 56% bandwidth (1.36
 * against 0.76 ms; readback-probe host-3/6/8, 2026-11-24): the SMs were warm, the memory was not.
 * Software GPUs stream 16 MiB (their clocks are the CPU's).
 */
const WARM_VEC4S_HARDWARE = 1 << 24;
const WARM_VEC4S_SOFTWARE = 1 << 20;

/** The warm-up kernel's interface: vec4s of `a` streamed into `b`. */
const WARM_IO = kernelInterface({
  name: 'bench warm-up',
  bindings: {
    a: { binding: 0, access: 'read_write', type: 'u32', form: 'vec4' },
    b: { binding: 1, access: 'read_write', type: 'u32', form: 'vec4' },
  },
});

const WARM_KERNEL = fragment({
  name: 'bench_warm_stream',
  code: `${WARM_IO.wgsl()}
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = g.x + g.y * nwg.x * 256u;
  if (i < arrayLength(&a)) { b[i] = a[i] * 1664525u + vec4<u32>(1013904223u); }
}`,
});

/** Tracks how long the GPU has been busy and warms it before timed sets. */
export class GpuWarmth {
  private stretchStart = Number.NEGATIVE_INFINITY;
  private lastBusy = Number.NEGATIVE_INFINITY;
  private buffers: GPUBuffer[] | undefined;
  /** Warm-ups run (for the report). */
  warmUps = 0;

  constructor(private readonly device: GpuDevice) {}

  /** Call before a timed GPU set: returns once >= WARM_MS of GPU work ran up to now. */
  async before(): Promise<void> {
    const now = performance.now();
    const gap = now - this.lastBusy;
    if (gap <= MAX_GAP_MS && this.lastBusy - this.stretchStart >= WARM_MS) return;
    const long = gap > LONG_GAP_MS && this.device.info.kind !== 'software-gpu';
    await this.run(long ? LONG_WARM_MS : WARM_MS);
  }

  /** Call after a timed GPU set: the GPU was busy until now. */
  after(): void {
    const now = performance.now();
    if (now - this.lastBusy > MAX_GAP_MS) this.stretchStart = now;
    this.lastBusy = now;
  }

  /** Keeps the GPU busy for at least `ms` milliseconds (several dispatches in flight at a time). */
  async run(ms: number): Promise<void> {
    const d = this.device;
    const pipeline = await getPipeline(d, WARM_KERNEL);
    const vec4s = Math.min(
      d.info.kind === 'software-gpu' ? WARM_VEC4S_SOFTWARE : WARM_VEC4S_HARDWARE,
      Math.floor(d.limits.maxStorageBufferBindingSize / 16),
    );
    this.buffers ??= [0, 1].map(() =>
      d.gpu.createBuffer({ size: vec4s * 16, usage: GPUBufferUsage.STORAGE, label: 'bench warm-up' }),
    );
    const [a, b] = this.buffers as [GPUBuffer, GPUBuffer];
    const group = d.gpu.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: WARM_IO.entries({ a: { buffer: a }, b: { buffer: b } }),
    });
    const start = performance.now();
    if (start - this.lastBusy > MAX_GAP_MS) this.stretchStart = start;
    while (performance.now() - start < ms) {
      // Two submissions in flight, so the GPU never waits for the CPU between them.
      for (let k = 0; k < 2; k++) {
        await d.queue.enqueue('bench warm-up', (rec) => {
          const pass = rec.beginPass('bench warm-up');
          pass.setPipeline(pipeline);
          pass.setBindGroup(0, group);
          rec.dispatch(pass, Math.ceil(vec4s / 256));
          pass.end();
        });
      }
      await d.queue.finish();
    }
    this.warmUps++;
    this.lastBusy = performance.now();
  }

  /** Frees the warm-up buffers. */
  destroy(): void {
    for (const b of this.buffers ?? []) b.destroy();
    this.buffers = undefined;
  }
}
