/**
 * The CPU worker pool (worker_threads in Node, Web Workers in browsers).
 * INTERFACE STUB: the implementation lands with the policies/CPU-backends work.
 */

/** A pool of workers running self-contained task functions over shared memory. */
export interface WorkerPool {
  /** Number of workers. */
  readonly size: number;
  /**
   * Runs `task(job)` for every job, spread over the workers; resolves with the results in job order.
   * `task` must be self-contained (no closure over outside variables): it is shipped to the workers
   * as source and compiled once per worker. Jobs and results are structured-cloned, so typed arrays
   * over SharedArrayBuffer are shared, not copied.
   */
  run<A, R>(task: (job: A) => R, jobs: readonly A[]): Promise<R[]>;
  /** Terminates the workers. The pool restarts them on the next run. */
  close(): Promise<void>;
}

export interface PoolOptions {
  /** Number of workers. @default the number of logical cores */
  readonly size?: number;
}

export function createPool(_options: PoolOptions = {}): WorkerPool {
  throw new Error('createPool: not implemented yet');
}

export function defaultPool(): WorkerPool {
  throw new Error('defaultPool: not implemented yet');
}
