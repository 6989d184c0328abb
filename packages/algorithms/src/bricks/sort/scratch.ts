/**
 * Reusable scratch memory for the CPU sorts. A fresh 64 MiB buffer costs ~40-50 ms of page faults
 * on first touch (more than a memcpy of it), so sorts borrow SharedArrayBuffers from a small free
 * list and give them back. At most MAX_KEPT buffers are kept; the list empties itself a few seconds
 * after the last use so large sorts do not pin memory for the life of the process.
 */

import { bitsView } from './key-bits';

const MAX_KEPT = 6;
const RELEASE_AFTER_MS = 5_000;
const free: SharedArrayBuffer[] = [];
let timer: ReturnType<typeof setTimeout> | undefined;

/** A SharedArrayBuffer of at least `bytes` bytes (contents undefined). Give it back with `giveBack`. */
export function borrow(bytes: number): SharedArrayBuffer {
  const need = Math.max(16, bytes);
  let best = -1;
  for (let i = 0; i < free.length; i++) {
    const b = free[i] as SharedArrayBuffer;
    if (b.byteLength >= need && (best < 0 || b.byteLength < (free[best] as SharedArrayBuffer).byteLength)) best = i;
  }
  if (best >= 0) return free.splice(best, 1)[0] as SharedArrayBuffer;
  return new SharedArrayBuffer(need);
}

/** Returns the buffers of views over `borrow`ed memory to the free list (undefined ones are skipped). */
export function giveBack(...views: (ArrayBufferView | undefined)[]): void {
  for (const v of views) if (v) free.push(v.buffer as SharedArrayBuffer);
  free.sort((x, y) => y.byteLength - x.byteLength);
  free.length = Math.min(free.length, MAX_KEPT);
  if (timer) clearTimeout(timer);
  timer = setTimeout(() => {
    free.length = 0;
    timer = undefined;
  }, RELEASE_AFTER_MS);
  (timer as { unref?: () => void }).unref?.();
}

/** A Uint32Array view of `n` elements over a borrowed buffer. */
export function borrowU32(n: number): Uint32Array {
  return new Uint32Array(borrow(n * 4), 0, n);
}

/**
 * The ping-pong value buffers of a par sort of pairs: `[a copy of the values' bits, scratch]`, both
 * borrowed; both undefined without values.
 */
export function borrowValues(
  values: Uint32Array | Int32Array | Float32Array | undefined,
): [Uint32Array | undefined, Uint32Array | undefined] {
  if (!values) return [undefined, undefined];
  const va = borrowU32(values.length);
  va.set(bitsView(values));
  return [va, borrowU32(values.length)];
}
