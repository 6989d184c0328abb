/**
 * What a GPU call reuses between calls of the same shape: bind groups and the parameter buffers
 * they hold, kept per device in small LRU caches keyed by everything they depend on (kernel key,
 * sizes, and the identity, offset and size of every buffer bound).
 *
 * Parameter buffers here are immutable: created with their contents (mappedAtCreation) the first
 * time a shape is seen and never written again, so the hot path writes nothing, creates nothing,
 * and a call still in flight can never see the parameters of a later one. An evicted entry's
 * buffers are destroyed (the implementation keeps them alive for work already submitted).
 */
import type { GpuDevice } from './device';

const ids = new WeakMap<GPUBuffer, number>();
let nextId = 1;

/** A number unique to `buffer` for the life of the process (never reused), for cache keys. */
export function bufferId(buffer: GPUBuffer): number {
  let id = ids.get(buffer);
  if (id === undefined) {
    id = nextId++;
    ids.set(buffer, id);
  }
  return id;
}

/** A least-recently-used map of at most `capacity` entries; `dispose` runs on evicted values. */
export class LruCache<V> {
  private readonly map = new Map<string, V>();

  constructor(
    readonly capacity: number,
    private readonly dispose?: (value: V) => void,
  ) {}

  get size(): number {
    return this.map.size;
  }

  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      // Move to the back (most recent).
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  set(key: string, value: V): void {
    const old = this.map.get(key);
    if (old !== undefined) {
      this.map.delete(key);
      if (old !== value) this.dispose?.(old);
    }
    this.map.set(key, value);
    while (this.map.size > this.capacity) {
      const first = this.map.keys().next().value as string;
      const v = this.map.get(first) as V;
      this.map.delete(first);
      this.dispose?.(v);
    }
  }

  /** Drops every entry (disposing it). */
  clear(): void {
    for (const v of this.map.values()) this.dispose?.(v);
    this.map.clear();
  }
}

/** Something a cached entry owns and frees when evicted. */
export interface Owned {
  /** Buffers to destroy when the entry is evicted. */
  readonly owned: readonly GPUBuffer[];
}

const perDevice = new WeakMap<GpuDevice, Map<string, LruCache<Owned>>>();

/** Entries kept per cache and device. */
export const DISPATCH_CACHE_CAPACITY = 128;

/**
 * The LRU cache named `name` on `device` (one per engine), created on first use. Evicted entries'
 * `owned` buffers are destroyed.
 */
export function dispatchCache<V extends Owned>(device: GpuDevice, name: string): LruCache<V> {
  let m = perDevice.get(device);
  if (!m) {
    m = new Map();
    perDevice.set(device, m);
  }
  let c = m.get(name);
  if (!c) {
    c = new LruCache<Owned>(DISPATCH_CACHE_CAPACITY, (v) => {
      for (const b of v.owned) b.destroy();
    });
    m.set(name, c);
  }
  return c as unknown as LruCache<V>;
}

/**
 * An immutable uniform buffer holding `words` (padded to 16 bytes), for a cached bind group.
 * Create it inside `queue.guard` (cold path) so allocation errors are caught.
 */
export function paramsBuffer(device: GpuDevice, words: Uint32Array, label: string): GPUBuffer {
  const size = Math.max(16, Math.ceil(words.byteLength / 16) * 16);
  const b = device.gpu.createBuffer({ size, usage: GPUBufferUsage.UNIFORM, mappedAtCreation: true, label });
  new Uint32Array(b.getMappedRange()).set(words);
  b.unmap();
  return b;
}
