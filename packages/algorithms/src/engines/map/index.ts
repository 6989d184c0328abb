/**
 * The map engine: transform, forEach, fill, iota, copy and adjacentDifference are all "one output
 * element from the same-index input elements", a bandwidth-bound elementwise kernel.
 *
 * Size tiers: n = 0 never reaches the engine (callers return at once). Otherwise, when every array
 * starts on a 16-byte boundary, the largest multiple of 4 elements runs the vec4 kernel and the < 4
 * trailing elements the scalar kernel (two dispatches of one pass); else the scalar kernel runs over
 * everything. Each kernel runs one tile per workgroup (or loops over tiles when the tuning caps the
 * workgroups) on a 2-D grid past 65,535 workgroups. Arrays
 * larger than one storage binding are split into segments (one dispatch each). Everything, the
 * optional readback of the output included, is recorded into one command buffer.
 *
 * Aliasing: an input that is the output (same buffer and offset) is read through the output's
 * binding (in place); an input elsewhere in the output's buffer is first copied to a temporary
 * buffer, since WebGPU forbids a buffer bound both read-only and writable in one dispatch.
 */
import {
  DeviceArray,
  type GpuDevice,
  getPipeline,
  type NumericType,
  type Recorder,
  type WgslFragment,
} from '@webdpl/core';
import { type Segment, segmentsFor, windowEntry, windowOf } from '../../common/segments';
import { bindingLimit, resolveTuning } from '../../common/tuning';
import { type InputSource, type MapPath, mapKernel } from './kernels';
import { type MapTuning, mapTuning } from './tuning';

export type { MapPath } from './kernels';
export { mapTuning } from './tuning';

export interface MapRequest {
  /** Label for errors and profiling. */
  readonly label: string;
  /** Number of elements to produce (>= 1). */
  readonly n: number;
  /** 0, 1 or 2 inputs of exactly `n` elements, on the output's device. */
  readonly inputs: readonly DeviceArray[];
  /** The output: exactly `n` elements. */
  readonly output: DeviceArray;
  /**
   * Declares `fn <elem.name>([x0: T0, [x1: T1,]] i: u32, c: vec2<u32>) -> O` where O is the
   * output's type, `i` the element's index in the range and `c` the request's `constants`.
   */
  readonly elem: WgslFragment;
  /** Two u32 words handed to every element (fill value bits, iota start bits). @default [0, 0] */
  readonly constants?: readonly [number, number];
  /** Tuning overrides from the policy. */
  readonly tuning?: Readonly<Record<string, number | boolean>>;
  /** Name of the tuning entry the overrides were given under. @default 'map' */
  readonly tuningName?: string;
  /** Records commands before the kernels, into the same command buffer. */
  readonly before?: (rec: Recorder) => void;
  /** Records commands after the kernels, into the same command buffer. */
  readonly after?: (rec: Recorder) => void;
  /** Reads the output back (in the same command buffer) and returns its bytes. @default false */
  readonly readBack?: boolean;
}

interface Plan {
  readonly path: MapPath;
  readonly pipeline: GPUComputePipeline;
  /** First element of the range and its length. */
  readonly start: number;
  readonly length: number;
  readonly segments: readonly Segment[];
  /** Elements per tile of this path. */
  readonly tile: number;
}

/**
 * Runs `out[i] = elem(in0[i], in1[i], i, c)` for i in [0, n). Resolves once the work is submitted and
 * errors are known; with `readBack`, with the output's bytes (n * 4).
 */
export async function mapDevice(device: GpuDevice, req: MapRequest): Promise<ArrayBuffer | undefined> {
  const t: MapTuning = resolveTuning(req.tuningName ?? 'map', mapTuning, req.tuning ?? {});
  const { n, output } = req;
  const sources: (InputSource | 'copy')[] = req.inputs.map((a) =>
    a.buffer !== output.buffer ? 'binding' : a.offset === output.offset ? 'output' : 'copy',
  );
  // Inputs elsewhere in the output's buffer read from a copy.
  const copies = req.inputs.map((a, k) => (sources[k] === 'copy' ? DeviceArray.create(device, a.type, n) : undefined));
  try {
    const inputs = req.inputs.map((a, k) => copies[k] ?? a);
    const kernelSources = sources.map((s): InputSource => (s === 'output' ? 'output' : 'binding'));
    const inTypes = inputs.map((a) => a.type as NumericType);
    const aligned = [output, ...inputs].every((a) => a.offset % 4 === 0);
    const n4 = aligned ? n - (n % 4) : 0;
    const limit = bindingLimit(device, t.maxBindingBytes);
    const w = t.workgroupSize;
    const plan = async (path: MapPath, start: number, length: number): Promise<Plan> => {
      const tile = path === 'vec' ? 4 * w * t.vecsPerThread : w * t.itemsPerThread;
      const pipeline = await getPipeline(
        device,
        mapKernel({
          inTypes,
          sources: kernelSources,
          outType: output.type as NumericType,
          elem: req.elem,
          path,
          workgroupSize: w,
          vecsPerThread: t.vecsPerThread,
          itemsPerThread: t.itemsPerThread,
        }),
      );
      return { path, pipeline, start, length, segments: segmentsFor(device, length, limit, tile), tile };
    };
    const plans: Plan[] = [];
    if (n4 > 0) plans.push(await plan('vec', 0, n4));
    if (n4 < n) plans.push(await plan('scalar', n4, n - n4));
    const [c0, c1] = req.constants ?? [0, 0];
    let rb: { data(): ArrayBuffer } | undefined;
    await device.queue.submit(req.label, (rec) => {
      req.before?.(rec);
      req.inputs.forEach((a, k) => {
        const copy = copies[k];
        if (copy) rec.encoder.copyBufferToBuffer(a.buffer, a.byteOffset, copy.buffer, 0, n * 4);
      });
      const pass = rec.beginPass(req.label);
      for (const p of plans) {
        pass.setPipeline(p.pipeline);
        for (const s of p.segments) {
          const abs: Segment = { start: p.start + s.start, length: s.length };
          const wo = windowOf(device, output, abs);
          const wins = inputs.map((a) => windowOf(device, a, abs));
          const count = p.path === 'vec' ? s.length / 4 : s.length;
          const per = p.path === 'vec' ? p.tile / 4 : p.tile;
          const tiles = Math.max(1, Math.ceil(count / per));
          const wgs = t.maxWorkgroups > 0 ? Math.min(tiles, t.maxWorkgroups) : tiles;
          const params = new Uint32Array([
            s.length,
            wo.localBase,
            wins[0]?.localBase ?? 0,
            wins[1]?.localBase ?? 0,
            abs.start,
            wgs,
            c0 >>> 0,
            c1 >>> 0,
            tiles,
            0,
            0,
            0,
          ]);
          const entries: GPUBindGroupEntry[] = [
            { binding: 0, resource: { buffer: rec.uniform(params) } },
            windowEntry(1, output, wo),
          ];
          inputs.forEach((a, k) => {
            if (kernelSources[k] === 'binding') entries.push(windowEntry(2 + k, a, wins[k] as typeof wo));
          });
          pass.setBindGroup(0, device.gpu.createBindGroup({ layout: p.pipeline.getBindGroupLayout(0), entries }));
          rec.dispatch(pass, wgs);
        }
      }
      pass.end();
      req.after?.(rec);
      if (req.readBack) rb = rec.readback(output.buffer, output.byteOffset, n * 4);
    });
    return rb?.data();
  } finally {
    for (const c of copies) c?.destroy();
  }
}
