/**
 * Compute pipelines cached per device.
 *
 * - The pipeline cache proper is keyed by the full linked WGSL source (with the entry point): the
 *   same code compiles once, different code never shares a pipeline.
 * - In front of it, two memos skip linking on repeated calls: by fragment object, and by the root
 *   fragment's mangled name, taken only when the root's code and its dependencies' names equal
 *   those of the fragment the pipeline was linked from (a mangled name carries every parameter of
 *   its fragment, so equal names below the root mean equal code).
 * - `pipelineFor` lets an engine skip even building the root fragment: its key names every
 *   parameter and fragment the kernel is built from, and the caller-supplied fragments (`leaves`:
 *   loads, element functions, operators) are compared by code on every hit, so a front that hands
 *   the engine a different fragment under a known name gets an error instead of the old kernel.
 *
 * Modules over the device's limits are WgslLinkErrors; a module the device fails to compile is an
 * UnsupportedOnDeviceError naming it (both UnsupportedOnDeviceErrors: policies that fall back run the
 * call on the CPU), except an error inside a user's `{ js, wgsl }` body: a GpuValidationError
 * naming the body's line.
 */
import type { GpuDevice } from './device';
import { GpuValidationError, UnsupportedOnDeviceError } from './errors';
import { type LinkLimits, link, type WgslFragment, WgslLinkError } from './wgsl/fragment';

/** The limits a module must fit on `device` (as webdpl sees them: OpenOptions.limits may lower them). */
export function linkLimits(device: GpuDevice): LinkLimits {
  const l = device.limits;
  return {
    workgroupBytes: l.maxComputeWorkgroupStorageSize,
    invocations: l.maxComputeInvocationsPerWorkgroup,
    sizeX: l.maxComputeWorkgroupSizeX,
    sizeY: l.maxComputeWorkgroupSizeY,
    sizeZ: l.maxComputeWorkgroupSizeZ,
  };
}

interface NamedEntry {
  readonly code: string;
  readonly deps: string;
  readonly pipeline: Promise<GPUComputePipeline>;
}

interface KeyedEntry {
  readonly leaves: readonly string[];
  readonly leafNames: readonly string[];
  readonly pipeline: Promise<GPUComputePipeline>;
}

interface DeviceCache {
  /** entry point + '\n' + linked code -> pipeline. */
  readonly byCode: Map<string, Promise<GPUComputePipeline>>;
  readonly byFragment: WeakMap<WgslFragment, Map<string, Promise<GPUComputePipeline>>>;
  /** entry point + '\0' + root name -> what it was linked from. */
  readonly byName: Map<string, NamedEntry>;
  /** engine key -> pipeline and the code of its leaves. */
  readonly byKey: Map<string, KeyedEntry>;
  /** Modules compiled (shader module + pipeline creations). */
  compiled: number;
}

const caches = new WeakMap<GpuDevice, DeviceCache>();

function cacheOf(device: GpuDevice): DeviceCache {
  let c = caches.get(device);
  if (!c) {
    c = { byCode: new Map(), byFragment: new WeakMap(), byName: new Map(), byKey: new Map(), compiled: 0 };
    caches.set(device, c);
  }
  return c;
}

function depNames(f: WgslFragment): string {
  let s = '';
  for (const d of f.deps) s += `${d.name}\u0000`;
  return s;
}

/**
 * The compute pipeline of `root` (entry point `main` unless given) on `device`, compiled once.
 * Workgroup memory is checked against the device limit at link time.
 */
export function getPipeline(device: GpuDevice, root: WgslFragment, entryPoint = 'main'): Promise<GPUComputePipeline> {
  const cache = cacheOf(device);
  let perFragment = cache.byFragment.get(root);
  const hit = perFragment?.get(entryPoint);
  if (hit) return hit;
  const nameKey = `${entryPoint}\u0000${root.name}`;
  const named = cache.byName.get(nameKey);
  let p: Promise<GPUComputePipeline> | undefined;
  if (named && named.code === root.code && named.deps === depNames(root)) {
    p = named.pipeline;
  } else {
    const mod = link(root, linkLimits(device));
    const key = `${entryPoint}\n${mod.code}`;
    p = cache.byCode.get(key);
    if (!p) {
      const compiling = compile(device, root.name, mod.code, entryPoint);
      cache.compiled++;
      p = compiling;
      cache.byCode.set(key, compiling);
      compiling.catch(() => {
        cache.compiled--;
        cache.byCode.delete(key);
        if (cache.byName.get(nameKey)?.pipeline === compiling) cache.byName.delete(nameKey);
      });
    }
    cache.byName.set(nameKey, { code: root.code, deps: depNames(root), pipeline: p });
  }
  if (!perFragment) {
    perFragment = new Map();
    cache.byFragment.set(root, perFragment);
  }
  perFragment.set(entryPoint, p);
  return p;
}

/**
 * The pipeline an engine builds from parameters, memoized by `key` without building the fragment
 * again. `key` must name every parameter and fragment `build` uses (tuning, types, fragment names);
 * `leaves` are the fragments the engine got from its caller, checked by code on every hit. Throws
 * WgslLinkError when a leaf's code differs from the one first seen under its name.
 */
export function pipelineFor(
  device: GpuDevice,
  key: string,
  leaves: readonly WgslFragment[],
  build: () => WgslFragment,
  entryPoint = 'main',
): Promise<GPUComputePipeline> {
  const cache = cacheOf(device);
  const k = `${entryPoint}\u0000${key}`;
  const hit = cache.byKey.get(k);
  if (hit) {
    for (let i = 0; i < leaves.length; i++) {
      const leaf = leaves[i] as WgslFragment;
      if (leaf.code !== hit.leaves[i] || leaf.name !== hit.leafNames[i]) {
        throw new WgslLinkError(`two different fragments are named '${leaf.name}' (kernel '${key}')`);
      }
    }
    return hit.pipeline;
  }
  const pipeline = getPipeline(device, build(), entryPoint);
  cache.byKey.set(k, { leaves: leaves.map((f) => f.code), leafNames: leaves.map((f) => f.name), pipeline });
  pipeline.catch(() => {
    if (cache.byKey.get(k)?.pipeline === pipeline) cache.byKey.delete(k);
  });
  return pipeline;
}

async function compile(device: GpuDevice, name: string, code: string, entryPoint: string): Promise<GPUComputePipeline> {
  device.queue.checkAlive();
  const gpu = device.gpu;
  gpu.pushErrorScope('validation');
  const module = gpu.createShaderModule({ code, label: name });
  const pipeline = gpu.createComputePipeline({ layout: 'auto', compute: { module, entryPoint }, label: name });
  const err = await gpu.popErrorScope();
  if (err) {
    const info = await module.getCompilationInfo();
    const lines = code.split('\n');
    const errors = info.messages.filter((m) => m.type === 'error');
    const msgs = errors.map(
      (m) => `${where(lines, m.lineNum)}:${m.linePos} ${m.message}\n    ${lines[m.lineNum - 1] ?? ''}`,
    );
    // An error inside a user's `{ js, wgsl }` body is reported against that body, first.
    const user = errors.map((m) => userBodyLine(lines, m.lineNum)).find((u) => u !== undefined);
    if (user) {
      // The caller's WGSL is wrong on every device: the caller's to see, never a fallback.
      const head = `the { wgsl } body of function '${user.fragment}' does not compile (line ${user.line} of the body: ${
        errors[0]?.message ?? err.message
      })`;
      throw new GpuValidationError(`${head}${msgs.length ? `\n${msgs.join('\n')}` : ''}`);
    }
    // One of webdpl's kernels this device's compiler rejects (a limit or feature the device lacks):
    // policies that fall back run the call on the CPU.
    throw new UnsupportedOnDeviceError(
      `WGSL module '${name}' failed to compile on '${device.info.name}': ${err.message}${msgs.length ? `\n${msgs.join('\n')}` : ''}`,
    );
  }
  return pipeline;
}

/** The fragment (linker marker `// ---- name`) holding module line `lineNum` (1-based), and the line in it. */
function fragmentAt(lines: readonly string[], lineNum: number): { fragment: string; line: number } | undefined {
  for (let i = Math.min(lineNum, lines.length) - 1; i >= 0; i--) {
    const m = /^\/\/ ---- (\S+)$/.exec(lines[i] as string);
    if (m) return { fragment: m[1] as string, line: lineNum - 1 - i };
  }
  return undefined;
}

/** `fragment line k` for a module line, else the module line number. */
function where(lines: readonly string[], lineNum: number): string {
  const f = fragmentAt(lines, lineNum);
  return f ? `${f.fragment} line ${f.line}` : `line ${lineNum}`;
}

/**
 * For a module line inside a user's explicit `{ js, wgsl }` function (fragments named `fn_<hash>...`,
 * code `fn name(params) -> T {` + the body + `}`): the fragment and the line within the body.
 */
function userBodyLine(lines: readonly string[], lineNum: number): { fragment: string; line: number } | undefined {
  const f = fragmentAt(lines, lineNum);
  if (!f?.fragment.startsWith('fn_') || f.line < 2) return undefined;
  return { fragment: f.fragment, line: f.line - 1 };
}

/** Number of pipelines compiled (or compiling) on `device`, failed ones not counted (tests, diagnostics). */
export function pipelineCount(device: GpuDevice): number {
  return caches.get(device)?.compiled ?? 0;
}
