import { gpuSelector, releaseDevices, selectDevice, type GpuDevice } from '@webdpl/core';
import { makeDevicePolicy, defaultPool } from '@webdpl/policies';
import { reduce } from '../../algorithms/src/reduce/index';
import { countIf } from '../../algorithms/src/count/index';
import { minElement } from '../../algorithms/src/min-element/index';
import { transformReduce } from '../../algorithms/src/transform-reduce/index';
import { transform } from '../../algorithms/src/transform/index';
import { fill } from '../../algorithms/src/fill/index';
import { copy } from '../../algorithms/src/copy/index';
import { defaultSizes, parseArgs } from './cli-args';
import { ENTRIES, selectEntries } from './entries';
import { runEntry } from './runner';
import { computeCrossover, entryTable } from './report';
const d = (await selectDevice(gpuSelector)) as GpuDevice;
const options = parseArgs(process.argv.slice(2));
const ctx = { options, api: { reduce, countIf, minElement, transformReduce, transform, fill, copy }, device: d, devicePolicy: makeDevicePolicy(d, { fallback: 'error' }), gpuMaxLog2: 20, onStep: () => {}, onDone: () => {} };
const t0 = performance.now();
for (const e of selectEntries(undefined, 'default').entries) {
  const t = performance.now();
  const r = await runEntry(e, defaultSizes(options), ctx);
  r.crossover = computeCrossover(r);
  console.log(entryTable(r, 0.07));
  console.log(`[${((performance.now() - t) / 1e3).toFixed(1)} s]`);
}
console.log(`total ${((performance.now() - t0) / 1e3).toFixed(1)} s`);
releaseDevices();
try { await defaultPool().close(); } catch {}
