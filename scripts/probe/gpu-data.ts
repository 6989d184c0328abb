/** GPU-side check for the sort probe (inputs come from the bench's generateOnDevice and iota). */
import { DeviceArray, fragment, type GpuDevice, getPipeline } from '../../packages/core/src/index';

/**
 * Counts, on the device, the positions where `keys` (sorted as u32) break ascending order, and with
 * `values` (the original index of each key, permuted along) where a key is not `source[value]` or a
 * run of equal keys has its values out of order (stability). 0 means a correct sort.
 */
export async function gpuSortErrors(
  device: GpuDevice,
  keys: DeviceArray,
  values?: { values: DeviceArray; source: DeviceArray },
): Promise<number> {
  const errs = DeviceArray.create(device, 'u32', 1);
  const pairs = values !== undefined;
  const arrays = pairs ? [keys, errs, values.values, values.source] : [keys, errs];
  const name = pairs ? 'probe_check_pairs' : 'probe_check';
  const p = await getPipeline(
    device,
    fragment({
      name,
      code: `@group(0) @binding(0) var<storage, read_write> k: array<u32>;
@group(0) @binding(1) var<storage, read_write> e: array<atomic<u32>>;
${pairs ? '@group(0) @binding(2) var<storage, read_write> v: array<u32>;\n@group(0) @binding(3) var<storage, read_write> src: array<u32>;' : ''}
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  let n = arrayLength(&k);
  for (var i = g.x; i < n; i += nw.x * 256u) {
    var bad = i > 0u && k[i - 1u] > k[i];
    ${pairs ? 'bad = bad || src[v[i]] != k[i] || (i > 0u && k[i - 1u] == k[i] && v[i - 1u] >= v[i]);' : ''}
    if (bad) { atomicAdd(&e[0], 1u); }
  }
}`,
    }),
  );
  await device.queue.submit(name, (rec) => {
    const pass = rec.beginPass();
    pass.setPipeline(p);
    pass.setBindGroup(
      0,
      device.gpu.createBindGroup({
        layout: p.getBindGroupLayout(0),
        entries: arrays.map((a, i) => ({
          binding: i,
          resource: { buffer: a.buffer, offset: a.byteOffset, size: Math.max(4, a.length * 4) },
        })),
      }),
    );
    pass.dispatchWorkgroups(4096);
    pass.end();
  });
  const r = await errs.read();
  errs.destroy();
  return r[0] as number;
}
