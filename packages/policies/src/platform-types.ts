/**
 * How the worker pool starts a worker, implemented once per platform: `platform.node.ts`
 * (`node:worker_threads`) and `platform.browser.ts` (Web Workers from a Blob URL). The package's
 * `imports` field maps `#platform` to one of them by export condition.
 */

/** What the pool needs of one worker, whatever the runtime. */
export interface WorkerHandle {
  post(message: unknown): void;
  /** Keeps the process alive while the worker runs a job (Node); a no-op in browsers. */
  ref(): void;
  unref(): void;
  terminate(): Promise<unknown>;
}

export interface WorkerEvents {
  message(data: unknown): void;
  error(error: Error): void;
  exit(code: number): void;
}

/** Starts one worker running the pool's worker source. */
export type Spawn = (events: WorkerEvents) => WorkerHandle;

export interface PoolPlatform {
  /** How this runtime starts a worker, or undefined when it cannot (then the pool runs jobs inline). */
  readonly spawn: Spawn | undefined;
}
