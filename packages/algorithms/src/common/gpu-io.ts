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

/** A phase of a call: its name and what it records into a compute pass. */
export interface Phase {
  readonly name: string;
  readonly record: (rec: Recorder, pass: GPUComputePassEncoder) => void;
}

/** Whether calls record each phase in a compute pass of its own (`setPhasePasses`). */
let phasePasses = false;

/**
 * Diagnostics (the GPU machine's probes): with `on`, every later call of a multi-phase algorithm
 * (reduceByKey's count, tile and fix-up; the radix select's rounds; the merge sort's block sort and
 * merge levels) records each phase in a compute pass of its own, labelled by phase, so a profiling
 * queue reports each phase's device time (`Queue.lastPassTimesNs`). Off by default: one pass per
 * call. A pass costs ~10 us of device time on the H100 under Dawn/Vulkan with timestamps against
 * ~2 us for a dispatch (docs/benchmarks/h100-2026-11-24j.md, dispatch-cost.ts), so the phase
 * times of a diagnostic run add up to more than a call.
 */
export function setPhasePasses(on: boolean): void {
  phasePasses = on;
}

/**
 * Records `phases` in order: in one compute pass labelled `label`, or with `setPhasePasses` each in
 * a pass of its own labelled `<label> <phase name>`.
 */
export function recordPhases(rec: Recorder, label: string, phases: readonly Phase[]): void {
  if (phasePasses) {
    for (const phase of phases) {
      const pass = rec.beginPass(`${label} ${phase.name}`);
      phase.record(rec, pass);
      pass.end();
    }
    return;
  }
  const pass = rec.beginPass(label);
  for (const phase of phases) phase.record(rec, pass);
  pass.end();
}
