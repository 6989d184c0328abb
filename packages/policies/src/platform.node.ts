/** The worker pool's runtime in Node: `worker_threads`. Never part of a browser bundle. */
import { Worker } from 'node:worker_threads';
import type { PoolPlatform } from './platform-types';
import { workerSource } from './worker-source';

/** The worker's side in Node. */
export const WORKER_SOURCE =
  workerSource(`// Node runs this as CommonJS (the pool passes execArgv: []); the fallbacks cover ESM evaluation.
let nodePort = typeof require === 'function' ? require('node:worker_threads').parentPort
  : typeof process.getBuiltinModule === 'function' ? process.getBuiltinModule('node:worker_threads').parentPort : null;
const post = (m) => nodePort.postMessage(m);
function listen(onMessage) {
  if (nodePort) nodePort.on('message', onMessage);
  // Messages wait in the port's queue until the listener is attached.
  else import('node:worker_threads').then((wt) => { nodePort = wt.parentPort; nodePort.on('message', onMessage); });
}`);

export const platform: PoolPlatform = {
  spawn: (events) => {
    // execArgv: [] keeps the parent's loaders (tsx, vitest) and --input-type out of the workers:
    // they would slow every start and make the eval'd source an ES module.
    const w = new Worker(WORKER_SOURCE, { eval: true, execArgv: [] });
    w.on('message', events.message);
    w.on('error', events.error);
    w.on('exit', events.exit);
    w.unref();
    return {
      post: (m) => w.postMessage(m),
      ref: () => w.ref(),
      unref: () => w.unref(),
      terminate: () => w.terminate(),
    };
  },
};
