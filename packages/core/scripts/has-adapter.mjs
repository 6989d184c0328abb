// Exits 0 and prints the adapter when WebGPU (Dawn) finds one, 1 otherwise. Used by .ci/run.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env.XDG_RUNTIME_DIR ??= mkdtempSync(join(tmpdir(), 'webdpl-xdg-'));
let gpu;
try {
  const { create, globals } = await import('webgpu');
  Object.assign(globalThis, globals);
  gpu = create([]);
} catch (e) {
  console.log(`no WebGPU: ${e.message}`);
  process.exit(1);
}
const adapter = await gpu.requestAdapter();
if (!adapter) {
  console.log('no WebGPU adapter');
  process.exit(1);
}
const i = adapter.info;
console.log(
  `adapter: ${i.vendor} ${i.architecture} ${i.description} (subgroups ${i.subgroupMinSize}-${i.subgroupMaxSize})`,
);
gpu = undefined;
process.exit(0);
