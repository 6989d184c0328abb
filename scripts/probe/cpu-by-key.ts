/**
 * CPU by-key timings beside plain JS loops (docs/benchmarks/cpu-by-key.md): reduceByKey,
 * uniqueByKey, inclusiveScanByKey and exclusiveScanByKey of u32 values over u32 keys i >> 4 (runs
 * of 16), on seq (outputs of n/16 and of n elements) and par (plain and allocShared arrays).
 * Rounds are interleaved (every variant once per round, in turn) and each variant's median over
 * the rounds is reported, with its ratio to the plain loop of the same algorithm.
 *
 * Run bundled under plain node (tsx skews thread timings; docs/benchmarks/cpu-catalogue-par-2026-11-24b.md):
 *   esbuild scripts/probe/cpu-by-key.ts --bundle --platform=node --format=esm --outfile=/tmp/p.mjs --external:webgpu
 *   node /tmp/p.mjs [log2 sizes, default 20,22,24] [rounds, default 15] [algorithms] [runs: 16 (default) | r8]
 * Runs `r8`: random lengths 1..8 (keys still ascending); the short outputs then hold exactly the runs.
 */
import { exclusiveScanByKey, inclusiveScanByKey, reduceByKey, uniqueByKey } from '../../packages/algorithms/src/index';
import { allocShared, defaultPool, execution } from '../../packages/policies/src/index';

const sizes = (process.argv[2] ?? '20,22,24').split(',').map(Number);
const rounds = Number(process.argv[3] ?? 15);
const only = process.argv[4]?.split(',');
const randomRuns = process.argv[5] === 'r8';

type Variant = { name: string; run: () => unknown };

function keysOf(n: number, shared: boolean): Uint32Array {
  const k = shared ? (allocShared('u32', n) as Uint32Array) : new Uint32Array(n);
  if (!randomRuns) for (let i = 0; i < n; i++) k[i] = i >>> 4;
  else {
    let s = 777;
    let key = 0;
    let left = 0;
    for (let i = 0; i < n; i++) {
      if (left === 0) {
        key++;
        s = (Math.imul(s, 1103515245) + 12345) >>> 0;
        left = 1 + (s >>> 29);
      }
      k[i] = key;
      left--;
    }
  }
  return k;
}

function valuesOf(n: number, shared: boolean): Uint32Array {
  const v = shared ? (allocShared('u32', n) as Uint32Array) : new Uint32Array(n);
  let s = 12345;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    v[i] = s >>> 8;
  }
  return v;
}

function median(a: number[]): number {
  const s = [...a].sort((x, y) => x - y);
  return s[s.length >> 1] as number;
}

/**
 * The plain loops (two forms of each where they differ), over u32 keys and values passed as
 * arguments: what a function over any arrays gets. (A closure over arrays that V8 sees as constants,
 * the only instance of its function, can run 1.5-2x faster: TurboFan then specializes it on the
 * arrays; the bench's baselines get that at the first size they run.)
 */
function loops(k: Uint32Array, v: Uint32Array, ko: Uint32Array, vo: Uint32Array, out: Uint32Array) {
  const L = plainLoops();
  return Object.fromEntries(Object.entries(L).map(([name, f]) => [name, () => f(k, v, ko, vo, out)])) as {
    [K in keyof typeof L]: () => unknown;
  };
}

function plainLoops() {
  return {
    reduceByKey: (k: Uint32Array, v: Uint32Array, ko: Uint32Array, vo: Uint32Array, _out: Uint32Array) => {
      const n = k.length;
      let r = -1;
      for (let i = 0; i < n; i++) {
        if (i === 0 || k[i] !== k[i - 1]) {
          r++;
          ko[r] = k[i] as number;
          vo[r] = v[i] as number;
        } else vo[r] = ((vo[r] as number) + (v[i] as number)) >>> 0;
      }
      return r + 1;
    },
    reduceByKeyAcc: (k: Uint32Array, v: Uint32Array, ko: Uint32Array, vo: Uint32Array, _out: Uint32Array) => {
      const n = k.length;
      // Accumulator in a local, stored once per run.
      if (n === 0) return 0;
      let r = 0;
      let key = k[0] as number;
      let acc = v[0] as number;
      for (let i = 1; i < n; i++) {
        const q = k[i] as number;
        if (q !== key) {
          ko[r] = key;
          vo[r] = acc;
          r++;
          key = q;
          acc = v[i] as number;
        } else acc = (acc + (v[i] as number)) >>> 0;
      }
      ko[r] = key;
      vo[r] = acc;
      return r + 1;
    },
    uniqueByKey: (k: Uint32Array, v: Uint32Array, ko: Uint32Array, vo: Uint32Array, _out: Uint32Array) => {
      const n = k.length;
      let r = 0;
      for (let i = 0; i < n; i++) {
        if (i === 0 || k[i] !== k[i - 1]) {
          ko[r] = k[i] as number;
          vo[r] = v[i] as number;
          r++;
        }
      }
      return r;
    },
    uniqueByKeyPrev: (k: Uint32Array, v: Uint32Array, ko: Uint32Array, vo: Uint32Array, _out: Uint32Array) => {
      const n = k.length;
      if (n === 0) return 0;
      let prev = k[0] as number;
      ko[0] = prev;
      vo[0] = v[0] as number;
      let r = 1;
      for (let i = 1; i < n; i++) {
        const q = k[i] as number;
        if (q !== prev) {
          ko[r] = q;
          vo[r] = v[i] as number;
          r++;
          prev = q;
        }
      }
      return r;
    },
    inclusiveScanByKey: (k: Uint32Array, v: Uint32Array, _ko: Uint32Array, _vo: Uint32Array, out: Uint32Array) => {
      const n = k.length;
      let acc = 0;
      for (let i = 0; i < n; i++) {
        acc = i === 0 || k[i] !== k[i - 1] ? (v[i] as number) : (acc + (v[i] as number)) >>> 0;
        out[i] = acc;
      }
      return out;
    },
    inclusiveScanByKeyPrev: (k: Uint32Array, v: Uint32Array, _ko: Uint32Array, _vo: Uint32Array, out: Uint32Array) => {
      const n = k.length;
      let acc = 0;
      let prev = n > 0 ? (k[0] as number) : 0;
      for (let i = 0; i < n; i++) {
        const q = k[i] as number;
        const x = v[i] as number;
        acc = q !== prev ? x : (acc + x) >>> 0;
        prev = q;
        out[i] = acc;
      }
      if (n > 0) out[0] = v[0] as number;
      return out;
    },
    exclusiveScanByKey: (k: Uint32Array, v: Uint32Array, _ko: Uint32Array, _vo: Uint32Array, out: Uint32Array) => {
      const n = k.length;
      let acc = 0;
      for (let i = 0; i < n; i++) {
        if (i === 0 || k[i] !== k[i - 1]) acc = 0;
        out[i] = acc;
        acc = (acc + (v[i] as number)) >>> 0;
      }
      return out;
    },
  };
}

async function main() {
  const par = execution.par;
  // Start the pool before timing.
  await defaultPool().run((x: number) => x, [1, 2]);
  console.log(
    `cpu-by-key: node ${process.version}, sizes 2^${sizes.join(',2^')}, ${rounds} rounds, runs ${randomRuns ? 'random 1..8' : 'of 16'}, ${new Date().toISOString()}`,
  );
  const algos = ['reduceByKey', 'uniqueByKey', 'inclusiveScanByKey', 'exclusiveScanByKey'].filter(
    (a) => !only || only.includes(a),
  );
  for (const lg of sizes) {
    const n = 2 ** lg;
    const k = keysOf(n, false);
    const v = valuesOf(n, false);
    const ks = keysOf(n, true);
    const vs = valuesOf(n, true);
    let runs = n > 0 ? 1 : 0;
    for (let i = 1; i < n; i++) if (k[i] !== k[i - 1]) runs++;
    const ko = new Uint32Array(n);
    const vo = new Uint32Array(n);
    const out = new Uint32Array(n);
    const kShort = new Uint32Array(runs);
    const vShort = new Uint32Array(runs);
    const kShortS = allocShared('u32', runs) as Uint32Array;
    const vShortS = allocShared('u32', runs) as Uint32Array;
    const outS = allocShared('u32', n) as Uint32Array;
    const L = loops(k, v, ko, vo, out);
    for (const algo of algos) {
      const variants: Variant[] = [];
      const loopNames = Object.keys(L).filter(
        (x) => x === algo || (x.startsWith(algo) && x !== algo && /[A-Z][a-z]+$/.test(x.slice(algo.length))),
      );
      for (const ln of loopNames)
        variants.push({ name: `loop ${ln.slice(algo.length) || ''}`.trim(), run: L[ln as keyof typeof L] });
      if (algo === 'reduceByKey' || algo === 'uniqueByKey') {
        const f = algo === 'reduceByKey' ? reduceByKey : uniqueByKey;
        variants.push({ name: 'seq n/16', run: () => f(execution.seq, k, v, kShort, vShort) });
        variants.push({ name: 'seq n', run: () => f(execution.seq, k, v, ko, vo) });
        variants.push({ name: 'par plain n/16', run: () => f(par, k, v, kShort, vShort) });
        variants.push({ name: 'par shared n/16', run: () => f(par, ks, vs, kShortS, vShortS) });
        variants.push({ name: 'seq shared n/16', run: () => f(execution.seq, ks, vs, kShortS, vShortS) });
      } else {
        const ex = algo === 'exclusiveScanByKey';
        const f = (p: unknown, a: Uint32Array, b: Uint32Array, o: Uint32Array) =>
          ex ? exclusiveScanByKey(p, a, b, o, 0) : inclusiveScanByKey(p, a, b, o);
        variants.push({ name: 'seq', run: () => f(execution.seq, k, v, out) });
        variants.push({ name: 'par plain', run: () => f(par, k, v, out) });
        variants.push({ name: 'par shared', run: () => f(par, ks, vs, outS) });
        variants.push({ name: 'seq shared', run: () => f(execution.seq, ks, vs, outS) });
      }
      const times = variants.map(() => [] as number[]);
      for (let w = 0; w < 2; w++) for (const x of variants) await x.run();
      for (let r = 0; r < rounds; r++) {
        for (let j = 0; j < variants.length; j++) {
          const t0 = performance.now();
          await (variants[j] as Variant).run();
          (times[j] as number[]).push(performance.now() - t0);
        }
      }
      const med = times.map(median);
      const best = Math.min(...med.slice(0, loopNames.length));
      const seqIdx = variants.findIndex((x) => x.name.startsWith('seq'));
      const seqShared = variants.findIndex((x) => x.name.startsWith('seq shared'));
      const row = variants
        .map((x, j) => {
          const m = med[j] as number;
          let s = `${x.name} ${m.toFixed(2)} ms (${(best / m).toFixed(2)}x loop`;
          if (x.name.startsWith('par shared')) s += `, ${((med[seqShared] as number) / m).toFixed(2)}x seq shared`;
          else if (x.name.startsWith('par')) s += `, ${((med[seqIdx] as number) / m).toFixed(2)}x seq`;
          return `${s})`;
        })
        .join('; ');
      console.log(`2^${lg} ${algo}: ${row}`);
    }
  }
  await defaultPool().close?.();
  process.exit(0);
}

void main();
