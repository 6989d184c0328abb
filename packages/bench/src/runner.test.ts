/**
 * The host arrays a CPU series runs on: the case's own inputs (copies for in-place entries) and
 * fresh outputs, or with --shared allocShared copies of both, so par hands them to its workers.
 */
import { isShared } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { parseArgs } from './cli-args';
import { ENTRIES } from './entries';
import type { Measured } from './measure';
import { hostArgs, type RunContext, runEntry, timeBaselineAlone } from './runner';

function entry(id: string) {
  const e = ENTRIES.find((x) => x.id === id);
  if (!e) throw new Error(`no bench entry ${id}`);
  return e;
}

describe('hostArgs', () => {
  it('plain arrays by default; allocShared copies of inputs and outputs with --shared', () => {
    const e = entry('transform-f32');
    const c = e.make(1000);
    const plain = hostArgs(e, c, false);
    expect(plain.inputs[0]).toBe(c.inputs[0]);
    expect(isShared(plain.outputs[0] as Float32Array)).toBe(false);
    const shared = hostArgs(e, c, true);
    expect(shared.inputs.every((a) => isShared(a as Float32Array))).toBe(true);
    expect(shared.outputs.every((a) => isShared(a as Float32Array))).toBe(true);
    expect(Array.from(shared.inputs[0] as Float32Array)).toEqual(Array.from(c.inputs[0] as Float32Array));
    expect(shared.outputs[0]?.length).toBe(c.outputs[0]?.length);
  });

  it('in-place entries work on copies, restored from the case before each call', () => {
    const e = entry('sort-u32');
    const c = e.make(1000);
    for (const shared of [false, true]) {
      const a = hostArgs(e, c, shared);
      const w = a.inputs[0] as Uint32Array;
      expect(w).not.toBe(c.inputs[0]);
      expect(isShared(w)).toBe(shared);
      w.fill(7);
      a.before?.();
      expect(Array.from(w)).toEqual(Array.from(c.inputs[0] as Uint32Array));
      expect(a.observed).toBe(a.inputs);
    }
  });
});

describe('plain-JS baselines in a process of their own', () => {
  it('the runner hands every baseline at every size to baselineProcess when it is given', async () => {
    const calls: string[] = [];
    const fake: Measured = { ms: 1, medianMs: 1, meanMs: 1, minMs: 1, rme: 0, samples: 1, check: 'ok' };
    const ctx: RunContext = {
      options: parseArgs(['--policies', 'js', '--time', '5']),
      // The entry's export has to exist (only the plain-JS series run).
      api: { copy: async () => {} },
      device: undefined,
      devicePolicy: undefined,
      gpuMaxLog2: 0,
      onStep: () => {},
      onDone: () => {},
      baselineProcess: async (id, name, log2) => {
        calls.push(`${id}:${name}:${log2}`);
        return fake;
      },
    };
    const e = entry('copy-u32');
    const r = await runEntry(e, [10, 12], ctx);
    const want = [10, 12].flatMap((l) => e.baselines.map((b) => `copy-u32:${b.name}:${l}`));
    expect(calls).toEqual(want);
    expect(r.measurements.map((m) => `${m.series}:${m.log2}:${m.ms}`)).toEqual(
      [10, 12].flatMap((l) => e.baselines.map((b) => `js:${b.name}:${l}:1`)),
    );
  });

  it('timeBaselineAlone times the baseline a spec names, and rejects one it does not name', async () => {
    const m = await timeBaselineAlone('gather-u32:for-loop:10', 5);
    expect(m.ms).toBeGreaterThan(0);
    expect(m.check).toBe('ok');
    await expect(timeBaselineAlone('gather-u32:nope:10', 5)).rejects.toThrow("no baseline 'gather-u32:nope:10'");
    await expect(timeBaselineAlone('gather-u32', 5)).rejects.toThrow('ENTRY_ID:BASELINE_NAME:LOG2');
  });
});
