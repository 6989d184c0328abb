/**
 * The radix-sort engine: a stable LSD radix sort of 32-bit keys (u32, i32, f32 through
 * order-preserving key bits, ascending or descending) with optional 32-bit values, OneSweep style:
 * 8-bit digits, one pass building all four digit histograms, then one pass per digit that ranks a
 * tile, finds its global offsets by decoupled look-back (with fallback), and scatters.
 *
 * Size tiers: n <= 1 returns at once; n up to one tile (tuning.singleWorkgroupMax) runs in one
 * workgroup entirely in workgroup memory; larger n runs histogram + plan + up to 4 digit passes
 * (passes whose digit is the same for every key launch no workgroups: the plan kernel writes the
 * indirect dispatch arguments) and a final copy when an odd number of passes ran. Everything is one
 * compute pass of one command buffer. Scratch (the ping-pong half, histograms, two look-back tables,
 * indirect arguments) is cached per device and grows on demand; the first table is cleared once per
 * sort and each running digit pass clears the other for the next.
 *
 * Limits: n < 2^30 (look-back counts are 30 bits) and n*4 bytes within one storage binding (sorts
 * beyond one binding sort segments with this engine and merge them: sort/segmented.ts).
 */
import {
  ArgumentError,
  type DeviceArray,
  type GpuDevice,
  getPipeline,
  gridFor,
  type NumericType,
  UnsupportedOnDeviceError,
} from '@webdpl/core';
import { scratchBuffer } from '../../common/scratch';
import { fitWorkgroupMemory, maxWorkgroupThreads, resolveTuning, useSubgroups } from '../../common/tuning';
import {
  COPY_PER_THREAD,
  copyKernel,
  histogramKernel,
  INDIRECT_WORDS,
  META_WORDS,
  onesweepKernel,
  type PassParams,
  planKernel,
  RS_COPY,
  RS_COPY_VALUES,
  RS_HIST,
  RS_PASS,
  RS_PASS_VALUES,
  RS_PLAN,
  RS_SINGLE,
  RS_SINGLE_VALUES,
  radixTileFootprint,
  singleWorkgroupKernel,
  type TileParams,
} from './kernels';
import { keyMode, type RadixKeyType } from './key-bits';
import { type RadixSortTuning, radixSortTuningFor } from './tuning';

export type { RadixKeyType } from './key-bits';
export { keyBitsFragment } from './key-bits';
export type { RadixSortTuning } from './tuning';
export { radixSortTuning, radixSortTuningFor, SORT_LARGE, SORT_PAIRS_LARGE } from './tuning';

export interface RadixSortOptions {
  /** How to read the keys' bits. @default keys.type */
  readonly keyType?: RadixKeyType;
  /** Sort descending (NaN still last). @default false */
  readonly descending?: boolean;
  /** Tuning overrides (see radixSortTuning). @default {} */
  readonly tuning?: Readonly<Record<string, number | boolean>>;
  /** Name the overrides are checked under in error messages. @default 'radix-sort' */
  readonly tuningName?: string;
  /** Label of the command buffer (errors, profiling). @default 'radixSort' */
  readonly label?: string;
  /** Also read the sorted keys (and values) back in the same command buffer. @default false */
  readonly readBack?: boolean;
}

export interface RadixSortResult {
  /** The sorted keys' bytes when `readBack` was set. */
  readonly keys?: ArrayBuffer;
  /** The values' bytes when `readBack` was set and values were given. */
  readonly values?: ArrayBuffer;
}

const indirectBuffers = new WeakMap<GpuDevice, GPUBuffer>();

function indirectBuffer(device: GpuDevice): GPUBuffer {
  let b = indirectBuffers.get(device);
  if (!b) {
    b = device.gpu.createBuffer({
      size: Math.ceil((INDIRECT_WORDS * 4) / 16) * 16,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.INDIRECT,
      label: 'webdpl radix-sort indirect arguments',
    });
    indirectBuffers.set(device, b);
  }
  return b;
}

function isPow2(x: number): boolean {
  return Number.isInteger(x) && x > 0 && (x & (x - 1)) === 0;
}

function checkTuning(device: GpuDevice, t: RadixSortTuning, name: string): void {
  const maxThreads = device.limits.maxComputeInvocationsPerWorkgroup;
  for (const k of ['workgroupSize', 'histogramWorkgroupSize'] as const) {
    const v = t[k];
    if (!isPow2(v) || v < 32 || v > maxThreads) {
      throw new ArgumentError(`tuning.${name}.${k}`, `a power of two in [32, ${maxThreads}]`, String(v));
    }
  }
  for (const k of ['keysPerThread', 'histogramKeysPerThread', 'histogramMaxWorkgroups'] as const) {
    if (!Number.isInteger(t[k]) || t[k] < 1)
      throw new ArgumentError(`tuning.${name}.${k}`, 'a positive integer', String(t[k]));
  }
  if (t.workgroupSize * t.keysPerThread >= 65536) {
    throw new ArgumentError(`tuning.${name}.keysPerThread`, 'a tile (workgroupSize x keysPerThread) under 65536 keys');
  }
  if (!Number.isInteger(t.lookbackWindow) || t.lookbackWindow < 1 || t.lookbackWindow > 64) {
    throw new ArgumentError(`tuning.${name}.lookbackWindow`, 'an integer in [1, 64]', String(t.lookbackWindow));
  }
  if (t.scatterRounds !== 1 && t.scatterRounds !== 2) {
    throw new ArgumentError(`tuning.${name}.scatterRounds`, '1 or 2', String(t.scatterRounds));
  }
  if (!Number.isInteger(t.lookbackSpins) || t.lookbackSpins < 0) {
    throw new ArgumentError(`tuning.${name}.lookbackSpins`, 'a non-negative integer', String(t.lookbackSpins));
  }
}

/** Tile kernel parameters for a call. */
function tileParams(device: GpuDevice, t: RadixSortTuning, hasValues: boolean): TileParams {
  const min = device.info.subgroupMinSize;
  const max = device.info.subgroupMaxSize;
  const subgroups = useSubgroups(device, t.subgroups) && min >= 4 && max <= 128 && max >= min && t.workgroupSize >= max;
  return {
    hasValues,
    workgroupSize: t.workgroupSize,
    keysPerThread: t.keysPerThread,
    subgroups,
    minSubgroupSize: subgroups ? min : 0,
    maxSubgroupSize: subgroups ? max : 0,
  };
}

/** The digit pass's parameters: the tile's and the tuning's pass fields. */
export function passParams(tp: TileParams, t: RadixSortTuning, mode?: number): PassParams {
  return {
    ...tp,
    lookbackWindow: t.lookbackWindow,
    earlyCounts: t.earlyCounts,
    atomicTileIds: t.atomicTileIds,
    scatterRounds: t.scatterRounds,
    staticKeyMode: t.staticKeyMode && mode !== undefined ? mode : undefined,
    padWords: t.padWords > 0 ? t.padWords : undefined,
  };
}

const fitted = new WeakMap<GpuDevice, Map<string, RadixSortTuning>>();

/**
 * `t` fitted to the device's workgroup memory (see fitWorkgroupMemory), changing only fields the
 * caller did not override (`fixed`): halve the workgroup (down to 32 threads; the subgroup ranking's
 * counters shrink with it), then take fewer keys per thread, then rank without subgroups.
 * Memoized per device, tuning and overrides.
 */
function fitRadixTuning(
  device: GpuDevice,
  t: RadixSortTuning,
  fixed: Readonly<Record<string, unknown>>,
  hasValues: boolean,
): RadixSortTuning {
  const key = `${JSON.stringify(t)}|${Object.keys(fixed).sort().join(',')}|${hasValues}`;
  let m = fitted.get(device);
  if (!m) {
    m = new Map();
    fitted.set(device, m);
  }
  let out = m.get(key);
  if (out) return out;
  const footprint = (c: RadixSortTuning) => radixTileFootprint(passParams(tileParams(device, c, hasValues), c));
  const smaller = (c: RadixSortTuning): RadixSortTuning | undefined => {
    if (!('workgroupSize' in fixed) && c.workgroupSize > 32) return { ...c, workgroupSize: c.workgroupSize / 2 };
    if (!('keysPerThread' in fixed) && c.keysPerThread > 1) {
      return { ...c, keysPerThread: c.keysPerThread - Math.ceil(c.keysPerThread / 4) };
    }
    if (!('subgroups' in fixed) && c.subgroups && tileParams(device, c, hasValues).subgroups) {
      return { ...t, subgroups: false };
    }
    return undefined;
  };
  out = fitWorkgroupMemory(device, t, footprint, smaller);
  m.set(key, out);
  return out;
}

/** Whether a DeviceArray can be bound where it lies (its offset meets the binding alignment). */
function bindable(device: GpuDevice, a: DeviceArray): boolean {
  return a.byteOffset % device.limits.minStorageBufferOffsetAlignment === 0;
}

/**
 * Sorts `keys` on the device (stably), permuting `values` along when given. Keys of type u32,
 * i32 or f32 (f32 in TypedArray#sort order: -0 before +0, NaN last); values of any 4-byte type.
 * One command buffer; resolves when the GPU finished (and the readback, if asked, is mapped).
 */
export async function radixSortDevice(
  device: GpuDevice,
  keys: DeviceArray,
  values?: DeviceArray,
  options: RadixSortOptions = {},
): Promise<RadixSortResult> {
  const name = options.tuningName ?? 'radix-sort';
  const overrides = options.tuning ?? {};
  const resolved = resolveTuning(name, radixSortTuningFor(device, keys.length, values !== undefined), overrides);
  checkTuning(device, resolved, name);
  const t = fitRadixTuning(device, resolved, overrides, values !== undefined);
  keys.check(device, 'keys');
  values?.check(device, 'values');
  const keyType = (options.keyType ?? keys.type) as NumericType;
  if (keyType !== 'u32' && keyType !== 'i32' && keyType !== 'f32') {
    throw new ArgumentError('keys', 'a DeviceArray of u32, i32 or f32', `${keys.type} elements`);
  }
  if (keys.type === 'f16' || values?.type === 'f16') {
    throw new ArgumentError(values?.type === 'f16' ? 'values' : 'keys', 'an array of 4-byte elements', 'f16');
  }
  const n = keys.length;
  if (values && values.length !== n) {
    throw new ArgumentError('values', `${n} elements (the length of keys)`, `${values.length}`);
  }
  if (n >= 2 ** 30) throw new UnsupportedOnDeviceError(`radix sort of ${n} keys: at most 2^30 - 1 keys per call`);
  if (n * 4 > device.limits.maxStorageBufferBindingSize) {
    throw new UnsupportedOnDeviceError(
      `radix sort of ${n} keys needs ${n * 4} bytes in one storage binding; '${device.info.name}' allows ${device.limits.maxStorageBufferBindingSize}`,
    );
  }
  const label = options.label ?? 'radixSort';
  const descending = options.descending ?? false;
  const hasValues = values !== undefined;
  const tp = tileParams(device, t, hasValues);
  const mode = keyMode(keyType, descending);
  const tile = t.workgroupSize * t.keysPerThread;
  const single = n <= (t.singleWorkgroupMax > 0 ? Math.min(t.singleWorkgroupMax, tile) : tile);
  const bytes = n * 4;

  // Where the data is sorted: the caller's buffers when they can be bound as they lie.
  const direct = bindable(device, keys) && (!values || bindable(device, values));
  const keysA = direct ? keys.buffer : n >= 2 ? scratchBuffer(device, 'rs-keys-a', bytes) : keys.buffer;
  const keysAOff = direct ? keys.byteOffset : 0;
  const valsA = values ? (direct ? values.buffer : scratchBuffer(device, 'rs-vals-a', bytes)) : undefined;
  const valsAOff = values && direct ? values.byteOffset : 0;

  const readBack = (rec: Parameters<Parameters<GpuDevice['queue']['submit']>[1]>[0]) => {
    if (!options.readBack || n === 0) return undefined;
    return {
      k: rec.readback(keys.buffer, keys.byteOffset, bytes),
      v: values ? rec.readback(values.buffer, values.byteOffset, bytes) : undefined,
    };
  };
  let rbs: ReturnType<typeof readBack>;
  const finish = (): RadixSortResult => {
    if (!options.readBack) return {};
    if (n === 0) return { keys: new ArrayBuffer(0), values: values ? new ArrayBuffer(0) : undefined };
    return { keys: rbs?.k.data(), values: rbs?.v?.data() };
  };

  if (n <= 1) {
    if (options.readBack && n === 1) await device.queue.submit(label, (rec) => (rbs = readBack(rec)));
    return finish();
  }

  if (single) {
    const pipeline = await getPipeline(device, singleWorkgroupKernel(tp));
    await device.queue.submit(label, (rec) => {
      if (!direct) copyIn(rec.encoder);
      const entries = RS_SINGLE.entries(
        {
          rs_params: { buffer: rec.uniform(RS_SINGLE.pack({ n, key_mode: mode })) },
          keys_io: { buffer: keysA, offset: keysAOff, size: bytes },
          vals_io: valsA && { buffer: valsA, offset: valsAOff, size: bytes },
        },
        hasValues ? RS_SINGLE_VALUES : {},
      );
      const pass = rec.beginPass(`${label} (one workgroup)`);
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, device.gpu.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries }));
      pass.dispatchWorkgroups(1);
      pass.end();
      if (!direct) copyOut(rec.encoder);
      rbs = readBack(rec);
    });
    return finish();
  }

  const tiles = Math.ceil(n / tile);
  // Two look-back tables (running passes alternate between them; see META_TABLES): checked before
  // the pipelines are compiled and the ping-pong scratch is allocated.
  const tableBytes = tiles * 256 * 4;
  if (2 * tableBytes > device.limits.maxStorageBufferBindingSize) {
    throw new UnsupportedOnDeviceError(
      `radix sort of ${n} keys in ${tiles} tiles needs ${2 * tableBytes} bytes of look-back tables in one storage binding; '${device.info.name}' allows ${device.limits.maxStorageBufferBindingSize} (use larger tiles)`,
    );
  }
  const maxDim = device.limits.maxComputeWorkgroupsPerDimension;
  const [gx, gy] = gridFor(tiles, maxDim);
  // The plan and copy kernels keep 256 threads where the device allows them (WebGPU's core minimum),
  // fewer on devices that allow fewer (compatibility mode: 128).
  const fixedThreads = Math.max(64, Math.min(256, maxWorkgroupThreads(device)));
  const copyGroups = Math.ceil(n / (fixedThreads * COPY_PER_THREAD));
  const [cx, cy] = gridFor(copyGroups, maxDim);
  const histTile = t.histogramWorkgroupSize * t.histogramKeysPerThread;
  const histTiles = Math.ceil(n / histTile);
  const histGroups = Math.min(histTiles, t.histogramMaxWorkgroups);
  const histPerGroup = Math.ceil(histTiles / histGroups);
  const histGroupsUsed = Math.ceil(histTiles / histPerGroup);

  const [histPipe, planPipe, passPipe, copyPipe] = await Promise.all([
    getPipeline(
      device,
      histogramKernel({
        workgroupSize: t.histogramWorkgroupSize,
        keysPerThread: t.histogramKeysPerThread,
        staticKeyMode: t.staticKeyMode ? mode : undefined,
      }),
    ),
    getPipeline(device, planKernel(fixedThreads)),
    getPipeline(device, onesweepKernel(passParams(tp, t, mode))),
    getPipeline(device, copyKernel(hasValues, fixedThreads)),
  ]);
  const keysB = scratchBuffer(device, 'rs-keys-b', bytes);
  const valsB = hasValues ? scratchBuffer(device, 'rs-vals-b', bytes) : undefined;
  const meta = scratchBuffer(device, 'rs-meta', META_WORDS * 4);
  const lookback = scratchBuffer(device, 'rs-lookback', 2 * tableBytes);
  const indirect = indirectBuffer(device);

  function copyIn(enc: GPUCommandEncoder): void {
    enc.copyBufferToBuffer(keys.buffer, keys.byteOffset, keysA, 0, bytes);
    if (values && valsA) enc.copyBufferToBuffer(values.buffer, values.byteOffset, valsA, 0, bytes);
  }
  function copyOut(enc: GPUCommandEncoder): void {
    enc.copyBufferToBuffer(keysA, 0, keys.buffer, keys.byteOffset, bytes);
    if (values && valsA) enc.copyBufferToBuffer(valsA, 0, values.buffer, values.byteOffset, bytes);
  }

  await device.queue.submit(label, (rec) => {
    const gpu = device.gpu;
    if (!direct) copyIn(rec.encoder);
    rec.encoder.clearBuffer(meta, 0, Math.ceil((META_WORDS * 4) / 16) * 16);
    // The first running pass's table; its tiles clear the other one for the next pass.
    rec.encoder.clearBuffer(lookback, 0, tableBytes);

    // One compute pass for everything (WebGPU orders the dispatches); pass boundaries and
    // clears between passes cost ~30 us per sort on the H100.
    const pass = rec.beginPass(label);
    pass.setPipeline(histPipe);
    pass.setBindGroup(
      0,
      gpu.createBindGroup({
        layout: histPipe.getBindGroupLayout(0),
        entries: RS_HIST.entries({
          rs_params: {
            buffer: rec.uniform(RS_HIST.pack({ n, tiles: histTiles, tiles_per_wg: histPerGroup, key_mode: mode })),
          },
          keys_in: { buffer: keysA, offset: keysAOff, size: bytes },
          rs_meta: { buffer: meta },
        }),
      }),
    );
    rec.dispatch(pass, histGroupsUsed);
    pass.setPipeline(planPipe);
    pass.setBindGroup(
      0,
      gpu.createBindGroup({
        layout: planPipe.getBindGroupLayout(0),
        entries: RS_PLAN.entries({
          rs_params: { buffer: rec.uniform(RS_PLAN.pack({ n, grid_x: gx, grid_y: gy, copy_x: cx, copy_y: cy })) },
          rs_meta: { buffer: meta },
          rs_indirect: { buffer: indirect },
        }),
      }),
    );
    pass.dispatchWorkgroups(1);

    const layout = passPipe.getBindGroupLayout(0);
    const side = (buffer: GPUBuffer, offset: number) => ({ buffer, offset, size: bytes });
    const sideA = { k: side(keysA, keysAOff), v: valsA && side(valsA, valsAOff) };
    const sideB = { k: side(keysB, 0), v: valsB && side(valsB, 0) };
    const sides = [sideA, sideB];
    const metaBinding = { buffer: meta };
    const lookbackBinding = { buffer: lookback, offset: 0, size: 2 * tableBytes };
    const passUse = hasValues ? RS_PASS_VALUES : {};
    pass.setPipeline(passPipe);
    for (let p = 0; p < 4; p++) {
      const params = {
        buffer: rec.uniform(
          RS_PASS.pack({
            n,
            tiles,
            pass_index: p,
            key_mode: mode,
            spins: t.lookbackSpins,
            force_fallback: t.lookbackForceFallback ? 1 : 0,
          }),
        ),
      };
      for (let dir = 0; dir < 2; dir++) {
        const src = sides[dir] as (typeof sides)[0];
        const dst = sides[1 - dir] as (typeof sides)[0];
        const entries = RS_PASS.entries(
          {
            rs_params: params,
            keys_in: src.k,
            keys_out: dst.k,
            rs_meta: metaBinding,
            rs_lookback: lookbackBinding,
            vals_in: src.v,
            vals_out: dst.v,
          },
          passUse,
        );
        pass.setBindGroup(0, gpu.createBindGroup({ layout, entries }));
        pass.dispatchWorkgroupsIndirect(indirect, (p * 6 + dir * 3) * 4);
      }
    }

    pass.setPipeline(copyPipe);
    const entries = RS_COPY.entries(
      {
        rs_params: { buffer: rec.uniform(RS_COPY.pack({ n })) },
        src_keys: sideB.k,
        dst_keys: sideA.k,
        src_vals: sideB.v,
        dst_vals: sideA.v,
      },
      hasValues ? RS_COPY_VALUES : {},
    );
    pass.setBindGroup(0, gpu.createBindGroup({ layout: copyPipe.getBindGroupLayout(0), entries }));
    pass.dispatchWorkgroupsIndirect(indirect, 24 * 4);
    pass.end();
    if (!direct) copyOut(rec.encoder);
    rbs = readBack(rec);
  });
  return finish();
}
