import { plus } from '@webdpl/core';
import { allocShared, type CpuBackend, cpuReduce, createPool, toShared } from '../src/index';
const pool = createPool({ size: 2 });
const seq: CpuBackend = { kind: 'seq' };
for (const log2 of [12, 14, 15, 16, 17, 18, 20, 22, 24]) {
  const n = 2 ** log2;
  const x = toShared(new Float32Array(n).map(() => Math.random()));
  const par: CpuBackend = { kind: 'par', pool, tuning: { parallelThreshold: 0, minChunk: 4096 } };
  const reps = Math.max(5, Math.min(200, (2 ** 22 / n) | 0));
  const best = { seq: 1e9, par: 1e9 };
  for (let r = 0; r < reps; r++) {
    let t = performance.now(); await cpuReduce(seq, x, 0, plus); best.seq = Math.min(best.seq, performance.now() - t);
    t = performance.now(); await cpuReduce(par, x, 0, plus); best.par = Math.min(best.par, performance.now() - t);
  }
  console.log(`2^${log2}: seq ${best.seq.toFixed(3)} ms, par ${best.par.toFixed(3)} ms, speedup ${(best.seq / best.par).toFixed(2)}`);
}
await pool.close();
