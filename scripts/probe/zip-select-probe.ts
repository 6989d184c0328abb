/**
 * GPU-machine probe for zipped transforms and tuple reductions (issue 15) and selection (issue 16):
 * device time through the public API on DeviceArrays, on warm clocks, beside the plain vec4 copy.
 *  - zip transform: out = x * y + z over zip(x, y, z) of f32 (16 B per element: 3 reads, 1 write),
 *    against our unary transform v * 2 + 1 (8 B) and the copy; compare with cub_catalogue's
 *    'transform f32 3 in' row (thrust::transform over a zip of the same arrays, same data);
 *  - tuple transformReduce: the bounding box [min x, max x, min y, max y] of zip(x, y) (8 B per
 *    element), against our reduce of x (4 B);
 *  - selection of u32 keys (the anchor's hash): topK k = 1024, nthElement at n / 2, partialSort
 *    k = 1024, against our sort of the same keys and CUB's SortKeys (cub_anchor's 'sort u32' row).
 * Results are checked on the host at 2^20 and 2^24. One JSON line per measurement.
 * Bundle: node scripts/probe/build.mjs; run: PROBE_SIZES=20,24,28 node .probe/zip-select-probe.mjs
 */
import { setPhasePasses } from '../../packages/algorithms/src/common/gpu-io';
import {
  nthElement,
  partialSort,
  sort,
  topK,
  transform,
  transformReduce,
  zip,
} from '../../packages/algorithms/src/index';
import { CUB_SEED } from '../../packages/bench/src/data';
import { generateOnDevice } from '../../packages/bench/src/gpu-data';
import { DeviceArray, releaseDevices } from '../../packages/core/src/index';
import { openProbe, out, probeSizes, runProbe, timeCopy, timeIt } from './timing';

async function main() {
  const { device, policy } = await openProbe();
  for (const lg of probeSizes('20,24,28')) {
    const n = 2 ** lg;
    const reps = lg >= 28 ? 10 : 30;
    const check = lg <= 24;
    const x = await generateOnDevice(device, 'f32', n, CUB_SEED);
    const y = await generateOnDevice(device, 'f32', n, CUB_SEED + 1);
    const z = await generateOnDevice(device, 'f32', n, CUB_SEED + 2);
    const o = DeviceArray.create(device, 'f32', n);
    const copy = await timeCopy(device, reps, x, o);
    out({ case: 'copy', lg, ms: copy, gbs: (8 * n) / copy / 1e6 });

    const t3 = await timeIt(device, reps, () => transform(policy, zip(x, y, z), o, (a, b, c) => a * b + c));
    let ok: boolean | undefined;
    if (check) {
      const [hx, hy, hz, ho] = (await Promise.all([x.read(), y.read(), z.read(), o.read()])) as Float32Array[];
      ok = true;
      for (let i = 0; i < n && ok; i++) {
        const want = Math.fround(Math.fround((hx[i] as number) * (hy[i] as number)) + (hz[i] as number));
        // WGSL may contract a * b + c into a fused multiply-add: allow one rounding of difference.
        if (Math.abs((ho[i] as number) - want) > 2 ** -22 * Math.max(1, Math.abs(want))) ok = false;
      }
    }
    out({
      case: 'transform zip3 f32 (x*y+z)',
      lg,
      ms: t3,
      gbs: (16 * n) / t3 / 1e6,
      copyBw: (16 * n) / t3 / 1e6 / ((8 * n) / copy / 1e6),
      ok,
    });
    const t1 = await timeIt(device, reps, () => transform(policy, x, o, (v) => v * 2 + 1));
    out({ case: 'transform f32 (v*2+1)', lg, ms: t1, gbs: (8 * n) / t1 / 1e6 });

    let box: number[] = [];
    const tb = await timeIt(device, reps, async () => {
      box = (await transformReduce(
        policy,
        zip(x, y),
        [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY],
        (a: number[], b: number[]) => [
          Math.min(a[0] as number, b[0] as number),
          Math.max(a[1] as number, b[1] as number),
          Math.min(a[2] as number, b[2] as number),
          Math.max(a[3] as number, b[3] as number),
        ],
        (u: number, v: number) => [u, u, v, v],
      )) as number[];
    });
    let okBox: boolean | undefined;
    if (check) {
      const [hx, hy] = (await Promise.all([x.read(), y.read()])) as Float32Array[];
      let [a, b, c, d] = [
        Number.POSITIVE_INFINITY,
        Number.NEGATIVE_INFINITY,
        Number.POSITIVE_INFINITY,
        Number.NEGATIVE_INFINITY,
      ];
      for (let i = 0; i < n; i++) {
        a = Math.min(a, hx[i] as number);
        b = Math.max(b, hx[i] as number);
        c = Math.min(c, hy[i] as number);
        d = Math.max(d, hy[i] as number);
      }
      okBox = box.length === 4 && box[0] === a && box[1] === b && box[2] === c && box[3] === d;
    }
    out({ case: 'transformReduce zip2 bounding box f32', lg, ms: tb, gbs: (8 * n) / tb / 1e6, ok: okBox });
    for (const a of [x, y, z, o]) a.destroy();

    // Selection over u32 keys; each call gets the keys afresh (a device copy, timed apart and
    // subtracted: the in-place calls would otherwise work on their own previous output).
    const src = await generateOnDevice(device, 'u32', n, CUB_SEED);
    const keys = DeviceArray.create(device, 'u32', n);
    const k = 1024;
    const top = DeviceArray.create(device, 'u32', k);
    const refresh = async () => {
      await device.queue.enqueue('probe refresh', (rec) => {
        rec.encoder.copyBufferToBuffer(src.buffer, src.byteOffset, keys.buffer, keys.byteOffset, n * 4);
      });
    };
    const refreshMs = await timeIt(device, reps, refresh);
    const sorted = check ? ((await src.read()) as Uint32Array).slice().sort() : undefined;
    const cases: [string, () => Promise<unknown>, (() => Promise<boolean>) | undefined][] = [
      [
        'topK u32 k=1024',
        () => topK(policy, src, k, top),
        async () => same((await top.read()) as Uint32Array, sorted, 0, k),
      ],
      [
        'nthElement u32 n/2',
        async () => {
          await refresh();
          await nthElement(policy, keys, n >> 1);
        },
        async () => ((await keys.read()) as Uint32Array)[n >> 1] === sorted?.[n >> 1],
      ],
      [
        'partialSort u32 k=1024',
        async () => {
          await refresh();
          await partialSort(policy, keys, k);
        },
        async () => same(((await keys.read()) as Uint32Array).subarray(0, k), sorted, 0, k),
      ],
      [
        'sort u32 (full)',
        async () => {
          await refresh();
          await sort(policy, keys);
        },
        async () => same((await keys.read()) as Uint32Array, sorted, 0, n),
      ],
    ];
    for (const [name, f, verify] of cases) {
      const raw = await timeIt(device, reps, f);
      const inPlace = !name.startsWith('topK');
      const ms = inPlace ? raw - refreshMs : raw;
      out({ case: name, lg, ms, gkeys: n / ms / 1e6, ok: check && verify && sorted ? await verify() : undefined });
      // The device time of each pass of the call's last submission (the select's phases, each in a
      // pass of its own for this call: setPhasePasses).
      if (name.startsWith('nthElement')) {
        setPhasePasses(true);
        try {
          await f();
        } finally {
          setPhasePasses(false);
        }
        out({
          case: `${name}: passes of the last submission`,
          lg,
          passes: device.queue.lastPassTimesNs.map((p) => [p.label, p.ns / 1e6]),
        });
      }
    }
    for (const a of [src, keys, top]) a.destroy();
  }
  releaseDevices();
}

function same(got: Uint32Array, want: Uint32Array | undefined, from: number, to: number): boolean {
  if (!want) return false;
  for (let i = from; i < to; i++) if (got[i - from] !== want[i]) return false;
  return true;
}

runProbe(main);
