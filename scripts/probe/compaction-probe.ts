/**
 * GPU-machine probe of the compactions' cost by kept fraction and pattern (issue 17): device time
 * of copyIf on u32 DeviceArrays (the anchor's hash as data) with predicates keeping none, 25%, 50%,
 * 75% or all elements, and 50% kept in runs of 4096 (blocked), beside inclusiveScan and the vec4
 * copy kernel of the same arrays (the bandwidth ceiling), on warm clocks; and copyIf over a zip of
 * three arrays (50% kept by the first: one pass of the scan engine, 12 B read and 6 B written per
 * element) into a zip of three outputs; uniqueByKey over keys i >> 4 (runs of 16: keys and values
 * of n / 16 runs written) and unique over distinct elements (every element kept, in place: through
 * a temporary copied back).
 * Bundle: node scripts/probe/build.mjs; run: PROBE_SIZES=24,28 node .probe/compaction-probe.mjs
 * PROBE_API_TUNING: the policy's tuning overrides as JSON, e.g. '{"copyIf":{"itemsPerThread":16}}'.
 */
import { copyIf, inclusiveScan, unique, uniqueByKey, zip } from '../../packages/algorithms/src/index';
import { CUB_SEED } from '../../packages/bench/src/data';
import { fillOnDevice, generateOnDevice } from '../../packages/bench/src/gpu-data';
import { DeviceArray, releaseDevices } from '../../packages/core/src/index';
import { openProbe, out, probeSizes, runProbe, timeCopy, timeIt } from './timing';

async function main() {
  const tuning = process.env.PROBE_API_TUNING;
  const { device, policy } = await openProbe(tuning ? { tuning: JSON.parse(tuning) } : {}, { tuning });
  for (const lg of probeSizes('24,28')) {
    const n = 2 ** lg;
    const reps = lg >= 28 ? 7 : 21;
    const a = await generateOnDevice(device, 'u32', n, CUB_SEED);
    const b = DeviceArray.create(device, 'u32', n);
    const blocked = DeviceArray.create(device, 'u32', n);
    await fillOnDevice(device, blocked, '(i >> 12u) & 1u');
    const copyMs = await timeCopy(device, reps, a, b);
    out({ case: 'copy vec4', lg, ms: copyMs, gbs: (8 * n) / copyMs / 1e6 });
    const scanMs = await timeIt(device, reps, () => inclusiveScan(policy, a, b));
    out({ case: 'inclusiveScan', lg, ms: scanMs, gbs: (8 * n) / scanMs / 1e6 });
    const cases: [string, DeviceArray, (x: number) => boolean, number][] = [
      // x > 0xffffffff would be folded to false by the shader compiler, which then drops the loads:
      // 'none' keeps the elements equal to 0xffffffff (about none of the hash; `kept` is printed).
      ['none', a, (x: number) => x === 4294967295, 0],
      ['25%', a, (x: number) => x >= 3221225472, 0.25],
      ['50%', a, (x: number) => x > 2147483648, 0.5],
      ['75%', a, (x: number) => x >= 1073741824, 0.75],
      ['all', a, (x: number) => x >= 0, 1],
      ['50% in runs of 4096', blocked, (x: number) => x === 1, 0.5],
    ];
    for (const [name, input, pred, kept] of cases) {
      let count = 0;
      const ms = await timeIt(device, reps, async () => {
        count = (await copyIf(policy, input, b, pred)) as number;
      });
      out({ case: `copyIf ${name}`, lg, ms, gbs: ((4 + 4 * kept) * n) / ms / 1e6, kept: count / n });
    }
    const [c, d, oc, od] = [0, 1, 2, 3].map(() => DeviceArray.create(device, 'u32', n)) as DeviceArray[];
    await fillOnDevice(device, c as DeviceArray, 'i');
    await fillOnDevice(device, d as DeviceArray, 'i * 3u');
    let zc = 0;
    const zms = await timeIt(device, reps, async () => {
      zc = (await copyIf(
        policy,
        zip(a, c, d),
        zip(b, oc, od),
        (x: number, _y: number, _z: number) => x > 2147483648,
      )) as number;
    });
    out({ case: 'copyIf zip of 3 (50%)', lg, ms: zms, gbs: (18 * n) / zms / 1e6, kept: zc / n });
    const runsKeys = DeviceArray.create(device, 'u32', n);
    await fillOnDevice(device, runsKeys, 'i >> 4u');
    let runs = 0;
    const ums = await timeIt(device, reps, async () => {
      runs = (await uniqueByKey(policy, runsKeys, a, oc as DeviceArray, od as DeviceArray)) as number;
    });
    out({ case: 'uniqueByKey runs of 16', lg, ms: ums, gbs: ((8 + 8 / 16) * n) / ums / 1e6, runs });
    let kept = 0;
    const uq = await timeIt(device, reps, async () => {
      kept = (await unique(policy, c as DeviceArray)) as number;
    });
    out({ case: 'unique all distinct (in place)', lg, ms: uq, gbs: (16 * n) / uq / 1e6, kept: kept / n });
    for (const x of [a, b, blocked, c, d, oc, od, runsKeys]) (x as DeviceArray).destroy();
  }
  releaseDevices();
}

runProbe(main);
