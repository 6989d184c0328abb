/**
 * Micro-benchmark of reduceByKey's tile without a look-back (issue 16): raw WGSL of a CUB-like
 * reduce-by-key agent (each thread k consecutive keys and values as vec4 loads, head flags, a
 * thread fold of (heads, fold since the last head), a subgroup shuffle scan of those pairs, one
 * exchange of subgroup totals, then a walk writing each run's fold and key at its head), its run
 * indices tile-local (each tile writes in its own range: no look-back, so the results are not
 * reduceByKey's), beside its loads alone and a copy of both arrays. It bounds what the scan
 * engine's 'by-key-runs' kernel could reach without its look-back (docs/benchmarks/
 * h100-2026-11-24d.md). Modes (MODES, comma-separated): load, nowrite, full; each may add
 * '+flag's making the kernel more like the engine's: atomic (tile ids from an atomic counter),
 * bounds (uniform length, bounds-tested loads), fn (operator and equality as functions), dynidx
 * (the key before lane 0 by a dynamic vec4 index), loop (the shuffle scan as a loop), all.
 * CFG: tiles as WxI (default 128x16,256x16,128x8,256x8,128x32). Keys i >> 4, u32 plus.
 * Bundle: node scripts/probe/build.mjs; run: PROBE_SIZES=24,26 node .probe/runs-micro-probe.mjs
 */

import { CUB_SEED } from '../../packages/bench/src/data';
import { fillOnDevice, generateOnDevice } from '../../packages/bench/src/gpu-data';
import { DeviceArray, fragment, getPipeline } from '../../packages/core/src/index';
import { openProbe, out, timeCopy, timeIt } from './timing';

function kernel(W: number, I: number, modeFull: string): string {
  const [mode, ...flags] = modeFull.split('+');
  const F = (f: string) => flags.includes(f) || flags.includes('all');
  const L: string[] = [];
  const V = I / 4;
  if (F('atomic')) {
    L.push('if (lid == 0u) { wtile = atomicAdd(&ctr[0], 1u); }', 'let tile = workgroupUniformLoad(&wtile);');
  } else L.push('let tile = wg.x + wg.y * 32768u;');
  L.push(`let base = tile * ${W}u * ITEMS + lid * ITEMS;`);
  L.push(`let full = (tile + 1u) * ${W * I}u <= prm.x;`);
  for (let q = 0; q < V; q++) {
    if (F('bounds')) {
      L.push(`var ka${q} = vec4<u32>(); var va${q} = vec4<u32>();`);
      L.push(`if (full || base + ${4 * q}u < prm.x) { ka${q} = keys[(prm.y + base) / 4u + ${q}u]; }`);
      L.push(`if (full || base + ${4 * q}u < prm.x) { va${q} = vals[(prm.z + base) / 4u + ${q}u]; }`);
    } else L.push(`let ka${q} = keys[(base >> 2u) + ${q}u]; let va${q} = vals[(base >> 2u) + ${q}u];`);
  }
  const k = (j: number) => `ka${j >> 2}.${'xyzw'[j & 3]}`;
  const v = (j: number) => `va${j >> 2}.${'xyzw'[j & 3]}`;
  if (mode === 'load') {
    L.push('var s = 0u;');
    for (let j = 0; j < I; j++) L.push(`s += ${k(j)} ^ ${v(j)};`);
    L.push('if (s == 0x12345678u) { vout[0] = s; }');
    return body(W, L);
  }
  const OP = (x: string, y: string) => (F('fn') ? `opf(${x}, ${y})` : `(${x} + ${y})`);
  const NE = (x: string, y: string) => (F('fn') ? `!eqf(${x}, ${y})` : `(${x} != ${y})`);
  L.push(`var pk = subgroupShuffleUp(${k(I - 1)}, 1u);`);
  if (F('dynidx')) L.push(`if (lane == 0u && base > 0u) { let i = base - 1u; pk = keys[i >> 2u][i & 3u]; }`);
  else L.push(`if (lane == 0u) { pk = select(keys_s[max(base, 1u) - 1u], ~${k(0)}, base == 0u); }`);
  L.push(`let h0 = ${F('bounds') ? '(full || base < prm.x)' : 'true'} && (base == 0u || ${NE('pk', k(0))});`);
  for (let j = 1; j < I; j++)
    L.push(`let h${j} = ${F('bounds') ? `(full || base + ${j}u < prm.x)` : 'true'} && ${NE(k(j - 1), k(j))};`);
  L.push('var c = 0u; var a = 0u;');
  for (let j = 0; j < I; j++) L.push(`c += select(0u, 1u, h${j}); a = select(${OP('a', v(j))}, ${v(j)}, h${j});`);
  L.push('var pc = c; var pa = a;');
  if (F('loop')) {
    L.push(`for (var d = 1u; d < sgs; d = d << 1u) { let oc = subgroupShuffleUp(pc, d); let oa = subgroupShuffleUp(pa, d);
    if (lane >= d) { pa = select(${OP('oa', 'pa')}, pa, pc != 0u); pc = oc + pc; } }`);
  } else {
    for (let d = 1; d < 32; d *= 2) {
      L.push(`{ let oc = subgroupShuffleUp(pc, ${d}u); let oa = subgroupShuffleUp(pa, ${d}u);
    if (lane >= ${d}u) { pa = select(${OP('oa', 'pa')}, pa, pc != 0u); pc = oc + pc; } }`);
    }
  }
  L.push(`var ec = subgroupShuffleUp(pc, 1u); var ea = subgroupShuffleUp(pa, 1u);
  if (lane == 0u) { ec = 0u; ea = 0u; }
  if (lane == sgs - 1u) { wsum[lid / sgs] = vec2<u32>(pc, pa); }
  workgroupBarrier();
  var wc = 0u; var wa = 0u;
  for (var g = 0u; g < lid / sgs; g++) { let t = wsum[g]; wa = select(wa + t.y, t.y, t.x != 0u); wc += t.x; }
  // thread exclusive = combine(warp prefix, in-warp exclusive)
  var rc = ${mode === 'nolb' || mode === 'full' ? `tile * ${W * I}u + ` : ''}wc + ec;
  var ra = select(wa + ea, ea, ec != 0u);`);
  if (mode !== 'nowrite') {
    for (let j = 0; j < I; j++) {
      L.push(
        `if (h${j}) { if (rc > 0u) { vout[rc - 1u] = ra; } kout[rc] = ${k(j)}; rc += 1u; ra = ${v(j)}; } else { ra = ${OP('ra', v(j))}; }`,
      );
    }
  } else {
    L.push('if (rc == 0x12345678u && ra == 7u) { vout[0] = ra; }');
  }
  return body(W, L);
}

function body(W: number, L: string[]): string {
  return `enable subgroups;
@group(0) @binding(0) var<storage, read> keys: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> vals: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> kout: array<u32>;
@group(0) @binding(3) var<storage, read_write> vout: array<u32>;
@group(0) @binding(4) var<storage, read> keys_s: array<u32>;
@group(0) @binding(5) var<uniform> prm: vec4<u32>;
@group(0) @binding(6) var<storage, read_write> ctr: array<atomic<u32>>;
var<workgroup> wsum: array<vec2<u32>, 32>;
var<workgroup> wtile: u32;
fn opf(a: u32, b: u32) -> u32 { return a + b; }
fn eqf(a: u32, b: u32) -> bool { return a == b; }
@compute @workgroup_size(${W}) fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3<u32>,
  @builtin(subgroup_invocation_id) lane: u32, @builtin(subgroup_size) sgs: u32) {
  _ = &keys_s; _ = &kout; _ = &vout; _ = &prm; _ = &ctr;
  ${L.join('\n  ')}
}`;
}

async function main() {
  const { device } = await openProbe();
  for (const lg of (process.env.PROBE_SIZES ?? '24,26').split(',').map(Number)) {
    const n = 2 ** lg;
    const values = await generateOnDevice(device, 'u32', n, CUB_SEED);
    const keys = DeviceArray.create(device, 'u32', n);
    await fillOnDevice(device, keys, 'i >> 4u');
    const ko = DeviceArray.create(device, 'u32', n);
    const prmBuf = device.gpu.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    device.gpu.queue.writeBuffer(prmBuf, 0, Uint32Array.of(n, 0, 0, 0));
    const ctr = device.gpu.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    const vo = DeviceArray.create(device, 'u32', n);
    out({
      case: 'copy 2 arrays (keys->ko, values->vo)',
      lg,
      ms: (await timeCopy(device, 20, keys, ko)) + (await timeCopy(device, 20, values, vo)),
    });
    const configs = (process.env.CFG ?? '128x16,256x16,128x8,256x8,128x32').split(',');
    for (const mode of (process.env.MODES ?? 'load,nowrite,full').split(',')) {
      for (const cfg of configs) {
        const [W, I] = cfg.split('x').map(Number) as [number, number];
        const code = kernel(W, I, mode).replaceAll('ITEMS', `${I}u`);
        const pipeline = await getPipeline(
          device,
          fragment({ name: `rbk_${mode.replace(/[^a-z]/g, '_')}_${W}_${I}`, code }),
        );
        const tiles = n / (W * I);
        const group = device.gpu.createBindGroup({
          layout: pipeline.getBindGroupLayout(0),
          entries: [
            { binding: 0, resource: { buffer: keys.buffer } },
            { binding: 1, resource: { buffer: values.buffer } },
            { binding: 2, resource: { buffer: ko.buffer } },
            { binding: 3, resource: { buffer: vo.buffer } },
            { binding: 4, resource: { buffer: keys.buffer } },
            { binding: 5, resource: { buffer: prmBuf } },
            { binding: 6, resource: { buffer: ctr } },
          ],
        });
        const ms = await timeIt(device, 20, () =>
          device.queue.submit('rbk', (rec) => {
            rec.encoder.clearBuffer(ctr, 0, 16);
            const p = rec.beginPass('rbk');
            p.setPipeline(pipeline);
            p.setBindGroup(0, group);
            p.dispatchWorkgroups(Math.min(tiles, 32768), Math.ceil(tiles / 32768));
            p.end();
          }),
        );
        out({ case: `rbk micro ${mode} ${W}x${I}`, lg, ms });
      }
    }
    for (const a of [values, keys, ko, vo]) a.destroy();
  }
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
