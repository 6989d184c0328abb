/**
 * What the GPU side shares: copying read-back bytes into host arrays (the pattern layer stages
 * arguments, pattern/dispatch.ts), and the engines' hot path: memoized tuning, the check of a cached
 * plan's fragments and the recording of cached steps.
 */
import type { HostArray, Recorder, WgslFragment } from '@webdpl/core';
import { resolveTuning, type TuningValues } from './tuning';

/** Copies raw bytes read back from the device into a host array. */
export function copyInto(target: HostArray, bytes: ArrayBuffer, count = target.length): void {
  new Uint8Array(target.buffer, target.byteOffset, count * 4).set(new Uint8Array(bytes, 0, count * 4));
}

const tuningMemo = new WeakMap<object, WeakMap<object, Map<string, unknown>>>();
const NO_OVERRIDES: Readonly<Record<string, number | boolean>> = {};

/**
 * `resolveTuning(name, defaults, overrides)`, memoized per defaults and overrides object (policies
 * and engines keep theirs), so a call on the hot path does not re-check its overrides.
 */
export function cachedTuning<T extends TuningValues>(
  name: string,
  defaults: T,
  overrides: Readonly<Record<string, number | boolean>> | undefined,
): T {
  const o = overrides ?? NO_OVERRIDES;
  let byOverrides = tuningMemo.get(defaults);
  if (!byOverrides) {
    byOverrides = new WeakMap();
    tuningMemo.set(defaults, byOverrides);
  }
  let byName = byOverrides.get(o);
  if (!byName) {
    byName = new Map();
    byOverrides.set(o, byName);
  }
  let t = byName.get(name) as T | undefined;
  if (!t) {
    t = resolveTuning(name, defaults, o);
    byName.set(name, t);
  }
  return t;
}

/** Whether a cached plan's fragments are the call's: the same objects, or the same code. */
export function sameLeaves(a: readonly WgslFragment[], b: readonly WgslFragment[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as WgslFragment;
    const y = b[i] as WgslFragment;
    if (x !== y && (x.name !== y.name || x.code !== y.code)) return false;
  }
  return true;
}

/** A pipeline, its bind group and its workgroup count: one dispatch of a cached call. */
export interface CachedStep {
  readonly pipeline: GPUComputePipeline;
  readonly group: GPUBindGroup;
  readonly wgs: number;
}

/** `rec.dispatch` of each step in one compute pass (pipeline switched only when it changes). */
export function recordSteps(rec: Recorder, pass: GPUComputePassEncoder, steps: readonly CachedStep[]): void {
  let current: GPUComputePipeline | undefined;
  for (const s of steps) {
    if (s.pipeline !== current) {
      pass.setPipeline(s.pipeline);
      current = s.pipeline;
    }
    pass.setBindGroup(0, s.group);
    rec.dispatch(pass, s.wgs);
  }
}
