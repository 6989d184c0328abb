import { DeviceArray } from '@webdpl/core';
import { makeDevicePolicy } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { iota } from '../../iota/index';
import { testDevice } from '../../testing/matrix';
import { transform } from '../../transform/index';

describe.runIf(testDevice)('map engine at 2^24+1 (2-D grids past 65,535 workgroups)', () => {
  it('vec4 and scalar paths, DeviceArrays end to end', async () => {
    const device = testDevice as NonNullable<typeof testDevice>;
    // Tiles of 128 (vec) and 32 (scalar) elements: 131,073 and 524,289 workgroups.
    const policy = makeDevicePolicy(device, {
      fallback: 'error',
      tuning: { map: { workgroupSize: 32, vecsPerThread: 1, itemsPerThread: 1 } },
    });
    const n = 2 ** 24 + 1;
    const src = DeviceArray.create(device, 'u32', n + 1);
    const dst = DeviceArray.create(device, 'u32', n + 1);
    try {
      for (const off of [0, 1]) {
        await iota(policy, src.view(off, n), 7);
        await transform(policy, src.view(off, n), dst.view(off, n), (x: number) => x * 3 + 1);
        const got = (await dst.read()).subarray(off, off + n);
        let bad = -1;
        for (let i = 0; i < n; i++) {
          if (got[i] !== (Math.imul(i + 7, 3) + 1) >>> 0) {
            bad = i;
            break;
          }
        }
        expect(bad, `first wrong element (offset ${off})`).toBe(-1);
      }
    } finally {
      src.destroy();
      dst.destroy();
    }
  });
});
