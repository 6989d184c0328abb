/**
 * Warm clocks: the H100 drops its SM clock from 1980 to 345 MHz after ~2 s without GPU work under
 * Dawn/Vulkan, and the first ~335 ms of kernels after that run at ~55% bandwidth. So every timed GPU
 * set starts right after >= 0.5 s of GPU work: `GpuWarmth.before()` keeps the GPU busy with a
 * streaming kernel until that much has run, unless the GPU has been busy without a gap for that long
 * already (the previous timed GPU set ended just now and was itself warm).
 */
import { fragment, type GpuDevice, getPipeline } from '@webdpl/core';

/** GPU work that must precede a timed set, in milliseconds. */
export const WARM_MS = 500;
/** A gap longer than this since the last GPU work counts as idle. */
const MAX_GAP_MS = 100;
/** Elements (vec4<u32>) the warm-up kernel streams per dispatch: 16 MiB read + 16 MiB written. */
const WARM_VEC4S = 1 << 20;

const WARM_KERNEL = fragment({
  name: 'bench_warm_stream',
  code: `@group(0) @binding(0) var<storage, read_write> a: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> b: array<vec4<u32>>;
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
    if (now - this.lastBusy <= MAX_GAP_MS && this.lastBusy - this.stretchStart >= WARM_MS) return;
    await this.run(WARM_MS);
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
    this.buffers ??= [0, 1].map(() =>
      d.gpu.createBuffer({ size: WARM_VEC4S * 16, usage: GPUBufferUsage.STORAGE, label: 'bench warm-up' }),
    );
    const [a, b] = this.buffers as [GPUBuffer, GPUBuffer];
    const group = d.gpu.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer: a } },
        { binding: 1, resource: { buffer: b } },
      ],
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
          rec.dispatch(pass, WARM_VEC4S / 256);
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
