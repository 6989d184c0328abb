import { describe, expect, it } from 'vitest';
import type { GpuDevice } from '../device';
import { DeviceArray } from '../device-array';
import { type GpuFunction, maximum, minimum, plus, wgslLiteral } from '../operators';
import { getPipeline } from '../pipeline-cache';
import { dispatchOnce, gpuForTests } from '../testing/gpu';
import { lastNonZero } from '../testing/ops';
import type { NumericType } from '../types';
import { fragment, mangle } from './fragment';
import { entryParams, entryPrologue, threadIds } from './ids';
import { combinerOf } from './subgroup';
import {
  workgroupExclusiveScan,
  workgroupExclusiveScanRows,
  workgroupInclusiveScan,
  workgroupReduce,
} from './workgroup';

const gpu = await gpuForTests();

/** Building-block parameters of `op` over `type` on `device`. */
function blockParams(device: GpuDevice, type: NumericType, op: GpuFunction, w: number, subgroups: boolean) {
  return {
    combiner: combinerOf(op, type),
    workgroupSize: w,
    subgroups,
    minSubgroupSize: device.info.subgroupMinSize || 4,
  };
}

async function runBlocks(
  device: GpuDevice,
  type: NumericType,
  op: GpuFunction,
  w: number,
  subgroups: boolean,
  input: number[],
): Promise<number[]> {
  const p = blockParams(device, type, op, w, subgroups);
  const incl = workgroupInclusiveScan(p);
  const excl = workgroupExclusiveScan(p);
  const red = workgroupReduce(p);
  const id = wgslLiteral(type, op.identity(type) as number);
  const n = input.length;
  const main = fragment({
    name: mangle('test_blocks', type, op.name, w, subgroups, n),
    deps: [threadIds(subgroups), incl, excl, red],
    code: `@group(0) @binding(0) var<storage, read> inp: array<${type}>;
@group(0) @binding(1) var<storage, read_write> outp: array<${type}>;
@compute @workgroup_size(${w}) fn main(${entryParams(subgroups)}) {
${entryPrologue(subgroups)}
  var x = ${id};
  if (ids.lid < ${n}u) { x = inp[ids.lid]; }
  var t1: ${type};
  var t2: ${type};
  let a = ${incl.name}(x, ids, &t1);
  let b = ${excl.name}(x, ids, &t2);
  let r = ${red.name}(x, ids);
  outp[ids.lid] = a;
  outp[${w}u + ids.lid] = b;
  if (ids.lid == 0u) { outp[${2 * w}u] = r; outp[${2 * w + 1}u] = t1; outp[${2 * w + 2}u] = t2; }
}`,
  });
  const pipeline = await getPipeline(device, main);
  const host =
    type === 'u32' ? Uint32Array.from(input) : type === 'i32' ? Int32Array.from(input) : Float32Array.from(input);
  const inp = DeviceArray.from(device, host.length ? host : (host.constructor as typeof Uint32Array).of(0));
  const out = DeviceArray.create(device, type, 2 * w + 3);
  return runOneWorkgroup(device, pipeline, inp, out);
}

/** Runs one workgroup of `pipeline` over bindings 0 (inp) and 1 (out); returns out, destroys both. */
async function runOneWorkgroup(
  device: GpuDevice,
  pipeline: GPUComputePipeline,
  inp: DeviceArray,
  out: DeviceArray,
): Promise<number[]> {
  await dispatchOnce(device, pipeline, [inp, out], 1);
  const r = Array.from(await out.read());
  inp.destroy();
  out.destroy();
  return r;
}

function reference(op: GpuFunction, type: NumericType, w: number, input: number[]): number[] {
  const f = op.js([type, type]) as (a: number, b: number) => number;
  const id = op.identity(type) as number;
  const xs = Array.from({ length: w }, (_, i) => (i < input.length ? (input[i] as number) : id));
  const incl: number[] = [];
  const excl: number[] = [];
  let acc = id;
  for (const x of xs) {
    excl.push(acc);
    acc = f(acc, x);
    incl.push(acc);
  }
  return [...incl, ...excl, acc, acc, acc];
}

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s;
  };
}

const cases: { type: NumericType; op: GpuFunction; gen: (r: () => number) => number }[] = [
  { type: 'u32', op: plus, gen: (r) => r() },
  { type: 'i32', op: maximum, gen: (r) => r() | 0 },
  { type: 'f32', op: minimum, gen: (r) => Math.fround((r() / 2 ** 32) * 200 - 100) },
  { type: 'u32', op: lastNonZero, gen: (r) => (r() % 3 === 0 ? r() : 0) },
  // small integers keep float sums exact, so float add compares exactly
  { type: 'f32', op: plus, gen: (r) => (r() % 64) - 32 },
];

describe.skipIf(!gpu)('workgroup building blocks in one workgroup', () => {
  const device = gpu as GpuDevice;
  const variants = device?.features.has('subgroups') ? [true, false] : [false];
  for (const subgroups of variants) {
    for (const w of [32, 256]) {
      for (const { type, op, gen } of cases) {
        it(`${subgroups ? 'subgroup' : 'workgroup-memory'} variant, ${w} threads, ${op.name}<${type}> at n = 1, 7, 32, 65, 128, 256`, async () => {
          for (const n of [1, 7, 32, 65, 128, 256]) {
            if (n > w) continue;
            const r = rng(n * 7919 + w);
            const input = Array.from({ length: n }, () => gen(r));
            const got = await runBlocks(device, type, op, w, subgroups, input);
            const want = reference(op, type, w, input);
            expect(got, `n=${n}`).toEqual(want);
          }
        });
      }
    }
  }
});

/** Runs workgroupExclusiveScanRows over `rows` rows of one workgroup: [p rows..., t rows...]. */
async function runRows(
  device: GpuDevice,
  type: NumericType,
  op: GpuFunction,
  w: number,
  subgroups: boolean,
  rows: number,
  input: number[],
): Promise<number[]> {
  const p = blockParams(device, type, op, w, subgroups);
  const scan = workgroupExclusiveScanRows(p, rows);
  const each = (g: (r: number) => string, sep = '\n  ') => Array.from({ length: rows }, (_, r) => g(r)).join(sep);
  const main = fragment({
    name: mangle('test_rows', type, op.name, w, subgroups, rows),
    deps: [threadIds(subgroups), scan],
    code: `@group(0) @binding(0) var<storage, read> inp: array<${type}>;
@group(0) @binding(1) var<storage, read_write> outp: array<${type}>;
@compute @workgroup_size(${w}) fn main(${entryParams(subgroups)}) {
${entryPrologue(subgroups)}
  let s = ${scan.name}(${each((r) => `inp[${r * w}u + ids.lid]`, ', ')}, ids);
  ${each((r) => `outp[${r * w}u + ids.lid] = s.p${r};`)}
  if (ids.lid == 0u) { ${each((r) => `outp[${rows * w + r}u] = s.t${r};`, ' ')} }
}`,
  });
  const pipeline = await getPipeline(device, main);
  const host =
    type === 'u32' ? Uint32Array.from(input) : type === 'i32' ? Int32Array.from(input) : Float32Array.from(input);
  const inp = DeviceArray.from(device, host);
  const out = DeviceArray.create(device, type, rows * w + rows);
  return runOneWorkgroup(device, pipeline, inp, out);
}

describe.skipIf(!gpu)('workgroup-memory variant at 1024 threads (32 rakes of 32: every padded word)', () => {
  const device = gpu as GpuDevice;
  const big = device && device.gpu.limits.maxComputeInvocationsPerWorkgroup >= 1024;
  for (const { type, op, gen } of cases.filter((c) => c.type === 'u32')) {
    it.skipIf(!big)(`${op.name}<${type}> at n = 1000, 1024`, async () => {
      for (const n of [1000, 1024]) {
        const r = rng(n * 104729);
        const input = Array.from({ length: n }, () => gen(r));
        const got = await runBlocks(device, type, op, 1024, false, input);
        expect(got, `n=${n}`).toEqual(reference(op, type, 1024, input));
      }
    });
  }
});

describe.skipIf(!gpu)('workgroupExclusiveScanRows: several independent row scans in one exchange', () => {
  const device = gpu as GpuDevice;
  const variants = device?.features.has('subgroups') ? [true, false] : [false];
  for (const subgroups of variants) {
    for (const { type, op, gen } of cases) {
      it(`${subgroups ? 'subgroup' : 'workgroup-memory'} variant, ${op.name}<${type}>, ${subgroups ? '1, 3 and 6' : '1 and 3'} rows of 64 and 256 threads`, async () => {
        for (const w of [64, 256]) {
          // Without subgroups the rows are independent calls of the block tested above: fewer rows.
          for (const rows of subgroups ? [1, 3, 6] : [1, 3]) {
            const r = rng(rows * 31 + w);
            const input = Array.from({ length: rows * w }, () => gen(r));
            const got = await runRows(device, type, op, w, subgroups, rows, input);
            const want: number[] = [];
            const totals: number[] = [];
            for (let row = 0; row < rows; row++) {
              const ref = reference(op, type, w, input.slice(row * w, (row + 1) * w));
              want.push(...ref.slice(w, 2 * w));
              totals.push(ref[2 * w] as number);
            }
            expect(got, `w=${w} rows=${rows}`).toEqual([...want, ...totals]);
          }
        }
      });
    }
  }
});
