/**
 * GPU sorts of more keys than one storage binding holds (up to the device's maxBufferSize): the
 * keys are sorted in segments of one merge window (engines/merge-sort/windows.ts: a binding less
 * one alignment, a multiple of it) by the engine that sorts within one binding (radix sort for the
 * built-in orders, merge sort for user comparators), each segment a view of the caller's array;
 * then runs are merged pairwise, level by level (ceil(log2(segments)) levels), ping-ponging between
 * the keys and a scratch buffer of n keys (and values), each merge windowed so no binding exceeds
 * the limit; an odd number of levels ends with one copy back. Stable throughout: the segment sorts
 * are, and merges take the earlier run first on ties.
 *
 * The built-in orders merge the keys' raw bits (u32) compared through the radix sort's key bits, so
 * -0, NaN payloads and subnormals move exactly as in the radix sort.
 *
 * Reads merge-path splits back between rounds (see windows.ts): not for recording into a caller's
 * command encoder (sort-call.ts rejects that combination).
 */
import { type DeviceArray, fragment, type GpuDevice, mangle, type WgslFragment } from '@webdpl/core';
import { scratchBuffer } from '../common/scratch';
import { checkMergeTuning, fitMergeTile } from '../engines/merge-sort';
import { type MergeJob, mergeWindowed, type Run, windowElements } from '../engines/merge-sort/windows';
import { keyBitsFragment, type RadixKeyType } from '../engines/radix-sort';
import { mergeTuning } from '../merge/tuning';
import type { Comparator } from './comparator-arg';
import type { SortedBytes } from './gpu';

/** `fn(a: u32, b: u32) -> bool`: raw key bits of `type` in the radix sort's order. */
function bitsComparator(type: RadixKeyType, descending: boolean): WgslFragment {
  const bits = keyBitsFragment(type, descending);
  const name = mangle('cmp_bits', type, descending ? 'desc' : 'asc');
  return fragment({
    name,
    code: `fn ${name}(a: u32, b: u32) -> bool { return ${bits.name}(a) < ${bits.name}(b); }`,
    deps: [bits],
  });
}

/** Where a level reads or writes: keys (and values) buffers and the byte offsets of element 0. */
interface Side {
  readonly k: GPUBuffer;
  readonly ko: number;
  readonly v: GPUBuffer | undefined;
  readonly vo: number;
}

function run(s: Side, at: number, length: number): Run {
  return { keys: s.k, keyByte: s.ko + at * 4, values: s.v, valueByte: s.vo + at * 4, length };
}

/**
 * Sorts `keys` (values along) beyond one storage binding, segment by segment with `sortSegment` (the
 * one-binding sort of sort/gpu.ts), then merging; the rest of the contract is gpuSort's.
 * `o.tuning` is the engine's (radix-sort or merge-sort overrides); the merges take merge's tile
 * (merge/tuning.ts), under the merge-sort overrides for user comparators.
 */
export async function segmentedSort(
  device: GpuDevice,
  keys: DeviceArray,
  values: DeviceArray | undefined,
  comp: Exclude<Comparator, { kind: 'host-only' }>,
  o: {
    readonly tuning: Readonly<Record<string, number | boolean>>;
    readonly label: string;
    readonly readBack: boolean;
  },
  sortSegment: (keys: DeviceArray, values: DeviceArray | undefined) => Promise<unknown>,
): Promise<SortedBytes> {
  keys.check(device, 'keys');
  values?.check(device, 'values');
  const { label, readBack } = o;
  const n = keys.length;
  const type = keys.type as RadixKeyType;
  const hasValues = values !== undefined;
  const window = windowElements(device);
  // Merge kernels first: tuning errors before any key moves.
  const builtin = comp.kind === 'builtin';
  const base = builtin
    ? { keyType: 'u32', comparator: bitsComparator(type, comp.descending), hasValues }
    : { keyType: type, comparator: comp.fn.wgsl([type, type]), hasValues };
  const overrides = builtin ? {} : o.tuning;
  const t = checkMergeTuning(device, builtin ? 'merge' : 'merge-sort', mergeTuning, overrides);
  const kp = { ...base, ...fitMergeTile(device, t, overrides, base) };

  for (let s = 0; s < n; s += window) {
    const len = Math.min(window, n - s);
    await sortSegment(keys.view(s, len), values?.view(s, len));
  }

  const home: Side = { k: keys.buffer, ko: keys.byteOffset, v: values?.buffer, vo: values?.byteOffset ?? 0 };
  const other: Side = {
    k: scratchBuffer(device, 'sort-segments-keys', n * 4),
    ko: 0,
    v: values ? scratchBuffer(device, 'sort-segments-values', n * 4) : undefined,
    vo: 0,
  };
  let src = home;
  let dst = other;
  for (let width = window; width < n; width *= 2) {
    const jobs: MergeJob[] = [];
    for (let p = 0; p < n; p += 2 * width) {
      const la = Math.min(width, n - p);
      const lb = Math.min(width, n - p - la);
      jobs.push({ a: run(src, p, la), b: run(src, p + la, lb), out: run(dst, p, la + lb) });
    }
    await mergeWindowed(device, jobs, kp, label);
    [src, dst] = [dst, src];
  }

  if (src === home && !readBack) return {};
  let rbs: { k: { data(): ArrayBuffer }; v?: { data(): ArrayBuffer } } | undefined;
  await device.queue.submit(`${label} (result)`, (rec) => {
    if (src !== home) {
      rec.encoder.copyBufferToBuffer(src.k, src.ko, home.k, home.ko, n * 4);
      if (src.v && home.v) rec.encoder.copyBufferToBuffer(src.v, src.vo, home.v, home.vo, n * 4);
    }
    if (readBack) {
      rbs = {
        k: rec.readback(keys.buffer, keys.byteOffset, n * 4),
        v: values ? rec.readback(values.buffer, values.byteOffset, n * 4) : undefined,
      };
    }
  });
  return readBack ? { keys: rbs?.k.data(), values: rbs?.v?.data() } : {};
}
