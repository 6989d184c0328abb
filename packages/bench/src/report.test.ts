import { describe, expect, it } from 'vitest';
import { computeCrossover, crossoverOf, formatTime, textTable } from './report';
import type { EntryResult, Measurement } from './results';

const bySize = (pairs: [number, number][]) => new Map(pairs);

describe('crossoverOf', () => {
  it('is the smallest size from which a stays faster', () => {
    const cpu = bySize([
      [10, 1],
      [12, 4],
      [14, 16],
      [16, 64],
    ]);
    expect(
      crossoverOf(
        bySize([
          [10, 5],
          [12, 5],
          [14, 5],
          [16, 5],
        ]),
        cpu,
      ),
    ).toBe(14);
    // A win at 2^12 that is lost again at 2^14 does not count.
    expect(
      crossoverOf(
        bySize([
          [10, 5],
          [12, 3],
          [14, 20],
          [16, 5],
        ]),
        cpu,
      ),
    ).toBe(16);
    expect(
      crossoverOf(
        bySize([
          [10, 0.5],
          [12, 3],
          [14, 5],
          [16, 5],
        ]),
        cpu,
      ),
    ).toBe(10);
    expect(
      crossoverOf(
        bySize([
          [10, 5],
          [12, 5],
          [14, 50],
          [16, 100],
        ]),
        cpu,
      ),
    ).toBeNull();
    expect(crossoverOf(bySize([]), cpu)).toBeNull();
  });
});

function m(kind: Measurement['kind'], log2: number, ms: number, check = 'ok'): Measurement {
  return {
    series: kind,
    kind,
    label: kind,
    log2,
    n: 2 ** log2,
    ms,
    medianMs: ms,
    meanMs: ms,
    minMs: ms,
    rme: 0,
    samples: 1,
    gbps: 0,
    gelems: 0,
    check,
  };
}

describe('computeCrossover', () => {
  const e = (measurements: Measurement[]): EntryResult => ({
    id: 'x',
    algorithm: 'x',
    label: 'x',
    type: 'u32',
    bytesPerElement: 4,
    traffic: '',
    measurements,
    failures: [],
  });

  it('compares GPU end to end with the faster host policy, ignoring wrong results', () => {
    const c = computeCrossover(
      e([
        m('seq', 10, 1),
        m('par', 10, 2),
        m('device-e2e', 10, 3),
        m('seq', 20, 100),
        m('par', 20, 40),
        m('device-e2e', 20, 30),
        m('device-call', 20, 10),
        m('device-call', 10, 0.5, 'wrong'),
      ]),
    );
    expect(c?.e2eVsCpu).toBe(20);
    expect(c?.residentVsCpu).toBe(20);
    expect(c?.e2eVsJs).toBeNull();
    expect(c?.text).toContain('GPU e2e vs best CPU policy: from 2^20');
  });

  it('is undefined without GPU figures', () => {
    expect(computeCrossover(e([m('seq', 10, 1)]))).toBeUndefined();
  });
});

describe('formatting', () => {
  it('formats times with units', () => {
    expect(formatTime(0.000_812)).toBe('812 ns');
    expect(formatTime(0.0123)).toBe('12.3 µs');
    expect(formatTime(4.561)).toBe('4.56 ms');
    expect(formatTime(2310)).toBe('2.31 s');
  });

  it('aligns tables', () => {
    expect(textTable(['a', 'bb'], [['xyz', '1']])).toBe('a    bb\n───  ──\nxyz   1');
  });
});
