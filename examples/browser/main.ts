/**
 * webdpl's browser example: the same calls under seq, par, the GPU and auto. Build and serve:
 *   npx esbuild examples/browser/main.ts --bundle --format=esm --outfile=examples/browser/main.js
 *   pnpm tsx scripts/static-server.ts examples/browser      # http://127.0.0.1:8080/
 * (see README.md next to this file). The page sets `document.body.dataset.status` to 'done' or
 * 'failed' when it finished (the packaging test loads it in Chromium).
 */
import { inclusiveScan, reduce, sort } from '@webdpl/algorithms';
import { gpuSelector, selectDevice } from '@webdpl/core';
import { execution, type Policy } from '@webdpl/policies';

const log = document.getElementById('log') as HTMLPreElement;
const lines: string[] = [];
function print(line: string): void {
  lines.push(line);
  log.textContent = lines.join('\n');
}

async function timed<T>(f: () => Promise<T>): Promise<[T, string]> {
  const t0 = performance.now();
  const r = await f();
  return [r, `${(performance.now() - t0).toFixed(1)} ms`];
}

async function main(n = 1_000_000): Promise<void> {
  lines.length = 0;
  print(`secure context: ${isSecureContext}, cross-origin isolated: ${crossOriginIsolated}`);
  const policies: [string, Policy][] = [
    ['seq', execution.seq],
    ['par', execution.par],
    ['auto', execution.auto],
  ];
  try {
    const gpu = await selectDevice(gpuSelector);
    print(`GPU: ${gpu.info.name} (${gpu.info.kind})`);
    policies.push(['device', execution.device]);
  } catch (e) {
    print(`no GPU: ${(e as Error).message}`);
  }
  const data = Float32Array.from({ length: n }, () => Math.random());
  const expected = data.reduce((s, x) => s + x, 0);
  for (const [name, policy] of policies) {
    print(`\n${name}: ${policy.info}`);
    const [sum, t1] = await timed(() => reduce(policy, data));
    print(`  reduce         ${t1}  sum ${sum.toFixed(1)} (plain JS ${expected.toFixed(1)})`);
    const prefix = new Float32Array(n);
    const [, t2] = await timed(() => inclusiveScan(policy, data, prefix));
    print(`  inclusiveScan  ${t2}  last ${prefix[n - 1]?.toFixed(1)}`);
    const keys = data.slice();
    const [, t3] = await timed(() => sort(policy, keys));
    print(`  sort           ${t3}  first ${keys[0]?.toFixed(6)}, last ${keys[n - 1]?.toFixed(6)}`);
    if (Math.abs(sum - expected) > 1e-3 * expected)
      throw new Error(`${name}: reduce gave ${sum}, expected ${expected}`);
    for (let i = 1; i < n; i++)
      if (keys[i - 1] > keys[i]) throw new Error(`${name}: sort left keys[${i}] out of order`);
  }
}

async function runAndReport(): Promise<void> {
  document.body.dataset.status = 'running';
  try {
    await main();
    document.body.dataset.status = 'done';
  } catch (e) {
    print(`\nfailed: ${(e as Error).stack ?? String(e)}`);
    document.body.dataset.status = 'failed';
  }
}

document.getElementById('run')?.addEventListener('click', () => void runAndReport());
void runAndReport();
