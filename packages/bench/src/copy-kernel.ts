/**
 * The bench's own copy kernel: a plain vec4 copy between two DeviceArrays, the memory roofline that
 * CUB's `copy (r+w)` row measures. Used for the `copy` entry when `@webdpl/algorithms` has no `copy`.
 */
import { type DeviceArray, fragment, getPipeline } from '@webdpl/core';

const WORKGROUP = 256;

const COPY = fragment({
  name: 'bench_copy_vec4',
  code: `@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> params: vec4<u32>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = (wid.x + wid.y * nwg.x) * ${WORKGROUP}u + li;
  if (i < params.x) { dst[i] = src[i]; }
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
      entries: [
        { binding: 0, resource: { buffer: src.buffer, offset: src.byteOffset, size: n4 * 16 } },
        { binding: 1, resource: { buffer: dst.buffer, offset: dst.byteOffset, size: n4 * 16 } },
        { binding: 2, resource: { buffer: rec.uniform(new Uint32Array([n4, 0, 0, 0])) } },
      ],
    });
    const pass = rec.beginPass('bench copy');
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bind);
    rec.dispatch(pass, Math.ceil(n4 / WORKGROUP));
    pass.end();
  });
}
