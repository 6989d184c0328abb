import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ArgumentError } from '@webdpl/core';
import { afterAll, describe, expect, it } from 'vitest';
import { WORKER_SOURCE } from './platform.node';
import { createPool, defaultPool, logicalCores } from './pool';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../../..');

describe('worker pool', () => {
  const pool = createPool({ size: 2 });
  afterAll(() => pool.close());

  it('runs many jobs and returns results in job order', async () => {
    const jobs = Array.from({ length: 1000 }, (_, i) => i);
    const out = await pool.run((j: number) => j * j + 1, jobs);
    expect(out).toEqual(jobs.map((j) => j * j + 1));
    expect(await pool.run((j: number) => j, [])).toEqual([]);
  });

  it('runs concurrent runs independently', async () => {
    const runs = await Promise.all(
      Array.from({ length: 8 }, (_, r) =>
        pool.run(
          (j: { r: number; i: number }) => j.r * 100 + j.i,
          [0, 1, 2].map((i) => ({ r, i })),
        ),
      ),
    );
    runs.forEach((out, r) => {
      expect(out).toEqual([r * 100, r * 100 + 1, r * 100 + 2]);
    });
  });

  it('runs jobs at the same time on different workers (a barrier over shared memory)', async () => {
    // Each job announces itself, then waits up to 10 s for the other: only concurrent workers meet.
    const flags = new Int32Array(new SharedArrayBuffer(8));
    const met = await pool.run(
      (j: { flags: Int32Array; me: number }) => {
        Atomics.store(j.flags, j.me, 1);
        Atomics.notify(j.flags, j.me);
        const other = 1 - j.me;
        const deadline = Date.now() + 10_000;
        while (Atomics.load(j.flags, other) === 0 && Date.now() < deadline) Atomics.wait(j.flags, other, 0, 50);
        return Atomics.load(j.flags, other) === 1;
      },
      [0, 1].map((me) => ({ flags, me })),
    );
    expect(met).toEqual([true, true]);
  });

  it('uses one worker thread per slot', async () => {
    const ids = await pool.run(
      () => {
        // Busy for a moment so both workers get jobs.
        const end = Date.now() + 20;
        while (Date.now() < end) {}
        return (require('node:worker_threads') as { threadId: number }).threadId;
      },
      Array.from({ length: 8 }, (_, i) => i),
    );
    expect(new Set(ids).size).toBe(2);
  });

  it('shares typed arrays over SharedArrayBuffer (writes are visible)', async () => {
    const data = new Float32Array(new SharedArrayBuffer(4 * 64));
    await pool.run(
      (j: { data: Float32Array; b: number; e: number }) => {
        for (let i = j.b; i < j.e; i++) j.data[i] = i * 0.5;
      },
      [
        { data, b: 0, e: 32 },
        { data, b: 32, e: 64 },
      ],
    );
    expect(Array.from(data)).toEqual(Array.from({ length: 64 }, (_, i) => i * 0.5));
  });

  it('awaits tasks returning promises', async () => {
    expect(await pool.run(async (j: number) => j + 1, [1, 2])).toEqual([2, 3]);
  });

  it('rejects with the original message and name of an error thrown in a worker', async () => {
    const run = pool.run(
      (j: number) => {
        if (j === 3) throw new RangeError(`job ${j} failed`);
        return j;
      },
      [1, 2, 3, 4],
    );
    await expect(run).rejects.toMatchObject({ name: 'RangeError', message: 'job 3 failed' });
    await expect(
      pool.run(
        (j: number) => {
          if (j === 3) throw new RangeError(`job ${j} failed`);
          return j;
        },
        [1, 2, 3, 4],
      ),
    ).rejects.toThrow(RangeError);
    await expect(
      pool.run(() => {
        throw Object.assign(new Error('custom'), { name: 'MyError' });
      }, [0]),
    ).rejects.toMatchObject({ name: 'MyError', message: 'custom' });
    await expect(pool.run(async () => Promise.reject(new Error('async failure')), [0])).rejects.toThrow(
      'async failure',
    );
    // The pool still works afterwards.
    expect(await pool.run((j: number) => j * 2, [1, 2, 3])).toEqual([2, 4, 6]);
  });

  it('returned(): the worker of a job known to have returned takes the next job before its reply is in', async () => {
    const one = createPool({ size: 1 });
    try {
      expect(await one.run((j: number) => j, [0])).toEqual([0]);
      const flags = new Int32Array(new SharedArrayBuffer(8));
      const first = one.run(
        (f: Int32Array) => {
          Atomics.store(f, 0, 1);
          return 7;
        },
        [flags],
      );
      // This thread waits without turning its event loop, so no reply can be handled meanwhile.
      const wait = (i: number) => {
        const t0 = Date.now();
        while (Atomics.load(flags, i) === 0 && Date.now() - t0 < 3000) Atomics.wait(flags, i, 0, 5);
        return Atomics.load(flags, i);
      };
      expect(wait(0)).toBe(1);
      one.returned?.(first);
      const second = one.run(
        (f: Int32Array) => {
          Atomics.store(f, 1, 1);
          return 8;
        },
        [flags],
      );
      // Posted at once (without returned() it would wait in the queue for the first reply).
      expect(wait(1)).toBe(1);
      expect(await first).toEqual([7]);
      expect(await second).toEqual([8]);
      // A reply that carries an error still fails its run; unknown or settled runs are ignored.
      const bad = one.run(() => {
        throw new Error('after returned');
      }, [0]);
      one.returned?.(bad);
      await expect(bad).rejects.toThrow('after returned');
      one.returned?.(first);
      one.returned?.(Promise.resolve([]));
      expect(await one.run((j: number) => j + 1, [1, 2])).toEqual([2, 3]);
    } finally {
      await one.close();
    }
  });

  it('rejects for a task that closes over outside variables (it is shipped as source)', async () => {
    const outside = 42;
    await expect(pool.run((j: number) => j + outside, [1])).rejects.toThrow(/outside/);
  });

  it('rejects when a result or a job cannot be cloned', async () => {
    await expect(pool.run(() => () => 1, [0])).rejects.toThrow(/clone/i);
    await expect(pool.run((j: unknown) => j, [() => 1])).rejects.toThrow(/clone/i);
    expect(await pool.run((j: number) => j, [7])).toEqual([7]);
  });

  it('replaces a worker that exits during a task, rejecting that run', async () => {
    await expect(pool.run(() => process.exit(3), [0])).rejects.toThrow(/exited \(code 3\)/);
    expect(await pool.run((j: number) => j + 1, [1, 2, 3, 4])).toEqual([2, 3, 4, 5]);
  });

  it('defines a no-op __name in workers (esbuild injects __name calls into function sources)', async () => {
    const task = new Function('return (j) => { const f = __name(() => j + 1, "f"); return f(); }')() as (
      j: number,
    ) => number;
    expect(await pool.run(task, [1, 2])).toEqual([2, 3]);
  });

  it('rejects a task that is not a function expression', async () => {
    const method = {
      m(j: number) {
        return j;
      },
    };
    await expect(pool.run(method.m, [1])).rejects.toThrow(/function expression/);
  });

  it('close() rejects pending runs, and the next run restarts the workers', async () => {
    const p = createPool({ size: 1 });
    const pending = p.run(() => {
      const end = Date.now() + 2000;
      while (Date.now() < end) {}
      return 1;
    }, [0, 1]);
    const settled = pending.then(
      () => undefined,
      (e: Error) => e,
    );
    await new Promise((r) => setTimeout(r, 100));
    await p.close();
    expect((await settled)?.message).toMatch(/closed/);
    expect(await p.run((j: number) => j * 3, [1, 2])).toEqual([3, 6]);
    await p.close();
  });

  it('checks its arguments', async () => {
    expect(() => createPool({ size: 0 })).toThrow(ArgumentError);
    expect(() => createPool({ size: 1.5 })).toThrow(/options\.size/);
    expect(() => createPool(null as never)).toThrow(/options/);
    await expect(pool.run(42 as never, [1])).rejects.toThrow(/task/);
    await expect(pool.run((j: number) => j, 'jobs' as never)).rejects.toThrow(/jobs/);
  });

  it('defaultPool() is one shared pool with one worker per logical core', () => {
    expect(defaultPool()).toBe(defaultPool());
    expect(defaultPool().size).toBe(logicalCores());
    expect(createPool().size).toBe(logicalCores());
  });
});

describe('worker source', () => {
  it('also runs when Node evaluates it as an ES module (--input-type=module)', async () => {
    const w = new Worker(WORKER_SOURCE, { eval: true, execArgv: ['--input-type=module'] });
    try {
      const reply = await new Promise((r) => {
        w.once('message', r);
        w.postMessage({ i: 1, t: 1, s: '(j) => j * 2', j: 21 });
      });
      expect(reply).toEqual({ i: 1, v: 42 });
    } finally {
      await w.terminate();
    }
  });
});

describe('process exit', () => {
  it('a process that used the pool (and never closed it) exits by itself', async () => {
    const poolUrl = new URL('./pool.ts', import.meta.url).href;
    const code = `
      import { createPool } from ${JSON.stringify(poolUrl)};
      const pool = createPool({ size: 2 });
      const out = await pool.run((j) => j + 1, [1, 2, 3, 4]);
      console.log('done ' + out.join(','));
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let doneAt = 0;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (!doneAt && out.includes('done')) doneAt = Date.now();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const exit = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    clearTimeout(killer);
    const exitAt = Date.now();
    expect(err.replace(/npm warn.*\n/g, '')).toBe('');
    expect(out.trim()).toBe('done 2,3,4,5');
    expect(exit).toBe(0);
    expect(exitAt - doneAt).toBeLessThan(3000);
  });
});
