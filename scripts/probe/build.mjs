// Bundles the probe for the GPU machine: everything inlined except 'webgpu'.
import { createRequire } from 'node:module';

// esbuild comes with tsup (a root devDependency); resolve it through tsup.
const require = createRequire(createRequire(import.meta.url).resolve('tsup'));
const { build } = require('esbuild');

await build({
  entryPoints: {
    probe: 'scripts/probe/h100-probe.ts',
    'sort-probe': 'scripts/probe/sort-probe.ts',
    'per-call-probe': 'scripts/probe/per-call-probe.ts',
    'per-call-breakdown': 'scripts/probe/per-call-breakdown.ts',
    'catalogue-probe': 'scripts/probe/catalogue-probe.ts',
    'by-key-probe': 'scripts/probe/by-key-probe.ts',
    'zip-select-probe': 'scripts/probe/zip-select-probe.ts',
    'big-sort-probe': 'scripts/probe/big-sort-probe.ts',
    'per-call-interleaved': 'scripts/probe/per-call-interleaved.ts',
    'alloc-probe': 'scripts/probe/alloc-probe.ts',
    'readback-probe': 'scripts/probe/readback-probe.ts',
    'cpu-by-key': 'scripts/probe/cpu-by-key.ts',
    'scan-verify': 'scripts/probe/scan-verify.ts',
    'device-check': 'scripts/probe/device-check.ts',
    'compaction-probe': 'scripts/probe/compaction-probe.ts',
    'runs-micro-probe': 'scripts/probe/runs-micro-probe.ts',
    'tuning-sweep': 'scripts/probe/tuning-sweep.ts',
    'dispatch-cost': 'scripts/probe/dispatch-cost.ts',
    'phase-passes': 'scripts/probe/phase-passes.ts',
  },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outdir: '.probe',
  outExtension: { '.js': '.mjs' },
  external: ['webgpu'],
  banner: { js: "import { createRequire as __cr } from 'module'; const require = __cr(import.meta.url);" },
  logLevel: 'warning',
});
console.log('built .probe/probe.mjs, .probe/sort-probe.mjs, .probe/per-call-probe.mjs');
