// webdpl's Node example: the same calls on the CPU (seq, the worker pool) and the GPU.
// In this repository: `pnpm tsx examples/node/main.mjs [n]`; with the published packages: `node main.mjs [n]`
// (the GPU needs the optional peer `webgpu`, Dawn for Node: `npm install webgpu`; without it the
// device policy runs on the CPU and `noGpuReason()` says why).
import { copyIf, reduce, sort } from '@webdpl/algorithms';
import { noGpuReason, releaseDevices } from '@webdpl/core';
import { execution } from '@webdpl/policies';

const n = Number(process.argv[2] ?? 1 << 20);
const data = Float32Array.from({ length: n }, (_, i) => Math.sin(i) * 1000);
const reason = await noGpuReason();
console.log(reason ? `no GPU: ${reason}` : 'GPU found');

for (const [name, policy] of [
  ['seq', execution.seq],
  ['par', execution.par],
  ['device', execution.device],
]) {
  const t0 = performance.now();
  const sum = await reduce(policy, data);
  const positive = new Float32Array(n);
  const count = await copyIf(policy, data, positive, (x) => x > 0);
  const keys = data.slice();
  await sort(policy, keys);
  const ms = (performance.now() - t0).toFixed(1);
  console.log(
    `${name.padEnd(6)} sum ${sum.toFixed(2)}, ${count} positive, min ${keys[0]}, max ${keys[n - 1]} (${ms} ms)`,
  );
}
releaseDevices();
