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

const ids = new WeakMap<object, number>();
let nextId = 1;

/**
 * A number unique to `o` for the life of the process (never reused), for cache keys: a buffer's
 * (`bufferId`), or any other object a cached plan depends on by identity (a resolved tuning).
 */
export function objectId(o: object): number {
  let id = ids.get(o);
  if (id === undefined) {
    id = nextId++;
    ids.set(o, id);
  }
  return id;
}

/** A number unique to `buffer` for the life of the process (never reused), for cache keys. */
export function bufferId(buffer: GPUBuffer): number {
  return objectId(buffer);
}

/**
 * A least-recently-used map of at most `capacity` entries and, with `weigh`, at most `maxWeight` in
 * total (the entry just set always stays, so a caller can use it); `dispose` runs on evicted values.
 */
export class LruCache<V> {
  /** Entries with the clock reading of their last use (a hit stamps its entry: no reinsertion). */
  private readonly map = new Map<string, { value: V; used: number }>();
  private clock = 0;
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
    const e = this.map.get(key);
    if (e === undefined) return undefined;
    // Most recent now. A stamp, not a delete and a set of the key: this runs on every GPU call
    // (issue 12), eviction (a miss's set) finds the oldest.
    e.used = ++this.clock;
    return e.value;
  }

  set(key: string, value: V): void {
    const old = this.map.get(key);
    if (old !== undefined) {
      this.map.delete(key);
      this.weight -= this.weigh?.(old.value) ?? 0;
      if (old.value !== value) this.dispose?.(old.value);
    }
    this.map.set(key, { value, used: ++this.clock });
    this.weight += this.weigh?.(value) ?? 0;
    while (this.map.size > 1 && (this.map.size > this.capacity || this.weight > this.maxWeight)) {
      // The least recently used entry (never the one just set: it has the newest stamp).
      let oldestKey: string | undefined;
      let oldest = Number.POSITIVE_INFINITY;
      for (const [k, e] of this.map) {
        if (e.used < oldest) {
          oldest = e.used;
          oldestKey = k;
        }
      }
      const e = this.map.get(oldestKey as string) as { value: V; used: number };
      this.map.delete(oldestKey as string);
      this.weight -= this.weigh?.(e.value) ?? 0;
      this.dispose?.(e.value);
    }
  }

  /** Drops every entry (disposing it). */
  clear(): void {
    for (const e of this.map.values()) this.dispose?.(e.value);
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
