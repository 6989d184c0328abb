import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  it('--baseline times one plain-JS baseline alone and prints its timing as JSON', () => {
    const r = run('--baseline', 'transform-f32:for-loop:10', '--time', '20');
    expect(r.status).toBe(0);
    const m = JSON.parse(r.stdout.trim());
    expect(m.ms).toBeGreaterThan(0);
    expect(m.check).toBe('ok');
    const bad = run('--baseline', 'transform-f32:nope:10');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain("no baseline 'transform-f32:nope:10'");
  });

  it('--fresh-baselines times each baseline in a process of its own (the same node flags: here tsx)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-cli-'));
    try {
      const json = join(dir, 'r.json');
      const r = run(
        '--algorithms',
        'copy-u32',
        '--sizes',
        '10,12',
        '--policies',
        'js',
        '--fresh-baselines',
        '--time',
        '10',
        '--no-charts',
        '--json',
        json,
        '--out',
        dir,
      );
      expect(r.status, r.stderr).toBe(0);
      const report = JSON.parse(readFileSync(json, 'utf8'));
      const copy = report.entries.find((e: { id: string }) => e.id === 'copy-u32');
      expect(copy.failures).toEqual([]);
      expect(copy.measurements.map((m: { series: string; log2: number }) => `${m.series}:${m.log2}`).sort()).toEqual([
        'js:for-loop:10',
        'js:for-loop:12',
        'js:set:10',
        'js:set:12',
        'js:slice:10',
        'js:slice:12',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints the usage', () => {
    const r = run('--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('--device-only');
  });
});
