/**
 * The readable end of a run: crossover sizes, one table per entry, and a summary of speedups over
 * plain JS. Pure functions from results to text.
 */
import { renderPerCall } from './per-call';
import { type BenchReport, type Crossover, type EntryResult, isWrong, type Measurement, SERIES_KINDS } from './results';

/** Milliseconds as a short human time: 812 ns, 12.3 µs, 4.56 ms, 2.31 s. */
export function formatTime(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  const fmt = (v: number, unit: string) => `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} ${unit}`;
  if (ms < 1e-3) return fmt(ms * 1e6, 'ns');
  if (ms < 1) return fmt(ms * 1e3, 'µs');
  if (ms < 1e3) return fmt(ms, 'ms');
  return fmt(ms / 1e3, 's');
}

/** A number with 3 significant digits (no exponent for ordinary figures). */
export function formatRate(x: number): string {
  if (!Number.isFinite(x)) return '-';
  if (x >= 100) return x.toFixed(0);
  if (x >= 10) return x.toFixed(1);
  if (x >= 1) return x.toFixed(2);
  return x.toPrecision(2);
}

/** log2 size as '2^20'. */
export function pow2(log2: number): string {
  return `2^${log2}`;
}

type BySize = Map<number, number>;

function bestOf(ms: readonly Measurement[], pick: (m: Measurement) => boolean): BySize {
  const out: BySize = new Map();
  for (const m of ms) {
    if (!pick(m)) continue;
    const prev = out.get(m.log2);
    if (prev === undefined || m.ms < prev) out.set(m.log2, m.ms);
  }
  return out;
}

/**
 * The smallest size from which `a` is faster than `b` at every larger size measured by both; null
 * when `a` is not faster at the largest such size (or nothing is comparable).
 */
export function crossoverOf(a: BySize, b: BySize): number | null {
  const sizes = [...a.keys()].filter((s) => b.has(s)).sort((x, y) => x - y);
  let from: number | null = null;
  for (let i = sizes.length - 1; i >= 0; i--) {
    const s = sizes[i] as number;
    if ((a.get(s) as number) < (b.get(s) as number)) from = s;
    else break;
  }
  return from;
}

/** Crossover sizes of an entry, or undefined when it has no GPU end-to-end or resident figures. */
export function computeCrossover(e: EntryResult): Crossover | undefined {
  const ms = e.measurements.filter((m) => !isWrong(m.check));
  const e2e = bestOf(ms, (m) => m.kind === 'device-e2e');
  const call = bestOf(ms, (m) => m.kind === 'device-call');
  const cpu = bestOf(ms, (m) => m.kind === 'seq' || m.kind === 'par');
  const js = bestOf(ms, (m) => m.kind === 'js');
  if ((e2e.size === 0 && call.size === 0) || (cpu.size === 0 && js.size === 0)) return undefined;
  const e2eVsCpu = crossoverOf(e2e, cpu);
  const e2eVsJs = crossoverOf(e2e, js);
  const residentVsCpu = crossoverOf(call, cpu);
  const maxOf = (m: BySize) => Math.max(...[...m.keys()]);
  const say = (x: number | null, a: BySize, b: BySize) => {
    if (a.size === 0 || b.size === 0) return 'not measured';
    if (x === null) return `never (up to ${pow2(Math.min(maxOf(a), maxOf(b)))})`;
    const first = Math.min(...[...a.keys()].filter((s) => b.has(s)));
    return x === first ? `from ${pow2(x)} (all sizes)` : `from ${pow2(x)}`;
  };
  const text = [
    `GPU e2e vs best CPU policy: ${say(e2eVsCpu, e2e, cpu)}`,
    `vs plain JS: ${say(e2eVsJs, e2e, js)}`,
    `GPU call (resident) vs best CPU policy: ${say(residentVsCpu, call, cpu)}`,
  ].join('; ');
  return { e2eVsCpu, e2eVsJs, residentVsCpu, text };
}

/** Table mark of a check: '' for ok, ' ~' for imprecise, ' !' for wrong. */
function mark(check: string): string {
  if (check === 'ok') return '';
  return isWrong(check) ? ' !' : ' ~';
}

function pad(s: string, w: number, left = false): string {
  return left ? s.padEnd(w) : s.padStart(w);
}

/** Renders rows as an aligned text table: first column left-aligned, the rest right-aligned. */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: readonly string[]) =>
    r
      .map((c, i) => pad(c, widths[i] as number, i === 0))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const SHORT: Readonly<Record<string, string>> = {
  seq: 'seq',
  par: 'par',
  'device-e2e': 'GPU e2e',
  'device-call': 'GPU call',
  'device-time': 'GPU kernels',
};

/** The table of one entry: a row per size, a column per series, then device-time throughput. */
export function entryTable(e: EntryResult, floorMs?: number): string {
  const head = `${e.label}  [${e.id}; compulsory traffic ${e.bytesPerElement} B/elem: ${e.traffic}]`;
  if (e.skipped) return `${head}\n  skipped: ${e.skipped}`;
  const series = new Map<string, { label: string; order: number }>();
  for (const m of [...e.measurements, ...e.failures.map((f) => ({ ...f, kind: '', label: '' }))]) {
    if (series.has(m.series)) continue;
    const kind = m.series.startsWith('js:') ? 'js' : m.series;
    series.set(m.series, {
      label: m.series.startsWith('js:') ? m.series : (SHORT[kind] ?? m.series),
      order: (SERIES_KINDS as readonly string[]).indexOf(kind),
    });
  }
  const cols = [...series.entries()].sort((a, b) => a[1].order - b[1].order);
  const sizes = [...new Set([...e.measurements.map((m) => m.log2), ...e.failures.map((f) => f.log2)])].sort(
    (a, b) => a - b,
  );
  const hasDeviceTime = e.measurements.some((m) => m.kind === 'device-time');
  const header = ['size', ...cols.map(([, c]) => c.label), ...(hasDeviceTime ? ['GB/s', 'Gelem/s'] : [])];
  const rows = sizes.map((s) => {
    const cells = cols.map(([id]) => {
      const m = e.measurements.find((x) => x.series === id && x.log2 === s);
      if (m) return `${formatTime(m.ms)}${mark(m.check)}${m.quantized ? ' q' : ''}`;
      return e.failures.some((f) => f.series === id && f.log2 === s) ? 'failed' : '';
    });
    const dt = e.measurements.find((x) => x.kind === 'device-time' && x.log2 === s);
    const extra = hasDeviceTime ? [dt ? formatRate(dt.gbps) : '', dt ? formatRate(dt.gelems) : ''] : [];
    return [pow2(s), ...cells, ...extra];
  });
  const lines = [head, indent(textTable(header, rows))];
  if (e.crossover) lines.push(`  crossover: ${e.crossover.text}`);
  const calls = e.measurements.filter((m) => m.kind === 'device-call' && m.log2 <= 20);
  if (floorMs && calls.length) {
    const ratios = calls.map((m) => `${pow2(m.log2)} ${formatRate(m.ms / floorMs)}x`).join(', ');
    lines.push(`  GPU call / floor (empty submit-and-wait, ${formatTime(floorMs)}): ${ratios}`);
  }
  for (const m of e.measurements) {
    if (isWrong(m.check)) lines.push(`  ! wrong result: ${m.series} at ${pow2(m.log2)}: ${m.check}`);
    else if (m.check !== 'ok') lines.push(`  ~ ${m.series} at ${pow2(m.log2)}: ${m.check}`);
  }
  if (e.measurements.some((m) => m.quantized)) {
    lines.push('  q: device timestamps quantized to 65.5 µs by Dawn; the figure is the mean of many samples');
  }
  for (const f of groupFailures(e)) lines.push(`  - ${f}`);
  return lines.join('\n');
}

function indent(s: string): string {
  return s
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}

/** Failures, one line per series and message with the sizes they hit. */
function groupFailures(e: EntryResult): string[] {
  const groups = new Map<string, number[]>();
  for (const f of e.failures) {
    const key = `${f.series}: ${f.error}`;
    groups.set(key, [...(groups.get(key) ?? []), f.log2]);
  }
  return [...groups.entries()].map(([k, sizes]) => `${k} (${sizes.map(pow2).join(', ')})`);
}

/** Speedups over the fastest plain-JS baseline at each entry's largest size where both were run. */
export function summaryTable(report: BenchReport): string {
  const kinds = ['seq', 'par', 'device-e2e', 'device-call', 'device-time'] as const;
  const rows: string[][] = [];
  for (const e of report.entries) {
    if (e.skipped) continue;
    const ok = e.measurements.filter((m) => !isWrong(m.check));
    const js = bestOf(ok, (m) => m.kind === 'js');
    const sizes = [...js.keys()].sort((a, b) => b - a);
    // The largest size where the GPU ran too, when it ran at all; else the largest with any series.
    const ranAt = (x: number, pick: (m: Measurement) => boolean) => ok.some((m) => m.log2 === x && pick(m));
    const s =
      sizes.find((x) => ranAt(x, (m) => m.kind === 'device-e2e')) ??
      sizes.find((x) => ranAt(x, (m) => m.kind !== 'js'));
    if (s === undefined) continue;
    const base = js.get(s) as number;
    rows.push([
      e.id,
      pow2(s),
      formatTime(base),
      ...kinds.map((k) => {
        const m = ok.find((x) => x.kind === k && x.log2 === s);
        return m ? `${formatRate(base / m.ms)}x` : '';
      }),
    ]);
  }
  if (rows.length === 0) return '';
  return textTable(['entry', 'size', 'best plain JS', 'seq', 'par', 'GPU e2e', 'GPU call', 'GPU kernels'], rows);
}

/** The whole text report printed at the end of a run. */
export function renderReport(report: BenchReport): string {
  const lines: string[] = [];
  const dev = report.device;
  lines.push(
    `webdpl bench  ${report.date}  node ${report.node}  ${report.cpu} (${report.cores} cores)`,
    dev
      ? `GPU: ${dev.name} [${dev.kind === 'software-gpu' ? 'software GPU' : dev.kind}${dev.subgroupMaxSize ? `, subgroups ${dev.subgroupMinSize}-${dev.subgroupMaxSize}` : ''}]`
      : `GPU: none (${report.gpuNote ?? 'not requested'})`,
  );
  if (report.floor) {
    lines.push(
      `floor: an empty submit-and-wait round trip takes ${formatTime(report.floor.ms)} (median of ${report.floor.samples}); compare "GPU call" at small sizes`,
    );
  }
  lines.push(
    '',
    'Times are per call (median). js: plain JavaScript; seq/par: webdpl host policies; GPU e2e: TypedArray in,',
    'TypedArray out (upload, kernels, readback); GPU call: DeviceArrays already on the GPU, until the device is',
    'idle; GPU kernels: device time from timestamp queries. GB/s and Gelem/s are of GPU kernels (device time).',
    '',
  );
  for (const e of report.entries) lines.push(entryTable(e, report.floor?.ms), '');
  if (report.perCall?.length && dev) lines.push(renderPerCall(report.perCall, dev.name), '');
  const summary = summaryTable(report);
  if (summary) {
    lines.push(
      'Speedup over the fastest plain-JS baseline, at the largest size the GPU ran (else the largest):',
      summary,
      '',
    );
  }
  for (const n of report.notes) lines.push(`note: ${n}`);
  lines.push(`done in ${report.durationS.toFixed(0)} s`);
  return lines.join('\n');
}
