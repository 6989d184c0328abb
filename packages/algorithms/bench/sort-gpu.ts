/**
 * GPU sort check and timing on a real device (the H100 through the device tool): correctness of the
 * radix-sort engine on both ranking paths and the merge-sort engine against TypedArray#sort, then
 * device time (timestamp queries) of radixSortDevice / mergeSortDevice over sizes.
 *
 *   node sort-gpu.bundle.mjs [max log2 n = 26]
 *
 * Build the bundle (webgpu external) with esbuild; see docs/benchmarks/sort-cpu.md.
 */
import { DeviceArray, type GpuDevice, gpuSelector, lambda, selectDevice } from '@webdpl/core';
import { mergeSortDevice, radixSortDevice } from '../src/index';
import { sortReference } from '../src/testing/sort-reference';
import { rng } from './xorshift';

const maxLog2 = Number(process.argv[2] ?? 26);
/** SMALL=1 (lavapipe): correctness at small sizes only. */
const small = !!process.env.SMALL;
const big = small ? 1 << 15 : 1 << 22;
const mid = small ? 20_003 : (1 << 20) + 3;
const device = (await selectDevice(gpuSelector)) as GpuDevice;
const info = device.info;
console.log(
  `device: ${info.name} (${info.vendor} ${info.architecture}), subgroups ${info.subgroupMinSize}..${info.subgroupMaxSize}, ` +
    `workgroup storage ${device.limits.maxComputeWorkgroupStorageSize}, binding ${device.limits.maxStorageBufferBindingSize}, ` +
    `features ${[...device.features].join(' ')}`,
);

type Keys = Uint32Array | Int32Array | Float32Array;
const SPECIALS = [0x7fc00000, 0xffc00000, 0x7f800001, 0x80000000, 0, 0x7f800000, 0xff800000, 1, 0x80000001, 0x007fffff];

function makeKeys(type: 'u32' | 'i32' | 'f32', n: number, seed: number, dups = false): Keys {
  const r = rng(seed);
  const bits = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    bits[i] = dups ? r() % 97 : type === 'f32' && r() % 5 === 0 ? (SPECIALS[r() % SPECIALS.length] as number) : r();
  }
  return type === 'u32' ? bits : type === 'i32' ? new Int32Array(bits.buffer) : new Float32Array(bits.buffer);
}

let failures = 0;
function fail(what: string, msg: string): void {
  failures++;
  console.log(`FAIL ${what}: ${msg}`);
}

async function checkRadix(
  type: 'u32' | 'i32' | 'f32',
  n: number,
  opts: { values?: boolean; descending?: boolean; dups?: boolean; tuning?: Record<string, number | boolean> },
  what: string,
): Promise<void> {
  const keys = makeKeys(type, n, n + type.length, opts.dups);
  const k = DeviceArray.from(device, keys);
  const v = opts.values
    ? DeviceArray.from(
        device,
        Uint32Array.from({ length: n }, (_, i) => i),
      )
    : undefined;
  try {
    await radixSortDevice(device, k, v, { descending: opts.descending, tuning: opts.tuning });
    const got = (await k.read()) as Keys;
    const want = sortReference(keys, opts.descending ?? false);
    for (let i = 0; i < n; i++) {
      if (!Object.is(got[i], want[i]) && !(Number.isNaN(got[i] as number) && Number.isNaN(want[i] as number))) {
        return fail(what, `key ${i}: got ${got[i]}, want ${want[i]}`);
      }
    }
    if (v) {
      const vals = await v.read();
      // Stability: values (original indices) increase within every run of equal keys.
      for (let i = 1; i < n; i++) {
        const same =
          Object.is(got[i], got[i - 1]) || (Number.isNaN(got[i] as number) && Number.isNaN(got[i - 1] as number));
        if (!Object.is(keys[vals[i] as number], got[i]) && !Number.isNaN(got[i] as number)) {
          return fail(what, `value ${i} does not belong to its key`);
        }
        if (same && (vals[i] as number) < (vals[i - 1] as number)) return fail(what, `unstable at ${i}`);
      }
    }
    console.log(`ok   ${what}`);
  } finally {
    k.destroy();
    v?.destroy();
  }
}

// ---- correctness
for (const subgroups of [true, false]) {
  const tag = subgroups ? 'sg' : 'wg';
  for (const type of ['u32', 'i32', 'f32'] as const) {
    for (const n of [1000, 3839, 3841, mid]) {
      await checkRadix(type, n, { tuning: { subgroups }, values: n % 2 === 1 }, `${tag} ${type} n=${n}`);
    }
    await checkRadix(
      type,
      big,
      { tuning: { subgroups }, descending: true, values: true },
      `${tag} ${type} desc pairs ${big}`,
    );
    await checkRadix(
      type,
      big,
      { tuning: { subgroups }, dups: true, values: true },
      `${tag} ${type} dups pairs ${big}`,
    );
  }
  await checkRadix(
    'f32',
    5000,
    { tuning: { subgroups, workgroupSize: 32, keysPerThread: 2, lookbackForceFallback: true }, values: true },
    `${tag} forced fallback`,
  );
  await checkRadix('u32', big, { tuning: { subgroups, lookbackSpins: 0 }, values: true }, `${tag} spins 0, ${big}`);
}
{
  const n = mid + 4;
  const keys = makeKeys('u32', n, 5) as Uint32Array;
  const k = DeviceArray.from(device, keys);
  const v = DeviceArray.from(
    device,
    Uint32Array.from({ length: n }, (_, i) => i),
  );
  const comparator = lambda((a: number, b: number) => a % 1000 < b % 1000);
  await mergeSortDevice(device, k, v, { comparator });
  const gk = await k.read();
  const gv = await v.read();
  const want = Array.from({ length: n }, (_, i) => i).sort(
    (i, j) => ((keys[i] as number) % 1000) - ((keys[j] as number) % 1000) || i - j,
  );
  let bad = -1;
  for (let i = 0; i < n && bad < 0; i++) if (gv[i] !== want[i] || gk[i] !== keys[want[i] as number]) bad = i;
  if (bad >= 0) fail(`merge sort lambda n=${n}`, `at ${bad}`);
  else console.log(`ok   merge sort lambda n=${n} (stable)`);
  k.destroy();
  v.destroy();
}

// ---- timing
device.queue.setProfiling(true);
async function time(
  label: string,
  n: number,
  run: (k: DeviceArray, v?: DeviceArray) => Promise<unknown>,
  pairs: boolean,
  type: 'u32' | 'f32' = 'u32',
  liveDigits = 4,
) {
  const keys = makeKeys(type, n, 99);
  if (liveDigits < 4) {
    const mask = liveDigits === 0 ? 0 : 2 ** (8 * liveDigits) - 1;
    const b = new Uint32Array(keys.buffer);
    for (let i = 0; i < n; i++) b[i] = (b[i] as number) & mask;
  }
  const src = DeviceArray.from(device, keys);
  const k = DeviceArray.create(device, type, n);
  const v = pairs ? DeviceArray.create(device, 'u32', n) : undefined;
  const ms: number[] = [];
  for (let rep = 0; rep < 12; rep++) {
    await device.queue.submit('reset', (rec) => rec.encoder.copyBufferToBuffer(src.buffer, 0, k.buffer, 0, n * 4));
    await run(k, v);
    if (rep >= 2) ms.push(device.queue.lastDeviceTimeNs / 1e6);
  }
  ms.sort((a, b) => a - b);
  const med = ms[ms.length >> 1] as number;
  const mean = ms.reduce((a, b) => a + b, 0) / ms.length;
  const got = (await k.read()) as Keys;
  let sorted = true;
  for (let i = 1; i < n && sorted; i++)
    if ((got[i] as number) < (got[i - 1] as number)) sorted = Number.isNaN(got[i] as number);
  console.log(
    `| ${label} | 2^${Math.log2(n)} | ${med.toFixed(3)} | ${mean.toFixed(3)} | ${(n / med / 1e6).toFixed(2)} | ${sorted ? 'sorted' : 'NOT SORTED'} |`,
  );
  src.destroy();
  k.destroy();
  v?.destroy();
}
console.log('\n| call | n | median ms | mean ms | G keys/s | check |\n|---|---:|---:|---:|---:|---|');
for (let lg = 16; lg <= maxLog2; lg += 2) {
  const n = 2 ** lg;
  await time('radix u32 keys (subgroups)', n, (k) => radixSortDevice(device, k), false);
  await time('radix u32 pairs (subgroups)', n, (k, v) => radixSortDevice(device, k, v), true);
  if (lg === Math.min(24, maxLog2)) {
    await time('radix f32 keys (subgroups)', n, (k) => radixSortDevice(device, k), false, 'f32');
    await time(
      'radix u32 keys (workgroup-memory ranking)',
      n,
      (k) => radixSortDevice(device, k, undefined, { tuning: { subgroups: false } }),
      false,
    );
    await time(
      'radix u32 keys (256 x 20 tiles)',
      n,
      (k) => radixSortDevice(device, k, undefined, { tuning: { keysPerThread: 20 } }),
      false,
    );
    await time(
      'radix u32 keys (256 x 10 tiles)',
      n,
      (k) => radixSortDevice(device, k, undefined, { tuning: { keysPerThread: 10 } }),
      false,
    );
    await time(
      'radix u32 keys, 1 live digit (histogram + 1 pass + copy)',
      n,
      (k) => radixSortDevice(device, k),
      false,
      'u32',
      1,
    );
    await time('radix u32 keys, 2 live digits', n, (k) => radixSortDevice(device, k), false, 'u32', 2);
    await time('radix u32 keys, all equal (histogram only)', n, (k) => radixSortDevice(device, k), false, 'u32', 0);
    await time(
      'radix u32 keys (spins 4096)',
      n,
      (k) => radixSortDevice(device, k, undefined, { tuning: { lookbackSpins: 4096 } }),
      false,
    );
    const cmp = lambda((a: number, b: number) => a < b);
    await time(
      'merge sort u32 keys (lambda a < b)',
      n,
      (k) => mergeSortDevice(device, k, undefined, { comparator: cmp }),
      false,
    );
  }
}
console.log(failures ? `\n${failures} FAILURES` : '\nall checks passed');
process.exit(failures ? 1 : 0);
