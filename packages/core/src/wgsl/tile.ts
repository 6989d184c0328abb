/**
 * Tile level (layer 3 of the GPU code): what a workgroup does with a whole tile, shared by the
 * engines. Generators of WGSL text that the engines splice into their kernels (names and variables
 * are parameters, so the text is the engine's own):
 *
 *  - Decoupled look-back with fallback (`windowedLookback`, `slotLookback`): ONE protocol. Each tile
 *    has a state (per value slot) that is NOT_READY (0) until its owner publishes its AGGREGATE (1),
 *    then its INCLUSIVE prefix (2). A workgroup publishes its aggregate, walks back over its
 *    predecessors (folding aggregates until it meets an inclusive prefix), and publishes its own
 *    inclusive prefix; tile 0 publishes its inclusive prefix from the carry at once. A predecessor
 *    still NOT_READY after a spin budget of polls (reset whenever the walk moves) is not waited for:
 *    the waiting workgroup computes that tile's aggregate itself from the input (the fallback) and
 *    walks on before it, so the look-back is safe without forward-progress guarantees (a workgroup
 *    never waits on one that may not be scheduled). States are cleared by the host (or a previous
 *    pass) before use. Two state layouts, by what a value needs:
 *      - split words (values of 32 bits: scans): each atomic<u32> word holds the flag in bits 16..17
 *        beside 16 value bits, `(flag << 16) | half`; the owner writes the words with atomicStore
 *        and a reader takes the value only when every word carries the same non-zero flag. Each flag
 *        is published once, so equal flags mean one publication: this needs nothing beyond
 *        per-location coherence of relaxed atomics, no ordering between locations. The fallback is
 *        not published (others may compute the same value), so a state only holds what its owner
 *        wrote.
 *      - packed words (counts below 2^30: radix digits): one word per slot, the flag in bits 30..31
 *        above the count, published with atomicMax, which never lowers a flag; the fallback
 *        publishes what it computed (the same counts the owner publishes).
 *    Two walk strategies over that protocol:
 *      - `windowedLookback`: one value per tile. One subgroup (thread 0 without subgroups) reads a
 *        window of subgroup size x `perLane` predecessors per step and folds them in order with the
 *        engine's combiner; the fallback reduces a stalled tile's elements in that subgroup.
 *      - `slotLookback`: many slots per tile (radix digits). Each thread walks its slots' chains on
 *        its own, `window` slots loaded per step; a thread whose slot stays NOT_READY records the
 *        tile, and the whole workgroup computes the nearest such tile's slot values (the engine's
 *        statements), publishes them and walks on. Each round unsticks at least one thread.
 *  - Tile loads (`loadRun`, `loadStriped`, `loadStaged`): a thread's consecutive items (vec4 or
 *    scalar reads), striped items with a full-tile fast path, or blocked items read striped
 *    (coalesced) through a workgroup stage; every load issued before any value is used, into named
 *    registers (private arrays indexed in loops go to local memory on NVIDIA).
 *  - Block discontinuity (`headFlags`, `tailFlags`): flags of items whose key differs from the
 *    previous (next) item's, across threads and tiles from neighbouring keys, or with a subgroup
 *    shuffle where a lane's previous item is the lane before's last.
 */

import type { WgslFragment } from './fragment';
import { type Combiner, subgroupReduce } from './subgroup';

// ---- decoupled look-back: the protocol

/** Look-back flag of a tile whose owner has published nothing yet. */
export const LOOKBACK_NOT_READY = 0;
/** Look-back flag of a published tile aggregate. */
export const LOOKBACK_AGGREGATE = 1;
/** Look-back flag of a published inclusive prefix (carry-in and every tile up to this one). */
export const LOOKBACK_INCLUSIVE = 2;

/**
 * How a tile's look-back state is packed (see the module comment):
 *  - 'split': a 4-byte value over two words (16 value bits each beside the flag).
 *  - 'split-head': `vec2<u32>(head, value bits)` (scans by key): as 'split', the head flag (bit 0 of
 *    `.x`) in bit 18 of the first word.
 *  - 'packed': one word per slot, the flag in bits 30..31 above a 30-bit count.
 */
export type LookbackLayout = 'split' | 'split-head' | 'packed';

/**
 * The WGSL constants of the flags under `prefix` (upper-cased): split layouts declare the flag values
 * `P_AGG`, `P_INCL` (shifted when written); the packed layout declares the flag bits `P_AGG`, `P_PRE`
 * (the inclusive prefix) and the count mask `P_VALUE`.
 */
export function lookbackFlags(prefix: string, layout: LookbackLayout): string {
  const P = prefix.toUpperCase();
  if (layout !== 'packed') return `const ${P}_AGG = ${LOOKBACK_AGGREGATE}u;\nconst ${P}_INCL = ${LOOKBACK_INCLUSIVE}u;`;
  const bits = (f: number) => `0x${((f << 30) >>> 0).toString(16)}u`;
  return `const ${P}_AGG: u32 = ${bits(LOOKBACK_AGGREGATE)};
const ${P}_PRE: u32 = ${bits(LOOKBACK_INCLUSIVE)};
const ${P}_VALUE: u32 = 0x${(2 ** 30 - 1).toString(16)}u;`;
}

/**
 * `fn <prefix>_publish(t: u32, flag: u32, v: V)` and `fn <prefix>_read(t: u32) -> vec2<u32> | vec3<u32>`
 * (flag, value bits[, head flag or count]; flag 0 unless every word carries the same flag) over the
 * states of tiles `base + t` in `state` (atomic<u32>), for a split layout.
 */
function splitStateFunctions(
  prefix: string,
  layout: Exclude<LookbackLayout, 'packed'>,
  V: string,
  state: string,
  base: string,
): string {
  if (layout === 'split-head') {
    return `/** By key: the pair's head flag rides in bit 18 of the first word. */
fn ${prefix}_publish(t: u32, flag: u32, v: vec2<u32>) {
  let bits = v.y;
  let s = 2u * (${base} + t);
  atomicStore(&${state}[s], (flag << 16u) | (bits & 0xffffu) | ((v.x & 1u) << 18u));
  atomicStore(&${state}[s + 1u], (flag << 16u) | (bits >> 16u));
}

/** (flag, value bits, head flag) of tile t; flag 0 (not ready) unless both halves carry the same flag. */
fn ${prefix}_read(t: u32) -> vec3<u32> {
  let s = 2u * (${base} + t);
  let a = atomicLoad(&${state}[s]);
  let b = atomicLoad(&${state}[s + 1u]);
  let fa = (a >> 16u) & 3u;
  let f = select(0u, fa, fa == (b >> 16u));
  return vec3<u32>(f, (a & 0xffffu) | (b << 16u), (a >> 18u) & 1u);
}`;
  }
  return `fn ${prefix}_publish(t: u32, flag: u32, v: ${V}) {
  let bits = bitcast<u32>(v);
  let s = 2u * (${base} + t);
  atomicStore(&${state}[s], (flag << 16u) | (bits & 0xffffu));
  atomicStore(&${state}[s + 1u], (flag << 16u) | (bits >> 16u));
}

/** (flag, value bits) of tile t; flag 0 (not ready) unless both halves carry the same flag. */
fn ${prefix}_read(t: u32) -> vec2<u32> {
  let s = 2u * (${base} + t);
  let a = atomicLoad(&${state}[s]);
  let b = atomicLoad(&${state}[s + 1u]);
  let f = select(0u, a >> 16u, (a >> 16u) == (b >> 16u));
  return vec2<u32>(f, (a & 0xffffu) | (b << 16u));
}`;
}

// ---- decoupled look-back: one value per tile, windowed subgroup walk

export interface WindowedLookbackParams {
  /** Prefix of the WGSL names: `<prefix>_lookback`, `_publish`, `_read`, `_tile_reduce`, `_prefix`, flags. */
  readonly prefix: string;
  /** The state layout: 'split' for a 4-byte value type, 'split-head' for (head, value) pairs. */
  readonly layout: Exclude<LookbackLayout, 'packed'>;
  /** The value type V, its identity and combine (in tile order: combine(earlier, later)). */
  readonly combiner: Combiner;
  /** The states: an `array<atomic<u32>>` and the WGSL expression of tile 0's state index. */
  readonly state: string;
  readonly base: string;
  /** WGSL expression: the number of tiles (the last one carries out). */
  readonly tiles: string;
  /** `fn <carry>() -> V`: the carry into tile 0; `fn <carryOut>(v: V)`: the last tile's inclusive prefix. */
  readonly carry: string;
  readonly carryOut: string;
  /** Subgroup built-ins (else one thread walks: a window of `perLane` predecessors). */
  readonly subgroups: boolean;
  /** Predecessors each lane polls per step: the window is subgroup size x this. */
  readonly perLane: number;
  /** Polls of a NOT_READY predecessor before the fallback. */
  readonly maxSpins: number;
  /**
   * The fallback's input: `fn <element>(i: u32) -> V` the value of element i, tiles of `tileItems`
   * elements, elements below the WGSL expression `n` only.
   */
  readonly fallback: { readonly element: string; readonly tileItems: number; readonly n: string };
  /**
   * The caller published the tile's state itself, earlier (its aggregate, or its inclusive prefix
   * where the aggregate alone decides it, e.g. a segmented pair with a head): the walk does not
   * publish the aggregate again. Its own inclusive publication at the end then repeats the same
   * words wherever the caller published an inclusive prefix, which readers cannot tell apart.
   */
  readonly published?: boolean;
}

export interface WindowedLookback {
  /** Module scope: the flag constants and the workgroup variable the prefix is broadcast through. */
  readonly declarations: string;
  /** `<prefix>_publish` and `<prefix>_read` (the state layout). */
  readonly stateFunctions: string;
  /** `fn <prefix>_tile_reduce(t, lane, sg) -> V`: the fallback, tile t's aggregate reduced by the subgroup. */
  readonly fallback: string;
  /**
   * `fn <prefix>_lookback(t, agg, lane, sg) -> V`, run by one subgroup: publishes tile t's aggregate,
   * finds its exclusive prefix (carry included), publishes the inclusive prefix, returns the exclusive.
   */
  readonly walk: string;
  /** Fragments the functions call (the combiner's combine, its ordered subgroup reduce). */
  readonly deps: readonly WgslFragment[];
  /**
   * Statements of `main` (workgroup-uniform control flow, `ids` in scope): the look-back of tile
   * `tile` with aggregate `agg` run by subgroup 0, its result broadcast as `let <result>`.
   */
  call(tile: string, agg: string, result: string): string;
}

/**
 * The look-back of one value per tile (scans): a windowed walk by one subgroup. Per step lane i
 * reads `perLane` consecutive predecessors of the window before `cur` (tiles before 0 stand for the
 * carry, inclusive). When every predecessor from the nearest inclusive one on is ready, the window
 * is folded in order and the walk ends or moves a window back; when one is still not ready after
 * `maxSpins` polls, the ready ones after the last not-ready tile are folded and that tile is reduced
 * from the input by the subgroup (the fallback), and the walk continues before it.
 * Cost: 4 bytes x words per predecessor polled; a fallback re-reads one tile.
 */
export function windowedLookback(p: WindowedLookbackParams): WindowedLookback {
  const { prefix: P, combiner, perLane: M } = p;
  const { wgslType: V, identity: id } = combiner;
  const comb = combiner.combine.name;
  const tile = p.fallback.tileItems;
  const sgRed = p.subgroups ? subgroupReduce({ combiner }) : undefined;
  const sgMax = (e: string) => (p.subgroups ? `subgroupMax(${e})` : `(${e})`);
  const sgFold = (e: string) => (sgRed ? `${sgRed.name}(${e}, lane, sg)` : `(${e})`);
  const AGG = `${P.toUpperCase()}_AGG`;
  const INCL = `${P.toUpperCase()}_INCL`;
  const wr: string[] = ['var ip = 0u;', 'var np = 0u;'];
  const fw: string[] = [];
  const fa: string[] = [];
  const fromState = p.layout === 'split' ? `bitcast<${V}>(s.y)` : 'vec2<u32>(s.z, s.y)';
  for (let q = 0; q < M; q++) {
    wr.push(`var f${q} = ${INCL};`, `var v${q} = carry;`);
    wr.push(`if (t0 + ${q} >= 0) { let s = ${P}_read(u32(t0 + ${q})); f${q} = s.x; v${q} = ${fromState}; }`);
    wr.push(
      `ip = select(ip, ${q + 1}u, f${q} == ${INCL});`,
      `np = select(np, ${q + 1}u, f${q} == ${LOOKBACK_NOT_READY}u);`,
    );
    fw.push(`lf = select(lf, ${comb}(lf, v${q}), lane + 1u > m || (lane + 1u == m && ${q + 1}u >= ip));`);
    fa.push(`af = select(af, ${comb}(af, v${q}), lane > j || (lane == j && ${q + 1}u > npj));`);
  }
  const windowRead = wr.join('\n    ');
  const foldWindow = fw.join('\n      ');
  const foldAfter = fa.join('\n      ');
  const fallback = `/** Fallback: the aggregate of tile t computed from the input by this subgroup, in element order. */
fn ${P}_tile_reduce(t: u32, lane: u32, sg: u32) -> ${V} {
  let per = ${tile}u / sg;
  let base = t * ${tile}u + lane * per;
  var acc = ${id};
  for (var e = 0u; e < per; e++) {
    let i = base + e;
    if (i < ${p.fallback.n}) { acc = ${comb}(acc, ${p.fallback.element}(i)); }
  }
  return ${sgFold('acc')};
}`;
  const walk = `/**
 * Run by one subgroup (thread 0 without subgroups): publishes the tile's aggregate, finds its
 * exclusive prefix (carry-in included), publishes the inclusive prefix, returns the exclusive one.
 */
fn ${P}_lookback(t: u32, agg: ${V}, lane: u32, sg: u32) -> ${V} {
  let carry = ${p.carry}();
  if (t == 0u) {
    let incl = ${comb}(carry, agg);
    if (lane == 0u) {
      ${P}_publish(0u, ${INCL}, incl);
      if (${p.tiles} == 1u) { ${p.carryOut}(incl); }
    }
    return carry;
  }
  ${p.published ? '// The caller published the aggregate.' : `if (lane == 0u) { ${P}_publish(t, ${AGG}, agg); }`}
  var prefix = ${id};
  var cur = t;
  var spins = 0u;
  loop {
    // Window: tiles [cur - sg*${M}, cur); lane i holds tiles cur - sg*${M} + i*${M} + q (q < ${M}), in
    // order; tiles < 0 stand for the carry (inclusive). ip/np: 1 + index of the lane's last
    // inclusive / not-ready tile (0: none).
    let t0 = i32(cur) - i32(sg * ${M}u) + i32(lane * ${M}u);
    ${windowRead}
    let m = ${sgMax('select(0u, lane + 1u, ip > 0u)')};
    let blocked = ${sgMax('select(0u, lane + 1u, np > ip && lane + 1u >= m)')};
    if (blocked == 0u) {
      // Every tile from the nearest inclusive one on is ready: fold them in order.
      var lf = ${id};
      ${foldWindow}
      let win = ${sgFold('lf')};
      prefix = ${comb}(win, prefix);
      if (m > 0u) { break; }
      cur -= sg * ${M}u;
      spins = 0u;
      continue;
    }
    spins += 1u;
    if (spins > ${p.maxSpins}u) {
      // The last not-ready tile is still not ready: fold the ready ones after it, reduce it here.
      let j = blocked - 1u;
      let npj = ${p.subgroups ? 'subgroupShuffle(np, j)' : 'np'};
      var af = ${id};
      ${foldAfter}
      let after = ${sgFold('af')};
      let stuck = cur - sg * ${M}u + j * ${M}u + npj - 1u;
      let mine = ${P}_tile_reduce(stuck, lane, sg);
      prefix = ${comb}(${comb}(mine, after), prefix);
      cur = stuck;
      spins = 0u;
    }
  }
  let incl = ${comb}(prefix, agg);
  if (lane == 0u) {
    ${P}_publish(t, ${INCL}, incl);
    if (t == ${p.tiles} - 1u) { ${p.carryOut}(incl); }
  }
  return prefix;
}`;
  return {
    declarations: `${lookbackFlags(P, p.layout)}\nvar<workgroup> ${P}_prefix: ${V};`,
    stateFunctions: splitStateFunctions(P, p.layout, V, p.state, p.base),
    fallback,
    walk,
    deps: sgRed ? [combiner.combine, sgRed] : [combiner.combine],
    call: (t, agg, result) => `  if (ids.sg_id == 0u) {
    let pfx = ${P}_lookback(${t}, ${agg}, ids.lane, ids.sg_size);
    if (ids.lane == 0u) { ${P}_prefix = pfx; }
  }
  let ${result} = workgroupUniformLoad(&${P}_prefix);`,
  };
}

// ---- decoupled look-back: many slots per tile, per-slot walk

export interface SlotLookbackParams {
  /** Prefix of the WGSL names: the flags (`P_AGG`, `P_PRE`, `P_VALUE`) and `<prefix>_stuck`. */
  readonly prefix: string;
  /** The states (`array<atomic<u32>>`, packed layout): tile t's slot d at `base + t * slots + d`. */
  readonly state: string;
  readonly base: string;
  /** Slots per tile (every thread owns `perThread` consecutive ones from `firstSlot`). */
  readonly slots: number;
  readonly perThread: number;
  /** WGSL expression: the thread's first slot. */
  readonly firstSlot: string;
  /** WGSL name: this workgroup's tile (workgroup-uniform). */
  readonly tile: string;
  /** Predecessor slots each step loads at once. */
  readonly window: number;
  /** WGSL expression (slot `d` in scope): this tile's value of slot d. */
  readonly count: (d: string) => string;
  /** WGSL expression: the carry into tile 0 of slot d (its inclusive prefix is carry + count). */
  readonly carry: (d: string) => string;
  /** Statements run per slot after its aggregate is published (`d` in scope), e.g. clearing another table. */
  readonly afterPublish: (d: string) => string;
  /** WGSL expressions: polls of a NOT_READY slot before the fallback; a switch forcing the fallback at every wait (tests). */
  readonly spins: string;
  readonly force: string;
  /**
   * The fallback: workgroup-uniform statements (barriers allowed, `fb` in scope) that compute tile
   * fb's slot values, `count(d)` reading slot d's after them; `comment` says what they do.
   */
  readonly fallback: { readonly comment: string; readonly statements: string; readonly count: (d: string) => string };
  /** Statements run per slot once its exclusive prefix `acc{i}` is known (`d` in scope). */
  readonly finish: (i: number) => string;
}

export interface SlotLookback {
  /** Module scope: the flag constants. */
  readonly flags: string;
  /** Module scope: the workgroup variable naming the nearest stuck tile (+1). */
  readonly stuck: string;
  /**
   * Statements of `main`: `let d0` (the first slot) and per slot i `acc{i}` (its exclusive prefix:
   * the carry on tile 0, else 0 until the walk ends), `mine{i}` (this tile's count), `done{i}`,
   * `pos{i}`; publishes the slots' aggregates (tile 0: inclusive prefixes).
   */
  readonly publish: string;
  /** Statements of `main`: the walks with the fallback, until every slot's `acc{i}` is its prefix. */
  readonly walk: string;
  /** Statements of `main`: publishes the inclusive prefixes and runs `finish` per slot. */
  readonly finish: string;
}

/**
 * The look-back of many slots per tile (radix digit counts, packed layout): each thread walks its
 * slots' chains back on its own (no barriers), loading `window` predecessor slots at once and
 * consuming them nearest first (AGGREGATEs add up, an INCLUSIVE prefix ends the walk, NOT_READY
 * stops). A slot still NOT_READY after the spin budget leaves its thread stuck there (the tile is
 * recorded with atomicMax); then the workgroup computes the nearest stuck tile's values (the
 * fallback statements) and publishes them (atomicMax: never lowers a flag), the threads stuck there
 * take them, and every unfinished thread walks on. Each round unsticks at least one thread, so the
 * loop ends even if a predecessor never runs. Counts must stay below 2^30.
 * Cost: 4 bytes per slot polled (a window per step); a fallback recomputes one tile.
 */
export function slotLookback(p: SlotLookbackParams): SlotLookback {
  const window = p.window;
  const P = p.prefix.toUpperCase();
  const AGG = `${P}_AGG`;
  const PRE = `${P}_PRE`;
  const VALUE = `${P}_VALUE`;
  const stuck = `${p.prefix}_stuck`;
  const S = `${p.slots}u`;
  const t = p.tile;
  const at = (tile: string) => `${p.state}[${p.base} + ${tile === '0' ? '' : `${tile} * ${S} + `}d]`;
  const publish = `let d0 = ${p.firstSlot};
  ${unrolled(
    p.perThread,
    (i) => `var acc${i} = 0u;
  var done${i} = true;
  var mine${i} = 0u;
  var pos${i} = ${t};
  if (d0 + ${i}u < ${S}) {
    let d = d0 + ${i}u;
    mine${i} = ${p.count('d')};
    if (${t} == 0u) {
      acc${i} = ${p.carry('d')};
      atomicMax(&${at('0')}, ${PRE} | (acc${i} + mine${i}));
    } else {
      done${i} = false;
      atomicMax(&${at(t)}, ${AGG} | mine${i});
    }
    ${p.afterPublish('d')}
  }`,
    '\n  ',
  )}`;
  const walkSlot = (i: number) => `{
      var spins = 0u;
      let d = d0 + ${i}u;
      loop {
        if (done${i}) { break; }
        let top = pos${i};
        ${unrolled(window, (x) => `var w${x} = 0u;\n        if (${x}u < top) { w${x} = atomicLoad(&${at(`(top - ${x + 1}u)`)}); }`, '\n        ')}
        if (force) { ${unrolled(window, (x) => `w${x} = 0u;`, ' ')} }
        var blocked = false;
        ${unrolled(
          window,
          (x) => `if (!done${i} && !blocked && ${x}u < top) {
          if ((w${x} & ${PRE}) != 0u) { acc${i} += w${x} & ${VALUE}; done${i} = true; }
          else if ((w${x} & ${AGG}) != 0u) { acc${i} += w${x} & ${VALUE}; pos${i} = top - ${x + 1}u; }
          else { blocked = true; }
        }`,
          '\n        ',
        )}
        if (done${i}) { break; }
        if (pos${i} != top) {
          spins = 0u;
        } else {
          spins += 1u;
          if (spins > spin_limit) {
            atomicMax(&${stuck}, pos${i});
            break;
          }
        }
      }
    }`;
  const walk = `let force = ${p.force};
  let spin_limit = select(${p.spins}, 0u, force);
  loop {
    if (${t} == 0u) { break; }
    ${unrolled(p.perThread, walkSlot, '\n    ')}
    let stuck = workgroupUniformLoad(&${stuck});
    if (stuck == 0u) { break; }
    // Fallback: ${p.fallback.comment}
    let fb = stuck - 1u;
    if (ids.lid == 0u) { atomicStore(&${stuck}, 0u); }
    ${p.fallback.statements}
    ${unrolled(
      p.perThread,
      (i) => `if (d0 + ${i}u < ${S}) {
      let d = d0 + ${i}u;
      let c = ${p.fallback.count('d')};
      let here = !done${i} && pos${i} - 1u == fb;
      if (fb == 0u) {
        let pre = ${p.carry('d')} + c;
        atomicMax(&${at('0')}, ${PRE} | pre);
        if (here) { acc${i} += pre; done${i} = true; }
      } else {
        atomicMax(&${at('fb')}, ${AGG} | c);
        if (here) { acc${i} += c; pos${i} = fb; }
      }
    }`,
      '\n    ',
    )}
  }`;
  const finish = unrolled(
    p.perThread,
    (i) => `if (d0 + ${i}u < ${S}) {
    let d = d0 + ${i}u;
    if (${t} != 0u) { atomicMax(&${at(t)}, ${PRE} | (acc${i} + mine${i})); }
    ${p.finish(i)}
  }`,
    '\n  ',
  );
  return {
    flags: lookbackFlags(p.prefix, 'packed'),
    stuck: `var<workgroup> ${stuck}: atomic<u32>;`,
    publish,
    walk,
    finish,
  };
}

// ---- tile loads

export interface RunLoadParams {
  /** Consecutive items the thread holds, into registers `reg(j)` of WGSL type `type` (declared here). */
  readonly items: number;
  readonly type: string;
  readonly reg: (j: number) => string;
  /**
   * The array: of vec4s when `vec` (items % 4 == 0; the thread's first item and `base` on 16-byte
   * boundaries), else of scalars; `base` the WGSL expression of element 0's index in it.
   */
  readonly array: string;
  readonly vec: boolean;
  readonly base: string;
  /** WGSL expression: the index of the thread's first item (from `base`). */
  readonly first: string;
  /** WGSL expressions: the tile is full (no bounds checks), and the number of elements. */
  readonly full: string;
  readonly n: string;
}

/**
 * Statements loading a thread's run of consecutive items (a blocked arrangement, or one row of a
 * striped one): declarations, then every load (vec4: one per 4 items, each only when its first item
 * exists; scalar: each item that exists), so all are issued before any value is used.
 */
export function loadRun(p: RunLoadParams): string[] {
  const lines: string[] = [];
  for (let j = 0; j < p.items; j++) lines.push(`var ${p.reg(j)}: ${p.type};`);
  if (p.vec) {
    for (let q = 0; q < p.items / 4; q++) {
      const e = (c: number) => p.reg(4 * q + c);
      lines.push(
        `if (${p.full} || ${p.first} + ${4 * q}u < ${p.n}) { let a = ${p.array}[(${p.base} + ${p.first}) / 4u + ${q}u]; ${e(0)} = a.x; ${e(1)} = a.y; ${e(2)} = a.z; ${e(3)} = a.w; }`,
      );
    }
  } else {
    for (let j = 0; j < p.items; j++) {
      lines.push(
        `if (${p.full} || ${p.first} + ${j}u < ${p.n}) { ${p.reg(j)} = ${p.array}[${p.base} + ${p.first} + ${j}u]; }`,
      );
    }
  }
  return lines;
}

export interface TileLoadParams {
  /** Items per thread, into registers `reg(j)` declared here as `fill` (their value past the end). */
  readonly items: number;
  readonly reg: (j: number) => string;
  readonly fill: string;
  /** The array and the WGSL expression of the tile's first element in it. */
  readonly array: string;
  readonly base: string;
  /** WGSL expression: the tile position of the thread's item j. */
  readonly pos: (j: number) => string;
  /** WGSL expression: the number of elements in this tile. */
  readonly valid: string;
}

/**
 * Statements (at the top level of `main`) loading items at striped positions `pos(j)` (neighbouring
 * threads at neighbouring positions): unchecked when `full` (a WGSL bool) holds, else each item
 * below `valid`.
 */
export function loadStriped(p: TileLoadParams & { readonly full: string }): string {
  const at = (j: number) => `${p.reg(j)} = ${p.array}[${p.base} + ${p.pos(j)}];`;
  return `${unrolled(p.items, (j) => `var ${p.reg(j)} = ${p.fill};`, '\n  ')}
  if (${p.full}) {
    ${unrolled(p.items, at, '\n    ')}
  } else {
    ${unrolled(p.items, (j) => `if (${p.pos(j)} < ${p.valid}) { ${at(j)} }`, '\n    ')}
  }`;
}

/**
 * Statements (at the top level of `main`, workgroup-uniform: barriers) loading items at blocked
 * positions `pos(j)` through a workgroup stage: the tile is read striped (coalesced) into the stage
 * with `fn put(i: u32, v: u32)`, then each thread reads its items back with `fn get(i: u32) -> u32`.
 * `threads` and `perThread` are WGSL expressions of the workgroup size and items per thread.
 */
export function loadStaged(
  p: TileLoadParams & {
    readonly threads: string;
    readonly perThread: string;
    readonly put: string;
    readonly get: string;
  },
): string {
  return `${unrolled(p.items, (j) => `var ${p.reg(j)} = ${p.fill};`, '\n  ')}
  workgroupBarrier();
  for (var j = 0u; j < ${p.perThread}; j++) {
    let q = j * ${p.threads} + ids.lid;
    if (q < ${p.valid}) { ${p.put}(q, ${p.array}[${p.base} + q]); }
  }
  workgroupBarrier();
  ${unrolled(p.items, (j) => `if (${p.pos(j)} < ${p.valid}) { ${p.reg(j)} = ${p.get}(${p.pos(j)}); }`, '\n  ')}
  workgroupBarrier();`;
}

// ---- block discontinuity

export interface DiscontinuityParams {
  /** A thread's consecutive items: the registers of item j's key and of whether it exists (a bool). */
  readonly items: number;
  readonly key: (j: number) => string;
  readonly ok: (j: number) => string;
  /** The register declared with item j's flag. */
  readonly flag: (j: number) => string;
  /** `fn <eq>(a: K, b: K) -> bool`: keys equal (no discontinuity). */
  readonly eq: string;
  /** WGSL expression of the key at index i of the keys' array; `at`: the index of item 0's key there. */
  readonly keyAt: (i: string) => string;
  readonly at: string;
}

/**
 * Head flags (an item starts a run): item j when it exists and its key differs from item j - 1's;
 * item 0 when `first` (a WGSL bool: it starts the range) or its key differs from the key before,
 * read from the keys, or with `shuffle` (subgroup rows: a lane's previous key is the lane before's
 * last item) taken by `subgroupShuffleUp` into `shuffle.prev`, which only `shuffle.lane` 0 reads.
 */
export function headFlags(
  p: DiscontinuityParams & {
    readonly first: string;
    readonly shuffle?: { readonly lane: string; readonly prev: string };
  },
): string[] {
  const out: string[] = [];
  const [k0, ok0, h0] = [p.key(0), p.ok(0), p.flag(0)];
  const before = p.keyAt(`${p.at} - 1u`);
  if (p.shuffle) {
    const kp = p.shuffle.prev;
    out.push(
      `var ${kp} = subgroupShuffleUp(${p.key(p.items - 1)}, 1u);`,
      `if (${p.shuffle.lane} == 0u && ${ok0} && !(${p.first})) { ${kp} = ${before}; }`,
      `let ${h0} = ${ok0} && (${p.first} || !${p.eq}(${kp}, ${k0}));`,
    );
  } else {
    out.push(`var ${h0} = false;`, `if (${ok0}) { ${h0} = ${p.first} || !${p.eq}(${before}, ${k0}); }`);
  }
  for (let j = 1; j < p.items; j++) {
    out.push(`let ${p.flag(j)} = ${p.ok(j)} && !${p.eq}(${p.key(j - 1)}, ${p.key(j)});`);
  }
  return out;
}

/**
 * Tail flags (an item ends a run): item j when it exists and `last(j)` (a WGSL bool: it ends the
 * range) or its key differs from the next key, read from the keys.
 */
export function tailFlags(p: DiscontinuityParams & { readonly last: (j: number) => string }): string[] {
  const out: string[] = [];
  for (let j = 0; j < p.items; j++) {
    const h = p.flag(j);
    out.push(
      `var ${h} = false;`,
      `if (${p.ok(j)}) { ${h} = ${p.last(j)} || !${p.eq}(${p.key(j)}, ${p.keyAt(`${p.at} + ${j + 1}u`)}); }`,
    );
  }
  return out;
}

/**
 * `n` pieces of WGSL from `f(j)`, joined by `sep`: code unrolled into named registers (kernels keep
 * per-item values in registers; private arrays indexed in loops go to local memory on NVIDIA).
 */
export function unrolled(n: number, f: (j: number) => string, sep = '\n  '): string {
  return Array.from({ length: n }, (_, j) => f(j)).join(sep);
}
