/**
 * GPU-machine probe of the compactions' cost by kept fraction and pattern (issue 17): device time
 * of copyIf on u32 DeviceArrays (the anchor's hash as data) with predicates keeping none, 25%, 50%,
 * 75% or all elements, and 50% kept in runs of 4096 (blocked), beside inclusiveScan and the vec4
 * copy kernel of the same arrays (the bandwidth ceiling), on warm clocks.
 * Bundle: node scripts/probe/build.mjs; run: PROBE_SIZES=24,28 node .probe/compaction-probe.mjs
 * PROBE_API_TUNING: the policy's tuning overrides as JSON, e.g. '{"copyIf":{"itemsPerThread":16}}'.
 */
import { copyIf, inclusiveScan } from '../../packages/algorithms/src/index';
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
      ['none', a, (x: number) => x > 4294967295, 0],
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
    for (const x of [a, b, blocked]) x.destroy();
  }
  releaseDevices();
}

runProbe(main);
