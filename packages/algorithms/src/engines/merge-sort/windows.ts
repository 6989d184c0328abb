/**
 * Merges of sorted runs larger than one storage binding (sorts beyond one binding merge their
 * sorted segments with it, level by level).
 *
 * Each merge's output is cut into windows of `windowElements(device)` elements. The merge-path split
 * at each window boundary (how many of the window's predecessors come from run a) is found by a
 * k-ary search driven by the host: each round copies PROBES pairs (a[i], b[d - 1 - i]) per open
 * search into a small buffer (buffer copies reach any offset), the probe kernel evaluates the
 * comparator on them, and the flags come back; each round narrows a search PROBES + 1 times, all
 * searches of a call share a round. The comparisons run in the comparator's WGSL form on the GPU,
 * so splits and merges agree exactly. Then each window is one two-input merge (the merge-sort
 * engine's partition and merge kernels with `twoInputs`) of the two sub-ranges its splits give,
 * bound as windows of at most one binding at aligned offsets with element offsets in the uniform;
 * a window taking all its elements from one run is a buffer copy. Ties take run a first (stable).
 *
 * Reads results back between rounds, so it cannot be recorded into a caller's command encoder.
 */
import { type GpuDevice, getPipeline, UnsupportedOnDeviceError } from '@webdpl/core';
import { scratchBuffer } from '../../common/scratch';
import { bindingAlignment } from '../../common/segments';
import {
  type MergeKernelParams,
  MS_MERGE_TWO,
  MS_MERGE_TWO_VALUES,
  MS_PARTITION_TWO,
  MS_PROBE,
  mergeKernel,
  PARTITION_THREADS,
  PROBE_THREADS,
  partitionKernel,
  probeKernel,
} from './kernels';

/** Sorted keys (and values along) somewhere in buffers: element 0 at the given byte offsets. */
export interface Run {
  readonly keys: GPUBuffer;
  readonly keyByte: number;
  readonly values?: GPUBuffer;
  readonly valueByte?: number;
  readonly length: number;
}

/**
 * One merge: `a` and `b` (sorted) into `out` (a.length + b.length elements). `out` must not share
 * a buffer with `a` or `b` (a buffer is either read or written by a dispatch).
 */
export interface MergeJob {
  readonly a: Run;
  readonly b: Run;
  readonly out: Run;
}

/** Pairs probed per open search and round. */
const PROBES = 32;

/**
 * Elements of a merge window: the most whose binding, started at the aligned offset at or below
 * any element, fits one storage binding; a multiple of the binding alignment (so windows of an
 * aligned array start aligned). Sorts beyond one binding sort segments of this size.
 */
export function windowElements(device: GpuDevice): number {
  const align = bindingAlignment(device);
  const limit = device.limits.maxStorageBufferBindingSize;
  const w = (Math.floor((limit - align) / align) * align) / 4;
  if (w < align / 4) {
    throw new UnsupportedOnDeviceError(
      `merging beyond one storage binding needs bindings of at least ${2 * align} bytes; '${device.info.name}' allows ${limit}`,
    );
  }
  return w;
}

interface Search {
  readonly job: MergeJob;
  /** Which job and window boundary it finds the split of. */
  readonly j: number;
  readonly w: number;
  /** The diagonal: outputs before the window boundary. */
  readonly d: number;
  lo: number;
  hi: number;
}

/** A binding of `count` elements of `buffer` from byte `byte`: aligned offset, element offset in it. */
function windowAt(buffer: GPUBuffer, byte: number, count: number, align: number) {
  const offset = Math.floor(byte / align) * align;
  const off = (byte - offset) / 4;
  const resource: GPUBufferBinding = { buffer, offset, size: (off + count) * 4 };
  return { resource, off };
}

/** Probe positions in [lo, hi): all of them, or PROBES spread evenly. */
function positions(s: Search): number[] {
  const span = s.hi - s.lo;
  const m = Math.min(PROBES, span);
  const out: number[] = [];
  for (let k = 0; k < m; k++) out.push(m === span ? s.lo + k : s.lo + Math.floor(((k + 1) * span) / (m + 1)));
  return out;
}

/**
 * The merge-path splits (keys taken from a) of every window boundary of every job: `splits[j][w]`
 * for the boundary before window w (w = 0 and w = windows included).
 */
async function findSplits(
  device: GpuDevice,
  jobs: readonly MergeJob[],
  p: MergeKernelParams,
  window: number,
  label: string,
): Promise<number[][]> {
  const searches: Search[] = [];
  const splits = jobs.map((job) => {
    const la = job.a.length;
    const lb = job.b.length;
    const windows = Math.ceil((la + lb) / window);
    const s: number[] = new Array(windows + 1).fill(0);
    s[windows] = la;
    return s;
  });
  jobs.forEach((job, j) => {
    const lb = job.b.length;
    const sj = splits[j] as number[];
    for (let w = 1; w + 1 < sj.length; w++) {
      const d = w * window;
      searches.push({ job, j, w, d, lo: Math.max(0, d - lb), hi: Math.min(d, job.a.length) });
    }
  });
  const align = bindingAlignment(device);
  // Probe pairs per dispatch: one binding of pairs, chunk offsets aligned for pairs and flags.
  const chunk = Math.floor(device.limits.maxStorageBufferBindingSize / 8 / (align / 4)) * (align / 4);
  let pipeline: GPUComputePipeline | undefined;
  for (;;) {
    const open = searches.filter((s) => s.lo < s.hi);
    if (open.length === 0) break;
    pipeline ??= await getPipeline(device, probeKernel(p));
    const probe = pipeline;
    const plan = open.map(positions);
    const total = plan.reduce((a, ps) => a + ps.length, 0);
    const pairs = scratchBuffer(device, 'ms-windows-pairs', total * 8);
    const flags = scratchBuffer(device, 'ms-windows-flags', total * 4);
    let rb: { data(): ArrayBuffer } | undefined;
    await device.queue.submit(`${label} (merge-path search)`, (rec) => {
      let q = 0;
      open.forEach((s, i) => {
        for (const x of plan[i] as number[]) {
          const { a, b } = s.job;
          rec.encoder.copyBufferToBuffer(a.keys, a.keyByte + x * 4, pairs, q * 8, 4);
          rec.encoder.copyBufferToBuffer(b.keys, b.keyByte + (s.d - 1 - x) * 4, pairs, q * 8 + 4, 4);
          q++;
        }
      });
      const pass = rec.beginPass(`${label} (merge-path probes)`);
      pass.setPipeline(probe);
      for (let c = 0; c < total; c += chunk) {
        const count = Math.min(chunk, total - c);
        pass.setBindGroup(
          0,
          device.gpu.createBindGroup({
            layout: probe.getBindGroupLayout(0),
            entries: MS_PROBE.entries({
              probe: { buffer: rec.uniform(MS_PROBE.pack({ count })) },
              pairs: { buffer: pairs, offset: c * 8, size: count * 8 },
              flags: { buffer: flags, offset: c * 4, size: count * 4 },
            }),
          }),
        );
        rec.dispatch(pass, Math.ceil(count / PROBE_THREADS));
      }
      pass.end();
      rb = rec.readback(flags, 0, total * 4);
    });
    const f = new Uint32Array((rb as { data(): ArrayBuffer }).data());
    let q = 0;
    open.forEach((s, i) => {
      const ps = plan[i] as number[];
      let first = ps.length;
      for (let k = 0; k < ps.length; k++) {
        if (f[q + k] && first === ps.length) first = k;
      }
      q += ps.length;
      // The split is the first position whose pair says "b before a" (or hi when none does).
      if (first === ps.length) s.lo = (ps[ps.length - 1] as number) + 1;
      else {
        s.hi = ps[first] as number;
        if (first > 0) s.lo = (ps[first - 1] as number) + 1;
      }
    });
  }
  for (const s of searches) (splits[s.j] as number[])[s.w] = s.lo;
  return splits;
}

/**
 * Merges every job (stably: ties from a first) by the comparator of `p` (`p.twoInputs` is implied);
 * keys of `p.keyType`, values (u32 bits) when `p.hasValues`. Resolves when the GPU finished.
 */
export async function mergeWindowed(
  device: GpuDevice,
  jobs: readonly MergeJob[],
  p: MergeKernelParams,
  label: string,
): Promise<void> {
  const window = windowElements(device);
  const align = bindingAlignment(device);
  const kp = { ...p, twoInputs: true };
  const splits = await findSplits(device, jobs, kp, window, label);
  const tile = kp.workgroupSize * kp.itemsPerThread;
  const [partPipe, mergePipe] = await Promise.all([
    getPipeline(device, partitionKernel(kp)),
    getPipeline(device, mergeKernel(kp)),
  ]);
  const parts = scratchBuffer(device, 'ms-windows-parts', (Math.ceil(window / tile) + 1) * 4);
  await device.queue.submit(`${label} (windowed merge)`, (rec) => {
    const enc = rec.encoder;
    const merges: (() => void)[] = [];
    let pass: GPUComputePassEncoder | undefined;
    jobs.forEach((job, j) => {
      const { a, b, out } = job;
      const sj = splits[j] as number[];
      for (let w = 0; w + 1 < sj.length; w++) {
        const d0 = w * window;
        const len = Math.min(window, a.length + b.length - d0);
        const i0 = sj[w] as number;
        const na = (sj[w + 1] as number) - i0;
        const j0 = d0 - i0;
        if (na === 0 || na === len) {
          // The window is a piece of one run.
          const from = na ? a : b;
          const at = na ? i0 : j0;
          enc.copyBufferToBuffer(from.keys, from.keyByte + at * 4, out.keys, out.keyByte + d0 * 4, len * 4);
          if (p.hasValues && from.values && out.values) {
            const fv = from.valueByte ?? 0;
            enc.copyBufferToBuffer(from.values, fv + at * 4, out.values, (out.valueByte ?? 0) + d0 * 4, len * 4);
          }
          continue;
        }
        merges.push(() => {
          const ps = pass as GPUComputePassEncoder;
          const ka = windowAt(a.keys, a.keyByte + i0 * 4, na, align);
          const kb = windowAt(b.keys, b.keyByte + j0 * 4, len - na, align);
          const ko = windowAt(out.keys, out.keyByte + d0 * 4, len, align);
          const tiles = Math.ceil(len / tile);
          const valuesAt = (r: Run, at: number, count: number) =>
            p.hasValues && r.values ? windowAt(r.values, (r.valueByte ?? 0) + at * 4, count, align) : undefined;
          const va = valuesAt(a, i0, na);
          const vb = valuesAt(b, j0, len - na);
          const vo = valuesAt(out, d0, len);
          const words = MS_MERGE_TWO.pack({
            n: len,
            width: na,
            tiles,
            a_off: ka.off,
            b_off: kb.off,
            o_off: ko.off,
            av_off: va?.off ?? 0,
            bv_off: vb?.off ?? 0,
            ov_off: vo?.off ?? 0,
          });
          const params = { buffer: rec.uniform(words) };
          const partsBinding = { buffer: parts };
          ps.setPipeline(partPipe);
          ps.setBindGroup(
            0,
            device.gpu.createBindGroup({
              layout: partPipe.getBindGroupLayout(0),
              entries: MS_PARTITION_TWO.entries({
                ms_params: params,
                keys_a: ka.resource,
                keys_b: kb.resource,
                parts: partsBinding,
              }),
            }),
          );
          rec.dispatch(ps, Math.ceil((tiles + 1) / PARTITION_THREADS));
          ps.setPipeline(mergePipe);
          const entries = MS_MERGE_TWO.entries(
            {
              ms_params: params,
              keys_a: ka.resource,
              keys_b: kb.resource,
              keys_dst: ko.resource,
              parts: partsBinding,
              vals_a: va?.resource,
              vals_b: vb?.resource,
              vals_dst: vo?.resource,
            },
            p.hasValues ? MS_MERGE_TWO_VALUES : {},
          );
          ps.setBindGroup(0, device.gpu.createBindGroup({ layout: mergePipe.getBindGroupLayout(0), entries }));
          rec.dispatch(ps, tiles);
        });
      }
    });
    if (merges.length) {
      pass = rec.beginPass(`${label} (windowed merge)`);
      for (const m of merges) m();
      pass.end();
    }
  });
}
