import { bitAnd, coerce, type GpuFunction, maximum, minimum, type NumericType, plus } from '@webdpl/core';
import { allocShared, createPool } from '@webdpl/policies';
import { afterAll, describe, expect, it } from 'vitest';
import { cpuExclusiveScan, cpuInclusiveScan } from './scan';
import { alloc, diff, makeData, sharedCopy, TEST_SIZES, TYPES, testBackends } from './test-data';
import { inlineFunction, lastNonZero, mod7is3, times3plus1 } from './test-functions';

const pool = createPool({ size: 2 });
afterAll(() => pool.close());

const REF: Record<string, (t: NumericType, a: number, b: number) => number> = {
  plus: (t, a, b) => (t === 'f32' ? Math.fround(a + b) : coerce(t, a + b)),
  minimum: (_t, a, b) => Math.min(a, b),
  maximum: (_t, a, b) => Math.max(a, b),
  lastNonZero: (_t, a, b) => (b !== 0 ? b : a),
};

/** Reference scan loop, stored through an array of `t`. */
function refScan(
  t: NumericType,
  name: string,
  values: ArrayLike<number>,
  inclusive: boolean,
  init: number | undefined,
): ArrayLike<number> {
  const f = REF[name] as (t: NumericType, a: number, b: number) => number;
  const out = alloc(t, values.length);
  let has = init !== undefined;
  let acc = init === undefined ? 0 : coerce(t, init);
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (inclusive) {
      acc = has ? f(t, acc, v) : v;
      has = true;
      out[i] = acc;
    } else {
      out[i] = acc;
      acc = f(t, acc, v);
    }
  }
  return out;
}

/**
 * f32 plus scans (kernels.ts: f64 prefix sums, rounded at each store), against the f64 reference
 * prefix p_i (off the exact one by at most i * 2^-53 * sum |x_j|):
 * |y_i - p_i| <= 2^-24 * |p_i| + 2 * (i + 2) * 2^-53 * (|init| + sum_{j<=i} |x_j|).
 * The recursive f32 scan this replaced allowed (i + 32) * 2^-24 * (|init| + sum_{j<=i} |x_j|).
 */
function scanWithinTolerance(
  y: ArrayLike<number>,
  values: ArrayLike<number>,
  inclusive: boolean,
  init: number,
): string {
  let exact = init;
  let abs = Math.abs(init);
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (inclusive) {
      exact += v;
      abs += Math.abs(v);
    }
    const err = Math.abs((y[i] as number) - exact);
    if (!(err <= 2 ** -24 * Math.abs(exact) + 2 * (i + 2) * 2 ** -53 * abs)) {
      return `at ${i}: got ${y[i]}, exact ${exact}`;
    }
    if (!inclusive) {
      exact += v;
      abs += Math.abs(v);
    }
  }
  return '';
}

/** seq f32 plus scans: the f64 prefix sums, each rounded to f32 at its store. */
function refWideScan(values: ArrayLike<number>, inclusive: boolean, init: number | undefined): Float32Array {
  const out = new Float32Array(values.length);
  let acc = init ?? 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (inclusive) {
      acc = i === 0 && init === undefined ? v : acc + v;
      out[i] = acc;
    } else {
      out[i] = acc;
      acc += v;
    }
  }
  return out;
}

const OPS: { op: GpuFunction; types: readonly NumericType[] }[] = [
  { op: plus, types: TYPES },
  { op: minimum, types: TYPES },
  { op: maximum, types: ['i32'] },
  { op: lastNonZero, types: TYPES },
];

describe.each(testBackends(pool))('scans on $name', ({ name, backend }) => {
  for (const { op, types } of OPS) {
    for (const t of types) {
      for (const inclusive of [true, false]) {
        it(`${inclusive ? 'inclusive' : 'exclusive'} ${op.name} ${t}, with and without init`, async () => {
          for (const n of TEST_SIZES) {
            for (const kind of ['random', 'constant', 'sparse'] as const) {
              for (const init of inclusive ? [undefined, 3] : [3, undefined]) {
                const x = makeData(t, n, kind);
                const y = alloc(t, n);
                const scanFn = inclusive ? cpuInclusiveScan : cpuExclusiveScan;
                await scanFn(backend, x, y, op, init);
                const refInit = inclusive ? init : (init ?? (op.identity(t) as number));
                const want = refScan(t, op.name, x, inclusive, refInit);
                const label = `n=${n} ${kind} init=${init}`;
                if (t === 'f32' && op.name === 'plus') {
                  if (name === 'seq') expect(diff(y, refWideScan(x, inclusive, refInit)), label).toBe('');
                  expect(scanWithinTolerance(y, x, inclusive, refInit ?? 0), label).toBe('');
                } else expect(diff(y, want), label).toBe('');
              }
            }
          }
        });
      }
    }
  }

  it('non-commutative "last non-zero" keeps order across chunk boundaries (u32, many sizes)', async () => {
    for (let n = 0; n < 300; n += 7) {
      const x = makeData('u32', n, 'sparse', n);
      const y = new Uint32Array(n);
      await cpuInclusiveScan(backend, x, y, lastNonZero);
      expect(diff(y, refScan('u32', 'lastNonZero', x, true, undefined)), `n=${n}`).toBe('');
      await cpuExclusiveScan(backend, x, y, lastNonZero, 42);
      expect(diff(y, refScan('u32', 'lastNonZero', x, false, 42)), `n=${n}`).toBe('');
    }
  });

  it('transform scans: x*3+1 then plus; a bool predicate scanned as u32 1/0 (copy_if positions)', async () => {
    for (const n of [0, 1, 3, 7, 100, 129, 2 ** 17 + 3]) {
      const x = makeData('i32', n, 'random');
      const mapped = Array.from(x, (v) => coerce('i32', Math.imul(v, 3) + 1));
      const y = new Int32Array(n);
      await cpuInclusiveScan(backend, x, y, plus, undefined, { transform: times3plus1 });
      expect(diff(y, refScan('i32', 'plus', mapped, true, undefined)), `n=${n}`).toBe('');
      await cpuExclusiveScan(backend, x, y, plus, 10, { transform: times3plus1 });
      expect(diff(y, refScan('i32', 'plus', mapped, false, 10)), `n=${n}`).toBe('');
      const flags = Array.from(x, (v) => (Math.abs(v) % 7 === 3 ? 1 : 0));
      const pos = new Uint32Array(n);
      await cpuExclusiveScan(backend, x, pos, plus, 0, { transform: mod7is3 });
      expect(diff(pos, refScan('u32', 'plus', flags, false, 0)), `n=${n}`).toBe('');
    }
  });

  it('in place, on plain and on shared arrays', async () => {
    for (const n of [2, 129, 2 ** 17 + 3]) {
      const x = makeData('u32', n, 'random');
      const want = refScan('u32', 'plus', x, true, 1);
      const plain = x.slice();
      await cpuInclusiveScan(backend, plain, plain, plus, 1);
      expect(diff(plain, want), `n=${n}`).toBe('');
      const shared = sharedCopy(x);
      await cpuInclusiveScan(backend, shared, shared, plus, 1);
      expect(diff(shared, want), `n=${n}`).toBe('');
      const wantEx = refScan('u32', 'plus', x, false, 1);
      const sharedEx = sharedCopy(x);
      await cpuExclusiveScan(backend, sharedEx, sharedEx, plus, 1);
      expect(diff(sharedEx, wantEx), `n=${n}`).toBe('');
      const out = allocShared('u32', n);
      await cpuExclusiveScan(backend, x, out, plus, 1);
      expect(diff(out, wantEx), `n=${n}`).toBe('');
    }
  });
});

describe('scan arguments', () => {
  const seq = { kind: 'seq' } as const;
  it('names the bad argument', async () => {
    const x = new Uint32Array(4);
    const noIdentity = inlineFunction({ name: 'first', arity: 2, source: () => '(a, b) => a' });
    await expect(cpuExclusiveScan(seq, x, x, noIdentity)).rejects.toThrow(/^init: expected an initial value/);
    await expect(cpuInclusiveScan(seq, x, new Uint32Array(2), plus)).rejects.toThrow(/^output:/);
    await expect(cpuInclusiveScan(seq, x, x, times3plus1)).rejects.toThrow(/^op:/);
    await expect(cpuInclusiveScan(seq, new Float32Array(4), new Float32Array(4), bitAnd)).rejects.toThrow(/^op:/);
    await expect(cpuInclusiveScan(seq, x, x, plus, undefined, { transform: plus })).rejects.toThrow(
      /^options\.transform:/,
    );
    await expect(cpuInclusiveScan(seq, x, x, plus, 'one' as never)).rejects.toThrow(/^init:/);
    await expect(cpuInclusiveScan(seq, x, x, plus, undefined, 5 as never)).rejects.toThrow(/^options:/);
  });
});
