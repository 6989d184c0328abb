/**
 * The command line of `pnpm bench`: a pure parser from argv to options, so it is unit-tested and the
 * CLI only has to turn a UsageError into a message and exit code 2.
 */

/** What a run measures: plain-JS baselines, the two host policies, and the GPU device policy. */
export const POLICY_KINDS = ['js', 'seq', 'par', 'device'] as const;
export type PolicyKind = (typeof POLICY_KINDS)[number];

/** Largest log2 size accepted (2^30 elements of 4 bytes is 4 GiB, past any storage binding). */
export const MAX_LOG2 = 30;

/** Options of one bench run. */
export interface BenchOptions {
  /** Entry ids or algorithm names to run (`reduce` runs every reduce variant); undefined runs the set of the mode. */
  readonly algorithms: readonly string[] | undefined;
  /** log2 sizes, ascending; undefined means the mode's default. */
  readonly sizes: readonly number[] | undefined;
  /** Largest log2 size of the default sizes. @default 24 */
  readonly max: number;
  /** Largest log2 size on a software GPU (lavapipe is slow). @default 20 (18 with --quick) */
  readonly softwareGpuMax: number | undefined;
  /** What to measure. @default all of POLICY_KINDS */
  readonly policies: ReadonlySet<PolicyKind>;
  /** Folder for charts and the default JSON. @default 'bench-results' */
  readonly out: string;
  /** Where to write the JSON results; undefined writes `<out>/results.json`. */
  readonly json: string | undefined;
  /** GPU device time only, for the CUB comparison (the GPU-machine run). @default false */
  readonly deviceOnly: boolean;
  /** Short time budgets and fewer sizes, for a smoke run. @default false */
  readonly quick: boolean;
  /** Time budget per measurement in milliseconds. @default 100 (40 with --quick) */
  readonly timeMs: number;
  /** Skip the SVG/PNG charts. @default false */
  readonly charts: boolean;
  /**
   * The seq and par series run on `allocShared` copies of the inputs and outputs (the arrays par
   * hands to its workers without copying); plain JS and the GPU keep plain arrays. @default false
   */
  readonly shared: boolean;
  /** Print the entries and exit. @default false */
  readonly list: boolean;
  /**
   * Times each plain-JS baseline in a process of its own, so it gets at every size the form V8
   * gives a loop at the first size a process runs (see runner.ts `baselineProcess`). Off, the
   * baselines run in this process: the loops of many entries are specialized at the first size and
   * generic (slower) at the later ones. A fresh process can also land in a loop's slow mode (the
   * reduce entry's for loop read 0.55 or 3.97 ms at 2^20 in separate processes). @default false
   */
  readonly freshBaselines: boolean;
  /**
   * Internal: `ID:NAME:LOG2` times that plain-JS baseline of entry ID at 2^LOG2 alone in this
   * process and prints its timing as one JSON line. The runner times every baseline this way, in a
   * process of its own (see runner.ts).
   */
  readonly baseline: string | undefined;
  /** Print the usage and exit. @default false */
  readonly help: boolean;
}

/** Bad command-line input; the CLI prints the message and exits with code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export const USAGE = `Usage: pnpm bench [options]

Benchmarks every webdpl algorithm against plain JS, on the CPU policies (seq, par) and on the best
GPU (hardware first, else a software GPU such as lavapipe), and writes a table, JSON and charts.

Options:
  --algorithms a,b      entry ids or algorithm names (e.g. reduce,sort-f32); default: all
  --sizes SPEC          log2 sizes: a range 10..24, a stepped range 10..24:2, a list 10,16,20,
                        or a mix 10..14,20; default 10..<max>:2
  --max N               largest log2 size of the default sizes (default 24; 28 on a big GPU)
  --software-gpu-max N  largest log2 size on a software GPU (default 20, 18 with --quick)
  --policies p,q        any of js,seq,par,device (default: all)
  --out DIR             folder for charts and results.json (default bench-results)
  --json FILE           write the JSON results to FILE (default DIR/results.json)
  --device-only         GPU device time only, for the CUB comparison (the GPU-machine run)
  --quick               short time budgets and fewer sizes: a smoke run
  --time MS             time budget per measurement in ms (default 100, 40 with --quick)
  --no-charts           skip the SVG/PNG charts
  --shared              seq and par on allocShared arrays (par's workers share them uncopied)
  --fresh-baselines     time each plain-JS baseline in a new process (same form at every size)
  --list                list the benchmark entries and exit
  --baseline ID:NAME:N  (internal) time one plain-JS baseline at 2^N alone, print its timing as JSON
  -h, --help            this text
`;

function parseInteger(flag: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`${flag}: expected an integer, got '${text}'`);
  const v = Number(text);
  if (v < min || v > max) throw new UsageError(`${flag}: expected an integer in [${min}, ${max}], got ${v}`);
  return v;
}

/**
 * Parses a size spec into ascending, distinct log2 sizes: `10..24` (every log2), `10..24:2` (every
 * other), `10,16,20`, or a comma-separated mix. Throws UsageError on anything else.
 */
export function parseSizes(spec: string): number[] {
  const flag = '--sizes';
  if (spec.trim() === '') throw new UsageError(`${flag}: empty size list`);
  const out = new Set<number>();
  for (const raw of spec.split(',')) {
    const part = raw.trim();
    const range = /^(\d+)\.\.(\d+)(?::(\d+))?$/.exec(part);
    if (range) {
      const lo = parseInteger(flag, range[1] as string, 0, MAX_LOG2);
      const hi = parseInteger(flag, range[2] as string, 0, MAX_LOG2);
      const step = range[3] === undefined ? 1 : parseInteger(flag, range[3], 1, MAX_LOG2);
      if (lo > hi) throw new UsageError(`${flag}: range '${part}' goes down (write ${hi}..${lo})`);
      for (let s = lo; s <= hi; s += step) out.add(s);
      continue;
    }
    if (/^\d+$/.test(part)) {
      out.add(parseInteger(flag, part, 0, MAX_LOG2));
      continue;
    }
    throw new UsageError(
      `${flag}: '${part}' is not a log2 size, a range like 10..24, or a stepped range like 10..24:2`,
    );
  }
  return [...out].sort((a, b) => a - b);
}

function parseList(flag: string, text: string): string[] {
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 0) throw new UsageError(`${flag}: empty list`);
  return items;
}

function parsePolicies(text: string): Set<PolicyKind> {
  const out = new Set<PolicyKind>();
  for (const p of parseList('--policies', text)) {
    if (!(POLICY_KINDS as readonly string[]).includes(p)) {
      throw new UsageError(`--policies: unknown policy '${p}' (expected any of ${POLICY_KINDS.join(', ')})`);
    }
    out.add(p as PolicyKind);
  }
  return out;
}

/** Flags that take a value, so `--flag value` and `--flag=value` both work. */
const VALUE_FLAGS = new Set([
  '--algorithms',
  '--sizes',
  '--max',
  '--software-gpu-max',
  '--policies',
  '--out',
  '--json',
  '--time',
  '--baseline',
]);

/** Parses `argv` (without node and the script). Throws UsageError on bad input. */
export function parseArgs(argv: readonly string[]): BenchOptions {
  const values = new Map<string, string>();
  const switches = new Set<string>();
  const args = argv[0] === '--' ? argv.slice(1) : argv;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    if (VALUE_FLAGS.has(flag)) {
      let value: string | undefined;
      if (eq > 0) value = arg.slice(eq + 1);
      else {
        value = args[i + 1];
        if (value === undefined || value.startsWith('--')) throw new UsageError(`${flag}: missing value`);
        i++;
      }
      if (values.has(flag)) throw new UsageError(`${flag}: given twice`);
      values.set(flag, value);
      continue;
    }
    if (eq > 0) throw new UsageError(`${flag}: takes no value`);
    switch (arg) {
      case '--device-only':
      case '--quick':
      case '--no-charts':
      case '--shared':
      case '--fresh-baselines':
      case '--list':
        switches.add(arg);
        break;
      case '-h':
      case '--help':
        switches.add('--help');
        break;
      default:
        throw new UsageError(
          arg.startsWith('-') ? `unknown option '${arg}'` : `unexpected argument '${arg}' (options start with --)`,
        );
    }
  }
  const quick = switches.has('--quick');
  const deviceOnly = switches.has('--device-only');
  const get = (flag: string) => values.get(flag);
  const sizesText = get('--sizes');
  const maxText = get('--max');
  const swText = get('--software-gpu-max');
  const timeText = get('--time');
  const policiesText = get('--policies');
  if (deviceOnly && policiesText !== undefined) {
    throw new UsageError('--device-only measures the device policy only; drop --policies');
  }
  if (deviceOnly && switches.has('--shared')) {
    throw new UsageError('--shared applies to the CPU policies; --device-only runs none');
  }
  const jsonText = get('--json');
  const outText = get('--out');
  if (jsonText === '') throw new UsageError('--json: empty file name');
  if (outText === '') throw new UsageError('--out: empty folder name');
  const algorithmsText = get('--algorithms');
  return {
    algorithms: algorithmsText === undefined ? undefined : parseList('--algorithms', algorithmsText),
    sizes: sizesText === undefined ? undefined : parseSizes(sizesText),
    max: maxText === undefined ? 24 : parseInteger('--max', maxText, 0, MAX_LOG2),
    softwareGpuMax: swText === undefined ? undefined : parseInteger('--software-gpu-max', swText, 0, MAX_LOG2),
    policies: deviceOnly
      ? new Set<PolicyKind>(['device'])
      : policiesText === undefined
        ? new Set(POLICY_KINDS)
        : parsePolicies(policiesText),
    out: outText ?? 'bench-results',
    json: jsonText,
    deviceOnly,
    quick,
    timeMs: timeText === undefined ? (quick ? 40 : 100) : parseInteger('--time', timeText, 1, 600_000),
    charts: !switches.has('--no-charts'),
    shared: switches.has('--shared'),
    list: switches.has('--list'),
    help: switches.has('--help'),
    freshBaselines: switches.has('--fresh-baselines'),
    baseline: get('--baseline'),
  };
}

/**
 * The log2 sizes a run uses: `--sizes` when given, else every other log2 from 10 to `--max`
 * (`--quick`: 10, 14, 18 and 20 capped at `--max`). Always ascending.
 */
export function defaultSizes(options: Pick<BenchOptions, 'sizes' | 'max' | 'quick'>): number[] {
  if (options.sizes) return [...options.sizes];
  const out: number[] = [];
  if (options.quick) {
    for (const s of [10, 14, 18, 20]) if (s <= options.max) out.push(s);
    return out.length ? out : [options.max];
  }
  for (let s = Math.min(10, options.max); s <= options.max; s += 2) out.push(s);
  if (out[out.length - 1] !== options.max) out.push(options.max);
  return out;
}
