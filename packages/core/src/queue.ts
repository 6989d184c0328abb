/**
 * Queue: in-order submission over a GPUDevice. Each algorithm call records all its passes into one
 * command buffer (synchronously) and submits it.
 *
 * Ordering: calls on one device run on the GPU in the order they took their turn (`reserve`, taken
 * synchronously when an engine call starts; `submit`/`enqueue` without a turn take one themselves):
 * one WebGPU queue, one submission per call, each submission after every earlier turn's, and
 * `queue.writeBuffer` uploads land before later submissions. So a chain of calls whose outputs stay
 * on the device (`transform(p, a, b, f); inclusiveScan(p, b, c)`) gives the right answer without
 * awaiting in between, even when a call of the chain first compiles its pipeline; a call that reads
 * a result back (`reduce`, `copyIf`'s count, `DeviceArray.read`) sees everything submitted before it.
 * (Uploads by `DeviceArray.write` / `from` are not turns: they land before the next submission.)
 *
 * Two ways to submit:
 * - `submit()` waits: one validation error scope around the recording, popped together with the
 *   mapping of the readbacks, so a call that returns data never returns data from a failed
 *   submission. Resolves once errors are known and readbacks are mapped (not when the GPU is idle).
 * - `enqueue()` does not wait for the GPU (calls whose outputs stay on the device): no error scope,
 *   no readback. GPU errors of such a call reach the device's uncaptured-error handler, which records
 *   them on this queue; the error is thrown by that call itself where the implementation reports
 *   errors synchronously (Dawn in Node does), else by the next call on this queue (`submit`,
 *   `enqueue`), or by `finish()`, naming the call that caused it. Errors are never dropped: each
 *   recorded error is thrown exactly once.
 * Errors outside scopes (out of memory, internal errors) are recorded the same way and thrown by the
 * call that caused them or the next one. A lost device turns every call into a DeviceLostError.
 *
 * With profiling on, every compute pass gets timestamp writes and `submit` reports the device time
 * from the first pass's start to the last pass's end (`lastDeviceTimeNs`); `enqueue` then waits like
 * `submit` (it reads the timestamps back).
 */
import { platform } from '#platform';
import type { GpuDevice } from './device';
import { DeviceLostError, GpuInternalError, GpuOutOfMemoryError, GpuValidationError, WebdplError } from './errors';
import { writeHost } from './host-upload';

/** A copy of a buffer range into a mappable buffer, read once the submission completes. */
export interface Readback {
  readonly size: number;
  /** Available after `submit` resolved. */
  data(): ArrayBuffer;
  /**
   * The u32 word `i` of the data (its bits), available after `submit` resolved: a read of a few
   * words (a count, a reduced value) without an ArrayBuffer made for it.
   */
  word(i: number): number;
}

/**
 * A place in the queue's call order, taken synchronously when a call starts (`Queue.reserve`), so a
 * call that prepares asynchronously (a pipeline compiling) still submits before the calls made
 * after it. `submit` / `enqueue` given a turn wait for the turns before it, submit, and release it.
 */
export interface Turn {
  /** Settles when every earlier turn was released; undefined when none was pending. */
  readonly ready: Promise<void> | undefined;
  /** Lets later turns submit. Idempotent; call it when the call fails before submitting. */
  release(): void;
}

/** A queue's latest turn not released yet. */
interface TurnOrder {
  tail: TurnState | undefined;
}

/**
 * A turn of `Queue.reserve`: its state and its release. Those waiting for its release get a
 * promise made on demand (`settled`), so a turn nobody waits for makes none.
 */
class TurnState implements Turn {
  ready: Promise<void> | undefined = undefined;
  private released = false;
  private waiting: (() => void)[] | undefined;

  constructor(private readonly order: TurnOrder) {}

  /** Settles once this turn was released (at once when it was). */
  settled(): Promise<void> {
    if (this.released) return Promise.resolve();
    return new Promise((resolve) => {
      (this.waiting ??= []).push(resolve);
    });
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    if (this.order.tail === this) this.order.tail = undefined;
    const w = this.waiting;
    if (w) {
      this.waiting = undefined;
      for (const f of w) f();
    }
  }
}

/** What a recording callback gets. */
export interface Recorder {
  readonly encoder: GPUCommandEncoder;
  readonly device: GpuDevice;
  /** Begins a compute pass (labelled, with timestamp writes, when profiling). */
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
/**
 * Whether GPU errors reach the uncaptured-error handler synchronously, within the WebGPU call that
 * caused them: true for Dawn in Node (the only WebGPU implementation there), whose validation runs
 * in process; browsers report asynchronously.
 */
const SYNC_ERRORS = platform.runtime === 'node';
/** Uniform buffers kept for reuse at most. */
const MAX_POOLED_UNIFORMS = 64;
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

/** A readback staging buffer and, once mapped, its bytes. */
class PendingReadback implements Readback {
  out: ArrayBuffer | undefined = undefined;
  /**
   * The first word(s) of a read of at most SMALL_READBACK bytes, taken while mapped: such a read
   * copies no ArrayBuffer (its `data()` is made on demand), issue 12.
   */
  w0 = 0;
  w1 = 0;
  w2 = 0;
  w3 = 0;

  constructor(
    readonly staging: GPUBuffer,
    readonly size: number,
  ) {}

  /** Bytes of `staging` (its pool's size class; GPUBuffer.size is a native getter call). */
  get stagingSize(): number {
    return readbackClass(Math.max(4, Math.ceil(this.size / 4) * 4));
  }

  /** Bytes mapped to read it: its size in whole words. */
  get mappedBytes(): number {
    return Math.ceil(this.size / 4) * 4;
  }

  /** Takes the mapped bytes (the staging buffer is mapped). */
  take(): void {
    const words = Math.ceil(this.size / 4);
    const mapped = this.staging.getMappedRange(0, words * 4);
    if (this.size > SMALL_READBACK) {
      this.out = mapped.slice(0, this.size);
      return;
    }
    const u = new Uint32Array(mapped, 0, words);
    this.w0 = u[0] as number;
    if (words > 1) {
      this.w1 = u[1] as number;
      this.w2 = u[2] ?? 0;
      this.w3 = u[3] ?? 0;
    }
    this.out = EMPTY;
  }

  data(): ArrayBuffer {
    const out = this.out;
    if (out === undefined) throw new WebdplError('readback read before its submission completed');
    if (out !== EMPTY) return out;
    const b = new Uint32Array([this.w0, this.w1, this.w2, this.w3]).buffer.slice(0, this.size);
    this.out = b;
    return b;
  }

  word(i: number): number {
    if (this.out === undefined) throw new WebdplError('readback read before its submission completed');
    if (this.out === EMPTY && i < 4) return i === 0 ? this.w0 : i === 1 ? this.w1 : i === 2 ? this.w2 : this.w3;
    return new Uint32Array(this.data(), 0, Math.floor(this.size / 4))[i] as number;
  }
}

/** The size class of a readback buffer of `bytes` (pooled by class). */
function readbackClass(bytes: number): number {
  return bytes <= 256 ? 256 : 2 ** Math.ceil(Math.log2(bytes));
}

/** `submitRead`'s results: nothing (`submit`), the readback itself (the default). */
const NOTHING = (): void => undefined;
const SAME = (readback: Readback | undefined): Readback | undefined => readback;

/** Reads of at most this many bytes keep their words instead of a copy of the mapped range. */
const SMALL_READBACK = 16;
/** Marks a small read whose bytes are in its words (`PendingReadback.out`). */
const EMPTY = new ArrayBuffer(0);

/**
 * One submission being recorded: the Recorder the recording callback gets (one object per call,
 * issue 12: it was seven closures and five arrays) and what it recorded besides its commands.
 */
class Recording implements Recorder {
  temps: GPUBuffer[] | undefined = undefined;
  uniforms: GPUBuffer[] | undefined = undefined;
  /** The first readback; `readbacks` holds them all once there is a second (no array per call). */
  readback0: PendingReadback | undefined = undefined;
  readbacks: PendingReadback[] | undefined = undefined;
  /** Labels of the profiled passes (profiling only). */
  passLabels: string[] | undefined = undefined;
  timing: GPUBuffer | undefined = undefined;

  constructor(
    private readonly queue: Queue,
    readonly encoder: GPUCommandEncoder,
    readonly device: GpuDevice,
    private readonly label: string,
    private readonly profiling: boolean,
    private readonly allowReadback: boolean,
    private readonly external: GPUCommandEncoder | undefined,
  ) {}

  beginPass(passLabel?: string): GPUComputePassEncoder {
    // Without profiling, no descriptor: Dawn for Node converts a descriptor member by member
    // (~5 us of host time per pass on lavapipe for a label), and the encoder's label already
    // names the call in validation messages.
    if (!this.profiling) return this.encoder.beginComputePass();
    const labels = (this.passLabels ??= []);
    const passes = labels.length;
    const desc: GPUComputePassDescriptor = { label: passLabel ?? this.label };
    if (passes < MAX_PROFILED_PASSES) {
      desc.timestampWrites = {
        querySet: this.queue.timestampQueries(),
        beginningOfPassWriteIndex: 2 * passes,
        endOfPassWriteIndex: 2 * passes + 1,
      };
    }
    labels.push(desc.label as string);
    return this.encoder.beginComputePass(desc);
  }

  dispatch(pass: GPUComputePassEncoder, workgroups: number): void {
    if (workgroups <= 0) return;
    const maxDim = this.device.limits.maxComputeWorkgroupsPerDimension;
    if (workgroups <= maxDim) pass.dispatchWorkgroups(workgroups);
    else {
      const [x, y, z] = gridFor(workgroups, maxDim);
      pass.dispatchWorkgroups(x, y, z);
    }
  }

  uniform(data: ArrayBufferView | ArrayBuffer): GPUBuffer {
    const bytes =
      data instanceof ArrayBuffer
        ? new Uint8Array(data)
        : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    const gpu = this.device.gpu;
    // Pooled slots are rewritten by later calls before a caller's encoder is submitted: a
    // recording into one gets buffers of its own.
    if (bytes.byteLength <= UNIFORM_SLOT && !this.external) {
      const b = this.queue.takeUniform();
      const padded = new Uint8Array(Math.ceil(bytes.byteLength / 4) * 4 || 4);
      padded.set(bytes);
      writeHost(gpu.queue, b, 0, padded);
      (this.uniforms ??= []).push(b);
      return b;
    }
    const size = Math.ceil(bytes.byteLength / 16) * 16;
    const b = gpu.createBuffer({
      size,
      usage: GPUBufferUsage.UNIFORM,
      mappedAtCreation: true,
      label: `${this.label} params`,
    });
    new Uint8Array(b.getMappedRange()).set(bytes);
    b.unmap();
    (this.temps ??= []).push(b);
    return b;
  }

  temp(size: number, tempLabel?: string): GPUBuffer {
    const b = this.device.gpu.createBuffer({
      size: Math.max(16, Math.ceil(size / 16) * 16),
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
      label: tempLabel ?? `${this.label} temp`,
    });
    (this.temps ??= []).push(b);
    return b;
  }

  readback(buffer: GPUBuffer, offset: number, size: number): Readback {
    if (this.external) throw new WebdplError(`${this.label}: a call recorded into a command encoder cannot read back`);
    if (!this.allowReadback) throw new WebdplError(`${this.label}: enqueue() cannot read back; use submit()`);
    const padded = Math.max(4, Math.ceil(size / 4) * 4);
    const staging = this.queue.takeReadback(padded);
    this.encoder.copyBufferToBuffer(buffer, offset, staging, 0, padded);
    const entry = new PendingReadback(staging, size);
    if (this.readback0 === undefined) this.readback0 = entry;
    else (this.readbacks ??= [this.readback0]).push(entry);
    return entry;
  }
}

/** A GPU error as the typed webdpl error, naming the call (`label`) that caused it. */
function typedError(label: string, error: GPUError): WebdplError {
  const kind = (error as { constructor?: { name?: string } }).constructor?.name ?? '';
  if (kind === 'GPUOutOfMemoryError') return new GpuOutOfMemoryError(`${label}: GPU out of memory: ${error.message}`);
  if (kind === 'GPUInternalError') return new GpuInternalError(`${label}: GPU internal error: ${error.message}`);
  return new GpuValidationError(`${label}: GPU validation error: ${error.message}`);
}

export class Queue {
  /** GPU errors recorded and not thrown yet (uncaptured errors), oldest first. */
  private pending: WebdplError[] = [];
  /** Label of the submission being recorded: synchronously reported errors belong to it. */
  private recording: string | undefined;
  /** Rejecters of the waits in progress, all rejected once when the device is lost. */
  private waiters = new Set<(e: Error) => void>();
  private watchingLoss = false;
  /** The latest turn, until it is released (`tail` undefined when no turn is pending). */
  private readonly order: TurnOrder = { tail: undefined };
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
   * Small uniform buffers reused across submissions (`Recorder.uniform`). Reuse is safe without
   * waiting: a buffer's writeBuffer for the next submission is ordered after every earlier submission
   * on this queue. Creating a buffer per call cost ~0.1-1 ms each on an H100 (Vulkan). Engines on
   * the hot path keep their parameters in buffers of their own, written once (core's dispatch cache).
   */
  private uniformPool: GPUBuffer[] = [];
  /** Mappable readback buffers by size class, returned after their data was copied out. */
  private readbackPool = new Map<number, GPUBuffer[]>();

  constructor(
    readonly device: GpuDevice,
    private readonly lostReason: () => string | undefined,
  ) {}

  /**
   * @internal called by the device's uncaptured-error handler: records the error, attributed to the
   * submission being recorded when it is reported synchronously, else to an earlier call. With
   * `onlyOwn` (the caller's own device) errors reported outside webdpl's recordings are left to the
   * caller. Returns whether the error was taken.
   */
  recordUncaptured(error: GPUError, onlyOwn = false): boolean {
    if (onlyOwn && this.recording === undefined) return false;
    this.pending.push(typedError(this.recording ?? 'an earlier call on this device', error));
    return true;
  }

  /** The caller's command encoder that calls record into instead of submitting (recordInto). */
  private external: GPUCommandEncoder | undefined;
  /** Whether any call was recorded into a caller's encoder (retire() then leaves buffers to the GC). */
  private recordedExternally = false;

  /**
   * Runs `calls` with every submission of this queue recorded into the caller's `encoder` instead:
   * nothing is submitted and nothing waits; the work runs when the caller submits the encoder.
   * Recordings that read back throw. Temporaries of such recordings are never destroyed (the caller
   * submits later): they are released by the garbage collector, and so, from then on, are the
   * buffers webdpl retires (`retire`). Submissions made with `direct` (DeviceArray.read) are not
   * captured. The dispatch layer runs one call's GPU part at a time, which makes the capture
   * belong to that call.
   */
  async recordInto<T>(encoder: GPUCommandEncoder, calls: () => Promise<T>): Promise<T> {
    if (this.external) throw new WebdplError('recordInto: already recording into an encoder');
    this.external = encoder;
    this.recordedExternally = true;
    try {
      return await calls();
    } finally {
      this.external = undefined;
    }
  }

  /**
   * Frees a buffer webdpl no longer needs: destroys it, unless calls were recorded into a caller's
   * encoder that may not be submitted yet (a destroyed buffer would fail that submission); then it
   * is left to the garbage collector.
   */
  retire(buffer: GPUBuffer): void {
    if (!this.recordedExternally) buffer.destroy();
  }

  /** Throws (once) the GPU errors recorded so far, as one typed error naming the calls. */
  private throwPending(surfacedBy?: string): void {
    if (this.pending.length === 0) return;
    const errors = this.pending.splice(0);
    const first = errors[0] as WebdplError;
    const own = surfacedBy === undefined || errors.every((e) => e.message.startsWith(`${surfacedBy}:`));
    if (errors.length === 1 && own) throw first;
    const by = own ? '' : ` (reported while running '${surfacedBy}')`;
    const text = errors.map((e) => e.message).join('; ');
    const Kind = first.constructor as new (message: string) => WebdplError;
    throw new Kind(`${text}${by}`);
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

  /** Rejects every wait in progress (`waiters`) once the device is lost (one handler per queue). */
  private watchLoss(): void {
    if (this.watchingLoss) return;
    this.watchingLoss = true;
    this.device.gpu.lost.then((l) => {
      const e = new DeviceLostError(`device lost during the call (${l.reason}: ${l.message})`, l.reason);
      for (const w of [...this.waiters]) w(e);
      this.waiters.clear();
    });
  }

  /**
   * `p`, or a DeviceLostError if the device is lost first. One handler on `GPUDevice.lost` serves
   * every wait (a reaction per call on that promise would pile up for the device's lifetime).
   */
  private untilLost<T>(p: Promise<T>, label: string, thenPending?: string): Promise<T> {
    this.watchLoss();
    return new Promise<T>((resolve, reject) => {
      const fail = (e: Error) => {
        reject(e instanceof DeviceLostError ? new DeviceLostError(`${label}: ${e.message}`, e.reason) : e);
      };
      this.waiters.add(fail);
      p.then(
        (v) => {
          this.waiters.delete(fail);
          // `thenPending`: the recorded errors thrown (naming it) before resolving, in this step.
          if (thenPending !== undefined) {
            try {
              this.throwPending(thenPending);
            } catch (e) {
              reject(e);
              return;
            }
          }
          resolve(v);
        },
        (e) => {
          this.waiters.delete(fail);
          reject(e);
        },
      );
    });
  }

  /**
   * Takes the next place in the call order (see Turn). Synchronous and cheap: with no turn pending,
   * `ready` is undefined and nothing waits.
   */
  reserve(): Turn {
    const prev = this.order.tail;
    const mine = new TurnState(this.order);
    this.order.tail = mine;
    // A promise only where there is something to wait for (issue 12: a promise per call was host
    // time before every submit).
    if (prev) mine.ready = prev.settled();
    return mine;
  }

  /** @internal The timestamp query set of profiled passes (made on first use). */
  timestampQueries(): GPUQuerySet {
    if (!this.querySet) {
      const gpu = this.device.gpu;
      this.querySet = gpu.createQuerySet({ type: 'timestamp', count: 2 * MAX_PROFILED_PASSES });
      this.queryResolve = gpu.createBuffer({
        size: 16 * MAX_PROFILED_PASSES,
        usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
      });
    }
    return this.querySet;
  }

  /** @internal A pooled uniform buffer of UNIFORM_SLOT bytes (returned by `release`). */
  takeUniform(): GPUBuffer {
    return (
      this.uniformPool.pop() ??
      this.device.gpu.createBuffer({
        size: UNIFORM_SLOT,
        usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
        label: 'webdpl params',
      })
    );
  }

  /**
   * Before a turn records: throws (naming `label`) if the device is lost or errors recorded earlier
   * are pending, releasing the turn then.
   */
  private checkTurn(label: string, t: Turn): void {
    try {
      this.checkAlive();
      this.throwPending(label);
    } catch (e) {
      t.release();
      throw e;
    }
  }

  /**
   * `record` in turn `t`: GPU errors raised meanwhile are attributed to `label` (`recording`), and
   * the turn is released once recorded (or failed).
   */
  private recordTurn(
    label: string,
    record: (rec: Recorder) => void,
    allowReadback: boolean,
    t: Turn,
    external?: GPUCommandEncoder,
  ): Recording {
    this.recording = label;
    try {
      return this.record(label, record, allowReadback, external);
    } finally {
      this.recording = undefined;
      t.release();
    }
  }

  /** Records one command buffer with `record` and submits it; what `submit` and `enqueue` share. */
  private record(
    label: string,
    record: (rec: Recorder) => void,
    allowReadback: boolean,
    external?: GPUCommandEncoder,
  ): Recording {
    const gpu = this.device.gpu;
    const profiling = this.profiling && !external;
    const encoder = external ?? gpu.createCommandEncoder({ label });
    const r = new Recording(this, encoder, this.device, label, profiling, allowReadback, external);
    try {
      record(r);
      const passes = r.passLabels?.length ?? 0;
      if (profiling && passes > 0) {
        const n = Math.min(passes, MAX_PROFILED_PASSES) * 2;
        encoder.resolveQuerySet(this.timestampQueries(), 0, n, this.queryResolve as GPUBuffer, 0);
        const staging = this.takeReadback(n * 8);
        this.timingBytes.set(staging, n * 8);
        encoder.copyBufferToBuffer(this.queryResolve as GPUBuffer, 0, staging, 0, n * 8);
        r.timing = staging;
      }
      if (external) {
        // The caller submits: its temporaries must outlive this call (released by the GC).
        r.temps = undefined;
        r.uniforms = undefined;
        return r;
      }
      gpu.queue.submit([encoder.finish()]);
      this.submissions++;
    } catch (e) {
      if (external) {
        r.temps = undefined;
        r.uniforms = undefined;
      }
      this.release(r, true);
      throw e;
    }
    return r;
  }

  /** Returns uniforms to the pool and destroys temporaries (and, on failure, the readback buffers). */
  private release(r: Recording, failed: boolean): void {
    // The pool keeps at most MAX_POOLED_UNIFORMS: a call split into many segments may take hundreds
    // at once, and keeping its high-water mark would hold them for the life of the device.
    const uniforms = r.uniforms;
    if (uniforms) {
      for (const u of uniforms) {
        if (this.uniformPool.length < MAX_POOLED_UNIFORMS) this.uniformPool.push(u);
        else u.destroy();
      }
      r.uniforms = undefined;
    }
    const temps = r.temps;
    if (temps) {
      for (const t of temps) t.destroy();
      r.temps = undefined;
    }
    if (failed) {
      if (r.readbacks) for (const rb of r.readbacks) rb.staging.destroy();
      else r.readback0?.staging.destroy();
      r.timing?.destroy();
    }
  }

  /**
   * Records one command buffer with `record` (synchronously, inside one validation error scope),
   * submits it after every earlier turn (`turn`: one the caller reserved; else one taken now), and
   * resolves once errors are known and readbacks (if any) are mapped. GPU errors
   * raised by the recording (or recorded earlier on this queue and not thrown yet) are thrown as
   * GpuValidationError / GpuOutOfMemoryError / GpuInternalError. While `recordInto` captures this
   * queue, a submit records into the caller's encoder like `enqueue` (it must not read back), unless
   * `direct` (DeviceArray.read: a submission of its own).
   */
  submit(label: string, record: (rec: Recorder) => void, turn?: Turn, direct = false): Promise<void> {
    if (this.external && !direct) return this.enqueue(label, record, turn);
    return this.submitting(label, record, turn ?? this.reserve(), NOTHING);
  }

  /**
   * `submit`, resolving with `result(readback)` once the submission settled, `readback` being the
   * first readback the recording made (undefined when it made none; by default the result is that
   * readback). `result` runs where the submission settles, before the promise resolves: an engine
   * (or its caller) that turns the bytes read back into its answer takes no promise step of its own
   * (issue 12: each was a microtask turn and a closure between the GPU's answer and the caller's).
   * An error thrown by `result` rejects the promise.
   */
  submitRead<T = Readback | undefined>(
    label: string,
    record: (rec: Recorder) => void,
    turn?: Turn,
    result: (readback: Readback | undefined) => T = SAME as (readback: Readback | undefined) => T,
  ): Promise<T> {
    if (this.external) {
      // Recording into a caller's encoder: it must not read back (enqueue throws if it does).
      return this.enqueue(label, record, turn).then(() => result(undefined));
    }
    return this.submitting(label, record, turn ?? this.reserve(), result);
  }

  /**
   * What `submit` and `submitRead` share. Node's hot path (no turn to wait for, no profiling: Dawn
   * reports errors synchronously, so there is no error scope) is no async function: it records,
   * submits and returns the promise of its one readback's mapping, which settles the call (issue
   * 12: each async layer was a frame and promise steps around every call). Everything else waits
   * in `submitSlow`. Errors reject the returned promise, never throw.
   */
  private submitting<T>(
    label: string,
    record: (rec: Recorder) => void,
    t: Turn,
    result: (readback: Readback | undefined) => T,
  ): Promise<T> {
    if (t.ready || !SYNC_ERRORS) return this.submitSlow(label, record, t, result);
    let rec: Recording;
    try {
      this.checkTurn(label, t);
      rec = this.recordTurn(label, record, true, t);
    } catch (e) {
      return Promise.reject(e);
    }
    if (rec.timing || rec.readbacks !== undefined) return this.settle(rec, label, false, result);
    try {
      return this.settleOne(rec, label, result);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Settles a submission of at most one readback, without an error scope: throws the errors its
   * recording raised (its readback never fills), else maps its readback (`mapOne`), or releases it
   * at once when it has none.
   */
  private settleOne<T>(rec: Recording, label: string, result: (readback: Readback | undefined) => T): Promise<T> {
    if (this.pending.length) {
      // The submission failed validation: throw now (its readbacks never fill).
      this.release(rec, true);
      this.throwPending(label);
    }
    const rb0 = rec.readback0;
    if (rb0) return this.mapOne(rb0, rec, label, result);
    this.release(rec, false);
    this.throwPending(label);
    return Promise.resolve(result(undefined));
  }

  /** `submitting` with a turn to wait for, or an error scope (browsers). */
  private async submitSlow<T>(
    label: string,
    record: (rec: Recorder) => void,
    t: Turn,
    result: (readback: Readback | undefined) => T,
  ): Promise<T> {
    if (t.ready) await t.ready;
    this.checkTurn(label, t);
    const gpu = this.device.gpu;
    // Dawn in Node reports GPU errors to the uncaptured-error handler synchronously, inside the
    // call that caused them (recorded under `label` below), so no error scope is needed there: its
    // pop is a round trip of ~27 us per call on the H100. Elsewhere (browsers report errors
    // asynchronously) one validation scope catches the recording's errors.
    const scoped = !SYNC_ERRORS;
    if (scoped) gpu.pushErrorScope('validation');
    let r: Recording | undefined;
    let thrown: unknown;
    try {
      r = this.recordTurn(label, record, true, t);
    } catch (e) {
      thrown = e;
    }
    if (!r) {
      if (scoped) await gpu.popErrorScope().catch(() => null);
      throw thrown;
    }
    if (scoped || r.timing || r.readbacks !== undefined) return this.settle(r, label, scoped, result);
    return this.settleOne(r, label, result);
  }

  /**
   * Waits for a submission's readbacks (and timestamps) and, when `scoped`, its validation scope
   * (pushed before the recording; popped here); resolves as `submitting` does.
   */
  private async settle<T>(
    rec: Recording,
    label: string,
    scoped: boolean,
    result: (readback: Readback | undefined) => T,
  ): Promise<T> {
    const gpu = this.device.gpu;
    const scope: Promise<GPUError | null> = scoped ? gpu.popErrorScope() : Promise.resolve(null);
    if (!scoped && this.pending.length) {
      // The submission failed validation: throw now (its readbacks never fill).
      this.release(rec, true);
      this.throwPending(label);
    }
    // Start mapping now, so the readback round trip overlaps the error-scope round trip.
    const rbs = rec.readbacks ?? (rec.readback0 ? [rec.readback0] : []);
    const maps: Promise<unknown>[] = rbs.map((rb) =>
      rb.staging.mapAsync(GPUMapMode.READ).then(() => {
        rb.take();
        rb.staging.unmap();
        this.returnReadback(rb.staging, rb.stagingSize);
      }),
    );
    if (rec.timing) maps.push(this.readTiming(rec.timing, rec.passLabels ?? []));
    let error: GPUError | null;
    try {
      [error] = await this.untilLost(Promise.all([scope, ...maps]), label);
    } catch (e) {
      this.release(rec, true);
      this.checkAlive();
      if (e instanceof WebdplError) throw e;
      // A map fails when the submission failed: report the scope's error if it has one.
      const err = await scope.catch(() => null);
      if (err) throw typedError(label, err);
      throw new GpuInternalError(`${label}: reading results back failed: ${(e as Error).message}`);
    }
    this.release(rec, error !== null);
    if (error) this.pending.unshift(typedError(label, error));
    this.throwPending(label);
    return result(rec.readback0);
  }

  /**
   * Maps the one readback of `rec` (its mapped range only, as the raw floor does), takes its bytes
   * and settles the submission: its temporaries released, errors recorded meanwhile thrown; resolves
   * with `result(rb)` (an error it throws rejects). Rejects with a DeviceLostError naming `label` when the
   * device is lost first (as `untilLost`, in one promise), and with the map's failure as a
   * GpuInternalError (after the loss check) when the mapping fails.
   */
  private mapOne<T>(
    rb: PendingReadback,
    rec: Recording,
    label: string,
    result: (readback: Readback | undefined) => T,
  ): Promise<T> {
    this.watchLoss();
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const failed = (e: unknown) => {
        if (settled) return;
        settled = true;
        this.waiters.delete(fail);
        this.release(rec, true);
        try {
          this.checkAlive();
        } catch (lost) {
          reject(lost);
          return;
        }
        if (e instanceof WebdplError) reject(e);
        else reject(new GpuInternalError(`${label}: reading results back failed: ${(e as Error)?.message}`));
      };
      const fail = (e: Error) => {
        failed(e instanceof DeviceLostError ? new DeviceLostError(`${label}: ${e.message}`, e.reason) : e);
      };
      this.waiters.add(fail);
      rb.staging.mapAsync(GPUMapMode.READ, 0, rb.mappedBytes).then(() => {
        if (settled) return;
        try {
          rb.take();
          rb.staging.unmap();
          this.returnReadback(rb.staging, rb.stagingSize);
        } catch (e) {
          failed(e);
          return;
        }
        settled = true;
        this.waiters.delete(fail);
        this.release(rec, false);
        let value: T;
        try {
          this.throwPending(label);
          value = result(rb);
        } catch (e) {
          reject(e);
          return;
        }
        resolve(value);
      }, failed);
    });
  }

  /**
   * Records one command buffer with `record` and submits it without waiting for the GPU (calls
   * whose outputs stay on the device). No readbacks. The returned promise settles at once: it
   * rejects with GPU errors known by then (this call's where the implementation reports them
   * synchronously, and earlier ones not thrown yet); later ones surface from the next call on this
   * queue or from `finish()`. With profiling on it waits like `submit`.
   */
  async enqueue(label: string, record: (rec: Recorder) => void, turn?: Turn): Promise<void> {
    // Taken at the call: a capture (recordInto) belongs to the calls made while it runs.
    const external = this.external;
    if (this.profiling && !external) return this.submit(label, record, turn);
    const t = turn ?? this.reserve();
    if (t.ready) await t.ready;
    this.checkTurn(label, t);
    this.release(this.recordTurn(label, record, false, t, external), false);
    this.throwPending();
  }

  private readTiming(staging: GPUBuffer, passLabels: readonly string[]): Promise<void> {
    return staging.mapAsync(GPUMapMode.READ).then(() => {
      const q = new BigUint64Array(staging.getMappedRange(0, this.timingBytes.get(staging) ?? staging.size));
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
      staging.unmap();
      this.returnReadback(staging);
    });
  }

  /**
   * Runs `create` (pipeline, buffer and bind-group creation: the cold path of a call) inside
   * validation and out-of-memory error scopes and throws what they caught, naming `label`.
   */
  async guard<T>(label: string, create: () => T): Promise<T> {
    this.checkAlive();
    const gpu = this.device.gpu;
    gpu.pushErrorScope('out-of-memory');
    gpu.pushErrorScope('validation');
    let value: T | undefined;
    let thrown: unknown;
    let ok = false;
    try {
      value = create();
      ok = true;
    } catch (e) {
      thrown = e;
    }
    const [validation, oom] = await Promise.all([gpu.popErrorScope(), gpu.popErrorScope()]);
    if (validation) throw typedError(label, validation);
    if (oom) throw typedError(label, oom);
    if (!ok) throw thrown;
    return value as T;
  }

  private timingBytes = new WeakMap<GPUBuffer, number>();

  /** A mappable buffer of at least `bytes` (a power-of-two class), from the pool when one is free. */
  /** @internal */
  takeReadback(bytes: number): GPUBuffer {
    const cls = readbackClass(bytes);
    const b =
      (cls <= MAX_POOLED_READBACK ? this.readbackPool.get(cls)?.pop() : undefined) ??
      this.device.gpu.createBuffer({
        size: cls,
        usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
        label: 'webdpl readback',
      });
    return b;
  }

  /** Buffers the queue keeps for reuse: pooled uniforms and readback buffers (diagnostics, the soak). */
  get pooledBuffers(): number {
    let n = this.uniformPool.length;
    for (const l of this.readbackPool.values()) n += l.length;
    return n;
  }

  /** Returns an unmapped readback buffer to the pool (or destroys it). */
  private returnReadback(b: GPUBuffer, size = b.size): void {
    let list = this.readbackPool.get(size);
    if (!list && size <= MAX_POOLED_READBACK) {
      list = [];
      this.readbackPool.set(size, list);
    }
    if (list && list.length < 4) list.push(b);
    else {
      b.destroy();
    }
  }

  /**
   * Waits until all submitted work finished, then throws the GPU errors of earlier calls not thrown
   * yet (calls submitted with `enqueue`); throws DeviceLostError if the device is lost meanwhile.
   */
  finish(): Promise<void> {
    // Calls that took their turn but have not submitted yet (compiling a pipeline) come first.
    const tail = this.order.tail;
    if (tail) return tail.settled().then(() => this.finishNow());
    return this.finishNow();
  }

  /**
   * `finish` with no turn pending: no async function, and the pending errors thrown in the step
   * that sees the GPU done (issue 12: the probes' scans and transforms wait with it per call).
   */
  private finishNow(): Promise<void> {
    try {
      this.checkAlive();
    } catch (e) {
      return Promise.reject(e);
    }
    return this.untilLost(this.device.gpu.queue.onSubmittedWorkDone(), 'finish', 'finish');
  }
}
