/**
 * Reusable scratch memory for the CPU sorts. A fresh 64 MiB buffer costs ~40-50 ms of page faults
 * on first touch (more than a memcpy of it), so sorts borrow buffers from small free lists and give
 * them back: SharedArrayBuffers for par sorts (their workers need shared memory), plain ArrayBuffers
 * for sorts on the calling thread, which never need SharedArrayBuffer (a browser page without
 * cross-origin isolation has none). At most MAX_KEPT buffers of each kind are kept; the lists empty
 * themselves a few seconds after the last use so large sorts do not pin memory for the life of the
 * process.
 */

import { idleRelease } from '../scratch';
import { bitsView } from './key-bits';

const MAX_KEPT = 6;
const RELEASE_AFTER_MS = 5_000;
type Buffer = ArrayBuffer | SharedArrayBuffer;
const freeShared: SharedArrayBuffer[] = [];
const freePlain: ArrayBuffer[] = [];
const idle = idleRelease(RELEASE_AFTER_MS, () => {
  freeShared.length = 0;
  freePlain.length = 0;
});

function isSharedBuffer(b: Buffer): b is SharedArrayBuffer {
  return Object.prototype.toString.call(b) === '[object SharedArrayBuffer]';
}

function take<B extends Buffer>(free: B[], need: number): B | undefined {
  let best = -1;
  for (let i = 0; i < free.length; i++) {
    const b = free[i] as B;
    if (b.byteLength >= need && (best < 0 || b.byteLength < (free[best] as B).byteLength)) best = i;
  }
  return best >= 0 ? (free.splice(best, 1)[0] as B) : undefined;
}

/**
 * A buffer of at least `bytes` bytes (contents undefined): a SharedArrayBuffer when `shared`, else a
 * plain ArrayBuffer. Give it back with `giveBack`.
 * @throws ReferenceError when `shared` and SharedArrayBuffer is unavailable
 */
export function borrow(bytes: number, shared: true): SharedArrayBuffer;
export function borrow(bytes: number, shared: boolean): Buffer;
export function borrow(bytes: number, shared: boolean): Buffer {
  const need = Math.max(16, bytes);
  if (shared) return take(freeShared, need) ?? new SharedArrayBuffer(need);
  return take(freePlain, need) ?? new ArrayBuffer(need);
}

function trim<B extends Buffer>(free: B[]): void {
  free.sort((x, y) => y.byteLength - x.byteLength);
  free.length = Math.min(free.length, MAX_KEPT);
}

/** Returns the buffers of views over `borrow`ed memory to their free list (undefined ones are skipped). */
export function giveBack(...views: (ArrayBufferView | undefined)[]): void {
  for (const v of views) {
    if (!v) continue;
    const b = v.buffer as Buffer;
    if (isSharedBuffer(b)) {
      if (!freeShared.includes(b)) freeShared.push(b);
    } else if (!freePlain.includes(b)) freePlain.push(b);
  }
  trim(freeShared);
  trim(freePlain);
  idle.touch();
}

/** A Uint32Array view of `n` elements over a borrowed buffer (shared or plain). */
export function borrowU32(n: number, shared: boolean): Uint32Array {
  return new Uint32Array(borrow(n * 4, shared), 0, n);
}

/**
 * The ping-pong value buffers of a par sort of pairs: `[a copy of the values' bits, scratch]`, both
 * borrowed shared memory; both undefined without values.
 */
export function borrowValues(
  values: Uint32Array | Int32Array | Float32Array | undefined,
): [Uint32Array | undefined, Uint32Array | undefined] {
  if (!values) return [undefined, undefined];
  const va = borrowU32(values.length, true);
  va.set(bitsView(values));
  return [va, borrowU32(values.length, true)];
}
