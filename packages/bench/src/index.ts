/**
 * @webdpl/bench: the benchmark harness behind `pnpm bench`, exported for scripts that post-process
 * its results (scripts/h100-table.ts). The CLI itself lives in cli.ts.
 */
export type { ChartPoint } from './charts';
export { chartSpec, entryPoints, renderSvg, svgToPng, writeChart, writeEntryCharts } from './charts';
export type { BenchOptions, PolicyKind } from './cli-args';
export { defaultSizes, parseArgs, parseSizes, USAGE, UsageError } from './cli-args';
export { CUB_SEED, fillF32, fillU32, hashU32 } from './data';
export type { AlgorithmApi, AlgorithmFn, Baseline, BenchEntry, HostCase } from './entries';
export { ENTRIES, selectEntries } from './entries';
export { computeCrossover, crossoverOf, formatRate, formatTime, renderReport, textTable } from './report';
export type { BenchReport, Crossover, DeviceSummary, EntryResult, Failure, Measurement, SeriesKind } from './results';
export { isWrong } from './results';
