/**
 * The tile layer's decoupled look-back on the GPU: every workgroup publishes its tile's value(s) and
 * looks back; some tiles never publish (their workgroups return at once, as if never scheduled), so
 * their successors must take the fallback (compute the stalled tile's aggregate themselves) to
 * finish at all. The exclusive prefixes are checked against a prefix over the tiles.
 */
import { describe, expect, it } from 'vitest';
import type { GpuDevice } from '../device';
import { DeviceArray } from '../device-array';
import { plus } from '../operators';
import { getPipeline } from '../pipeline-cache';
import { dispatchOnce, gpuForTests } from '../testing/gpu';
import { lastNonZero } from '../testing/ops';
import { fragment, mangle, type WgslFragment } from './fragment';
import { entryParams, entryPrologue, threadIds } from './ids';
import { type Combiner, combinerOf } from './subgroup';
import {
  headFlags,
  type LookbackLayout,
  loadRun,
  loadStaged,
  loadStriped,
  slotLookback,
  tailFlags,
  windowedLookback,
} from './tile';

const gpu = await gpuForTests();

/** Tiles whose workgroups return without publishing (never the last: it writes the carry out). */
const stalled = (t: number, tiles: number) => t % 3 === 1 && t !== tiles - 1;

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s;
  };
}

/** Runs `tiles` workgroups of `code` over bindings 0..2 (inp, state of `stateWords`, out of `outWords`). */
async function run(
  device: GpuDevice,
  code: WgslFragment,
  inp: Uint32Array,
  stateWords: number,
  outWords: number,
  tiles: number,
) {
  const pipeline = await getPipeline(device, code);
  const a = DeviceArray.from(device, inp);
  const st = DeviceArray.create(device, 'u32', stateWords);
  const out = DeviceArray.create(device, 'u32', outWords);
  await dispatchOnce(device, pipeline, [a, st, out], tiles);
  const r = await out.read();
  for (const x of [a, st, out]) x.destroy();
  return r;
}

/** vec2<u32> combiners for the pair layouts: (x | or +, y +). */
function pairCombiner(): Combiner {
  const name = 'tt_pair_head';
  return {
    name,
    wgslType: 'vec2<u32>',
    bytes: 8,
    identity: 'vec2<u32>(0u, 0u)',
    combine: fragment({
      name,
      code: `fn ${name}(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return vec2<u32>(a.x | b.x, a.y + b.y); }`,
    }),
  };
}

const windowedCases: { label: string; layout: Exclude<LookbackLayout, 'packed'>; combiner: Combiner; words: number }[] =
  [
    { label: 'split, u32 plus', layout: 'split', combiner: combinerOf(plus, 'u32'), words: 2 },
    { label: 'split, lastNonZero (order kept)', layout: 'split', combiner: combinerOf(lastNonZero, 'u32'), words: 2 },
    { label: 'split-head, (head | head, value +)', layout: 'split-head', combiner: pairCombiner(), words: 2 },
  ];

/** The element values of `inp` as the combiner's type V, and a JS fold of elements [0, end) from the carry. */
function elementOf(c: Combiner): { wgsl: string; carry: number[]; fold: (inp: Uint32Array, end: number) => number[] } {
  if (c.wgslType === 'u32') {
    const lnz = c.combine.name.includes('lnz');
    return {
      wgsl: 'inp[i]',
      carry: [7],
      fold: (inp, end) => {
        let acc = 7;
        for (let i = 0; i < end; i++) {
          const v = inp[i] as number;
          acc = lnz ? (v !== 0 ? v : acc) : (acc + v) >>> 0;
        }
        return [acc];
      },
    };
  }
  // x: a head flag (bit 0 of the element); y: the element.
  return {
    wgsl: 'vec2<u32>(inp[i] & 1u, inp[i])',
    carry: [0, 0],
    fold: (inp, end) => {
      let x = 0;
      let y = 0;
      for (let i = 0; i < end; i++) {
        const v = inp[i] as number;
        x = x | (v & 1);
        y = (y + v) >>> 0;
      }
      return [x, y];
    },
  };
}

describe.skipIf(!gpu)('windowedLookback: one value per tile', () => {
  const device = gpu as GpuDevice;
  const sgVariants = device?.features.has('subgroups') ? [true, false] : [false];
  for (const subgroups of sgVariants) {
    for (const { label, layout, combiner, words } of windowedCases) {
      it(`${subgroups ? 'subgroups' : 'one thread'}, ${label}, stalled tiles taken by the fallback`, async () => {
        const w = 64;
        const tileItems = 128;
        const el = elementOf(combiner);
        const V = combiner.wgslType;
        const lanes = V === 'u32' ? 1 : 2;
        for (const [perLane, maxSpins] of [
          [1, 0],
          [3, 2],
        ] as const) {
          const lb = windowedLookback({
            prefix: 'tt',
            layout,
            combiner,
            state: 'state',
            base: '0u',
            tiles: 'TT_TILES',
            carry: 'tt_carry',
            carryOut: 'tt_carry_out',
            subgroups,
            perLane,
            maxSpins,
            fallback: { element: 'tt_gen_at', tileItems, n: 'TT_N' },
          });
          for (const n of [1, 128, 1000, 5000]) {
            const tiles = Math.ceil(n / tileItems);
            const r = rng(n + perLane);
            const inp = Uint32Array.from({ length: n }, () => (r() % 4 === 0 ? 0 : r() % 1000));
            const bits = (v: string) =>
              lanes === 1 ? `outp[${v}] = p;` : `outp[2u * ${v}] = p.x; outp[2u * ${v} + 1u] = p.y;`;
            const code = fragment({
              name: mangle('test_windowed', combiner.name, layout, subgroups, perLane, maxSpins, n),
              deps: [threadIds(subgroups), combiner.combine, ...lb.deps],
              code: `@group(0) @binding(0) var<storage, read> inp: array<u32>;
@group(0) @binding(1) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read_write> outp: array<u32>;
const TT_TILES = ${tiles}u;
const TT_N = ${n}u;
fn tt_carry() -> ${V} { return ${V}(${el.carry.map((x) => `${x}u`).join(', ')}); }
fn tt_carry_out(p: ${V}) { ${bits('TT_TILES')} }
fn tt_gen_at(i: u32) -> ${V} { return ${el.wgsl}; }
${lb.declarations}

${lb.stateFunctions}

${lb.fallback}

${lb.walk}

@compute @workgroup_size(${w}) fn main(${entryParams(subgroups)}) {
${entryPrologue(subgroups)}
  let tile = wg_index;
  // Stalled tiles never publish: their successors' look-backs must take the fallback.
  if (tile % 3u == 1u && tile != TT_TILES - 1u) { return; }
  var total = ${combiner.identity};
  if (ids.sg_id == 0u) { total = tt_tile_reduce(tile, ids.lane, ids.sg_size); }
${lb.call('tile', 'total', 'prefix')}
  if (ids.lid == 0u) { let p = prefix; ${bits('tile')} }
}`,
            });
            const got = await run(device, code, inp, words * tiles, lanes * (tiles + 1), tiles);
            const want: number[] = [];
            const got2: number[] = [];
            for (let t = 0; t <= tiles; t++) {
              if (t < tiles && stalled(t, tiles)) continue;
              want.push(...el.fold(inp, Math.min(n, t * tileItems)));
              got2.push(...got.slice(lanes * t, lanes * (t + 1)));
            }
            expect(got2, `perLane=${perLane} maxSpins=${maxSpins} n=${n}`).toEqual(want);
          }
        }
      });
    }
  }
});

describe.skipIf(!gpu)('slotLookback: many slots per tile', () => {
  const device = gpu as GpuDevice;
  for (const [w, slots] of [
    [16, 16],
    [8, 32],
  ] as const) {
    for (const force of [false, true]) {
      it(`${slots} slots on ${w} threads, window 1 and 3, ${force ? 'fallback forced at every wait' : 'stalled tiles taken by the fallback'}`, async () => {
        const per = slots / w;
        for (const window of [1, 3]) {
          const lb = slotLookback({
            prefix: 'tt',
            state: 'state',
            base: '0u',
            slots,
            perThread: per,
            firstSlot: `ids.lid * ${per}u`,
            tile: 'tile',
            window,
            count: (d) => `inp[tile * ${slots}u + ${d}]`,
            carry: (d) => `(1000u * ${d})`,
            afterPublish: () => '',
            spins: '2u',
            force: `${force}`,
            fallback: {
              comment: "the stalled tile's values, read again.",
              statements: `for (var d = ids.lid; d < ${slots}u; d += ${w}u) { tt_fb[d] = inp[fb * ${slots}u + d]; }
    workgroupBarrier();`,
              count: (d) => `tt_fb[${d}]`,
            },
            finish: (i) => `outp[tile * ${slots}u + d] = acc${i};`,
          });
          for (const tiles of [1, 2, 7, 40]) {
            const r = rng(tiles * 13 + window);
            const inp = Uint32Array.from({ length: tiles * slots }, () => r() % 100);
            const code = fragment({
              name: mangle('test_slots', w, slots, window, force, tiles),
              deps: [threadIds(false)],
              code: `@group(0) @binding(0) var<storage, read> inp: array<u32>;
@group(0) @binding(1) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read_write> outp: array<u32>;
${lb.flags}
${lb.stuck}
var<workgroup> tt_fb: array<u32, ${slots}>;

@compute @workgroup_size(${w}) fn main(${entryParams(false)}) {
${entryPrologue(false)}
  let tile = wg_index;
  if (tile % 3u == 1u && tile != ${tiles - 1}u) { return; }
  ${lb.publish}
  ${lb.walk}
  ${lb.finish}
}`,
            });
            const got = await run(device, code, inp, tiles * slots, tiles * slots, tiles);
            const want: number[] = [];
            const got2: number[] = [];
            for (let t = 0; t < tiles; t++) {
              if (stalled(t, tiles)) continue;
              for (let d = 0; d < slots; d++) {
                let acc = 1000 * d;
                for (let u = 0; u < t; u++) acc += inp[u * slots + d] as number;
                want.push(acc);
                got2.push(got[t * slots + d] as number);
              }
            }
            expect(got2, `window=${window} tiles=${tiles}`).toEqual(want);
          }
        }
      });
    }
  }
});

/** Runs one workgroup of `main` over bindings 0 (inp, as u32 or vec4<u32>) and 1 (out of `outWords`). */
async function runOne(device: GpuDevice, main: WgslFragment, inp: Uint32Array, outWords: number): Promise<number[]> {
  const pipeline = await getPipeline(device, main);
  const a = DeviceArray.from(device, inp);
  const out = DeviceArray.create(device, 'u32', outWords);
  await device.queue.submit('tile loads test', (rec) => {
    const pass = rec.beginPass();
    pass.setPipeline(pipeline);
    const entries = [a, out].map((x, binding) => ({ binding, resource: { buffer: x.buffer } }));
    pass.setBindGroup(0, device.gpu.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries }));
    pass.dispatchWorkgroups(1);
    pass.end();
  });
  const r = Array.from(await out.read());
  a.destroy();
  out.destroy();
  return r;
}

describe.skipIf(!gpu)('tile loads and block discontinuity in one workgroup', () => {
  const device = gpu as GpuDevice;
  const w = 32;
  const k = 8;
  const tile = w * k;
  const FILL = 0xffffffff;
  const sizes = [1, 37, tile - 1, tile];
  const header = (vec: boolean) => `@group(0) @binding(0) var<storage, read> inp: array<${vec ? 'vec4<u32>' : 'u32'}>;
@group(0) @binding(1) var<storage, read_write> outp: array<u32>;`;
  /** The input of n elements padded to a whole tile of vec4s, and what a load of n should give. */
  const data = (n: number) => {
    const inp = new Uint32Array(tile);
    for (let i = 0; i < n; i++) inp[i] = i * 7 + 3;
    return { inp, want: Array.from({ length: tile }, (_, i) => (i < n ? i * 7 + 3 : FILL)) };
  };

  for (const vec of [false, true]) {
    it(`loadRun: ${k} consecutive items per thread, ${vec ? 'vec4' : 'scalar'} reads`, async () => {
      for (const n of sizes) {
        const lines = loadRun({
          items: k,
          type: 'u32',
          reg: (j) => `x${j}`,
          array: 'inp',
          vec,
          base: '0u',
          first: 'b',
          full: 'full',
          n: `${n}u`,
        });
        const main = fragment({
          name: mangle('test_load_run', vec, n),
          deps: [threadIds(false)],
          code: `${header(vec)}
@compute @workgroup_size(${w}) fn main(${entryParams(false)}) {
${entryPrologue(false)}
  let b = ids.lid * ${k}u;
  let full = ${n >= tile};
  ${lines.join('\n  ')}
  ${Array.from({ length: k }, (_, j) => `outp[b + ${j}u] = select(${FILL}u, x${j}, b + ${j}u < ${n}u);`).join('\n  ')}
}`,
        });
        const { inp, want } = data(n);
        expect(await runOne(device, main, inp, tile), `n=${n}`).toEqual(want);
      }
    });
  }

  for (const staged of [false, true]) {
    it(`${staged ? 'loadStaged: blocked items through a workgroup stage' : 'loadStriped: striped items, full-tile fast path'}`, async () => {
      const pos = (j: number) => (staged ? `ids.lid * ${k}u + ${j}u` : `${j * w}u + ids.lid`);
      for (const n of sizes) {
        const load = {
          items: k,
          reg: (j: number) => `x${j}`,
          fill: `${FILL}u`,
          array: 'inp',
          base: '0u',
          pos,
          valid: 'valid',
        };
        const main = fragment({
          name: mangle('test_load_tile', staged, n),
          deps: [threadIds(false)],
          code: `${header(false)}
var<workgroup> stage: array<u32, ${tile}>;
fn tt_put(i: u32, v: u32) { stage[i] = v; }
fn tt_get(i: u32) -> u32 { return stage[i]; }
@compute @workgroup_size(${w}) fn main(${entryParams(false)}) {
${entryPrologue(false)}
  let valid = ${n}u;
  ${staged ? loadStaged({ ...load, threads: `${w}u`, perThread: `${k}u`, put: 'tt_put', get: 'tt_get' }) : loadStriped({ ...load, full: `valid == ${tile}u` })}
  ${Array.from({ length: k }, (_, j) => `outp[${pos(j)}] = x${j};`).join('\n  ')}
}`,
          workgroupBytes: 4 * tile,
        });
        const { inp, want } = data(n);
        expect(await runOne(device, main, inp, tile), `n=${n}`).toEqual(want);
      }
    });
  }

  const shuffles = device?.features.has('subgroups') ? [false, true] : [false];
  for (const edge of ['head', 'tail'] as const) {
    for (const shuffle of edge === 'head' ? shuffles : [false]) {
      it(`${edge}Flags over keys with runs${shuffle ? ', previous key by subgroupShuffleUp' : ''}`, async () => {
        const eq = fragment({ name: 'tt_eq', code: 'fn tt_eq(a: u32, b: u32) -> bool { return a == b; }' });
        for (const n of sizes) {
          const r = rng(n);
          const keys = new Uint32Array(tile);
          for (let i = 0; i < n; i++) keys[i] = i > 0 && r() % 3 !== 0 ? (keys[i - 1] as number) : r() % 5;
          // Past the end the keys repeat the last one: a tail there comes from the range's end alone.
          keys.fill(keys[n - 1] as number, n);
          const flags = {
            items: k,
            key: (j: number) => `ky${j}`,
            ok: (j: number) => `ok${j}`,
            flag: (j: number) => `hd${j}`,
            eq: 'tt_eq',
            keyAt: (i: string) => `inp[${i}]`,
            at: 'b',
          };
          const lines =
            edge === 'head'
              ? headFlags({
                  ...flags,
                  first: 'b == 0u',
                  shuffle: shuffle ? { lane: 'ids.lane', prev: 'kp' } : undefined,
                })
              : tailFlags({ ...flags, last: (j) => `b + ${j + 1}u == ${n}u` });
          const main = fragment({
            name: mangle('test_flags', edge, shuffle, n),
            deps: [threadIds(shuffle), eq],
            code: `${header(false)}
@compute @workgroup_size(${w}) fn main(${entryParams(shuffle)}) {
${entryPrologue(shuffle)}
  let b = ids.lid * ${k}u;
  ${Array.from({ length: k }, (_, j) => `let ok${j} = b + ${j}u < ${n}u;\n  var ky${j} = 0u;\n  if (ok${j}) { ky${j} = inp[b + ${j}u]; }`).join('\n  ')}
  ${lines.join('\n  ')}
  ${Array.from({ length: k }, (_, j) => `outp[b + ${j}u] = select(select(0u, 1u, hd${j}), 7u, !ok${j});`).join('\n  ')}
}`,
          });
          const want = Array.from({ length: tile }, (_, i) =>
            i >= n
              ? 7
              : edge === 'head'
                ? +(i === 0 || keys[i] !== keys[i - 1])
                : +(i === n - 1 || keys[i] !== keys[i + 1]),
          );
          expect(await runOne(device, main, keys, tile), `n=${n}`).toEqual(want);
        }
      });
    }
  }
});
