/**
 * Turns one GPU-machine run into docs/benchmarks/h100.md: our `--json` output and cub_anchor's stdout
 * (taken in the same device run) become one table of ours vs CUB per primitive and size, charts of
 * throughput against size with CUB beside ours, and the raw files committed next to the page.
 *
 *   npx tsx scripts/h100-table.ts --json <ours.json> --cub <cub_anchor.txt> [--out docs/benchmarks]
 *
 * Exit codes: 0 written, 2 bad command line or unreadable input.
 */
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { chartSpec, writeChart } from '../packages/bench/src/charts';
import { h100Markdown, h100Points, parseCubOutput } from '../packages/bench/src/h100';
import type { BenchReport } from '../packages/bench/src/results';

const USAGE = 'usage: npx tsx scripts/h100-table.ts --json <ours.json> --cub <cub_anchor.txt> [--out docs/benchmarks]';

function fail(message: string): never {
  process.stderr.write(`h100-table: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function parse(argv: readonly string[]): { json: string; cub: string; out: string } {
  const got = new Map<string, string>();
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i] as string;
    const value = argv[i + 1];
    if (!['--json', '--cub', '--out'].includes(flag)) fail(`unknown argument '${flag}'`);
    if (value === undefined || value.startsWith('--')) fail(`${flag}: missing value`);
    got.set(flag, value);
  }
  const json = got.get('--json') ?? fail('--json is required');
  const cub = got.get('--cub') ?? fail('--cub is required');
  return { json, cub, out: got.get('--out') ?? 'docs/benchmarks' };
}

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  let report: BenchReport;
  let cubText: string;
  try {
    report = JSON.parse(await readFile(args.json, 'utf8')) as BenchReport;
    cubText = await readFile(args.cub, 'utf8');
  } catch (e) {
    fail((e as Error).message);
  }
  if (report.schema !== 'webdpl-bench/1') fail(`${args.json} is not a webdpl bench result (schema ${report.schema})`);
  const cub = parseCubOutput(cubText);
  if (cub.length === 0) fail(`${args.cub} has no cub_anchor result lines`);

  await mkdir(args.out, { recursive: true });
  const chartDir = join(args.out, 'h100');
  const charts: Record<string, string> = {};
  const subtitle = `${report.device?.name ?? 'GPU'} · device time · ${report.date.slice(0, 10)}`;
  for (const e of report.entries) {
    if (!e.cub) continue;
    const points = h100Points(e, cub);
    if (!points.some((p) => p.series !== 'CUB')) continue;
    const files = await writeChart(chartDir, e.id, chartSpec(`${e.label} vs CUB`, subtitle, points));
    charts[e.id] = `h100/${e.id}.svg`;
    process.stderr.write(`h100-table: ${files.join(', ')}\n`);
  }
  const jsonName = 'h100.json';
  const cubName = 'h100-cub.txt';
  if (resolve(args.json) !== resolve(args.out, jsonName)) await copyFile(args.json, join(args.out, jsonName));
  await writeFile(join(args.out, cubName), cubText);
  const page = join(args.out, 'h100.md');
  await writeFile(page, h100Markdown(report, cub, { charts, jsonName, cubName }));
  process.stderr.write(`h100-table: wrote ${page}\n`);
}

await main();
