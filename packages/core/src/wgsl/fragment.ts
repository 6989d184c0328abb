/**
 * WGSL as typed template modules. A fragment is a pure value built from typed parameters: a mangled
 * name that carries every parameter (so it is its own cache key and error context), its code, the
 * fragments it needs, the `enable` directives it needs, and the workgroup memory it declares.
 */
import { UnsupportedOnDeviceError } from '../errors';

export interface WgslFragment {
  /** Mangled name; also the WGSL identifier of the fragment's main function. */
  readonly name: string;
  readonly code: string;
  readonly deps: readonly WgslFragment[];
  /** `enable` extensions, e.g. 'subgroups', 'f16'. */
  readonly enables: readonly string[];
  /** Bytes of workgroup memory this fragment declares (not counting deps). */
  readonly workgroupBytes: number;
}

/** Makes a WGSL identifier from parts: lowercased, non-identifier characters to '_'. */
export function mangle(...parts: (string | number | boolean)[]): string {
  return parts
    .map((p) => (typeof p === 'boolean' ? (p ? 't' : 'f') : String(p)))
    .join('__')
    .replace(/[^A-Za-z0-9_]/g, '_')
    .replace(/^([0-9])/, '_$1');
}

/** Builds a fragment. `deps` may contain undefined entries (skipped). */
export function fragment(spec: {
  name: string;
  code: string;
  deps?: readonly (WgslFragment | undefined)[];
  enables?: readonly string[];
  workgroupBytes?: number;
}): WgslFragment {
  fragmentsMade++;
  return {
    name: spec.name,
    code: spec.code,
    deps: (spec.deps ?? []).filter((d): d is WgslFragment => d !== undefined),
    enables: spec.enables ?? [],
    workgroupBytes: spec.workgroupBytes ?? 0,
  };
}

let fragmentsMade = 0;

/**
 * How many fragments `fragment()` has made in this process: tests use it to check that repeated
 * calls assemble no WGSL (fronts and engines memoize what they hand to the engines).
 */
export function fragmentCount(): number {
  return fragmentsMade;
}

/**
 * Error raised by the linker: a module over a device limit (workgroup memory, workgroup size), or
 * two different fragments under one name. An UnsupportedOnDeviceError, so policies that fall back
 * run such a call on the CPU.
 */
export class WgslLinkError extends UnsupportedOnDeviceError {
  override name = 'WgslLinkError';
}

/** Device limits a linked module must fit (webdpl's view of the device's limits). */
export interface LinkLimits {
  /** maxComputeWorkgroupStorageSize */
  readonly workgroupBytes?: number;
  /** maxComputeInvocationsPerWorkgroup */
  readonly invocations?: number;
  /** maxComputeWorkgroupSizeX, Y, Z */
  readonly sizeX?: number;
  readonly sizeY?: number;
  readonly sizeZ?: number;
}

/**
 * Helpers the linker adds to a module whenever its code calls them, so literal builders such as
 * wgslLiteral() can emit them without threading a dependency through every caller.
 */
const INTRINSICS: readonly WgslFragment[] = [
  fragment({
    name: 'wdpl_f32_bits',
    code: '/** f32 from raw bits at run time (inf, NaN and -0 cannot be WGSL constants). */\nfn wdpl_f32_bits(b: u32) -> f32 { return bitcast<f32>(b); }',
  }),
];

/** Every fragment `root` needs, each once, dependencies first. */
function collect(root: WgslFragment): WgslFragment[] {
  const order: WgslFragment[] = [];
  const seen = new Map<string, WgslFragment>();
  const visiting = new Set<string>();
  const visit = (f: WgslFragment) => {
    const prev = seen.get(f.name);
    if (prev) {
      if (prev.code !== f.code) throw new WgslLinkError(`two different fragments are named '${f.name}'`);
      return;
    }
    if (visiting.has(f.name)) throw new WgslLinkError(`fragment '${f.name}' depends on itself`);
    visiting.add(f.name);
    for (const d of f.deps) visit(d);
    visiting.delete(f.name);
    seen.set(f.name, f);
    order.push(f);
  };
  visit(root);
  return order;
}

function sumBytes(fragments: readonly WgslFragment[]): number {
  let s = 0;
  for (const f of fragments) s += f.workgroupBytes;
  return s;
}

/**
 * Bytes of workgroup memory the module of `root` declares: what `link` checks against the device's
 * limit. Engines size their tuning with it (the footprint of the very fragments they link), so a
 * tuning chosen to fit and the kernel it builds cannot disagree.
 */
export function workgroupFootprint(root: WgslFragment): number {
  return sumBytes(collect(root));
}

/** Throws WgslLinkError when an entry point's @workgroup_size exceeds the device's limits. */
function checkWorkgroupSizes(rootName: string, fragments: readonly WgslFragment[], lim: LinkLimits): void {
  if (lim.invocations === undefined && lim.sizeX === undefined) return;
  const inf = Number.POSITIVE_INFINITY;
  for (const f of fragments) {
    for (const m of f.code.matchAll(/@workgroup_size\(\s*(\d+)u?\s*(?:,\s*(\d+)u?\s*)?(?:,\s*(\d+)u?\s*)?\)/g)) {
      const [x, y, z] = [Number(m[1]), Number(m[2] ?? 1), Number(m[3] ?? 1)];
      const over =
        x * y * z > (lim.invocations ?? inf)
          ? `${x * y * z} invocations; the device allows ${lim.invocations}`
          : x > (lim.sizeX ?? inf) || y > (lim.sizeY ?? inf) || z > (lim.sizeZ ?? inf)
            ? `a workgroup of ${x}x${y}x${z}; the device allows ${lim.sizeX}x${lim.sizeY}x${lim.sizeZ}`
            : undefined;
      if (over) throw new WgslLinkError(`'${rootName}' needs ${over} (in '${f.name}')`);
    }
  }
}

export interface LinkedModule {
  readonly code: string;
  readonly workgroupBytes: number;
  readonly enables: readonly string[];
  /** Names of every fragment linked, in order. */
  readonly fragments: readonly string[];
}

/**
 * Links a root fragment and everything it needs into one module: each fragment once (dependencies
 * first), `enable` lines on top, and the sum of workgroup memory checked against `maxWorkgroupBytes`.
 */
export function link(root: WgslFragment, limits: number | LinkLimits = Number.POSITIVE_INFINITY): LinkedModule {
  const lim: LinkLimits = typeof limits === 'number' ? { workgroupBytes: limits } : limits;
  const maxWorkgroupBytes = lim.workgroupBytes ?? Number.POSITIVE_INFINITY;
  const order = collect(root);
  for (const intrinsic of INTRINSICS) {
    if (!order.some((f) => f.name === intrinsic.name) && order.some((f) => f.code.includes(`${intrinsic.name}(`))) {
      order.unshift(intrinsic);
    }
  }
  const enables = [...new Set(order.flatMap((f) => f.enables))].sort();
  const workgroupBytes = sumBytes(order);
  if (workgroupBytes > maxWorkgroupBytes) {
    throw new WgslLinkError(
      `'${root.name}' needs ${workgroupBytes} bytes of workgroup memory; the device allows ${maxWorkgroupBytes} (${order
        .filter((f) => f.workgroupBytes)
        .map((f) => `${f.name}: ${f.workgroupBytes}`)
        .join(', ')})`,
    );
  }
  checkWorkgroupSizes(root.name, order, lim);
  // Our subgroup code keeps every lane of a subgroup on the same path (select() instead of branches,
  // uniform loop bounds), but WGSL's analysis cannot prove it through values such as sg_id, which
  // come from an atomic: turn that one diagnostic off where subgroups are used.
  const directives = enables.includes('subgroups') ? ['diagnostic(off, subgroup_uniformity);'] : [];
  const code = [
    ...enables.map((e) => `enable ${e};`),
    ...directives,
    ...order.map((f) => `// ---- ${f.name}\n${f.code.trim()}`),
  ].join('\n\n');
  return { code: `${code}\n`, workgroupBytes, enables, fragments: order.map((f) => f.name) };
}
