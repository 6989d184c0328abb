// Backend selection on a machine without a GPU adapter (simulated: noGpuReason reports none).
import { plus } from '@webdpl/core';
import { describe, expect, it, vi } from 'vitest';
import { execution } from './policy';
import { defaultPool } from './pool';
import { selectBackend } from './select-backend';

vi.mock('@webdpl/core', async (importOriginal) => ({
  ...(await importOriginal<typeof import('@webdpl/core')>()),
  noGpuReason: async () => 'simulated: no WebGPU adapter',
}));

describe('selectBackend without a GPU', () => {
  it('auto runs on the CPU pool', async () => {
    const b = await selectBackend(execution.auto, {
      algorithm: 'reduce',
      types: ['f32'],
      functions: [{ fn: plus, argTypes: ['f32', 'f32'] }],
    });
    expect(b.kind).toBe('par');
    if (b.kind === 'par') expect(b.pool).toBe(defaultPool());
  });
});
