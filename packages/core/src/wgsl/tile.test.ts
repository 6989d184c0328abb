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
import { gpuForTests } from '../testing/gpu';
import { lastNonZero } from '../testing/ops';
import { fragment, mangle, type WgslFragment } from './fragment';
import { entryParams, entryPrologue, threadIds } from './ids';
import { type Combiner, combinerOf } from './subgroup';
import { type LookbackLayout, slotLookback, windowedLookback } from './tile';

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
  await device.queue.submit('tile test', (rec) => {
    const pass = rec.beginPass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(
      0,
      device.gpu.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: [a, st, out].map((x, binding) => ({ binding, resource: { buffer: x.buffer } })),
      }),
    );
    pass.dispatchWorkgroups(tiles);
    pass.end();
  });
  const r = await out.read();
  for (const x of [a, st, out]) x.destroy();
  return r;
}

/** vec2<u32> combiners for the pair layouts: (x | or +, y +). */
function pairCombiner(countX: boolean): Combiner {
  const name = countX ? 'tt_pair_count' : 'tt_pair_head';
  return {
    name,
    wgslType: 'vec2<u32>',
    bytes: 8,
    identity: 'vec2<u32>(0u, 0u)',
    combine: fragment({
      name,
      code: `fn ${name}(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return vec2<u32>(a.x ${countX ? '+' : '|'} b.x, a.y + b.y); }`,
    }),
  };
}

const windowedCases: { label: string; layout: Exclude<LookbackLayout, 'packed'>; combiner: Combiner; words: number }[] =
  [
    { label: 'split, u32 plus', layout: 'split', combiner: combinerOf(plus, 'u32'), words: 2 },
    { label: 'split, lastNonZero (order kept)', layout: 'split', combiner: combinerOf(lastNonZero, 'u32'), words: 2 },
    { label: 'split-head, (head | head, value +)', layout: 'split-head', combiner: pairCombiner(false), words: 2 },
    { label: 'split-count, (count +, value +)', layout: 'split-count', combiner: pairCombiner(true), words: 4 },
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
  const count = c.name.includes('count');
  // x: a head flag or a count of 1/0 (bit 0 of the element); y: the element.
  return {
    wgsl: 'vec2<u32>(inp[i] & 1u, inp[i])',
    carry: [0, 0],
    fold: (inp, end) => {
      let x = 0;
      let y = 0;
      for (let i = 0; i < end; i++) {
        const v = inp[i] as number;
        x = count ? x + (v & 1) : x | (v & 1);
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
