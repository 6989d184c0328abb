/**
 * Charts: throughput (elements/s) against size, log-log, one per entry, with every series.
 *
 * Vega-Lite compiled by Vega renders SVG headless in Node (`View#toSVG`, no browser, no canvas):
 * both are actively maintained, pure JavaScript, and inline into the GPU-machine bundle. PNG comes
 * from @resvg/resvg-js (a prebuilt native binary from the npm registry) when it loads; it is an
 * optional dependency and a missing one only skips the PNGs.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { type EntryResult, isWrong } from './results';

/** One point of a chart. */
export interface ChartPoint {
  /** Legend label. */
  readonly series: string;
  readonly log2: number;
  /** G elements per second. */
  readonly gelems: number;
}

/** Series colours: plain JS in greys, host policies in blues and greens, the GPU in warm colours. */
const COLORS: Readonly<Record<string, string>> = {
  seq: '#4c78a8',
  par: '#54a24b',
  'GPU end to end': '#f58518',
  'GPU call, data resident': '#e45756',
  'GPU kernels (device time)': '#b279a2',
  CUB: '#222222',
};
const JS_GREYS = ['#9d755d', '#bab0ac', '#79706e', '#d6a5c9'];

/** Builds the Vega-Lite spec of one chart. */
export function chartSpec(title: string, subtitle: string, points: readonly ChartPoint[]): TopLevelSpec {
  const names = [...new Set(points.map((p) => p.series))];
  let grey = 0;
  const range = names.map((s) => COLORS[s] ?? JS_GREYS[grey++ % JS_GREYS.length] ?? '#888888');
  const sizes = [...new Set(points.map((p) => p.log2))].sort((a, b) => a - b);
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: title, subtitle },
    width: 560,
    height: 340,
    background: 'white',
    config: { font: 'DejaVu Sans, Helvetica, Arial, sans-serif' },
    data: { values: points.map((p) => ({ series: p.series, n: 2 ** p.log2, gelems: p.gelems })) },
    mark: { type: 'line', point: true, strokeWidth: 2 },
    encoding: {
      x: {
        field: 'n',
        type: 'quantitative',
        title: 'elements',
        scale: { type: 'log', base: 2 },
        axis: { values: sizes.map((s) => 2 ** s), labelExpr: "'2^' + round(log(datum.value) / log(2))" },
      },
      y: { field: 'gelems', type: 'quantitative', title: 'G elements / s (higher is better)', scale: { type: 'log' } },
      color: {
        field: 'series',
        type: 'nominal',
        title: null,
        scale: { domain: names, range },
        sort: names,
        legend: { labelLimit: 320 },
      },
      strokeDash: {
        condition: { test: "datum.series === 'CUB'", value: [6, 3] },
        value: [1, 0],
      },
    },
  } as TopLevelSpec;
}

/** Renders a chart to an SVG string. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new View(parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

type Resvg = new (
  svg: string,
  options: object,
) => {
  render(): { asPng(): Uint8Array };
};

let resvg: Promise<Resvg | undefined> | undefined;
let pngUnavailable: string | undefined;

/** Why PNGs were skipped, once `svgToPng` returned undefined. */
export function pngUnavailableReason(): string | undefined {
  return pngUnavailable;
}

/** The resvg renderer, or undefined (with the reason in `pngUnavailableReason()`) when it does not load. */
async function loadResvg(): Promise<Resvg | undefined> {
  resvg ??= (async () => {
    try {
      const mod = (await import('@resvg/resvg-js')) as { Resvg: Resvg };
      return mod.Resvg;
    } catch (e) {
      pngUnavailable = `PNG charts skipped: @resvg/resvg-js did not load (${(e as Error).message.split('\n')[0]})`;
      return undefined;
    }
  })();
  return resvg;
}

/** Renders an SVG to PNG at 2x, or undefined when no renderer is available. */
export async function svgToPng(svg: string): Promise<Uint8Array | undefined> {
  const R = await loadResvg();
  if (!R) return undefined;
  const r = new R(svg, {
    fitTo: { mode: 'zoom', value: 2 },
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans', sansSerifFamily: 'DejaVu Sans' },
  });
  return r.render().asPng();
}

/** The chart points of an entry: every series with a correct result. */
export function entryPoints(e: EntryResult): ChartPoint[] {
  return e.measurements
    .filter((m) => !isWrong(m.check))
    .map((m) => ({ series: m.label, log2: m.log2, gelems: m.gelems }));
}

/** Writes `<dir>/<name>.svg` (and `.png` when possible); returns the files written. */
export async function writeChart(dir: string, name: string, spec: TopLevelSpec): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const svg = await renderSvg(spec);
  const files = [join(dir, `${name}.svg`)];
  await writeFile(files[0] as string, svg);
  const png = await svgToPng(svg);
  if (png) {
    files.push(join(dir, `${name}.png`));
    await writeFile(files[1] as string, png);
  }
  return files;
}

/** Writes one chart per entry that has results into `dir`; returns the files written. */
export async function writeEntryCharts(
  dir: string,
  entries: readonly EntryResult[],
  subtitle: string,
): Promise<string[]> {
  const files: string[] = [];
  for (const e of entries) {
    const points = entryPoints(e);
    if (points.length === 0) continue;
    files.push(...(await writeChart(dir, e.id, chartSpec(e.label, subtitle, points))));
  }
  return files;
}
