import { describe, expect, it } from 'vitest';
import { type PerCallRow, renderPerCall } from './per-call';

describe('renderPerCall', () => {
  it('keeps every cell apart, however wide (a software GPU takes 10,000+ us at 2^20)', () => {
    const rows: PerCallRow[] = [
      {
        log2: 12,
        us: { floor: 82, reduce: 100, inclusiveScan: 97, transform: 80, copyIf: 121 },
        ratio: { reduce: 1.23, inclusiveScan: 1.23, transform: 0.96, copyIf: 1.69 },
        rounds: 3,
        check: 'ok',
      },
      {
        log2: 20,
        us: { floor: 519, reduce: 570, inclusiveScan: 3240, transform: 1184, copyIf: 10132 },
        ratio: { reduce: 1.36, inclusiveScan: 5.92, transform: 2.65, copyIf: 18.49 },
        rounds: 3,
        check: 'ok',
      },
    ];
    const lines = renderPerCall(rows, 'llvmpipe').split('\n');
    expect(lines).toHaveLength(4);
    // Every cell ends with x or us and is followed by at least two spaces or the line's end.
    expect(lines[3]).toMatch(/1184 us 2\.65x {2,}10132 us 18\.49x$/);
    expect(lines.join('\n')).not.toMatch(/x\d/);
    // The header's names sit right-aligned over their columns.
    const header = lines[1] as string;
    const row = lines[3] as string;
    expect(header.indexOf('copyIf') + 'copyIf'.length).toBe(row.length);
  });
});
