/**
 * Queue: in-order submission over a GPUDevice. Each algorithm call records all its passes into one
 * command buffer inside `submit()`, which runs the recording synchronously inside validation,
 * out-of-memory and internal error scopes, so errors surface as typed errors from the call that
 * caused them. A lost device turns every call into a DeviceLostError.
 *
 * With profiling on, every compute pass gets timestamp writes and `submit` reports the device time
 * from the first pass's start to the last pass's end (`lastDeviceTimeNs`).
 */
import type { GpuDevice } from './device';
import { DeviceLostError, GpuInternalError, GpuOutOfMemoryError, GpuValidationError, WebdplError } from './errors';

/** A copy of a buffer range into a mappable buffer, read once the submission completes. */
export interface Readback {
  readonly size: number;
  /** Available after `submit` resolved. */
  data(): ArrayBuffer;
}

/** What a recording callback gets. */
export interface Recorder {
  readonly encoder: GPUCommandEncoder;
  readonly device: GpuDevice;
  /** Begins a compute pass (with timestamp writes when profiling). */
  beginPass(label?: string): GPUComputePassEncoder;
  /** Dispatches `workgroups` workgroups as a 2-D grid when it exceeds the per-dimension limit. */
  dispatch(pass: GPUComputePassEncoder, workgroups: number): void;
  /** A uniform buffer holding `data`, destroyed after the submission. */
  uniform(data: ArrayBufferView | ArrayBuffer): GPUBuffer;
  /** A temporary storage buffer of `size` bytes, destroyed after the submission. */
  temp(size: number, label?: string): GPUBuffer;
  /** Copies `size` bytes of `buffer` at `offset` for reading after the submission. */
  readback(buffer: GPUBuffer, offset: number, size: number): Readback;
}

const MAX_PROFILED_PASSES = 256;
/** Bytes of each pooled uniform buffer (params structs are far smaller). */
const UNIFORM_SLOT = 256;
/** Readback buffers up to this size are pooled; larger ones are made per call and destroyed. */
const MAX_POOLED_READBACK = 1 << 20;

/** Splits a workgroup count into a grid the device accepts: [x, y, 1] with x*y >= count. */
export function gridFor(count: number, maxPerDimension: number): [number, number, number] {
  if (count <= maxPerDimension) return [Math.max(count, 0), 1, 1];
  const y = Math.ceil(count / maxPerDimension);
  if (y > maxPerDimension) throw new WebdplError(`dispatch of ${count} workgroups exceeds the device's grid`);
  const x = Math.ceil(count / y);
  return [x, y, 1];
}

export class Queue {
  private uncaptured: GPUError[] = [];
  private profiling = false;
  private querySet: GPUQuerySet | undefined;
  private queryResolve: GPUBuffer | undefined;
  /** Device time of the last profiled submission, in nanoseconds. */
  lastDeviceTimeNs = 0;
  /** With profiling: each profiled pass of the last submission, by label, in recording order. */
  lastPassTimesNs: readonly { readonly label: string; readonly ns: number }[] = [];
  /** Sum of device times since `resetDeviceTime()`, in nanoseconds. */
  totalDeviceTimeNs = 0;
  /** Number of submissions since creation. */
  submissions = 0;
  /**
   * Small uniform buffers reused across submissions. Reuse is safe without waiting: a buffer's
   * writeBuffer for the next submission is ordered after every earlier submission on this queue.
   * Creating a buffer per call cost ~0.1-1 ms each on an H100 (Vulkan), more than the kernels.
   */
  private uniformPool: GPUBuffer[] = [];
  /** Mappable readback buffers by size class, returned after their data was copied out. */
  private readbackPool = new Map<number, GPUBuffer[]>();

  constructor(
    readonly device: GpuDevice,
    private readonly lostReason: () => string | undefined,
  ) {}

  /** @internal called by the device's uncaptured-error handler */
  recordUncaptured(error: GPUError): void {
    this.uncaptured.push(error);
  }

  /** Turns timestamp profiling on or off. Needs the `timestamp-query` feature to turn on. */
  setProfiling(on: boolean): void {
    if (on && !this.device.features.has('timestamp-query')) {
      throw new WebdplError(`device '${this.device.info.name}' has no timestamp-query feature`);
    }
    this.profiling = on;
  }

  get isProfiling(): boolean {
    return this.profiling;
  }

  resetDeviceTime(): void {
    this.totalDeviceTimeNs = 0;
    this.lastDeviceTimeNs = 0;
  }

  /** Throws DeviceLostError when the device is lost. */
  checkAlive(): void {
    const r = this.lostReason();
    if (r !== undefined) throw new DeviceLostError(`device '${this.device.info.name}' is lost (${r})`, r);
  }

  /**
   * Records one command buffer with `record` (synchronously, inside error scopes), submits it, and
   * resolves once errors are known and readbacks (if any) are mapped. GPU errors raised by the
   * recording are thrown as GpuValidationError / GpuOutOfMemoryError / GpuInternalError.
   */
  async submit(label: string, record: (rec: Recorder) => void): Promise<void> {
    this.checkAlive();
    const gpu = this.device.gpu;
    gpu.pushErrorScope('internal');
    gpu.pushErrorScope('out-of-memory');
    gpu.pushErrorScope('validation');
    const temps: GPUBuffer[] = [];
    const uniforms: GPUBuffer[] = [];
    const readbacks: { staging: GPUBuffer; size: number; out?: ArrayBuffer }[] = [];
    let passes = 0;
    const passLabels: string[] = [];
    const profiling = this.profiling;
    let thrown: unknown;
    let timing: { staging: GPUBuffer } | undefined;
    try {
      const encoder = gpu.createCommandEncoder({ label });
      if (profiling && !this.querySet) {
        this.querySet = gpu.createQuerySet({ type: 'timestamp', count: 2 * MAX_PROFILED_PASSES });
        this.queryResolve = gpu.createBuffer({
          size: 16 * MAX_PROFILED_PASSES,
          usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
        });
      }
      const maxDim = this.device.limits.maxComputeWorkgroupsPerDimension;
      const rec: Recorder = {
        encoder,
        device: this.device,
        beginPass: (passLabel?: string) => {
          const desc: GPUComputePassDescriptor = { label: passLabel ?? label };
          if (profiling && passes < MAX_PROFILED_PASSES) {
            desc.timestampWrites = {
              querySet: this.querySet as GPUQuerySet,
              beginningOfPassWriteIndex: 2 * passes,
              endOfPassWriteIndex: 2 * passes + 1,
            };
          }
          passes++;
          passLabels.push(desc.label as string);
          return encoder.beginComputePass(desc);
        },
        dispatch: (pass, workgroups) => {
          if (workgroups <= 0) return;
          const [x, y, z] = gridFor(workgroups, maxDim);
          pass.dispatchWorkgroups(x, y, z);
        },
        uniform: (data) => {
          const bytes =
            data instanceof ArrayBuffer
              ? new Uint8Array(data)
              : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
          if (bytes.byteLength <= UNIFORM_SLOT) {
            const b =
              this.uniformPool.pop() ??
              gpu.createBuffer({
                size: UNIFORM_SLOT,
                usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
                label: 'webdpl params',
              });
            const padded = new Uint8Array(Math.ceil(bytes.byteLength / 4) * 4 || 4);
            padded.set(bytes);
            gpu.queue.writeBuffer(b, 0, padded);
            uniforms.push(b);
            return b;
          }
          const size = Math.ceil(bytes.byteLength / 16) * 16;
          const b = gpu.createBuffer({
            size,
            usage: GPUBufferUsage.UNIFORM,
            mappedAtCreation: true,
            label: `${label} params`,
          });
          new Uint8Array(b.getMappedRange()).set(bytes);
          b.unmap();
          temps.push(b);
          return b;
        },
        temp: (size, tempLabel) => {
          const b = gpu.createBuffer({
            size: Math.max(16, Math.ceil(size / 16) * 16),
            usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
            label: tempLabel ?? `${label} temp`,
          });
          temps.push(b);
          return b;
        },
        readback: (buffer, offset, size) => {
          const padded = Math.max(4, Math.ceil(size / 4) * 4);
          const staging = this.takeReadback(padded);
          encoder.copyBufferToBuffer(buffer, offset, staging, 0, padded);
          const entry: { staging: GPUBuffer; size: number; out?: ArrayBuffer } = { staging, size };
          readbacks.push(entry);
          return {
            size,
            data: () => {
              if (!entry.out) throw new WebdplError('readback read before its submission completed');
              return entry.out;
            },
          };
        },
      };
      record(rec);
      if (profiling && passes > 0) {
        const n = Math.min(passes, MAX_PROFILED_PASSES) * 2;
        encoder.resolveQuerySet(this.querySet as GPUQuerySet, 0, n, this.queryResolve as GPUBuffer, 0);
        const staging = this.takeReadback(n * 8);
        encoder.copyBufferToBuffer(this.queryResolve as GPUBuffer, 0, staging, 0, n * 8);
        timing = { staging };
      }
      gpu.queue.submit([encoder.finish()]);
      this.submissions++;
    } catch (e) {
      thrown = e;
    }
    this.uniformPool.push(...uniforms);
    // Start mapping now, so the readback round trip overlaps the error-scope round trip.
    const mapped = new Map<GPUBuffer, Promise<unknown>>();
    if (thrown === undefined) {
      for (const b of [...readbacks.map((r) => r.staging), ...(timing ? [timing.staging] : [])]) {
        const m = b.mapAsync(GPUMapMode.READ);
        m.catch(() => {});
        mapped.set(b, m);
      }
    }
    const [validation, oom, internal] = await Promise.all([
      gpu.popErrorScope(),
      gpu.popErrorScope(),
      gpu.popErrorScope(),
    ]);
    for (const t of temps) t.destroy();
    const fail = (e: unknown): never => {
      for (const r of readbacks) r.staging.destroy();
      timing?.staging.destroy();
      throw e;
    };
    const mapOf = (b: GPUBuffer) => mapped.get(b) ?? b.mapAsync(GPUMapMode.READ);
    if (validation) fail(new GpuValidationError(`${label}: GPU validation error: ${validation.message}`));
    if (oom) fail(new GpuOutOfMemoryError(`${label}: GPU out of memory: ${oom.message}`));
    if (internal) fail(new GpuInternalError(`${label}: GPU internal error: ${internal.message}`));
    if (thrown) fail(thrown);
    if (this.uncaptured.length) {
      const e = this.uncaptured.splice(0);
      fail(new GpuValidationError(`${label}: GPU error: ${e.map((x) => x.message).join('; ')}`));
    }
    const lost = this.device.gpu.lost.then((l) => {
      throw new DeviceLostError(`${label}: device lost during the call (${l.reason}: ${l.message})`, l.reason);
    });
    lost.catch(() => {});
    const maps: Promise<unknown>[] = readbacks.map((r) =>
      mapOf(r.staging).then(() => {
        r.out = r.staging.getMappedRange(0, Math.ceil(r.size / 4) * 4).slice(0, r.size);
        r.staging.unmap();
        this.returnReadback(r.staging);
      }),
    );
    if (timing) {
      const t = timing;
      maps.push(
        mapOf(t.staging).then(() => {
          const q = new BigUint64Array(t.staging.getMappedRange(0, this.timingBytes.get(t.staging) ?? t.staging.size));
          const first = q[0] as bigint;
          let last = q[1] as bigint;
          for (let i = 1; i < q.length; i += 2) if ((q[i] as bigint) > last) last = q[i] as bigint;
          const ns = last > first ? Number(last - first) : 0;
          const perPass: { label: string; ns: number }[] = [];
          for (let i = 0; i + 1 < q.length; i += 2) {
            const b = q[i] as bigint;
            const e = q[i + 1] as bigint;
            perPass.push({ label: passLabels[i / 2] as string, ns: e > b ? Number(e - b) : 0 });
          }
          this.lastPassTimesNs = perPass;
          this.lastDeviceTimeNs = ns;
          this.totalDeviceTimeNs += ns;
          t.staging.unmap();
          this.returnReadback(t.staging);
        }),
      );
    }
    if (maps.length) {
      try {
        await Promise.race([Promise.all(maps), lost]);
      } catch (e) {
        this.checkAlive();
        if (e instanceof WebdplError) throw e;
        throw new GpuInternalError(`${label}: reading results back failed: ${(e as Error).message}`);
      }
    }
  }

  private timingBytes = new WeakMap<GPUBuffer, number>();

  /** A mappable buffer of at least `bytes` (a power-of-two class), from the pool when one is free. */
  private takeReadback(bytes: number): GPUBuffer {
    const cls = Math.max(256, 2 ** Math.ceil(Math.log2(bytes)));
    const b =
      (cls <= MAX_POOLED_READBACK ? this.readbackPool.get(cls)?.pop() : undefined) ??
      this.device.gpu.createBuffer({
        size: cls,
        usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
        label: 'webdpl readback',
      });
    this.timingBytes.set(b, bytes);
    return b;
  }

  /** Returns an unmapped readback buffer to the pool (or destroys it). */
  private returnReadback(b: GPUBuffer): void {
    const list = this.readbackPool.get(b.size) ?? [];
    if (b.size <= MAX_POOLED_READBACK && list.length < 4) {
      list.push(b);
      this.readbackPool.set(b.size, list);
    } else {
      b.destroy();
    }
  }

  /** Waits until all submitted work finished; throws DeviceLostError if the device is lost meanwhile. */
  async finish(): Promise<void> {
    this.checkAlive();
    const lost = this.device.gpu.lost.then((l) => {
      throw new DeviceLostError(`device lost (${l.reason}: ${l.message})`, l.reason);
    });
    lost.catch(() => {});
    await Promise.race([this.device.gpu.queue.onSubmittedWorkDone(), lost]);
  }
}
