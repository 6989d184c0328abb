/**
 * copy on the GPU: device to device is one copyBufferToBuffer (the copy engine runs at full
 * bandwidth), or the map engine's identity kernel when both live in one GPU buffer (WebGPU copies
 * need distinct buffers). Host to device is a queue write into the output; device to host a
 * readback; host to host an upload and a readback (as oneDPL does for host iterators).
 */
import { DeviceArray, type GpuDevice, type HostArray } from '@webdpl/core';
import type { CheckedArray } from '../common/args';
import { identityElement } from '../engines/map/elements';
import { mapDevice } from '../engines/map/index';

/** Copies the `n` elements of `input` into the first `n` of `output` (disjoint, same type; n >= 1). */
export async function gpuCopy(
  device: GpuDevice,
  input: CheckedArray,
  output: CheckedArray,
  n: number,
  tuning: Readonly<Record<string, number | boolean>>,
): Promise<void> {
  if (output.kind === 'device') {
    const dst = output.array.length > n ? output.array.view(0, n) : output.array;
    if (input.kind === 'host') {
      (dst as DeviceArray<'u32'>).write(input.array as Uint32Array);
      // An empty submission surfaces errors (a lost device) in this call, like every other path.
      await device.queue.submit('copy', () => {});
      return;
    }
    const src = input.array;
    if (src.buffer !== dst.buffer) {
      await device.queue.submit('copy', (rec) => {
        rec.encoder.copyBufferToBuffer(src.buffer, src.byteOffset, dst.buffer, dst.byteOffset, n * 4);
      });
      return;
    }
    await mapDevice(device, {
      label: 'copy',
      n,
      inputs: [src],
      output: dst,
      elem: identityElement(src.type as 'u32'),
      tuning,
      tuningName: 'copy',
    });
    return;
  }
  const target: HostArray = output.array;
  const temp = input.kind === 'host' ? DeviceArray.from(device, input.array as Uint32Array) : undefined;
  try {
    const src = temp ?? (input.array as DeviceArray);
    let rb: { data(): ArrayBuffer } | undefined;
    await device.queue.submit('copy', (rec) => {
      rb = rec.readback(src.buffer, src.byteOffset, n * 4);
    });
    new Uint8Array(target.buffer, target.byteOffset, n * 4).set(
      new Uint8Array((rb as { data(): ArrayBuffer }).data(), 0, n * 4),
    );
  } finally {
    temp?.discard();
  }
}
