/**
 * The one way host bytes reach a GPU buffer (`queue.writeBuffer`). Dawn's Node binding takes no
 * SharedArrayBuffer ("no overload matched for writeBuffer"; the spec's AllowSharedBufferSource, which
 * Chromium follows, does): typed arrays over shared memory (`allocShared`, what `par` users hold) are
 * copied through a non-shared staging slice first, on every platform, in slices of at most
 * `SHARED_UPLOAD_SLICE` bytes written at increasing offsets (one slice of memory at a time, not a
 * second copy of the array). Views of a plain ArrayBuffer pass through untouched: one writeBuffer,
 * no copy and no allocation.
 */

/** Bytes of one staging slice for uploads from shared memory (a multiple of 4). */
export const SHARED_UPLOAD_SLICE = 32 * 1024 * 1024;

/**
 * True when `buffer` is a SharedArrayBuffer, of this realm or another (a worker's, a vm context's).
 * Safe where `SharedArrayBuffer` is not defined (browsers without cross-origin isolation).
 */
export function isSharedBuffer(buffer: ArrayBufferLike): boolean {
  if (buffer instanceof ArrayBuffer) return false;
  return Object.prototype.toString.call(buffer) === '[object SharedArrayBuffer]';
}

/**
 * Copies `src`'s bytes into `buffer` at `byteOffset` (queue.writeBuffer: ordered before the next
 * submission). `src.byteLength` and `byteOffset` must be multiples of 4, as writeBuffer requires.
 * @param sliceBytes staging slice size for shared sources (tests pass small ones) @default SHARED_UPLOAD_SLICE
 */
export function writeHost(
  queue: GPUQueue,
  buffer: GPUBuffer,
  byteOffset: number,
  src: ArrayBufferView,
  sliceBytes = SHARED_UPLOAD_SLICE,
): void {
  const bytes = src.byteLength;
  if (!isSharedBuffer(src.buffer)) {
    queue.writeBuffer(buffer, byteOffset, src.buffer as ArrayBuffer, src.byteOffset, bytes);
    return;
  }
  // writeBuffer copies its data before it returns, so one staging slice serves every piece.
  const slice = Math.max(4, sliceBytes & ~3);
  const staging = new Uint8Array(Math.min(bytes, slice));
  for (let done = 0; done < bytes; done += slice) {
    const size = Math.min(slice, bytes - done);
    staging.set(new Uint8Array(src.buffer, src.byteOffset + done, size));
    queue.writeBuffer(buffer, byteOffset + done, staging.buffer, 0, size);
  }
}
