/**
 * Per-call cost of GPU calls on resident data, against the raw-WebGPU floor measured in the same
 * process: what a hand-written WebGPU program pays for one reduce, with nothing of webdpl in the
 * way. The floor at n is one dispatch of a minimal reduce kernel over n u32 (at most 4096 threads,
 * each summing a grid-strided run of vec4s and adding it atomically into one word), a clear of that word before it, a copy of the 4 bytes into a
 * mappable buffer and mapAsync; pipeline, buffers and bind group made once and reused.
 *
 * The webdpl calls timed: reduce (a number read back), copyIf (its count read back), and
 * inclusiveScan and transform (outputs stay on the device; each call is followed by
 * `queue.finish()`, so a call is timed until the GPU is done with it, as the floor is). Variants run
 * interleaved in rounds (every variant once per round, a batch of calls each), and each figure is
 * the median over rounds of the mean time per call in a batch; every round starts on warm clocks
 * (see warm.ts). Ratios are taken against the floor at the same n in the same round (robust to a
 * machine whose load drifts), median over rounds.
 */
import { DeviceArray, type GpuDevice, kernelInterface, lambda } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import type { GpuWarmth } from './warm';

/** The four calls timed, as functions of the algorithms package. */
export interface PerCallApi {
  readonly reduce: (policy: Policy, input: DeviceArray) => Promise<number>;
  readonly inclusiveScan: (policy: Policy, input: DeviceArray, output: DeviceArray) => Promise<unknown>;
  readonly transform: (policy: Policy, input: DeviceArray, output: DeviceArray, fn: unknown) => Promise<unknown>;
  readonly copyIf: (policy: Policy, input: DeviceArray, output: DeviceArray, pred: unknown) => Promise<number>;
}

/** Names of the timed variants, floor first. */
export const PER_CALL_VARIANTS = ['floor', 'reduce', 'inclusiveScan', 'transform', 'copyIf'] as const;
export type PerCallVariant = (typeof PER_CALL_VARIANTS)[number];
const CALLS = ['reduce', 'inclusiveScan', 'transform', 'copyIf'] as const;

/** Per-call figures at one size. */
export interface PerCallRow {
  readonly log2: number;
  /** Median microseconds per call, by variant. */
  readonly us: Readonly<Record<PerCallVariant, number>>;
  /** Each call's time over the floor's in the same round, median over rounds. */
  readonly ratio: Readonly<Record<Exclude<PerCallVariant, 'floor'>, number>>;
  /** Rounds run. */
  readonly rounds: number;
  /** Results checked against host references: 'ok' or what was wrong. */
  readonly check: string;
}

const WORKGROUP = 64;
/** Threads of the floor kernel at most: each sums a grid-strided run of vec4s, then one atomic add. */
const FLOOR_THREADS = 4096;

/** The floor kernel's interface: vec4s in, one atomic sum word, the number of vec4s. */
const FLOOR = kernelInterface({
  name: 'bench floor',
  params: { struct: 'FloorParams', name: 'prm', binding: 2, fields: { n: 'u32' } },
  bindings: {
    x: { binding: 0, access: 'read', type: 'u32', form: 'vec4' },
    sum: { binding: 1, access: 'read_write', type: 'u32', form: 'atomic' },
  },
});

// No workgroup memory, no barriers: the least a reduce can be (software GPUs run barriers slowly).
const FLOOR_WGSL = `${FLOOR.wgsl()}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  var acc = vec4<u32>(0u);
  let step = nw.x * ${WORKGROUP}u;
  for (var i = g.x; i < prm.n; i += step) { acc += x[i]; }
  atomicAdd(&sum[0], acc.x + acc.y + acc.z + acc.w);
}`;

/** A raw-WebGPU reduce of `input` (u32, a multiple of 4 elements from element 0 of its buffer): the floor. */
export function rawFloor(device: GpuDevice, input: DeviceArray): { run: () => Promise<number>; destroy: () => void } {
  const gpu = device.gpu;
  const module = gpu.createShaderModule({ code: FLOOR_WGSL, label: 'bench floor' });
  const pipeline = gpu.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const n = input.length;
  if (n % 4 !== 0 || input.offset !== 0) throw new Error('rawFloor: input must be whole vec4s from element 0');
  const sum = gpu.createBuffer({
    size: 16,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
  const words = FLOOR.pack({ n: n / 4 });
  const params = gpu.createBuffer({ size: words.byteLength, usage: GPUBufferUsage.UNIFORM, mappedAtCreation: true });
  new Uint32Array(params.getMappedRange()).set(words);
  params.unmap();
  const readback = gpu.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const group = gpu.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: FLOOR.entries({ x: { buffer: input.buffer }, sum: { buffer: sum }, prm: { buffer: params } }),
  });
  const workgroups = Math.max(1, Math.ceil(Math.min(FLOOR_THREADS, n / 4) / WORKGROUP));
  return {
    run: async () => {
      const encoder = gpu.createCommandEncoder();
      encoder.clearBuffer(sum, 0, 4);
      const pass = encoder.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, group);
      pass.dispatchWorkgroups(workgroups);
      pass.end();
      encoder.copyBufferToBuffer(sum, 0, readback, 0, 4);
      gpu.queue.submit([encoder.finish()]);
      await readback.mapAsync(GPUMapMode.READ, 0, 4);
      const v = new Uint32Array(readback.getMappedRange(0, 4))[0] as number;
      readback.unmap();
      return v;
    },
    destroy: () => {
      for (const b of [sum, params, readback]) b.destroy();
    },
  };
}

/** Options of `measurePerCall`. */
export interface PerCallOptions {
  /** log2 sizes. */
  readonly sizes: readonly number[];
  /** Rounds per size. @default 7 */
  readonly rounds?: number;
  /** Wall time per variant per round, in milliseconds. @default 60 */
  readonly batchMs?: number;
  /** Warms the clocks before each round. */
  readonly warmth?: GpuWarmth;
  /** Called with a short description before each size. */
  readonly onStep?: (task: string) => void;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/** Input data: small values so sums stay exact; about half of them even (copyIf keeps those). */
function inputData(n: number): Uint32Array {
  const a = new Uint32Array(n);
  let x = 2463534242;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    a[i] = (x >>> 0) & 1023;
  }
  return a;
}

const TRANSFORM = lambda((x: number) => x * 3 + 1);
const IS_EVEN = lambda((x: number) => (x & 1) === 0);

/**
 * Measures the floor and the four calls on DeviceArrays at each size, interleaved, and checks each
 * call's result once against a host reference.
 */
export async function measurePerCall(
  device: GpuDevice,
  policy: Policy,
  api: PerCallApi,
  options: PerCallOptions,
): Promise<PerCallRow[]> {
  const rows: PerCallRow[] = [];
  const rounds = options.rounds ?? 7;
  const batchMs = options.batchMs ?? 60;
  const q = device.queue;
  for (const log2 of options.sizes) {
    options.onStep?.(`per-call 2^${log2}`);
    const n = 2 ** log2;
    const host = inputData(n);
    const input = DeviceArray.from(device, host);
    const output = DeviceArray.create(device, 'u32', n);
    const floor = rawFloor(device, input);
    try {
      const calls: Record<PerCallVariant, () => Promise<unknown>> = {
        floor: floor.run,
        reduce: () => api.reduce(policy, input),
        inclusiveScan: async () => {
          await api.inclusiveScan(policy, input, output);
          await q.finish();
        },
        transform: async () => {
          await api.transform(policy, input, output, TRANSFORM);
          await q.finish();
        },
        copyIf: () => api.copyIf(policy, input, output, IS_EVEN),
      };
      const check = await checkResults(host, output, calls, floor.run);
      const ratios = {
        reduce: [] as number[],
        inclusiveScan: [] as number[],
        transform: [] as number[],
        copyIf: [] as number[],
      };
      const samples = Object.fromEntries(PER_CALL_VARIANTS.map((v) => [v, [] as number[]])) as Record<
        PerCallVariant,
        number[]
      >;
      // Calls per batch, from one timed call of each variant (after the check's warm-up calls).
      const batch = {} as Record<PerCallVariant, number>;
      for (const v of PER_CALL_VARIANTS) {
        const t0 = performance.now();
        await calls[v]();
        const ms = performance.now() - t0;
        batch[v] = Math.max(3, Math.min(2000, Math.round(batchMs / Math.max(ms, 0.001))));
      }
      for (let r = 0; r < rounds; r++) {
        await options.warmth?.before();
        // Rotate the order each round, so no variant always runs first after the warm-up.
        for (let k = 0; k < PER_CALL_VARIANTS.length; k++) {
          const v = PER_CALL_VARIANTS[(k + r) % PER_CALL_VARIANTS.length] as PerCallVariant;
          const f = calls[v];
          const reps = batch[v];
          const t0 = performance.now();
          for (let i = 0; i < reps; i++) await f();
          samples[v].push(((performance.now() - t0) / reps) * 1e3);
        }
        options.warmth?.after();
        const f = samples.floor[r] as number;
        for (const v of CALLS) ratios[v].push((samples[v][r] as number) / f);
      }
      const us = Object.fromEntries(PER_CALL_VARIANTS.map((v) => [v, median(samples[v])])) as Record<
        PerCallVariant,
        number
      >;
      const ratio = {
        reduce: median(ratios.reduce),
        inclusiveScan: median(ratios.inclusiveScan),
        transform: median(ratios.transform),
        copyIf: median(ratios.copyIf),
      };
      rows.push({ log2, us, ratio, rounds, check });
    } finally {
      floor.destroy();
      input.destroy();
      output.destroy();
    }
  }
  return rows;
}

/** Runs each call once and compares it with a host reference; 'ok' or the first mismatch. */
async function checkResults(
  host: Uint32Array,
  output: DeviceArray<'u32'>,
  calls: Record<PerCallVariant, () => Promise<unknown>>,
  floorRun: () => Promise<number>,
): Promise<string> {
  const n = host.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum = (sum + (host[i] as number)) >>> 0;
  const problems: string[] = [];
  const f = await floorRun();
  if (f !== sum) problems.push(`floor: sum ${f}, expected ${sum}`);
  const r = (await calls.reduce()) as number;
  if (r !== sum) problems.push(`reduce: ${r}, expected ${sum}`);
  await calls.inclusiveScan();
  const scan = await output.read();
  if (scan[n - 1] !== sum || scan[0] !== host[0]) problems.push('inclusiveScan: wrong output');
  await calls.transform();
  const tr = await output.read();
  if (tr[n - 1] !== ((host[n - 1] as number) * 3 + 1) >>> 0) problems.push('transform: wrong output');
  const kept = (await calls.copyIf()) as number;
  let even = 0;
  for (let i = 0; i < n; i++) if (((host[i] as number) & 1) === 0) even++;
  if (kept !== even) problems.push(`copyIf: kept ${kept}, expected ${even}`);
  return problems.length ? problems.join('; ') : 'ok';
}

/** The rows as text lines: microseconds per call and the ratio to the floor. */
export function renderPerCall(rows: readonly PerCallRow[], device: string): string {
  const texts = rows.map((r) =>
    PER_CALL_VARIANTS.map((v) => {
      const us = r.us[v];
      return v === 'floor' ? `${us.toFixed(0)} us` : `${us.toFixed(0)} us ${r.ratio[v].toFixed(2)}x`;
    }),
  );
  // Columns as wide as their widest cell, two spaces apart (a software GPU's 2^20 copyIf takes
  // 10,000+ us, which ran into the cell before it at a fixed width).
  const widths = PER_CALL_VARIANTS.map((v, c) => Math.max(v.length, ...texts.map((t) => (t[c] as string).length)) + 2);
  const lines = [
    `GPU per call on DeviceArrays vs the raw-WebGPU floor (one reduce dispatch + 4-byte readback), ${device}:`,
    `  ${'size'.padEnd(6)}${PER_CALL_VARIANTS.map((v, c) => v.padStart(widths[c] as number)).join('')}`,
  ];
  rows.forEach((r, i) => {
    const cells = (texts[i] as string[]).map((t, c) => t.padStart(widths[c] as number));
    lines.push(`  ${`2^${r.log2}`.padEnd(6)}${cells.join('')}${r.check === 'ok' ? '' : `  WRONG: ${r.check}`}`);
  });
  return lines.join('\n');
}
