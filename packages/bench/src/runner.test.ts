/**
 * The host arrays a CPU series runs on: the case's own inputs (copies for in-place entries) and
 * fresh outputs, or with --shared allocShared copies of both, so par hands them to its workers.
 */
import { isShared } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { ENTRIES } from './entries';
import { hostArgs } from './runner';

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
