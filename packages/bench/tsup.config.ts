/**
 * The GPU-machine bundle: `dist/cli.mjs`, one ESM file with every dependency inlined except `webgpu`
 * (Dawn, unpacked there by shared/gpu/remote.sh) and `@resvg/resvg-js` (a native addon; without it
 * the bench only skips PNGs). CommonJS dependencies inside an ESM bundle need a real `require` for
 * Node built-ins, hence the banner.
 */
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { cli: 'src/cli.ts' },
  format: ['esm'],
  outDir: 'dist',
  outExtension: () => ({ js: '.mjs' }),
  platform: 'node',
  target: 'node20',
  clean: true,
  splitting: false,
  minify: false,
  sourcemap: false,
  noExternal: [/^(?!webgpu$|@resvg\/resvg-js$).*/],
  external: ['webgpu', '@resvg/resvg-js'],
  banner: {
    js: "import { createRequire as __benchRequire } from 'node:module'; const require = __benchRequire(import.meta.url);",
  },
});
