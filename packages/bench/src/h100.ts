/**
 * The H100 comparison: parses cub_anchor's output and builds the markdown table of ours against CUB
 * (device time of both, taken in one device run), used by scripts/h100-table.ts.
 */
import { formatRate, formatTime, pow2 } from './report';
import { type BenchReport, type EntryResult, isWrong, type Measurement } from './results';

/** One line of cub_anchor's output. */
export interface CubRow {
  /** Row name as printed, e.g. 'reduce u32 sum'. */
  readonly name: string;
  readonly log2: number;
  readonly ms: number;
  readonly gbps: number;
  readonly gelems: number;
}

const CUB_LINE = /^(\S.*?)\s+2\^(\d+)\s+([\d.]+)\s*ms\s+([\d.]+)\s*GB\/s\s+([\d.]+)\s*Gelem\/s\s*$/;

/** Parses cub_anchor's stdout; lines that are not result rows (compiler noise, banners) are ignored. */
export function parseCubOutput(text: string): CubRow[] {
  const rows: CubRow[] = [];
  for (const line of text.split(/\r?\n/)) {
    const m = CUB_LINE.exec(line.trim());
    if (!m) continue;
    rows.push({
      name: (m[1] as string).trim(),
      log2: Number(m[2]),
      ms: Number(m[3]),
      gbps: Number(m[4]),
      gelems: Number(m[5]),
    });
  }
  return rows;
}

/** Sizes of the H100 table. */
export const H100_SIZES = [20, 24, 28] as const;

function deviceTime(e: EntryResult, log2: number): Measurement | undefined {
  return e.measurements.find((m) => m.kind === 'device-time' && m.log2 === log2 && !isWrong(m.check));
}

/** Options of the markdown page. */
export interface H100PageOptions {
  /** Relative links to each entry's chart, by entry id. */
  readonly charts: Readonly<Record<string, string>>;
  /** File names of the raw outputs committed beside the page. */
  readonly jsonName: string;
  readonly cubName: string;
  readonly sizes?: readonly number[];
}

/** The markdown page: ours vs CUB per primitive and size, the per-call floor, and chart links. */
export function h100Markdown(report: BenchReport, cub: readonly CubRow[], options: H100PageOptions): string {
  const sizes = options.sizes ?? H100_SIZES;
  const dev = report.device;
  const out: string[] = [];
  out.push(
    '# webdpl on the H100, against CUB',
    '',
    `Device: ${dev ? `${dev.name} (${dev.kind}${dev.subgroupMaxSize ? `, subgroups ${dev.subgroupMinSize}-${dev.subgroupMaxSize}` : ''})` : 'unknown'}; ` +
      `node ${report.node}; run ${report.date.slice(0, 10)}.`,
    `Command: \`${report.command}\` then \`cub_anchor\`, in the same device run (docs/benchmarks/README.md).`,
    '',
    'Both columns are device time of the kernels only (ours: WebGPU timestamp queries around every compute',
    'pass of one call, data resident in DeviceArrays; CUB: CUDA events, median of repeats), on the same data',
    "(cub_anchor's `fill_u32` hash; f32 = (u >> 8) / 2^24). GB/s counts compulsory traffic (the same bytes",
    'per element as cub_anchor). The ratio is ours/CUB throughput: 1.00x matches CUB, higher is better.',
    '',
    '| primitive | size | ours | ours GB/s | ours Gelem/s | CUB | CUB GB/s | CUB Gelem/s | ours/CUB |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
  );
  const missing: string[] = [];
  for (const e of report.entries) {
    if (!e.cub) continue;
    for (const s of sizes) {
      const m = deviceTime(e, s);
      const c = cub.find((r) => r.name === e.cub && r.log2 === s);
      if (!m && !c) continue;
      const ours = m
        ? [`${formatTime(m.ms)}${m.quantized ? ' (q)' : ''}`, formatRate(m.gbps), formatRate(m.gelems)]
        : ['-', '-', '-'];
      const theirs = c ? [formatTime(c.ms), formatRate(c.gbps), formatRate(c.gelems)] : ['-', '-', '-'];
      const ratio = m && c ? `**${(c.ms / m.ms).toFixed(2)}x**` : '-';
      out.push(`| ${e.cub} (\`${e.id}\`) | ${pow2(s)} | ${[...ours, ...theirs, ratio].join(' | ')} |`);
      if (!m) {
        const f = e.failures.find((x) => x.series === 'device-time' && x.log2 === s);
        missing.push(`${e.id} at ${pow2(s)}: ${f ? f.error : e.skipped ? e.skipped : 'not run'}`);
      }
    }
  }
  const skipped = report.entries.filter((e) => e.cub && e.skipped);
  for (const e of skipped) missing.push(`${e.id}: ${e.skipped}`);
  if (missing.length) out.push('', 'Not measured:', '', ...missing.map((m) => `- ${m}`));
  if (report.entries.some((e) => e.measurements.some((m) => m.quantized))) {
    out.push(
      '',
      '(q): Dawn quantized the timestamps to 65.5 µs in this run; the figure is the mean over many calls and is',
      'unreliable for calls much shorter than that.',
    );
  }
  if (report.floor) {
    out.push(
      '',
      '## Per-call cost against the floor',
      '',
      `An empty submit-and-wait round trip took ${formatTime(report.floor.ms)} (wall time). "Call" is the wall time`,
      'of one call on resident DeviceArrays until the device is idle again.',
      '',
      '| entry | size | call | call / floor |',
      '|---|---|---:|---:|',
    );
    for (const e of report.entries) {
      for (const m of e.measurements) {
        if (m.kind !== 'device-call' || m.log2 > 20) continue;
        out.push(`| ${e.id} | ${pow2(m.log2)} | ${formatTime(m.ms)} | ${(m.ms / report.floor.ms).toFixed(2)}x |`);
      }
    }
  }
  const charts = Object.entries(options.charts);
  if (charts.length) {
    out.push(
      '',
      '## Charts',
      '',
      'Throughput against size, log-log: our device time, our per-call wall time, and CUB.',
      '',
    );
    for (const [id, path] of charts) out.push(`- [${id}](${path})`);
  }
  out.push(
    '',
    `Raw results: [${options.jsonName}](${options.jsonName}) (ours, \`--json\`), [${options.cubName}](${options.cubName}) (cub_anchor's output).`,
    '',
  );
  return out.join('\n');
}

/** Chart points for one entry: our device time and per-call wall time, and CUB's rows. */
export function h100Points(e: EntryResult, cub: readonly CubRow[]): { series: string; log2: number; gelems: number }[] {
  const points = e.measurements
    .filter((m) => (m.kind === 'device-time' || m.kind === 'device-call') && !isWrong(m.check))
    .map((m) => ({ series: m.label, log2: m.log2, gelems: m.gelems }));
  for (const r of cub) if (r.name === e.cub) points.push({ series: 'CUB', log2: r.log2, gelems: r.gelems });
  return points;
}
