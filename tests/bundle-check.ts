/** What must never reach a browser bundle, checked on esbuild metafiles by the browser and packaging tests. */
import { builtinModules } from 'node:module';
import type { Metafile } from 'esbuild';

const BUILTINS = new Set(builtinModules);

function nodeOnly(path: string): boolean {
  return (
    path.startsWith('node:') ||
    BUILTINS.has(path) ||
    /(^|[/\\])webgpu([/\\]|$)/.test(path) || // Dawn for Node (the `webgpu` package)
    /worker_threads/.test(path) ||
    /platform\.node\.[tj]s$/.test(path)
  );
}

/** Node built-ins, Dawn (`webgpu`), worker_threads or a platform.node module among a bundle's inputs or their imports. */
export function nodeOnlyModules(meta: Metafile): string[] {
  const found = new Set<string>();
  for (const [path, input] of Object.entries(meta.inputs)) {
    if (nodeOnly(path)) found.add(path);
    for (const imp of input.imports) if (nodeOnly(imp.path)) found.add(`${path} imports ${imp.path}`);
  }
  return [...found];
}
