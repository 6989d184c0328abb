/**
 * Inputs made on the GPU for device-time runs, with the same bits as data.ts (cub_anchor's fill_u32
 * hash and its f32 conversion). Why not upload them: on the H100, after about a gigabyte of host
 * uploads every later kernel of the process ran at ~55% of its bandwidth (docs/benchmarks/
 * h100-notes.md); cub_anchor makes its data on the GPU too.
 */
import { DeviceArray, fragment, type GpuDevice, getPipeline, kernelInterface, type NumericType } from '@webdpl/core';

/** Which generator produced a host array (set by data.ts callers through `tagGenerated`). */
const generated = new WeakMap<object, { type: 'u32' | 'f32'; seed: number }>();

/** Marks `a` as made by fillU32 / fillF32 with `seed`. */
export function tagGenerated<T extends Uint32Array | Float32Array>(a: T, seed: number): T {
  generated.set(a, { type: a instanceof Uint32Array ? 'u32' : 'f32', seed });
  return a;
}

/** The generator of `a`, if `a` is (a byte-for-byte copy of) a tagged array among `known`. */
export function generatorOf(
  a: ArrayBufferView,
  known: readonly ArrayBufferView[] = [],
): { type: 'u32' | 'f32'; seed: number } | undefined {
  const g = generated.get(a);
  if (g) return g;
  for (const k of known) {
    const kg = generated.get(k);
    if (!kg || k.byteLength !== a.byteLength || k.constructor !== a.constructor) continue;
    const x = Buffer.from(k.buffer, k.byteOffset, k.byteLength);
    const y = Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    if (Buffer.compare(x, y) === 0) return kg;
  }
  return undefined;
}

/** A DeviceArray of `n` generated elements, filled by a kernel. */
export async function generateOnDevice(
  device: GpuDevice,
  type: 'u32' | 'f32',
  n: number,
  seed: number,
): Promise<DeviceArray> {
  const out = DeviceArray.create(device, type as NumericType, n);
  const x = `bench_hash(i, ${seed >>> 0}u)`;
  await fillOnDevice(device, out, type === 'u32' ? x : `f32(${x} >> 8u) * (1.0 / 16777216.0)`);
  return out;
}

/** data.ts's hashU32 in WGSL, for fill expressions. */
const HASH_WGSL = `fn bench_hash(i: u32, seed: u32) -> u32 {
  var x = (i * 2654435761u) ^ seed;
  x ^= x >> 13u;
  x *= 0x5bd1e995u;
  x ^= x >> 15u;
  return x;
}`;

/** The fill kernel's interface: `len` elements of `a` from index `base`, of an array of `n`. */
const FILL = kernelInterface({
  name: 'bench fill',
  params: { struct: 'P', name: 'p', binding: 0, fields: { len: 'u32', base: 'u32', n: 'u32' } },
  bindings: { a: { binding: 1, access: 'read_write' } },
});

/**
 * Fills `out` on the GPU with a WGSL expression of the index `i: u32` and the length `n: u32` (of the
 * array's element type; `bench_hash(i, seed)` is data.ts's hash), e.g. `(i * 2654435761u) & (n - 1u)`.
 */
export async function fillOnDevice(device: GpuDevice, out: DeviceArray, expr: string): Promise<void> {
  const n = out.length;
  if (n === 0) return;
  const k = fragment({
    name: `bench_fill_${out.type}_${[...expr].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0, 7)}`,
    code: `${HASH_WGSL}
${FILL.wgsl({}, { a: out.type })}
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  let n = p.n;
  for (var l = g.x; l < p.len; l += nw.x * 256u) { let i = p.base + l; a[l] = ${expr}; }
}`,
  });
  const pipeline = await getPipeline(device, k);
  // Arrays beyond one storage binding are filled in chunks of 2^28 elements (1 GiB, aligned).
  const chunk = 2 ** 28;
  if (n > chunk && out.byteOffset % 256 !== 0)
    throw new Error('fillOnDevice: a large array must start 256-byte aligned');
  for (let base = 0; base < n; base += chunk) {
    const len = Math.min(chunk, n - base);
    await device.queue.submit('bench fill', (rec) => {
      const pass = rec.beginPass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(
        0,
        device.gpu.createBindGroup({
          layout: pipeline.getBindGroupLayout(0),
          entries: FILL.entries({
            p: { buffer: rec.uniform(FILL.pack({ len, base, n })) },
            a: { buffer: out.buffer, offset: out.byteOffset + base * 4, size: len * 4 },
          }),
        }),
      );
      pass.dispatchWorkgroups(Math.min(4096, Math.ceil(len / 256)));
      pass.end();
    });
  }
}
