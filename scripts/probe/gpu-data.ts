/** GPU-side data for the probes: inputs made and checked on the device (no host staging). */
import { DeviceArray, fragment, type GpuDevice, getPipeline } from '../../packages/core/src/index';

/** cub_anchor's hash of an index, in WGSL. */
const HASH = `fn probe_hash(i: u32) -> u32 {
  var x = (i * 2654435761u) ^ 1234u; x ^= x >> 13u; x *= 0x5bd1e995u; x ^= x >> 15u; return x;
}`;

async function runOne(device: GpuDevice, name: string, code: string, arrays: DeviceArray[]): Promise<void> {
  const p = await getPipeline(device, fragment({ name, code }));
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
}

/** Fills `a` with cub_anchor's hash of each index; `iota` (if given) with the index itself. */
export async function gpuFill(device: GpuDevice, a: DeviceArray, iota?: DeviceArray): Promise<void> {
  if (!iota) {
    return runOne(
      device,
      'probe_fill',
      `${HASH}
@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  let n = arrayLength(&a);
  for (var i = g.x; i < n; i += nw.x * 256u) { a[i] = probe_hash(i); }
}`,
      [a],
    );
  }
  return runOne(
    device,
    'probe_fill_pairs',
    `${HASH}
@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@group(0) @binding(1) var<storage, read_write> v: array<u32>;
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  let n = arrayLength(&a);
  for (var i = g.x; i < n; i += nw.x * 256u) { a[i] = probe_hash(i); v[i] = i; }
}`,
    [a, iota],
  );
}

/**
 * Counts, on the device, the positions where `keys` (filled by gpuFill, then sorted as u32) break
 * ascending order, and with `values` (the gpuFill iota, permuted along) where a key is not the hash
 * of its value, or a run of equal keys has values out of order (stability). 0 means a correct sort.
 */
export async function gpuSortErrors(device: GpuDevice, keys: DeviceArray, values?: DeviceArray): Promise<number> {
  const errs = DeviceArray.create(device, 'u32', 1);
  const pairs = values !== undefined;
  await runOne(
    device,
    pairs ? 'probe_check_pairs' : 'probe_check',
    `${HASH}
@group(0) @binding(0) var<storage, read_write> k: array<u32>;
@group(0) @binding(1) var<storage, read_write> e: array<atomic<u32>>;
${pairs ? '@group(0) @binding(2) var<storage, read_write> v: array<u32>;' : ''}
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  let n = arrayLength(&k);
  for (var i = g.x; i < n; i += nw.x * 256u) {
    var bad = i > 0u && k[i - 1u] > k[i];
    ${pairs ? 'bad = bad || probe_hash(v[i]) != k[i] || (i > 0u && k[i - 1u] == k[i] && v[i - 1u] >= v[i]);' : ''}
    if (bad) { atomicAdd(&e[0], 1u); }
  }
}`,
    pairs ? [keys, errs, values] : [keys, errs],
  );
  const r = await errs.read();
  errs.destroy();
  return r[0] as number;
}
