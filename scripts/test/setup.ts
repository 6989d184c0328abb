/**
 * Vitest setup for every package. Typed arrays compare by bytes: vitest's default deep equality
 * walks them element by element through generic machinery (seconds per million elements, which made
 * the size matrix of DESIGN.md take minutes); equal bytes mean equal arrays, and on a mismatch the
 * default comparison runs to produce its usual diff. Crash markers: see the end of the file.
 */
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';

function isTyped(x: unknown): x is ArrayBufferView & ArrayLike<number> {
  return ArrayBuffer.isView(x) && !(x instanceof DataView);
}

expect.addEqualityTesters([
  function typedArraysByBytes(a: unknown, b: unknown): boolean | undefined {
    if (!isTyped(a) || !isTyped(b)) return undefined;
    if (a.constructor !== b.constructor || a.length !== b.length) return undefined;
    const x = Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    const y = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    return Buffer.compare(x, y) === 0 ? true : undefined;
  },
]);

/*
 * Crash markers: a test file's process writes `.tmp/test-processes/<pid>.running` (the file's path)
 * when the file starts, notes there when the file's hooks have finished, and removes it when vitest
 * stops the process (SIGTERM) or it exits. A process that dies any other way (a native crash, a V8
 * fatal error, the OOM killer) leaves its marker behind, and .ci/run names those files when a run
 * fails with vitest's bare "Worker exited unexpectedly".
 */
const markerDir = join(process.cwd(), '.tmp', 'test-processes');
const marker = join(markerDir, `${process.pid}.running`);
const dropMarker = () => rmSync(marker, { force: true });
beforeAll(() => {
  mkdirSync(markerDir, { recursive: true });
  writeFileSync(marker, `${expect.getState().testPath}\nstarted ${new Date().toISOString()}\n`);
  process.once('exit', dropMarker);
  process.once('SIGTERM', () => {
    dropMarker();
    // The only listener is gone, so this one takes the default action: the process ends as before.
    process.kill(process.pid, 'SIGTERM');
  });
});
afterAll(() => {
  appendFileSync(marker, `its tests and hooks finished ${new Date().toISOString()}\n`);
});
