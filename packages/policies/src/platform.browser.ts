/**
 * The worker pool's runtime in browsers: Web Workers started from a Blob URL of the worker source
 * (no worker file to serve). Without `Worker` or Blob URLs, `spawn` is undefined and runs are inline.
 */
import type { PoolPlatform, Spawn } from './platform-types';
import { workerSource } from './worker-source';

/** The worker's side in a Web Worker. */
export const WORKER_SOURCE = workerSource(`const post = (m) => self.postMessage(m);
function listen(onMessage) { self.onmessage = (ev) => onMessage(ev.data); }`);

let url: string | undefined;

function webSpawn(): Spawn | undefined {
  const g = globalThis as { Worker?: typeof Worker; Blob?: typeof Blob; URL?: typeof URL };
  if (typeof g.Worker !== 'function' || typeof g.Blob !== 'function' || typeof g.URL?.createObjectURL !== 'function')
    return undefined;
  const WebWorker = g.Worker;
  return (events) => {
    url ??= URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }));
    const w = new WebWorker(url);
    w.onmessage = (ev) => events.message(ev.data);
    w.onerror = (ev) => {
      ev.preventDefault();
      events.error(new Error(ev.message || 'worker error'));
    };
    return {
      post: (m) => w.postMessage(m),
      ref: () => {},
      unref: () => {},
      terminate: async () => w.terminate(),
    };
  };
}

export const platform: PoolPlatform = { spawn: webSpawn() };
