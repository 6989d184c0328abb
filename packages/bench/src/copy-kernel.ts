/**
 * The bench's own copy kernel: a plain vec4 copy between two DeviceArrays, the memory roofline that
 * CUB's `copy (r+w)` row measures. Used for the `copy` entry when `@webdpl/algorithms` has no `copy`.
 */
import { type DeviceArray, fragment, getPipeline, kernelInterface } from '@webdpl/core';

const WORKGROUP = 256;

/** The copy kernel's interface: vec4s from `src` to `dst`, `n` of them. */
const COPY_IO = kernelInterface({
  name: 'bench copy',
  params: { struct: 'CopyParams', name: 'prm', binding: 2, fields: { n: 'u32' } },
  bindings: {
    src: { binding: 0, access: 'read', type: 'u32', form: 'vec4' },
    dst: { binding: 1, access: 'read_write', type: 'u32', form: 'vec4' },
  },
});

const COPY = fragment({
  name: 'bench_copy_vec4',
  code: `${COPY_IO.wgsl()}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = (wid.x + wid.y * nwg.x) * ${WORKGROUP}u + li;
  if (i < prm.n) { dst[i] = src[i]; }
}`,
});

/**
 * Copies `src` into `dst` (same length, 4-byte elements, both starting at element 0 of their buffer)
 * with one vec4 per thread, in one submission. DeviceArray storage is padded to 16 bytes, so the
 * last partial vec4 is safe to copy whole.
 */
export async function copyKernel(src: DeviceArray, dst: DeviceArray): Promise<void> {
  const device = src.device;
  const n4 = Math.ceil(src.length / 4);
  if (n4 === 0) return;
  const pipeline = await getPipeline(device, COPY);
  await device.queue.submit('bench copy', (rec) => {
    const bind = device.gpu.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: COPY_IO.entries({
        src: { buffer: src.buffer, offset: src.byteOffset, size: n4 * 16 },
        dst: { buffer: dst.buffer, offset: dst.byteOffset, size: n4 * 16 },
        prm: { buffer: rec.uniform(COPY_IO.pack({ n: n4 })) },
      }),
    });
    const pass = rec.beginPass('bench copy');
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bind);
    rec.dispatch(pass, Math.ceil(n4 / WORKGROUP));
    pass.end();
  });
}
