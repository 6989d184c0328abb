/**
 * Reusable SharedArrayBuffers for staging plain-ArrayBuffer arrays in par calls.
 *
 * A fresh SharedArrayBuffer costs its page faults on first touch: on the 2-core bench machine,
 * allocating and filling 64 MiB took 50-90 ms, against 6-10 ms to copy into memory already touched.
 * So staging buffers of 64 KiB and more are kept after a call and handed to the next one: at most
 * `MAX_RETAINED_BUFFERS` of them and `MAX_RETAINED_BYTES` in all, dropped after `IDLE_RELEASE_MS`
 * without use (an unref'ed timer, so it never keeps a process alive). Smaller arrays are allocated
 * fresh (cheap).
 *
 * Kept buffers come in power-of-two sizes, at most `MAX_PER_SIZE` of each, so what is kept depends
 * on the sizes in use, not on the order calls came in: with buffers of the sizes asked for and the
 * 32 most recent kept, calls of random sizes left from a few to 250 MiB kept, and the soak's RSS
 * moved by tens of MiB with that draw.
 */

/** Buffers below this size are not kept. */
const MIN_KEPT_BYTES = 1 << 16;
/** Most buffers kept for reuse. */
export const MAX_RETAINED_BUFFERS = 32;
/** Most buffers of one size kept for reuse (a par call stages up to three arrays). */
export const MAX_PER_SIZE = 4;
/** Most bytes kept for reuse. */
export const MAX_RETAINED_BYTES = 512 * (1 << 20);
/** Kept buffers are dropped after this long without a call. */
export const IDLE_RELEASE_MS = 3000;

/** What `idleRelease` returns. */
export interface IdleRelease {
  /** Marks a use: `drop` runs once `ms` pass without another. */
  touch(): void;
  /** Stops the timer (after a drop by hand). */
  cancel(): void;
}

/**
 * Runs `drop` once `ms` have passed since the last `touch()`, on an unref'ed timer (it never keeps a
 * process alive) that is armed once per idle period, not per call: when it fires early (a use came
 * since) it re-arms for the time left. Re-arming a timer in every call cost 10-20 us of a par call at
 * 2^22 (clearTimeout + setTimeout run cache-cold after the kernels; docs/benchmarks/cpu-par-2026-11-25.md).
 */
export function idleRelease(ms: number, drop: () => void): IdleRelease {
  let last = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (after: number) => {
    timer = setTimeout(fire, after);
    (timer as { unref?: () => void }).unref?.();
  };
  function fire(): void {
    const left = last + ms - Date.now();
    if (left > 0) arm(left);
    else {
      timer = undefined;
      drop();
    }
  }
  return {
    touch: () => {
      last = Date.now();
      if (timer === undefined) arm(ms);
    },
    cancel: () => {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
}

let free: SharedArrayBuffer[] = [];
let retained = 0;
const idle = idleRelease(IDLE_RELEASE_MS, () => {
  free = [];
  retained = 0;
});

/** The size a buffer of `bytes` bytes is allocated with: the next power of two from MIN_KEPT_BYTES on. */
function sizeFor(bytes: number): number {
  return bytes < MIN_KEPT_BYTES ? bytes : 2 ** Math.ceil(Math.log2(bytes));
}

/**
 * A SharedArrayBuffer of at least `bytes` bytes (contents unspecified; from 64 KiB on, of the next
 * power-of-two size): a kept one of that size, else a new one. Give it back with `releaseScratch`
 * once no worker can touch it any more.
 */
export function acquireScratch(bytes: number): SharedArrayBuffer {
  const size = sizeFor(bytes);
  for (let i = free.length - 1; i >= 0; i--) {
    if ((free[i] as SharedArrayBuffer).byteLength === size) {
      const buf = free.splice(i, 1)[0] as SharedArrayBuffer;
      retained -= size;
      return buf;
    }
  }
  return new SharedArrayBuffer(size);
}

/**
 * Keeps `buffer` for the next call: a power-of-two size from 64 KiB on, within the caps (the oldest
 * kept buffer of its size goes first, then the oldest of all).
 */
export function releaseScratch(buffer: SharedArrayBuffer): void {
  const size = buffer.byteLength;
  if (size < MIN_KEPT_BYTES || size > MAX_RETAINED_BYTES || sizeFor(size) !== size) return;
  let same = 0;
  for (const b of free) if (b.byteLength === size) same++;
  if (same >= MAX_PER_SIZE) {
    free.splice(
      free.findIndex((b) => b.byteLength === size),
      1,
    );
    retained -= size;
  }
  free.push(buffer);
  retained += size;
  while (retained > MAX_RETAINED_BYTES || free.length > MAX_RETAINED_BUFFERS) {
    const old = free.shift() as SharedArrayBuffer;
    retained -= old.byteLength;
  }
  idle.touch();
}

/** Drops every kept buffer (for tests and memory pressure). */
export function dropScratch(): void {
  free = [];
  retained = 0;
  idle.cancel();
}

/** Bytes currently kept for reuse. */
export function retainedScratchBytes(): number {
  return retained;
}
