/**
 * Test support for DeviceArray arguments: copies of host data at an element offset inside a larger
 * device array (offset 1 makes the unaligned kernel paths run), surrounded by sentinels so tests can
 * check that nothing outside the view was written.
 */

import { DeviceArray, type GpuDevice, type HostArray } from '@webdpl/core';
import { makeHostPolicy, type Policy } from '@webdpl/policies';
import { it } from 'vitest';

/** Value of the padding around placed views. */
export const SENTINEL = 0x5a5a5a5a;

export interface Placed<T extends HostArray = HostArray> {
  /** The view holding the data. */
  readonly view: DeviceArray;
  /** The whole array (destroy it when done). */
  readonly parent: DeviceArray;
  readonly offset: number;
  /** Reads the whole parent and checks the padding; returns the view's elements. */
  read(): Promise<T>;
}

function sameKind<T extends HostArray>(like: T, n: number): T {
  return new (like.constructor as new (n: number) => T)(n);
}

/**
 * `data` on `device` at element `offset` of an array with `after` more elements; the padding holds
 * SENTINEL bits.
 */
export function place<T extends HostArray>(device: GpuDevice, data: T, offset: number, after = 5): Placed<T> {
  const n = data.length;
  const all = sameKind(data, offset + n + after);
  new Uint32Array(all.buffer).fill(SENTINEL);
  all.set(data, offset);
  const parent = DeviceArray.from(device, all as Uint32Array);
  const view = parent.view(offset, n);
  return {
    view,
    parent,
    offset,
    read: async () => {
      const got = (await parent.read()) as T;
      const bits = new Uint32Array(got.buffer, got.byteOffset, got.length);
      for (let i = 0; i < offset; i++) {
        if (bits[i] !== SENTINEL) throw new Error(`padding before the view was written at ${i}`);
      }
      for (let i = offset + n; i < bits.length; i++) {
        if (bits[i] !== SENTINEL) throw new Error(`padding after the view was written at ${i - offset - n}`);
      }
      return got.subarray(offset, offset + n) as T;
    },
  };
}

/** A par policy whose calls use the worker pool from the first elements on (chunks of 64). */
export const parPool: Policy = makeHostPolicy('par', { tuning: { '*': { parallelThreshold: 0, minChunk: 64 } } });

/**
 * GPU variants of the matrix whose kernels differ from the 'device' variant only in engine code
 * (tiny tiles, subgroups off). Pipelines compile slowly on lavapipe (seconds each, cold), so
 * per-type tests run one element type under them and every type under 'device' (and 'auto', which
 * shares its pipelines); the engine code itself is what the variants exist to cover.
 */
export function isEngineVariant(name: string): boolean {
  return name.startsWith('device ');
}

/**
 * `it` when `run` is true; otherwise registers nothing. Engine variants (no-subgroups, tiny tiles) run
 * a reduced set of cases by design; those cases are not "skipped" tests, they are not generated.
 */
export function itIf(run: boolean): typeof it {
  return run ? it : ((() => {}) as unknown as typeof it);
}
