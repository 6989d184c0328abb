/**
 * The worker side of the pool, as one self-contained JS string per platform (`workerSource`). It is
 * started with `new Worker(code, { eval: true })` in Node and from a Blob URL in browsers, so no
 * separate worker file has to be found at run time (vitest, tsx and bundles all work the same way).
 *
 * Protocol (main -> worker): `{ i: jobId, t: taskId, s?: taskSource, j: job }`; the source travels
 * only the first time this worker sees a task id. Worker -> main: `{ i, v: value }` or
 * `{ i, e: { message, name, stack } }`.
 */
import { COMPILE_SOURCE } from './compile';

/**
 * The worker's source around `port`, the platform's snippet that defines `post(message)` and
 * `listen(onMessage)` (platform.node.ts: worker_threads' parentPort; platform.browser.ts: `self`).
 */
export function workerSource(port: string): string {
  return `'use strict';
// The compile-once cache shared with the calling thread (compile.ts).
globalThis.__webdplCompile = (${COMPILE_SOURCE});
// esbuild may wrap functions in __name(fn, "name") calls; those survive fn.toString().
if (typeof globalThis.__name !== 'function') globalThis.__name = function (f) { return f; };
${port}
const tasks = new Map();
function fail(i, e) {
  const err = e !== null && typeof e === 'object' ? e : { message: String(e) };
  post({ i, e: { message: String(err.message), name: typeof err.name === 'string' ? err.name : 'Error', stack: typeof err.stack === 'string' ? err.stack : undefined } });
}
function ok(i, v) {
  try { post({ i, v }); } catch (e) { fail(i, e); }
}
function onMessage(m) {
  let fn = tasks.get(m.t);
  if (fn === undefined) {
    if (typeof m.s !== 'string') return fail(m.i, new Error('worker pool: task source missing'));
    try {
      fn = new Function('return (' + m.s + '\\n);')();
    } catch (e) {
      return fail(m.i, new Error('worker pool: the task does not compile as a function expression (use an arrow function or a function expression, self-contained): ' + (e && e.message)));
    }
    if (typeof fn !== 'function') return fail(m.i, new Error('worker pool: the task source is not a function'));
    tasks.set(m.t, fn);
  }
  let r;
  try { r = fn(m.j); } catch (e) { return fail(m.i, e); }
  if (r !== null && typeof r === 'object' && typeof r.then === 'function') r.then((v) => ok(m.i, v), (e) => fail(m.i, e));
  else ok(m.i, r);
}
listen(onMessage);
`;
}
