/**
 * GPU-machine check of the scan engine's results (not timings): copyIf, inclusiveScan and partition
 * of 2^20 + 123 and 2^24 + 123 u32 against host references, under each scan tuning of TUNINGS (a
 * JSON array of tuning objects, default [{}]). The timing probes check little; this one exists
 * because a kernel variant (vec2/vec3 subgroup additions in compactions) was right on lavapipe and
 * SwiftShader and wrong on the H100. Bundle: node scripts/probe/build.mjs; run:
 * TUNINGS='[{},{"itemsPerThread":16},{"subgroups":false}]' node .probe/scan-verify.mjs
 */
import { copyIf, inclusiveScan, partition } from '../../packages/algorithms/src/index';
import { DeviceArray, type GpuDevice, gpuSelector, releaseDevices, selectDevice } from '../../packages/core/src/index';
import { makeDevicePolicy } from '../../packages/policies/src/index';

const device = (await selectDevice(gpuSelector)) as GpuDevice;
console.log('device', device.info.name, device.info.subgroupMinSize, device.info.subgroupMaxSize);
const tunings: Record<string, number | boolean>[] = JSON.parse(process.env.TUNINGS ?? '[{}]');
for (const lg of [20, 24]) {
  const n = (1 << lg) + 123;
  const h = new Uint32Array(n);
  for (let i = 0; i < n; i++) h[i] = Math.imul(i, 2654435761) >>> 0;
  const keep = (x: number) => x > 2147483648;
  let want = 0;
  for (const x of h) if (keep(x)) want++;
  for (const tun of tunings) {
    const policy = makeDevicePolicy(device, { fallback: 'error', tuning: { scan: tun } });
    const a = DeviceArray.from(device, h);
    const b = DeviceArray.create(device, 'u32', n);
    let msg = '';
    try {
      const c = await copyIf(policy, a, b, keep);
      const got = await b.read();
      let bad = -1;
      let j = 0;
      for (let i = 0; i < n; i++)
        if (keep(h[i]!)) {
          if (got[j] !== h[i]) {
            bad = j;
            break;
          }
          j++;
        }
      msg += ` copyIf count ${c}/${want} ${c === want && bad < 0 ? 'OK' : `BAD at ${bad}`}`;
      await inclusiveScan(policy, a, b);
      const s = await b.read();
      let acc = 0;
      let sbad = -1;
      for (let i = 0; i < n; i++) {
        acc = (acc + h[i]!) >>> 0;
        if (s[i] !== acc) {
          sbad = i;
          break;
        }
      }
      msg += ` scan ${sbad < 0 ? 'OK' : `BAD at ${sbad}`}`;
      const p = DeviceArray.from(device, h);
      const pc = await partition(policy, p, keep);
      const pr = await p.read();
      let pbad = -1;
      for (let i = 0; i < n; i++)
        if (i < pc !== keep(pr[i]!)) {
          pbad = i;
          break;
        }
      msg += ` partition ${pc === want && pbad < 0 ? 'OK' : `BAD ${pc} at ${pbad}`}`;
      p.destroy();
    } catch (e) {
      msg += ` ERROR ${(e as Error).message.slice(0, 120)}`;
    }
    console.log(`2^${lg}+123 ${JSON.stringify(tun)}${msg}`);
    a.destroy();
    b.destroy();
  }
}
releaseDevices();
