// Prints vitest's JSON results as one closing line: "ci: N passed, N failed, N skipped".
import { readFileSync } from 'node:fs';

const file = process.argv[2] ?? '.tmp/vitest-results.json';
const r = JSON.parse(readFileSync(file, 'utf8'));
const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
console.log(`ci: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
process.exit(r.numFailedTests === 0 && r.numPassedTests > 0 ? 0 : 1);
