import { DeviceArray, type GpuDevice, gpuForTests } from '@webdpl/core';
import { it } from 'vitest';
import { rng } from '../../testing/matrix';
import { radixSortDevice } from '.';
it('dbg', async () => {
  const device = (await gpuForTests()) as GpuDevice;
  const n = Number(process.env.N ?? 1921);
  const r = rng(n);
  const specials = [0x7fc00000, 0xffc00000, 0x7f800001, 0x80000000, 0, 0x7f800000, 0xff800000, 1, 0x80000001, 0x007fffff];
  const bits = new Uint32Array(n);
  for (let i = 0; i < n; i++) bits[i] = process.env.KIND === 'rand' ? r() : r() % 3 === 0 ? specials[r() % specials.length]! : r();
  const keys = new Float32Array(bits.buffer);
  const tl = JSON.parse(process.env.TUNINGS ?? '[{"subgroups":false}]'); for (let rep = 0; rep < Number(process.env.REPS ?? 1); rep++) for (const tuning of tl) {
    const k = DeviceArray.from(device, keys);
    const v = process.env.VALS ? DeviceArray.from(device, new Uint32Array(n)) : undefined;
    const t0 = performance.now();
    await radixSortDevice(device, k, v, { tuning, descending: !!process.env.DESC });
    const dt = performance.now() - t0; if (dt > 300 || rep === 0) console.log(rep, JSON.stringify(tuning), 'took', dt);
    const got = await k.read();
    const want = keys.slice().sort();
    let bad = 0;
    for (let i = 0; i < n; i++) if (!Object.is(got[i], want[i])) bad++;
    if (!process.env.DESC && bad) console.log('bad', bad);
  }
});
