// After a failed test run: names the test files whose process died before vitest stopped it (the markers that
// scripts/test/setup.ts leaves behind) and prints the head of any Node fatal-error report.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const markers = '.tmp/test-processes';
const reports = '.tmp/node-reports';
const left = existsSync(markers) ? readdirSync(markers).filter((f) => f.endsWith('.running')) : [];
if (left.length === 0) console.log('ci: no test process died before vitest stopped it');
for (const f of left) {
  const [file, ...notes] = readFileSync(join(markers, f), 'utf8').trim().split('\n');
  console.log(`ci: the process of ${file} (pid ${f.split('.')[0]}) died before vitest stopped it: ${notes.join('; ')}`);
}
for (const f of existsSync(reports) ? readdirSync(reports) : []) {
  const report = JSON.parse(readFileSync(join(reports, f), 'utf8'));
  const h = report.header ?? {};
  console.log(
    `ci: Node fatal-error report ${f}: ${h.event} (${h.trigger}), pid ${h.processId}, ${h.commandLine?.join(' ')}`,
  );
  console.log((report.javascriptStack?.stack ?? []).slice(0, 12).join('\n'));
  console.log(
    (report.nativeStack ?? [])
      .slice(0, 16)
      .map((s) => `  ${s.symbol}`)
      .join('\n'),
  );
}
