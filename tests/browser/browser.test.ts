/**
 * The browser suite: every algorithm family of cases.ts under seq, par, device and auto at the
 * edge sizes, in headless Chromium (SwiftShader's WebGPU adapter without a GPU), on a page bundled by
 * esbuild with defaults from the packages' browser entries and served from 127.0.0.1 twice: with
 * COOP/COEP (cross-origin isolated: par on Web Workers) and without (par degrades to seq and says
 * so). Each (family, policy) is one test; the page reports every wrong size back.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as algorithms from '@webdpl/algorithms';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StaticServer, serve } from '../../scripts/static-server';
import { nodeOnlyModules } from '../bundle-check';
import { FAMILIES, NOT_ALGORITHMS, POLICIES } from './cases';
import { findChromium, launchChromium } from './chromium';
import type { CaseResult, PageInfo } from './page';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../..');
const out = join(root, '.tmp/browser-suite');

describe('browser suite table', () => {
  it('has a row for every algorithm @webdpl/algorithms exports', () => {
    const covered = new Set([...FAMILIES.flatMap((f) => f.covers), ...NOT_ALGORITHMS]);
    const missing = Object.keys(algorithms).filter((k) => !covered.has(k));
    expect(missing, 'exports without a row in tests/browser/cases.ts').toEqual([]);
  });
});

const chromiumPath = findChromium('browser suite (tests/browser)');

async function buildPage(): Promise<void> {
  mkdirSync(out, { recursive: true });
  // esbuild's defaults for a browser bundle: nothing configured (no externals, no aliases).
  const result = await build({
    entryPoints: [join(here, 'page.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    outfile: join(out, 'page.js'),
    metafile: true,
    logLevel: 'silent',
  });
  expect(nodeOnlyModules(result.metafile)).toEqual([]);
  writeFileSync(
    join(out, 'index.html'),
    '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>webdpl browser suite</title><script type="module" src="./page.js"></script>\n',
  );
}

type Suite = {
  info(): Promise<PageInfo>;
  run(family: string, policy: string): Promise<CaseResult>;
  poolRuns(): number;
  autoOnGpu(): string[];
  byo(n: number): Promise<string[]>;
};

const VARIANTS = [
  { name: 'cross-origin isolated (COOP/COEP)', isolated: true },
  { name: 'not isolated', isolated: false },
] as const;

describe.skipIf(!chromiumPath)('Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    await buildPage();
    browser = await launchChromium(chromiumPath as string);
  });
  afterAll(async () => {
    await browser?.close();
  });

  for (const variant of VARIANTS) {
    describe(variant.name, () => {
      let server: StaticServer;
      let page: Page;
      const pageErrors: string[] = [];
      beforeAll(async () => {
        server = await serve(out, variant.isolated);
        page = await browser.newPage();
        page.on('pageerror', (e) => pageErrors.push(String(e)));
        page.on('console', (m) => {
          if (m.type() === 'error') pageErrors.push(m.text());
        });
        await page.goto(server.url);
        await page.waitForFunction(() => 'webdplSuite' in globalThis, undefined, { timeout: 30_000 });
      });
      afterAll(async () => {
        await page?.close();
        await server?.close();
      });

      it('page: secure context, WebGPU adapter, par as the isolation allows', async () => {
        const info = await page.evaluate(() => (globalThis as unknown as { webdplSuite: Suite }).webdplSuite.info());
        console.log(`[browser] ${variant.name}: ${JSON.stringify(info)}`);
        expect(info.crossOriginIsolated).toBe(variant.isolated);
        expect(info.parInfo).toBe(
          variant.isolated
            ? 'par on a worker pool'
            : 'par runs as seq: SharedArrayBuffer is unavailable (no cross-origin isolation)',
        );
        expect(info.families).toEqual(FAMILIES.map((f) => f.name));
        expect(pageErrors).toEqual([]);
      });

      for (const family of FAMILIES) {
        // The GPU does not depend on isolation: its tiny-tile variant runs on the isolated page only.
        for (const policy of POLICIES.filter((p) => variant.isolated || p !== 'device-tiny')) {
          it(`${family.name} on ${policy}`, async () => {
            const r = await page.evaluate(
              ([f, p]) => (globalThis as unknown as { webdplSuite: Suite }).webdplSuite.run(f, p),
              [family.name, policy] as const,
            );
            expect(r.failures).toEqual([]);
          });
        }
      }

      it(variant.isolated ? 'par ran on Web Workers' : 'par never reached the worker pool', async () => {
        const runs = await page.evaluate(() =>
          (globalThis as unknown as { webdplSuite: Suite }).webdplSuite.poolRuns(),
        );
        if (variant.isolated) expect(runs).toBeGreaterThan(0);
        else expect(runs).toBe(0);
      });

      it("the page's own GPUDevice (default limits), buffer and command encoder", async () => {
        for (const n of [1, 1000, 6145, 100_003]) {
          const problems = await page.evaluate(
            (k) => (globalThis as unknown as { webdplSuite: Suite }).webdplSuite.byo(k),
            n,
          );
          expect(problems, `n=${n}`).toEqual([]);
        }
      });

      it('auto never sent host arrays to the software GPU', async () => {
        const onGpu = await page.evaluate(() =>
          (globalThis as unknown as { webdplSuite: Suite }).webdplSuite.autoOnGpu(),
        );
        expect(onGpu).toEqual([]);
      });
    });
  }
});
