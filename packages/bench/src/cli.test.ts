import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('./cli.ts', import.meta.url));

function run(...args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', cli, ...args], { encoding: 'utf8', timeout: 60_000 });
}

describe('the bench CLI', () => {
  it('exits with 2 and a clear message on bad input', () => {
    const r = run('--sizes', '24..10');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("--sizes: range '24..10' goes down");
    expect(r.stderr).toContain('pnpm bench --help');
  });

  it('exits with 2 on an unknown algorithm', () => {
    const r = run('--algorithms', 'bogosort');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("unknown 'bogosort'");
  });

  it('prints the usage', () => {
    const r = run('--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('--device-only');
  });
});
