/**
 * Finding Chromium for the browser tests. They need a Chromium with WebGPU (Debian's `chromium`
 * package in CI, installed by .ci/run; WEBDPL_CHROMIUM names another binary). Without one they are
 * skipped with a printed reason, unless WEBDPL_REQUIRE_BROWSER=1 (CI sets it), which makes that a
 * failure: the browser suite is never skipped silently.
 */
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';

const NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

/** The first of NAMES found on the PATH (Debian's chromium is /usr/bin/chromium). */
function onPath(): string | undefined {
  const dirs = (process.env.PATH ?? '/usr/bin').split(delimiter).filter(Boolean);
  for (const name of NAMES) {
    for (const dir of dirs) {
      const p = join(dir, name);
      if (existsSync(p)) return p;
    }
  }
  return undefined;
}

export function browserRequired(): boolean {
  const v = process.env.WEBDPL_REQUIRE_BROWSER;
  return v === '1' || v === 'true';
}

/** The Chromium binary, or undefined (with a printed reason) when there is none and none is required. */
export function findChromium(suite: string): string | undefined {
  const named = process.env.WEBDPL_CHROMIUM;
  if (named) {
    if (!existsSync(named)) throw new Error(`WEBDPL_CHROMIUM=${named}: no such file`);
    return named;
  }
  const found = onPath();
  if (found) return found;
  const reason = `no Chromium found (looked for ${NAMES.join(', ')} on the PATH; set WEBDPL_CHROMIUM or run 'pnpm setup:browser')`;
  if (browserRequired()) throw new Error(`WEBDPL_REQUIRE_BROWSER=1 but ${reason}`);
  console.warn(`[webdpl] ${suite} SKIPPED: ${reason}`);
  return undefined;
}

/**
 * Headless Chromium with WebGPU. Without a GPU (CI) its adapter is SwiftShader: subgroups of 4,
 * 32 KiB of workgroup memory, the smallest limits webdpl meets.
 */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, headless: true, args: ['--enable-unsafe-webgpu'] });
}
