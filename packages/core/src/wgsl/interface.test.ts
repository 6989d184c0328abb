import { describe, expect, it } from 'vitest';
import { DeviceArray } from '../device-array';
import { getPipeline } from '../pipeline-cache';
import { gpuForTests } from '../testing/gpu';
import { fragment, mangle } from './fragment';
import { kernelInterface } from './interface';

const gpu = await gpuForTests();

/** Fields of mixed types, bindings declared out of order. */
const FIELDS = { n: 'u32', bias: 'i32', scale: 'f32', tiles: 'u32', mode: 'u32' } as const;
const PASS = kernelInterface({
  name: 'test pass',
  params: { struct: 'TParams', name: 'prm', binding: 0, fields: FIELDS },
  bindings: {
    keys_out: { binding: 2, access: 'read_write', type: 'u32' },
    keys_in: { binding: 1, access: 'read' },
    counts: { binding: 3, access: 'read_write', type: 'u32', form: 'atomic' },
    vals_in: { binding: 5, access: 'read', form: 'vec4', optional: true },
    vals_out: { binding: 6, access: 'read_write', type: 'u32', optional: true },
  },
});

const buf = (id: number) => ({ buffer: { label: `b${id}` } as unknown as GPUBuffer });

describe('kernelInterface', () => {
  it('declares the struct padded to 16 bytes and the bindings a variant uses, in binding order', () => {
    expect(PASS.paramWords).toBe(8);
    expect(PASS.structText).toBe(
      'struct TParams { n: u32, bias: i32, scale: f32, tiles: u32, mode: u32, _pad0: u32, _pad1: u32, _pad2: u32 }',
    );
    expect(PASS.wgsl({}, { keys_in: 'f32' }).split('\n')).toEqual([
      PASS.structText,
      '@group(0) @binding(0) var<uniform> prm: TParams;',
      '@group(0) @binding(1) var<storage, read> keys_in: array<f32>;',
      '@group(0) @binding(2) var<storage, read_write> keys_out: array<u32>;',
      '@group(0) @binding(3) var<storage, read_write> counts: array<atomic<u32>>;',
    ]);
    const withValues = PASS.wgsl({ vals_in: true, vals_out: true }, { keys_in: 'u32', vals_in: 'i32' }).split('\n');
    expect(withValues.slice(4)).toEqual([
      '@group(0) @binding(3) var<storage, read_write> counts: array<atomic<u32>>;',
      '@group(0) @binding(5) var<storage, read> vals_in: array<vec4<i32>>;',
      '@group(0) @binding(6) var<storage, read_write> vals_out: array<u32>;',
    ]);
    // A struct of exactly 4 words gets no padding; an empty one still takes 16 bytes.
    const four = kernelInterface({
      name: 'four',
      params: { struct: 'F', name: 'f', binding: 0, fields: { a: 'u32', b: 'u32', c: 'u32', d: 'f32' } },
      bindings: {},
    });
    expect(four.structText).toBe('struct F { a: u32, b: u32, c: u32, d: f32 }');
    expect(four.pack({ a: 1, b: 2, c: 3, d: 0 }).length).toBe(4);
  });

  it('checks the variant and its types', () => {
    expect(() => PASS.wgsl()).toThrow(/no type for 'keys_in'/);
    expect(() => PASS.wgsl({ vals_in: true }, { keys_in: 'u32' })).toThrow(/no type for 'vals_in'/);
    expect(() => PASS.wgsl({}, { keys_in: 'u32', keys_out: 'f32' })).toThrow(/'keys_out' has type u32/);
    expect(() => PASS.wgsl({ keys_in: true } as never, { keys_in: 'u32' })).toThrow(/use.keys_in: not optional/);
    expect(() => PASS.wgsl({ nope: true } as never, { keys_in: 'u32' })).toThrow(/no binding named 'nope'/);
  });

  it('packs parameters by name with u32, i32 and f32 bit patterns at the declared offsets', () => {
    const w = PASS.pack({ mode: 7, tiles: 0xffffffff, scale: 1.5, bias: -1, n: 10 });
    expect(Array.from(w)).toEqual([10, 0xffffffff, 0x3fc00000, 0xffffffff, 7, 0, 0, 0]);
    const v = PASS.pack({ n: 0, bias: -0x80000000, scale: -0, tiles: 1, mode: 2 });
    expect(Array.from(v.subarray(0, 3))).toEqual([0, 0x80000000, 0x80000000]);
    const nan = PASS.pack({ n: 0, bias: 0, scale: Number.NaN, tiles: 0, mode: 0 });
    expect(nan[2]).toBe(0x7fc00000);
  });

  it('throws on unknown, missing or out-of-range parameters', () => {
    const ok = { n: 1, bias: 0, scale: 0, tiles: 1, mode: 0 };
    expect(() => PASS.pack({ ...ok, extra: 1 } as never)).toThrow(/no parameter 'extra'/);
    const { tiles: _, ...missing } = ok;
    expect(() => PASS.pack(missing as never)).toThrow(/tiles not given/);
    expect(() => PASS.pack({ ...ok, n: -1 })).toThrow(/'n' \(u32\) = -1/);
    expect(() => PASS.pack({ ...ok, n: 2 ** 32 })).toThrow(/'n'/);
    expect(() => PASS.pack({ ...ok, n: 1.5 })).toThrow(/'n'/);
    expect(() => PASS.pack({ ...ok, bias: 2 ** 31 })).toThrow(/'bias' \(i32\)/);
    expect(() => PASS.pack({ ...ok, mode: undefined } as never)).toThrow(/'mode'/);
  });

  it('gives bind-group entries by name in binding order for the variant', () => {
    const e = PASS.entries({ counts: buf(3), keys_out: buf(2), prm: buf(0), keys_in: buf(1) });
    expect(e.map((x) => x.binding)).toEqual([0, 1, 2, 3]);
    expect(e[2]?.resource).toEqual(buf(2));
    const all = PASS.entries(
      { counts: buf(3), keys_out: buf(2), prm: buf(0), keys_in: buf(1), vals_out: buf(6), vals_in: buf(5) },
      { vals_in: true, vals_out: true },
    );
    expect(all.map((x) => x.binding)).toEqual([0, 1, 2, 3, 5, 6]);
    // undefined counts as not given.
    const none = PASS.entries({ counts: buf(3), keys_out: buf(2), prm: buf(0), keys_in: buf(1), vals_in: undefined });
    expect(none.length).toBe(4);
    expect(PASS.binding('vals_out')).toBe(6);
    expect(PASS.binding('prm')).toBe(0);
  });

  it('throws on a missing, unexpected or unknown binding, naming it', () => {
    const base = { counts: buf(3), keys_out: buf(2), prm: buf(0), keys_in: buf(1) };
    const { keys_out: _, ...noOut } = base;
    expect(() => PASS.entries(noOut as never)).toThrow(/no resource for binding 'keys_out' \(2\)/);
    expect(() => PASS.entries({ ...base, vals_in: buf(5) })).toThrow(/'vals_in' is not bound by this variant/);
    expect(() => PASS.entries(base, { vals_in: true })).toThrow(/no resource for binding 'vals_in'/);
    expect(() => PASS.entries({ ...base, stray: buf(9) } as never)).toThrow(/no binding named 'stray'/);
  });

  it('lets optional bindings share a number, one of them per variant', () => {
    const SLOT = kernelInterface({
      name: 'slots',
      bindings: {
        ctrl: { binding: 2, access: 'read_write', type: 'atomic<u32>' },
        state: { binding: 1, access: 'read_write', type: 'atomic<u32>', optional: true },
        sums: { binding: 1, access: 'read_write', type: 'u32', optional: true },
        out_v: { binding: 5, access: 'read_write', form: 'vec4', optional: true },
        out_s: { binding: 5, access: 'read_write', optional: true },
      },
    });
    expect(SLOT.wgsl({ sums: true, out_v: true }, { out_v: 'f32' }).split('\n')).toEqual([
      '@group(0) @binding(1) var<storage, read_write> sums: array<u32>;',
      '@group(0) @binding(2) var<storage, read_write> ctrl: array<atomic<u32>>;',
      '@group(0) @binding(5) var<storage, read_write> out_v: array<vec4<f32>>;',
    ]);
    expect(SLOT.names({ state: true, out_s: true })).toEqual(['state', 'ctrl', 'out_s']);
    expect(SLOT.names({ sums: true })).toEqual(['sums', 'ctrl']);
    const e = SLOT.entries({ state: buf(1), ctrl: buf(2), out_s: buf(5) }, { state: true, out_s: true });
    expect(e.map((x) => x.binding)).toEqual([1, 2, 5]);
    expect(() => SLOT.entries({ sums: buf(1), ctrl: buf(2) }, { state: true })).toThrow(
      /no resource for binding 'state'/,
    );
    expect(() => SLOT.wgsl({ state: true, sums: true })).toThrow(/'state' and 'sums' both used at binding 1/);
    expect(() => SLOT.names({ out_v: true, out_s: true })).toThrow(/'out_v' and 'out_s' both used at binding 5/);
    expect(() => SLOT.entries({ ctrl: buf(2), out_v: buf(5), out_s: buf(5) }, { out_v: true, out_s: true })).toThrow(
      /'out_v' and 'out_s' both used at binding 5/,
    );
  });

  it('rejects bad declarations', () => {
    const b = (spec: Record<string, unknown>) => () =>
      kernelInterface({ name: 'bad', bindings: {}, ...spec } as Parameters<typeof kernelInterface>[0]);
    expect(
      b({
        bindings: { a: { binding: 1, access: 'read', type: 'u32' }, b: { binding: 1, access: 'read', type: 'u32' } },
      }),
    ).toThrow(/'a' and 'b' both at binding 1/);
    expect(
      b({
        bindings: {
          a: { binding: 1, access: 'read', type: 'u32', optional: true },
          b: { binding: 1, access: 'read', type: 'u32' },
        },
      }),
    ).toThrow(/'a' and 'b' both at binding 1/);
    expect(
      b({
        params: { struct: 'P', name: 'p', binding: 0, fields: { n: 'u32' } },
        bindings: { a: { binding: 0, access: 'read', type: 'u32' } },
      }),
    ).toThrow(/both at binding 0/);
    expect(b({ params: { struct: 'P', name: 'p', binding: 0, fields: { _pad0: 'u32' } } })).toThrow(/'_pad0'/);
    expect(b({ params: { struct: 'P', name: 'p', binding: 0, fields: { n: 'f16' } } })).toThrow(/'n' of type 'f16'/);
    expect(b({ bindings: { 'a-b': { binding: 1, access: 'read', type: 'u32' } } })).toThrow(/not a WGSL identifier/);
    expect(b({ bindings: { a: { binding: -1, access: 'read', type: 'u32' } } })).toThrow(/at binding -1/);
  });
});

describe.runIf(gpu)('kernelInterface on the device', () => {
  it('the declarations, the packed words and the entries agree with a real kernel', async () => {
    const device = gpu as NonNullable<typeof gpu>;
    const decls = PASS.wgsl({ vals_in: true, vals_out: true }, { keys_in: 'u32', vals_in: 'u32' });
    const main = fragment({
      name: mangle('test_interface'),
      code: `${decls}
@compute @workgroup_size(1) fn main() {
  keys_out[0] = prm.n + keys_in[1];
  keys_out[1] = bitcast<u32>(prm.bias);
  keys_out[2] = bitcast<u32>(prm.scale * 2.0);
  keys_out[3] = prm.tiles;
  keys_out[4] = prm.mode;
  atomicAdd(&counts[0], 5u);
  vals_out[0] = vals_in[1].z;
}`,
    });
    const pipeline = await getPipeline(device, main);
    const keysIn = DeviceArray.from(device, Uint32Array.of(0, 100));
    const keysOut = DeviceArray.create(device, 'u32', 5);
    const counts = DeviceArray.from(device, Uint32Array.of(1));
    const valsIn = DeviceArray.from(
      device,
      Uint32Array.from({ length: 8 }, (_, i) => i * 10),
    );
    const valsOut = DeviceArray.create(device, 'u32', 1);
    try {
      await device.queue.submit('interface test', (rec) => {
        const params = rec.uniform(PASS.pack({ n: 7, bias: -3, scale: 1.25, tiles: 11, mode: 4 }));
        const pass = rec.beginPass();
        pass.setPipeline(pipeline);
        const entries = PASS.entries(
          {
            prm: { buffer: params },
            keys_in: { buffer: keysIn.buffer },
            keys_out: { buffer: keysOut.buffer },
            counts: { buffer: counts.buffer },
            vals_in: { buffer: valsIn.buffer },
            vals_out: { buffer: valsOut.buffer },
          },
          { vals_in: true, vals_out: true },
        );
        pass.setBindGroup(0, device.gpu.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries }));
        pass.dispatchWorkgroups(1);
        pass.end();
      });
      expect(Array.from(await keysOut.read())).toEqual([107, -3 >>> 0, 0x40200000, 11, 4]);
      expect(Array.from(await counts.read())).toEqual([6]);
      expect(Array.from(await valsOut.read())).toEqual([60]);
    } finally {
      for (const a of [keysIn, keysOut, counts, valsIn, valsOut]) a.destroy();
    }
  });
});
