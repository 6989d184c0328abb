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

/**
 * A least-recently-used map of at most `capacity` entries and, with `weigh`, at most `maxWeight` in
 * total (the entry just set always stays, so a caller can use it); `dispose` runs on evicted values.
 */
export class LruCache<V> {
  private readonly map = new Map<string, V>();
  private weight = 0;

  constructor(
    readonly capacity: number,
    private readonly dispose?: (value: V) => void,
    private readonly weigh?: (value: V) => number,
    readonly maxWeight = Number.POSITIVE_INFINITY,
  ) {}

  get size(): number {
    return this.map.size;
  }

  /** Total weight of the entries (with `weigh`; else 0). */
  get totalWeight(): number {
    return this.weight;
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
      this.weight -= this.weigh?.(old) ?? 0;
      if (old !== value) this.dispose?.(old);
    }
    this.map.set(key, value);
    this.weight += this.weigh?.(value) ?? 0;
    while (this.map.size > 1 && (this.map.size > this.capacity || this.weight > this.maxWeight)) {
      const first = this.map.keys().next().value as string;
      const v = this.map.get(first) as V;
      this.map.delete(first);
      this.weight -= this.weigh?.(v) ?? 0;
      this.dispose?.(v);
    }
  }

  /** Drops every entry (disposing it). */
  clear(): void {
    for (const v of this.map.values()) this.dispose?.(v);
    this.map.clear();
    this.weight = 0;
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
 * Buffers the entries of one cache may own together (a call split into many segments owns one
 * parameter buffer per segment, so entries alone do not bound the memory).
 */
export const DISPATCH_CACHE_MAX_BUFFERS = 1024;

/**
 * The LRU cache named `name` on `device` (one per engine), created on first use. Evicted entries'
 * `owned` buffers are destroyed (retired: see Queue.retire).
 */
export function dispatchCache<V extends Owned>(device: GpuDevice, name: string): LruCache<V> {
  let m = perDevice.get(device);
  if (!m) {
    m = new Map();
    perDevice.set(device, m);
  }
  let c = m.get(name);
  if (!c) {
    c = new LruCache<Owned>(
      DISPATCH_CACHE_CAPACITY,
      (v) => {
        for (const b of v.owned) device.queue.retire(b);
      },
      (v) => v.owned.length,
      DISPATCH_CACHE_MAX_BUFFERS,
    );
    m.set(name, c);
  }
  return c as unknown as LruCache<V>;
}

/** Buffers owned by the entries of every dispatch cache of `device` (each cache holds at most DISPATCH_CACHE_MAX_BUFFERS). */
export function dispatchCacheBuffers(device: GpuDevice): number {
  let n = 0;
  for (const c of perDevice.get(device)?.values() ?? []) n += c.totalWeight;
  return n;
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
