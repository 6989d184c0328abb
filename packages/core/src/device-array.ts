/**
 * DeviceArray<T>: a typed array in GPU memory (oneDPL's USM/buffer counterpart). Data stays on the
 * device between calls; `read()` copies it back. Views share their parent's buffer; destroying the
 * parent invalidates every view.
 */
import { fromGPUDevice, type GpuDevice } from './device';
import { ArgumentError, DestroyedArrayError, describe, ForeignArrayError, UnsupportedTypeError } from './errors';
import { writeHost } from './host-upload';
import { byteSize, type ElementType, elementTypeOf, isElementType, type TypedArrayOf, viewHost } from './types';

/** The GPU buffer behind one or more DeviceArrays. */
interface Storage {
  readonly buffer: GPUBuffer;
  destroyed: boolean;
  /** The caller's buffer (DeviceArray.fromBuffer): destroy() lets go of it without destroying it. */
  readonly adopted: boolean;
}

/** Usage every DeviceArray buffer gets: storage plus copies both ways. */
export const DEVICE_ARRAY_USAGE = 0x80 /* STORAGE */ | 0x4 /* COPY_SRC */ | 0x8; /* COPY_DST */

function checkDevice(device: unknown): GpuDevice {
  const d = device as GpuDevice | undefined;
  if (!d || typeof d !== 'object' || d.type !== 'gpu' || !d.gpu) {
    throw new ArgumentError('device', 'a GPU device (from selectDevice or policy.device)', describe(device));
  }
  return d;
}

/** A webdpl GPU device, or the webdpl device over a caller's GPUDevice. */
function deviceOf(device: unknown): GpuDevice {
  const raw = device as Partial<GPUDevice> | undefined;
  if (
    raw &&
    typeof raw === 'object' &&
    typeof raw.createBuffer === 'function' &&
    (device as GpuDevice).type !== 'gpu'
  ) {
    return fromGPUDevice(device as GPUDevice);
  }
  return checkDevice(device);
}

const USAGE_NAMES: readonly [number, string][] = [
  [0x80, 'STORAGE'],
  [0x4, 'COPY_SRC'],
  [0x8, 'COPY_DST'],
];

function checkType(device: GpuDevice, type: ElementType): void {
  if (type === 'f16' && !device.features.has('shader-f16')) {
    throw new UnsupportedTypeError(`element type f16 needs the shader-f16 feature, which '${device.info.name}' lacks`);
  }
}

/** Bytes to allocate for `length` elements: padded to 16 so kernels may load whole vec4s. */
function allocBytes(type: ElementType, length: number): number {
  return Math.max(16, Math.ceil((length * byteSize(type)) / 16) * 16);
}

/**
 * Copies host bytes into `buffer` (queue.writeBuffer: staged by the implementation, ordered before
 * the next submission; typed arrays over a SharedArrayBuffer go through `writeHost`'s staging
 * slices). Note, measured on an H100 (Dawn/Vulkan, driver 580): after large uploads
 * (a 1 GiB one, say) later kernels of the same process ran at ~55% of their bandwidth, whether the
 * upload went in one call, in 16 MiB pieces, or through staging buffers of our own; data created on
 * the GPU did not do it. See docs/benchmarks/h100-notes.md.
 */
function upload(device: GpuDevice, buffer: GPUBuffer, byteOffset: number, src: ArrayBufferView): void {
  writeHost(device.gpu.queue, buffer, byteOffset, src);
}

function f32ToF16Bits(x: number): number {
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  f[0] = x;
  const b = u[0] as number;
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  let mant = b & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    if ((mant >>> (shift - 1)) & 1 && (mant & ((1 << (shift - 1)) - 1) || h & 1)) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  if (mant & 0x1000 && (mant & 0xfff || h & 1)) h++;
  if ((h & 0x7fff) >= 0x7c00) e = 0x1f;
  return sign | h;
}

export class DeviceArray<T extends ElementType = ElementType> {
  private constructor(
    /** The device whose memory holds the data. */
    readonly device: GpuDevice,
    /** Element type. */
    readonly type: T,
    private readonly storage: Storage,
    /** First element of this array within its buffer. */
    readonly offset: number,
    /** Number of elements. */
    readonly length: number,
    private readonly isView: boolean,
  ) {}

  /**
   * Copies a host typed array to `device`. The element type follows the array (Uint32Array: u32,
   * Int32Array: i32, Float32Array: f32) unless `options.type` is 'f16' (from a Float32Array).
   */
  static from(device: GpuDevice, data: Uint32Array): DeviceArray<'u32'>;
  static from(device: GpuDevice, data: Int32Array): DeviceArray<'i32'>;
  static from(device: GpuDevice, data: Float32Array, options?: { type?: 'f32' }): DeviceArray<'f32'>;
  static from(device: GpuDevice, data: Float32Array, options: { type: 'f16' }): DeviceArray<'f16'>;
  static from(
    device: GpuDevice,
    data: Uint32Array | Int32Array | Float32Array,
    options?: { type?: ElementType },
  ): DeviceArray;
  static from(device: GpuDevice, data: unknown, options: { type?: ElementType } = {}): DeviceArray {
    const d = checkDevice(device);
    d.queue.checkAlive();
    const hostType = elementTypeOf(data, 'data');
    const type = options.type ?? hostType;
    if (type === 'f16') {
      if (hostType !== 'f32') throw new ArgumentError('data', 'a Float32Array for an f16 DeviceArray', describe(data));
      checkType(d, 'f16');
      const src = data as Float32Array;
      const bits = new Uint16Array(src.length + (src.length & 1));
      for (let i = 0; i < src.length; i++) bits[i] = f32ToF16Bits(src[i] as number);
      const a = DeviceArray.create(d, 'f16', src.length);
      if (bits.byteLength) upload(d, a.storage.buffer, 0, bits);
      return a;
    }
    if (type !== hostType) {
      throw new ArgumentError('options.type', `'${hostType}' (the type of data) or 'f16'`, describe(type));
    }
    const src = data as Uint32Array | Int32Array | Float32Array;
    const a = DeviceArray.create(d, type, src.length);
    if (src.length) upload(d, a.storage.buffer, 0, src);
    return a;
  }

  /** A new array of `length` elements of `type` on `device`, zero-filled. */
  static create<T extends ElementType>(device: GpuDevice, type: T, length: number): DeviceArray<T> {
    const d = checkDevice(device);
    d.queue.checkAlive();
    if (!isElementType(type)) throw new ArgumentError('type', "one of 'u32', 'i32', 'f32', 'f16'", describe(type));
    checkType(d, type);
    if (!Number.isSafeInteger(length) || length < 0) {
      throw new ArgumentError('length', 'a non-negative integer', describe(length));
    }
    const bytes = allocBytes(type, length);
    if (bytes > d.limits.maxBufferSize) {
      throw new ArgumentError(
        'length',
        `at most ${Math.floor(d.limits.maxBufferSize / byteSize(type))} elements on this device (maxBufferSize)`,
        String(length),
      );
    }
    const buffer = d.gpu.createBuffer({
      size: bytes,
      usage: DEVICE_ARRAY_USAGE,
      label: `DeviceArray<${type}>[${length}]`,
    });
    return new DeviceArray(d, type, { buffer, destroyed: false, adopted: false }, 0, length, false);
  }

  /**
   * Adopts the caller's GPUBuffer without copying (bring your own buffer): `length` elements of
   * `type` from byte `byteOffset` (the arguments of `new Uint32Array(buffer, byteOffset, length)`).
   * The buffer needs usage STORAGE | COPY_SRC | COPY_DST, must belong to `device` (a webdpl device or
   * the caller's GPUDevice, which is wrapped by `fromGPUDevice`) and must not be mapped while webdpl
   * uses it. `destroy()` of the array lets go of the buffer without destroying it: the buffer stays
   * the caller's. Results written by webdpl are in the buffer once the call resolved (or, for calls
   * recorded into the caller's encoder, once that encoder's work ran).
   * @throws ArgumentError naming `device`, `buffer`, `type`, `byteOffset` or `length`
   */
  static fromBuffer<T extends ElementType>(
    device: GpuDevice | GPUDevice,
    buffer: GPUBuffer,
    type: T,
    byteOffset = 0,
    length?: number,
  ): DeviceArray<T> {
    const d = deviceOf(device);
    d.queue.checkAlive();
    const b = buffer as Partial<GPUBuffer> | undefined;
    if (!b || typeof b !== 'object' || typeof b.size !== 'number' || typeof b.usage !== 'number') {
      throw new ArgumentError('buffer', 'a GPUBuffer', describe(buffer));
    }
    const missing = USAGE_NAMES.filter(([bit]) => ((b.usage as number) & bit) === 0).map(([, n]) => n);
    if (missing.length) {
      throw new ArgumentError(
        'buffer',
        'a GPUBuffer with usage STORAGE | COPY_SRC | COPY_DST',
        `a buffer without ${missing.join(', ')}`,
      );
    }
    if (b.mapState !== undefined && b.mapState !== 'unmapped') {
      throw new ArgumentError('buffer', 'an unmapped GPUBuffer', `a buffer whose mapState is '${b.mapState}'`);
    }
    if (!isElementType(type)) throw new ArgumentError('type', "one of 'u32', 'i32', 'f32', 'f16'", describe(type));
    checkType(d, type);
    const size = byteSize(type);
    if (!Number.isSafeInteger(byteOffset) || byteOffset < 0 || byteOffset % 4 !== 0 || byteOffset > b.size) {
      throw new ArgumentError(
        'byteOffset',
        `a multiple of 4 in [0, ${b.size}] (the buffer's size)`,
        describe(byteOffset),
      );
    }
    const room = Math.floor((b.size - byteOffset) / size);
    const n = length ?? room;
    if (!Number.isSafeInteger(n) || n < 0 || n > room) {
      throw new ArgumentError(
        'length',
        `an integer in [0, ${room}] (elements of ${type} between byteOffset ${byteOffset} and the buffer's end at ${b.size})`,
        describe(length),
      );
    }
    return new DeviceArray(d, type, { buffer, destroyed: false, adopted: true }, byteOffset / size, n, false);
  }

  /** True for a DeviceArray (of any device). */
  static isDeviceArray(x: unknown): x is DeviceArray {
    return x instanceof DeviceArray;
  }

  /**
   * The GPU buffer holding the elements, from `byteOffset` (for kernels of your own, render passes,
   * copies). Shared by every view of the array. Throws DestroyedArrayError if destroyed.
   */
  get buffer(): GPUBuffer {
    this.check();
    return this.storage.buffer;
  }

  /** Byte offset of the first element within `buffer`. */
  get byteOffset(): number {
    return this.offset * byteSize(this.type);
  }

  /** Byte length of the elements. */
  get byteLength(): number {
    return this.length * byteSize(this.type);
  }

  /** True after destroy() of this array or the array it views. */
  get destroyed(): boolean {
    return this.storage.destroyed;
  }

  /** Throws DestroyedArrayError if destroyed, ForeignArrayError if `device` is given and differs. */
  check(device?: GpuDevice, argument = 'array'): this {
    if (this.storage.destroyed) {
      throw new DestroyedArrayError(`${argument}: DeviceArray<${this.type}>[${this.length}] was destroyed`);
    }
    if (device && device !== this.device) {
      throw new ForeignArrayError(
        `${argument}: DeviceArray belongs to device '${this.device.info.name}' (#${this.device.id}), not to '${device.info.name}' (#${device.id})`,
      );
    }
    return this;
  }

  /** A view of `length` elements starting at `offset`, sharing this array's memory. */
  view(offset: number, length: number = this.length - offset): DeviceArray<T> {
    this.check();
    if (!Number.isSafeInteger(offset) || offset < 0 || offset > this.length) {
      throw new ArgumentError('offset', `an integer in [0, ${this.length}]`, describe(offset));
    }
    if (!Number.isSafeInteger(length) || length < 0 || offset + length > this.length) {
      throw new ArgumentError(
        'length',
        `an integer in [0, ${this.length - offset}] (offset ${offset})`,
        describe(length),
      );
    }
    return new DeviceArray(this.device, this.type, this.storage, this.offset + offset, length, true);
  }

  /** Copies the elements back to a new host typed array (f16: Float32Array of the values). */
  async read(): Promise<T extends 'f16' ? Float32Array : TypedArrayOf<T>> {
    this.check(undefined, 'this');
    const bytes = this.byteLength;
    if (bytes === 0) return viewHost(this.type === 'f16' ? 'f32' : this.type, new ArrayBuffer(0), 0, 0) as never;
    const start = this.byteOffset & ~3;
    const skip = this.byteOffset - start;
    const size = Math.ceil((skip + bytes) / 4) * 4;
    let rb: { data(): ArrayBuffer } | undefined;
    await this.device.queue.submit(
      'DeviceArray.read',
      (rec) => {
        rb = rec.readback(this.storage.buffer, start, size);
      },
      undefined,
      true,
    );
    const raw = (rb as { data(): ArrayBuffer }).data();
    if (this.type === 'f16') {
      const bits = new Uint16Array(raw, skip, this.length);
      const out = new Float32Array(this.length);
      for (let i = 0; i < bits.length; i++) out[i] = f16BitsToNumber(bits[i] as number);
      return out as never;
    }
    return viewHost(this.type, raw, skip, this.length) as never;
  }

  /** Copies host data into this array (lengths must match). */
  write(data: TypedArrayOf<T>): void {
    this.check(undefined, 'this');
    if (this.type === 'f16') throw new UnsupportedTypeError('write() of f16 arrays: use DeviceArray.from');
    const t = elementTypeOf(data, 'data');
    if (t !== this.type) throw new ArgumentError('data', `a typed array of ${this.type}`, describe(data));
    if ((data as ArrayLike<number>).length !== this.length) {
      throw new ArgumentError('data', `${this.length} elements`, `${(data as ArrayLike<number>).length}`);
    }
    const src = data as Uint32Array;
    if (src.length) upload(this.device, this.storage.buffer, this.byteOffset, src);
  }

  /**
   * Frees the GPU memory at once (GPUBuffer.destroy(): work already submitted still completes; a
   * call recorded into your encoder and not submitted yet must not use it); for an array adopted with
   * `fromBuffer`, only lets go of the caller's buffer (not destroyed). Destroying a view is an
   * error: destroy the array it views. Idempotent.
   */
  destroy(): void {
    this.free(false);
  }

  /**
   * @internal destroy() for webdpl's own temporaries: the buffer goes through Queue.retire, so a
   * call recorded into a caller's encoder that is not submitted yet keeps it.
   */
  discard(): void {
    this.free(true);
  }

  private free(retire: boolean): void {
    if (this.isView)
      throw new ArgumentError('this', 'an owning DeviceArray (a view cannot be destroyed; destroy its parent)');
    if (this.storage.destroyed) return;
    this.storage.destroyed = true;
    if (this.storage.adopted) return;
    if (retire) this.device.queue.retire(this.storage.buffer);
    else this.storage.buffer.destroy();
  }
}

function f16BitsToNumber(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 0x1f) return m ? Number.NaN : s * Number.POSITIVE_INFINITY;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}
