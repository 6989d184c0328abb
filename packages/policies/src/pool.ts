/**
 * The CPU worker pool: worker_threads in Node, Web Workers in browsers (`#platform`: platform.node.ts or
 * platform.browser.ts, chosen by export condition).
 *
 * Workers start lazily on the first `run` (about 20-50 ms each in Node) and stay up; idle workers are
 * `unref()`ed so they never keep a Node process alive, and are ref'ed only while they run a job.
 * Tasks travel as source (`task.toString()`) and are compiled once per worker, cached by source.
 * Jobs are handed out one at a time to whichever worker is free (dynamic balance); one job costs a
 * message round trip, about 50-100 us in Node, so jobs should each carry at least ~0.5 ms of work.
 *
 * Without worker support (a browser with no `Worker`, or a runtime without Blob URLs) `run` executes
 * the task on the calling thread, one job after another; policies already degrade `par` to `seq`
 * where SharedArrayBuffer is unusable, so that path is only a safety net.
 */
import { ArgumentError, describe, platform as hostPlatform } from '@webdpl/core';
import { platform } from '#platform';
import type { Spawn, WorkerHandle } from './platform-types';

/** A pool of workers running self-contained task functions over shared memory. */
export interface WorkerPool {
  /** Number of workers. */
  readonly size: number;
  /**
   * Runs `task(job)` for every job, spread over the workers; resolves with the results in job order.
   * `task` must be self-contained (no closure over outside variables): it is shipped to the workers
   * as source and compiled once per worker. Jobs and results are structured-cloned, so typed arrays
   * over SharedArrayBuffer are shared, not copied. An error thrown by a task (or a rejected promise
   * it returns) rejects the run with the original message and name; the other jobs of that run are
   * dropped or their results ignored.
   */
  run<A, R>(task: (job: A) => R, jobs: readonly A[]): Promise<R[]>;
  /**
   * Tells the pool that every job of `run` (a promise `run` returned) has already returned normally
   * in its worker, as the caller knows through shared memory: their workers then take new jobs at
   * once instead of after their replies arrive (a worker runs its messages in order, so a new job
   * starts right after it has posted the reply). The replies still settle `run` when they come.
   * Only for a caller that has that proof; a pool without this method makes the caller wait for the
   * replies.
   */
  returned?(run: Promise<unknown>): void;
  /** Terminates the workers and rejects runs still pending. The pool restarts them on the next run. */
  close(): Promise<void>;
}

export interface PoolOptions {
  /**
   * Number of workers.
   * @default the number of logical cores (`os.availableParallelism()` in Node, `navigator.hardwareConcurrency` in browsers)
   */
  readonly size?: number;
}

interface RunState {
  readonly results: unknown[];
  left: number;
  done: boolean;
  readonly resolve: (results: unknown[]) => void;
  readonly reject: (error: unknown) => void;
}

interface Item {
  readonly state: RunState;
  readonly index: number;
  readonly job: unknown;
  readonly task: number;
}

interface Slot {
  readonly handle: WorkerHandle;
  readonly known: Set<number>;
  item: Item | undefined;
  jobId: number;
  /** Jobs of this worker known to have returned (`returned`) whose replies are still due, by job id. */
  readonly due: Map<number, Item>;
}

interface WorkerReply {
  readonly i: number;
  readonly v?: unknown;
  readonly e?: { readonly message: string; readonly name: string; readonly stack?: string };
}

/** Logical cores of this machine (`os.availableParallelism()` in Node, `navigator.hardwareConcurrency` in browsers). */
export function logicalCores(): number {
  return hostPlatform.hostCores();
}

const ERROR_CLASSES: Readonly<Record<string, ErrorConstructor>> = {
  Error,
  TypeError,
  RangeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
};

/** The error a worker reported, as the same built-in class when it is one (else an Error with its name). */
function remoteError(e: NonNullable<WorkerReply['e']>): Error {
  const err = new (ERROR_CLASSES[e.name] ?? Error)(e.message);
  err.name = e.name;
  if (e.stack) err.stack = e.stack;
  return err;
}

function fail(state: RunState, error: unknown): void {
  if (state.done) return;
  state.done = true;
  state.reject(error);
}

/** Records a worker's reply to `item`: its result, or its error (which fails the run). */
function settle(item: Item, reply: WorkerReply): void {
  const state = item.state;
  if (reply.e) fail(state, remoteError(reply.e));
  else if (!state.done) {
    state.results[item.index] = reply.v;
    if (--state.left === 0) {
      state.done = true;
      state.resolve(state.results);
    }
  }
}

class Pool implements WorkerPool {
  private slots: Slot[] | undefined;
  private queue: Item[] = [];
  private head = 0;
  private readonly taskIds = new Map<string, number>();
  private readonly taskSources = new Map<number, string>();
  private nextTask = 1;
  private nextJob = 1;
  private readonly pending = new Set<RunState>();
  /** The state of each run still pending, by the promise `run` returned (for `returned`). */
  private readonly states = new WeakMap<Promise<unknown>, RunState>();

  constructor(readonly size: number) {}

  /**
   * Posts the jobs before returning, so a caller that goes on working synchronously, as runChunks
   * does, shares the chunks with the workers instead of taking them all before any message left:
   * `run` awaiting anything before posting made par run as seq.
   */
  run<A, R>(task: (job: A) => R, jobs: readonly A[]): Promise<R[]> {
    if (typeof task !== 'function')
      return Promise.reject(new ArgumentError('task', 'a self-contained function', describe(task)));
    if (!Array.isArray(jobs)) return Promise.reject(new ArgumentError('jobs', 'an array of jobs', describe(jobs)));
    if (jobs.length === 0) return Promise.resolve([]);
    return this.dispatch(platform.spawn, task, jobs);
  }

  private dispatch<A, R>(spawn: Spawn | undefined, task: (job: A) => R, jobs: readonly A[]): Promise<R[]> {
    if (!spawn) {
      return (async () => {
        const out: R[] = [];
        for (const job of jobs) out.push(await task(job));
        return out;
      })();
    }
    this.slots ??= Array.from({ length: this.size }, () => this.startSlot(spawn));
    const source = task.toString();
    let id = this.taskIds.get(source);
    if (id === undefined) {
      id = this.nextTask++;
      this.taskIds.set(source, id);
      this.taskSources.set(id, source);
    }
    const task_ = id;
    const made: { state?: RunState } = {};
    const run = new Promise<R[]>((resolve, reject) => {
      const state: RunState = {
        results: new Array(jobs.length),
        left: jobs.length,
        done: false,
        resolve: (r) => {
          this.pending.delete(state);
          resolve(r as R[]);
        },
        reject: (e) => {
          this.pending.delete(state);
          reject(e);
        },
      };
      this.pending.add(state);
      made.state = state;
      for (let i = 0; i < jobs.length; i++) this.queue.push({ state, index: i, job: jobs[i], task: task_ });
      this.pump();
    });
    if (made.state && !made.state.done) this.states.set(run, made.state);
    return run;
  }

  returned(run: Promise<unknown>): void {
    const state = this.states.get(run);
    if (!state || state.done) return;
    for (const slot of this.slots ?? []) {
      if (slot.item?.state !== state) continue;
      slot.due.set(slot.jobId, slot.item);
      slot.item = undefined;
    }
    this.pump();
  }

  async close(): Promise<void> {
    const slots = this.slots ?? [];
    this.slots = undefined;
    this.queue = [];
    this.head = 0;
    for (const state of [...this.pending]) fail(state, new Error('worker pool closed while a run was pending'));
    await Promise.all(slots.map((s) => s.handle.terminate()));
  }

  private startSlot(spawn: Spawn): Slot {
    // The handlers run asynchronously, after `slot` is assigned.
    const slot: Slot = {
      handle: spawn({
        message: (data) => this.onMessage(slot, data as WorkerReply),
        error: (error) => this.onDeath(slot, error, spawn),
        exit: (code) =>
          this.onDeath(slot, new Error(`worker pool: a worker exited (code ${code}) during a task`), spawn),
      }),
      known: new Set(),
      item: undefined,
      jobId: 0,
      due: new Map(),
    };
    return slot;
  }

  private nextItem(): Item | undefined {
    while (this.head < this.queue.length) {
      const item = this.queue[this.head++] as Item;
      if (!item.state.done) return item;
    }
    if (this.head > 0) {
      this.queue = [];
      this.head = 0;
    }
    return undefined;
  }

  private pump(): void {
    const slots = this.slots;
    if (!slots) return;
    for (const slot of slots) {
      while (slot.item === undefined) {
        const item = this.nextItem();
        if (!item) break;
        this.send(slot, item);
      }
      if (slot.item === undefined) slot.handle.unref();
    }
  }

  private send(slot: Slot, item: Item): void {
    const firstTime = !slot.known.has(item.task);
    const message = {
      i: this.nextJob++,
      t: item.task,
      s: firstTime ? this.taskSources.get(item.task) : undefined,
      j: item.job,
    };
    try {
      slot.handle.post(message);
    } catch (e) {
      // The job could not be cloned (a function, a detached buffer...): nothing reached the worker.
      fail(item.state, e);
      return;
    }
    if (firstTime) slot.known.add(item.task);
    slot.item = item;
    slot.jobId = message.i;
    slot.handle.ref();
  }

  private onMessage(slot: Slot, reply: WorkerReply): void {
    const early = slot.due.get(reply.i);
    if (early) {
      // A job already counted as returned: its reply settles its run; the worker has moved on.
      slot.due.delete(reply.i);
      settle(early, reply);
      return;
    }
    const item = slot.item;
    if (!item || reply.i !== slot.jobId) return;
    slot.item = undefined;
    settle(item, reply);
    this.pump();
  }

  private onDeath(slot: Slot, error: Error, spawn: Spawn): void {
    const slots = this.slots;
    const at = slots ? slots.indexOf(slot) : -1;
    if (!slots || at < 0) return; // closed, or already replaced
    if (slot.item) fail(slot.item.state, error);
    for (const item of slot.due.values()) fail(item.state, error);
    slot.item = undefined;
    void slot.handle.terminate().catch(() => {});
    slots[at] = this.startSlot(spawn);
    this.pump();
  }
}

/**
 * A new pool of `size` workers (started on the first run). Close it when done with it, or let it be:
 * idle workers never keep the process alive.
 */
export function createPool(options: PoolOptions = {}): WorkerPool {
  if (typeof options !== 'object' || options === null) {
    throw new ArgumentError('options', 'an options object', describe(options));
  }
  const size = options.size ?? logicalCores();
  if (!Number.isInteger(size) || size < 1 || size > 1024) {
    throw new ArgumentError('options.size', 'a whole number of workers from 1 to 1024', describe(size));
  }
  return new Pool(size);
}

let shared: WorkerPool | undefined;

/** The process-wide pool used by `execution.par`: one worker per logical core, started lazily. */
export function defaultPool(): WorkerPool {
  shared ??= createPool();
  return shared;
}
