/**
 * The merge-sort engine: a stable GPU sort by any comparator with a WGSL form (user lambdas, which
 * a radix sort cannot serve), with optional u32-bit values moving along.
 *
 * Strategy (ModernGPU's mergesort): a block sort of tiles of W*K keys in workgroup memory, then
 * ceil(log2(tiles)) merge passes, each a merge-path partition (one binary search per output tile)
 * and a merge of one output tile per workgroup. O(n log n) comparisons, 2 reads + 1 write of the
 * data per pass.
 *
 * Size tiers: n <= 1 returns at once; n up to one tile is one block-sort dispatch in place; larger n
 * adds the merge passes, ping-ponging so the result lands in the caller's buffer (the block sort
 * writes to the scratch half when the number of merge passes is odd). One command buffer.
 *
 * Limits: n*4 bytes within one storage binding (sorts beyond one binding sort segments with this
 * engine and merge them with windows.ts: sort/segmented.ts).
 */
import {
  ArgumentError,
  type DeviceArray,
  type GpuDevice,
  type GpuFunction,
  getPipeline,
  type NumericType,
  UnsupportedOnDeviceError,
} from '@webdpl/core';
import { type Phase, recordPhases } from '../../common/gpu-io';
import { scratchBuffer } from '../../common/scratch';
import { fitThreads, fitWorkgroupMemory, resolveTuning } from '../../common/tuning';
import {
  blockSortKernel,
  type MergeKernelParams,
  MS_BLOCK,
  MS_BLOCK_IN_PLACE,
  MS_BLOCK_IN_PLACE_VALUES,
  MS_BLOCK_VALUES,
  MS_MERGE,
  MS_MERGE_VALUES,
  MS_PARTITION,
  mergeKernel,
  mergeSortFootprint,
  PARTITION_THREADS,
  partitionKernel,
} from './kernels';
import { type MergeSortTuning, mergeSortKeysTuning, mergeSortTuning } from './tuning';

export type { MergeSortTuning } from './tuning';
export { mergeSortKeysTuning, mergeSortTuning } from './tuning';

export interface MergeSortOptions {
  /** Strict weak order "a before b" with a WGSL form for the key type. */
  readonly comparator: GpuFunction;
  /** Tuning overrides (see mergeSortTuning). @default {} */
  readonly tuning?: Readonly<Record<string, number | boolean>>;
  /** Name the overrides are checked under in error messages. @default 'merge-sort' */
  readonly tuningName?: string;
  /** Label of the command buffer. @default 'mergeSort' */
  readonly label?: string;
  /** Also read the sorted keys (and values) back in the same command buffer. @default false */
  readonly readBack?: boolean;
}

export interface MergeSortResult {
  readonly keys?: ArrayBuffer;
  readonly values?: ArrayBuffer;
}

/** The tile fields of the merge kernels. */
export interface MergeTile {
  readonly workgroupSize: number;
  readonly itemsPerThread: number;
}

/**
 * `defaults` (fitted to the device's threads) under `overrides`, checked: tuning errors name
 * `tuning.<name>.<field>`.
 */
export function checkMergeTuning(
  device: GpuDevice,
  name: string,
  defaults: MergeSortTuning,
  overrides: Readonly<Record<string, number | boolean>>,
): MergeSortTuning {
  const t = resolveTuning(name, fitThreads(device, defaults), overrides);
  const w = t.workgroupSize;
  if (!Number.isInteger(w) || w < 32 || (w & (w - 1)) !== 0 || w > device.limits.maxComputeInvocationsPerWorkgroup) {
    throw new ArgumentError(`tuning.${name}.workgroupSize`, 'a power of two >= 32 within the device limit', String(w));
  }
  if (!Number.isInteger(t.itemsPerThread) || t.itemsPerThread < 1) {
    throw new ArgumentError(`tuning.${name}.itemsPerThread`, 'a positive integer', String(t.itemsPerThread));
  }
  return t;
}

/**
 * The tile of the merge kernels for `base` (key type, comparator, values), fitted to the device's
 * workgroup memory: fewer keys per thread, then fewer threads (fields in `overrides` stay as given).
 */
export function fitMergeTile(
  device: GpuDevice,
  t: MergeTile,
  overrides: Readonly<Record<string, unknown>>,
  base: Omit<MergeKernelParams, 'workgroupSize' | 'itemsPerThread'>,
): MergeTile {
  return fitWorkgroupMemory(
    device,
    { workgroupSize: t.workgroupSize, itemsPerThread: t.itemsPerThread },
    (c) => mergeSortFootprint({ ...base, ...c }),
    (c) =>
      !('itemsPerThread' in overrides) && c.itemsPerThread > 1
        ? { ...c, itemsPerThread: c.itemsPerThread - Math.ceil(c.itemsPerThread / 4) }
        : !('workgroupSize' in overrides) && c.workgroupSize > 32
          ? { ...c, workgroupSize: c.workgroupSize / 2 }
          : undefined,
  );
}

/** Sorts `keys` (stably) by `options.comparator` on the device, permuting `values` along. */
export async function mergeSortDevice(
  device: GpuDevice,
  keys: DeviceArray,
  values: DeviceArray | undefined,
  options: MergeSortOptions,
): Promise<MergeSortResult> {
  const name = options.tuningName ?? 'merge-sort';
  const overrides = options.tuning ?? {};
  const t = checkMergeTuning(device, name, values ? mergeSortTuning : mergeSortKeysTuning, overrides);
  keys.check(device, 'keys');
  values?.check(device, 'values');
  const keyType = keys.type as NumericType;
  if (keyType !== 'u32' && keyType !== 'i32' && keyType !== 'f32') {
    throw new ArgumentError('keys', 'a DeviceArray of u32, i32 or f32', `${keys.type} elements`);
  }
  if (values && values.type === 'f16') throw new ArgumentError('values', 'an array of 4-byte elements', 'f16');
  const n = keys.length;
  if (values && values.length !== n) {
    throw new ArgumentError('values', `${n} elements (the length of keys)`, `${values.length}`);
  }
  if (n * 4 > device.limits.maxStorageBufferBindingSize) {
    throw new UnsupportedOnDeviceError(
      `merge sort of ${n} keys needs ${n * 4} bytes in one storage binding; '${device.info.name}' allows ${device.limits.maxStorageBufferBindingSize}`,
    );
  }
  const label = options.label ?? 'mergeSort';
  const bytes = n * 4;
  const readBack = options.readBack ?? false;
  if (n <= 1) {
    if (!readBack) return {};
    if (n === 0) return { keys: new ArrayBuffer(0), values: values ? new ArrayBuffer(0) : undefined };
    let rb: { k: { data(): ArrayBuffer }; v?: { data(): ArrayBuffer } } | undefined;
    await device.queue.submit(label, (rec) => {
      rb = {
        k: rec.readback(keys.buffer, keys.byteOffset, 4),
        v: values ? rec.readback(values.buffer, values.byteOffset, 4) : undefined,
      };
    });
    return { keys: rb?.k.data(), values: rb?.v?.data() };
  }

  const hasValues = values !== undefined;
  const base = { keyType, comparator: options.comparator.wgsl([keyType, keyType]), hasValues };
  const kp = { ...base, ...fitMergeTile(device, t, overrides, base) };
  const tile = kp.workgroupSize * kp.itemsPerThread;
  const tiles = Math.ceil(n / tile);
  const mergePasses = tiles > 1 ? Math.ceil(Math.log2(tiles)) : 0;
  const inPlace = mergePasses % 2 === 0;
  const [blockPipe, partPipe, mergePipe] = await Promise.all([
    getPipeline(device, blockSortKernel({ ...kp, inPlace })),
    mergePasses ? getPipeline(device, partitionKernel(kp)) : undefined,
    mergePasses ? getPipeline(device, mergeKernel(kp)) : undefined,
  ]);

  const align = device.limits.minStorageBufferOffsetAlignment;
  const direct = keys.byteOffset % align === 0 && (!values || values.byteOffset % align === 0);
  const keysA = direct ? keys.buffer : scratchBuffer(device, 'ms-keys-a', bytes);
  const keysAOff = direct ? keys.byteOffset : 0;
  const valsA = values ? (direct ? values.buffer : scratchBuffer(device, 'ms-vals-a', bytes)) : undefined;
  const valsAOff = values && direct ? values.byteOffset : 0;
  const keysB = mergePasses ? scratchBuffer(device, 'ms-keys-b', bytes) : undefined;
  const valsB = mergePasses && hasValues ? scratchBuffer(device, 'ms-vals-b', bytes) : undefined;
  const parts = mergePasses ? scratchBuffer(device, 'ms-parts', (tiles + 1) * 4) : undefined;
  const maxDim = device.limits.maxComputeWorkgroupsPerDimension;
  if (tiles > maxDim * maxDim) throw new UnsupportedOnDeviceError(`merge sort of ${n} keys: too many tiles`);

  let rb: { k: { data(): ArrayBuffer }; v?: { data(): ArrayBuffer } } | undefined;
  await device.queue.submit(label, (rec) => {
    const gpu = device.gpu;
    if (!direct) {
      rec.encoder.copyBufferToBuffer(keys.buffer, keys.byteOffset, keysA, 0, bytes);
      if (values && valsA) rec.encoder.copyBufferToBuffer(values.buffer, values.byteOffset, valsA, 0, bytes);
    }
    const side = (buffer: GPUBuffer, offset: number) => ({ buffer, offset, size: bytes });
    const sideA = { k: side(keysA, keysAOff), v: valsA && side(valsA, valsAOff) };
    const sideB = { k: keysB && side(keysB, 0), v: valsB && side(valsB, 0) };
    const sides = [sideA, sideB];
    const phases: Phase[] = [
      {
        name: 'block sort',
        record: (rc, pass) => {
          pass.setPipeline(blockPipe);
          const params = { buffer: rc.uniform(MS_BLOCK.pack({ n, width: 0, tiles })) };
          const entries = inPlace
            ? MS_BLOCK_IN_PLACE.entries(
                { ms_params: params, keys_src: sideA.k, vals_src: sideA.v },
                hasValues ? MS_BLOCK_IN_PLACE_VALUES : {},
              )
            : MS_BLOCK.entries(
                { ms_params: params, keys_src: sideA.k, keys_dst: sideB.k, vals_src: sideA.v, vals_dst: sideB.v },
                hasValues ? MS_BLOCK_VALUES : {},
              );
          pass.setBindGroup(0, gpu.createBindGroup({ layout: blockPipe.getBindGroupLayout(0), entries }));
          rc.dispatch(pass, tiles);
        },
      },
    ];
    const partsBinding = parts && { buffer: parts };
    let cur = inPlace ? 0 : 1;
    for (let m = 0, width = tile; m < mergePasses; m++, width *= 2) {
      const src = sides[cur] as (typeof sides)[0];
      const dst = sides[1 - cur] as (typeof sides)[0];
      phases.push({
        name: `merge ${m}`,
        record: (rc, pass) => {
          const params = { buffer: rc.uniform(MS_MERGE.pack({ n, width, tiles })) };
          const pp = partPipe as GPUComputePipeline;
          pass.setPipeline(pp);
          pass.setBindGroup(
            0,
            gpu.createBindGroup({
              layout: pp.getBindGroupLayout(0),
              entries: MS_PARTITION.entries({ ms_params: params, keys_src: src.k, parts: partsBinding }),
            }),
          );
          rc.dispatch(pass, Math.ceil((tiles + 1) / PARTITION_THREADS));
          const mp = mergePipe as GPUComputePipeline;
          pass.setPipeline(mp);
          const entries = MS_MERGE.entries(
            {
              ms_params: params,
              keys_src: src.k,
              keys_dst: dst.k,
              parts: partsBinding,
              vals_src: src.v,
              vals_dst: dst.v,
            },
            hasValues ? MS_MERGE_VALUES : {},
          );
          pass.setBindGroup(0, gpu.createBindGroup({ layout: mp.getBindGroupLayout(0), entries }));
          rc.dispatch(pass, tiles);
        },
      });
      cur = 1 - cur;
    }
    // One compute pass for every level (with setPhasePasses, one per level: the probes' breakdown).
    recordPhases(rec, label, phases);
    if (!direct) {
      rec.encoder.copyBufferToBuffer(keysA, 0, keys.buffer, keys.byteOffset, bytes);
      if (values && valsA) rec.encoder.copyBufferToBuffer(valsA, 0, values.buffer, values.byteOffset, bytes);
    }
    if (readBack) {
      rb = {
        k: rec.readback(keys.buffer, keys.byteOffset, bytes),
        v: values ? rec.readback(values.buffer, values.byteOffset, bytes) : undefined,
      };
    }
  });
  return readBack ? { keys: rb?.k.data(), values: rb?.v?.data() } : {};
}
