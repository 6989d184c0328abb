import { createPool } from '../src/index';
const pool = createPool({ size: 2 });
const n = 2 ** 22;
const x = new Float32Array(new SharedArrayBuffer(4 * n)).map(() => Math.random());
const task = (j: { x: Float32Array; b: number; e: number }) => {
  const t = performance.now();
  let acc = 0;
  const x = j.x;
  for (let r = 0; r < 5; r++) for (let i = j.b; i < j.e; i++) acc = Math.fround(acc + x[i]);
  return [performance.now() - t, acc];
};
for (let rep = 0; rep < 4; rep++) {
  const one = await pool.run(task, [{ x, b: 0, e: n }]);
  const two = await pool.run(task, [{ x, b: 0, e: n }, { x, b: 0, e: n }]);
  const t = performance.now(); task({ x, b: 0, e: n }); const main = performance.now() - t;
  console.log(`one worker ${one[0][0].toFixed(1)} ms, two workers ${two.map((r) => r[0].toFixed(1)).join(' / ')} ms, main ${main.toFixed(1)}`);
}
await pool.close();
