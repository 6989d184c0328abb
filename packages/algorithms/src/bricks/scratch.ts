/**
 * Reusable SharedArrayBuffers for staging plain-ArrayBuffer arrays in par calls.
 *
 * A fresh SharedArrayBuffer costs its page faults on first touch: on the 2-core bench machine,
 * allocating and filling 64 MiB took 50-90 ms, against 6-10 ms to copy into memory already touched.
 * So staging buffers of 64 KiB and more are kept after a call and handed to the next one: at most
 * `MAX_RETAINED_BUFFERS` of them and `MAX_RETAINED_BYTES` in all, dropped after `IDLE_RELEASE_MS`
 * without use (an unref'ed timer, so it never keeps a process alive). Smaller arrays are allocated
 * fresh (cheap).
 */

/** Buffers below this size are not kept. */
const MIN_KEPT_BYTES = 1 << 16;
/** Most buffers kept for reuse. */
export const MAX_RETAINED_BUFFERS = 32;
/** Most bytes kept for reuse. */
export const MAX_RETAINED_BYTES = 512 * (1 << 20);
/** Kept buffers are dropped after this long without a call. */
export const IDLE_RELEASE_MS = 3000;

let free: SharedArrayBuffer[] = [];
let retained = 0;
let timer: ReturnType<typeof setTimeout> | undefined;

/**
 * A SharedArrayBuffer of at least `bytes` bytes (contents unspecified): a kept one that fits without
 * wasting more than half of it, else a new one. Give it back with `releaseScratch` once no worker
 * can touch it any more.
 */
export function acquireScratch(bytes: number): SharedArrayBuffer {
  let best = -1;
  for (let i = 0; i < free.length; i++) {
    const len = (free[i] as SharedArrayBuffer).byteLength;
    if (len >= bytes && len <= 2 * bytes && (best < 0 || len < (free[best] as SharedArrayBuffer).byteLength)) best = i;
  }
  if (best >= 0) {
    const buf = free.splice(best, 1)[0] as SharedArrayBuffer;
    retained -= buf.byteLength;
    return buf;
  }
  return new SharedArrayBuffer(bytes);
}

/** Keeps `buffer` for the next call (when large enough and within the cap). */
export function releaseScratch(buffer: SharedArrayBuffer): void {
  if (buffer.byteLength < MIN_KEPT_BYTES || buffer.byteLength > MAX_RETAINED_BYTES) return;
  free.push(buffer);
  retained += buffer.byteLength;
  while (retained > MAX_RETAINED_BYTES || free.length > MAX_RETAINED_BUFFERS) {
    const old = free.shift() as SharedArrayBuffer;
    retained -= old.byteLength;
  }
  if (timer !== undefined) clearTimeout(timer);
  timer = setTimeout(dropScratch, IDLE_RELEASE_MS);
  (timer as { unref?: () => void }).unref?.();
}

/** Drops every kept buffer (for tests and memory pressure). */
export function dropScratch(): void {
  free = [];
  retained = 0;
  if (timer !== undefined) clearTimeout(timer);
  timer = undefined;
}

/** Bytes currently kept for reuse. */
export function retainedScratchBytes(): number {
  return retained;
}
