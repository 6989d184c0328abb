/**
 * The build of a published package (core, policies, algorithms), shared by their tsup.config.ts.
 *
 * Packages with runtime-specific code (`#platform` in their package.json `imports`) are built twice
 * from the same `src/index.ts`: `dist/index.node.js` (esbuild platform node: the `node` condition
 * picks `platform.node.ts`) and `dist/index.browser.js` (platform browser: `platform.browser.ts`,
 * nothing Node-only in its graph). Packages without any get one `dist/index.js`. The exports map in
 * publishConfig points the `node`, `browser` and `default` conditions at these files and `types` at
 * the one `dist/index.d.ts`. Dependencies and peer dependencies stay external (tsup's default), so
 * `@webdpl/*` packages are imported, not copied into each other.
 */
import { rmSync } from 'node:fs';
import { defineConfig, type Options } from 'tsup';

const common: Options = {
  format: ['esm'],
  outDir: 'dist',
  outExtension: () => ({ js: '.js' }),
  splitting: false,
  sourcemap: true,
  clean: false, // the configs below build concurrently into one folder: cleaned once, below
};

export function packageBuild(opts: { readonly platforms: boolean }) {
  rmSync('dist', { recursive: true, force: true });
  const builds: Options[] = opts.platforms
    ? [
        { ...common, entry: { 'index.node': 'src/index.ts' }, platform: 'node', target: 'node20' },
        { ...common, entry: { 'index.browser': 'src/index.ts' }, platform: 'browser', target: 'es2022' },
      ]
    : [{ ...common, entry: { index: 'src/index.ts' }, platform: 'browser', target: 'es2022' }];
  builds.push({ ...common, entry: { index: 'src/index.ts' }, dts: { only: true } });
  return defineConfig(builds);
}
