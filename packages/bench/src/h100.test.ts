import { describe, expect, it } from 'vitest';
import { h100Markdown, h100Points, parseCubOutput } from './h100';
import type { BenchReport, EntryResult, Measurement } from './results';

// Lines as cub_anchor.cu prints them (printf "%-28s 2^%-2d %9.4f ms %8.1f GB/s %8.2f Gelem/s").
const CUB = `gpu: NVIDIA H100 80GB HBM3, 580.00, node v20.20.2
copy (r+w)                   2^20     0.0100 ms    838.0 GB/s   105.00 Gelem/s
reduce u32 sum               2^24    0.0334 ms   2007.3 GB/s   502.00 Gelem/s
reduce u32 sum               2^28    0.3561 ms   3016.0 GB/s   754.00 Gelem/s
copy_if f32 (50%)            2^24     0.0588 ms   1711.0 GB/s   285.00 Gelem/s
some compiler warning`;

function m(kind: Measurement['kind'], log2: number, ms: number, bytes = 4): Measurement {
  const n = 2 ** log2;
  return {
    series: kind,
    kind,
    label: kind,
    log2,
    n,
    ms,
    medianMs: ms,
    meanMs: ms,
    minMs: ms,
    rme: 1,
    samples: 10,
    gbps: (bytes * n) / (ms / 1e3) / 1e9,
    gelems: n / (ms / 1e3) / 1e9,
    check: 'ok',
  };
}

function entry(id: string, cub: string, measurements: Measurement[]): EntryResult {
  return {
    id,
    algorithm: id,
    label: id,
    cub,
    type: 'u32',
    bytesPerElement: 4,
    traffic: 'read n',
    measurements,
    failures: [],
  };
}

describe('parseCubOutput', () => {
  it('reads result lines and skips everything else', () => {
    const rows = parseCubOutput(CUB);
    expect(rows).toHaveLength(4);
    expect(rows[0]).toEqual({ name: 'copy (r+w)', log2: 20, ms: 0.01, gbps: 838, gelems: 105 });
    expect(rows[1]).toEqual({ name: 'reduce u32 sum', log2: 24, ms: 0.0334, gbps: 2007.3, gelems: 502 });
    expect(rows[3]?.name).toBe('copy_if f32 (50%)');
  });
});

describe('h100Markdown', () => {
  const report: BenchReport = {
    schema: 'webdpl-bench/1',
    date: '2026-01-01T00:00:00.000Z',
    command: 'bench --device-only',
    node: 'v20',
    platform: 'linux x64',
    cpu: 'cpu',
    cores: 16,
    device: {
      name: 'NVIDIA H100',
      kind: 'gpu',
      vendor: 'nvidia',
      architecture: 'hopper',
      subgroupMinSize: 32,
      subgroupMaxSize: 32,
      features: [],
      maxStorageBufferBindingSize: 2 ** 31,
    },
    options: {},
    floor: { ms: 0.08, medianMs: 0.08, meanMs: 0.08, minMs: 0.07, rme: 1, samples: 100 },
    entries: [entry('reduce-u32', 'reduce u32 sum', [m('device-time', 24, 0.0668), m('device-call', 20, 0.1)])],
    notes: [],
    durationS: 1,
  };

  it('puts ours, CUB and the ratio in one row per size', () => {
    const md = h100Markdown(report, parseCubOutput(CUB), {
      charts: { 'reduce-u32': 'h100/reduce-u32.svg' },
      jsonName: 'h100.json',
      cubName: 'h100-cub.txt',
    });
    expect(md).toContain(
      '| reduce u32 sum (`reduce-u32`) | 2^24 | 66.8 µs | 1005 | 251 | 33.4 µs | 2007 | 502 | **0.50x** |',
    );
    // 2^28: CUB only; 2^20: neither side has device time, so no row.
    expect(md).toContain('| reduce u32 sum (`reduce-u32`) | 2^28 | - | - | - | 356 µs | 3016 | 754 | - |');
    expect(md).not.toContain('| reduce u32 sum (`reduce-u32`) | 2^20 |');
    expect(md).toContain('reduce-u32 at 2^28: not run');
    expect(md).toContain('| reduce-u32 | 2^20 | 100 µs | 1.25x |');
    expect(md).toContain('[reduce-u32](h100/reduce-u32.svg)');
    expect(md).toContain('[h100.json](h100.json)');
  });

  it('charts our device series beside CUB', () => {
    const points = h100Points(report.entries[0] as EntryResult, parseCubOutput(CUB));
    expect(points.map((p) => p.series)).toEqual(['device-time', 'device-call', 'CUB', 'CUB']);
  });
});
