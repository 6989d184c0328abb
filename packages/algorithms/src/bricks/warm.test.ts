/**
 * Self-warming kernels (warm.ts): a generated kernel, optimized by V8 right after it is compiled
 * (on the feedback of its warm-up calls alone), runs real calls without deoptimizing, for every
 * tail length. Without the warm-up the kernel has no feedback then, and the optimized code
 * deoptimizes at once (mutation-checked by dropping the warm-up calls).
 *
 * Uses V8's natives syntax (test-natives.ts). Each case has a function source (or types) of its
 * own, so its kernel is compiled here, fresh.
 */
import type { GpuFunction, HostArray, NumericType } from '@webdpl/core';
import { compileOnce } from '@webdpl/policies';
import { describe, expect, it } from 'vitest';
import { keyEqual } from '../by-key/key-equal';
import { rng } from '../testing/matrix';
import { type ByKeyKind, byKeyKernel } from './by-key';
import { warmCompactSource } from './compaction';
import { gatherKernel } from './gather';
import type { Kernel } from './kernels';
import { minMaxKernel } from './min-element';
import { inlineFunction } from './test-functions';
import { callsOptimized } from './test-natives';

/** An operator with a source of its own (`tag`), so its kernels are compiled by this test. */
function plusTagged(tag: string): GpuFunction {
  return inlineFunction({
    name: `plus_${tag}`,
    arity: 2,
    source: (t) =>
      t[0] === 'f32'
        ? `(a, b) => Math.fround(a + b) /* ${tag} */`
        : t[0] === 'u32'
          ? `(a, b) => (a + b) >>> 0 /* ${tag} */`
          : `(a, b) => (a + b) | 0 /* ${tag} */`,
  });
}

function arrayOf(type: NumericType, n: number, gen: (i: number) => number) {
  const a = type === 'u32' ? new Uint32Array(n) : type === 'i32' ? new Int32Array(n) : new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = gen(i);
  return a;
}

describe('warmed kernels stay optimized on their first real calls', () => {
  const kinds: ByKeyKind[] = ['inclusive', 'exclusive', 'count', 'reduce', 'unique'];
  const types: [NumericType, NumericType][] = [
    ['u32', 'u32'],
    ['i32', 'f32'],
    ['f32', 'i32'],
  ];
  for (const kind of kinds) {
    for (const [keyType, valueType] of types) {
      it(`by-key ${kind} k:${keyType} v:${valueType}`, () => {
        const fns = { op: plusTagged(`${kind}_${keyType}_${valueType}`), keyEq: keyEqual, keyType, valueType };
        const { kernel, source } = byKeyKernel(kind, fns);
        expect(source).toBeDefined();
        const r = rng(7);
        const calls: (() => unknown)[] = [];
        // Every tail length; runs of 16 (the bench's keys), then runs of 1..40.
        for (const n of [4096, 4097, 4098, 4099]) {
          for (const runs of [16, 0]) {
            let key = 0;
            const keys = arrayOf(keyType, n, (i) => (runs ? i >>> 4 : r() % 20 === 0 ? ++key : key));
            const vals = arrayOf(valueType, n, () => (valueType === 'f32' ? r() / 2 ** 32 : r()));
            const out = arrayOf(valueType, n, () => 0);
            const kout = arrayOf(keyType, n, () => 0);
            if (kind === 'inclusive' || kind === 'exclusive') {
              calls.push(() => kernel(keys, vals, out, 0, n, false, 1, undefined));
              calls.push(() => kernel(keys, vals, out, 1, n, true, 1, undefined));
            } else if (kind === 'count')
              calls.push(() => kernel(keys, undefined, undefined, 0, n, false, 0, undefined));
            else calls.push(() => kernel(keys, vals, kout, 0, n, true, 0, out));
          }
        }
        expect(callsOptimized(kernel, calls)).toBe(calls.length);
      });
    }
  }

  // gather / scatter / the index check, plain and stencil forms (a stencil array, counting(n)).
  const stencils = ['none', 'f32', 'counting'] as const;
  const dataTypes: [NumericType, NumericType][] = [
    ['u32', 'u32'],
    ['i32', 'f32'],
  ];
  for (const kind of ['gather', 'scatter', 'check'] as const) {
    for (const [mapType, valueType] of dataTypes) {
      for (const st of stencils) {
        it(`${kind} map:${mapType} values:${valueType} stencil:${st}`, () => {
          const pred = inlineFunction({
            name: 'warm_pred',
            arity: 1,
            source: () => `(v) => v % 3 !== 1 /* ${kind} ${mapType} ${valueType} */`,
            resultType: () => 'bool',
          });
          const stencilOf = (n: number) =>
            st === 'none'
              ? undefined
              : { array: st === 'counting' ? undefined : arrayOf('f32', n, (i) => i % 5), pred };
          const argsOf = (map: HostArray, vals: HostArray, out: HostArray) =>
            kind === 'check' ? [map] : kind === 'gather' ? [map, vals, out] : [vals, map, out];
          const one = (t: NumericType) => arrayOf(t, 1, () => 0);
          const { kernel, source } = gatherKernel(
            kind,
            argsOf(one(mapType), one(valueType), one(valueType)),
            stencilOf(1),
          );
          expect(source).toBeDefined();
          const r = rng(11);
          const calls: (() => unknown)[] = [];
          // Every tail length of the unrolled loops (8), a random permutation.
          for (let n = 4096; n < 4104; n++) {
            const map = arrayOf(mapType, n, (i) => (Math.imul(i, 2654435761) >>> 0) % n);
            const vals = arrayOf(valueType, n, () => (valueType === 'f32' ? r() / 2 ** 32 : r()));
            const out = arrayOf(valueType, n, () => 0);
            const f = stencilOf(n)?.array;
            const [x, x2, y] = argsOf(map, vals, out);
            calls.push(() =>
              kind === 'check'
                ? kernel(map, undefined, undefined, 0, n, false, n, f)
                : kernel(x as HostArray, x2, y, 0, n, false, 0, f),
            );
          }
          expect(callsOptimized(kernel, calls)).toBe(calls.length);
        });
      }
    }
  }

  // minElement / maxElement / minMaxElement: random data (f32 in [0, 1) with zeros, a NaN, -0).
  for (const type of ['f32', 'u32', 'i32'] as const) {
    for (const want of [1, 2, 3] as const) {
      it(`min/max ${type} want ${want}`, () => {
        const { kernel } = minMaxKernel(type, want);
        const r = rng(3);
        const calls: (() => unknown)[] = [];
        for (let n = 4096; n < 4100; n++) {
          const x = arrayOf(type, n, () => (type === 'f32' ? (r() % 1000) / 1000 : r()));
          if (type === 'f32' && n === 4099) x[100] = Number.NaN;
          if (type === 'f32' && n === 4098) x[3000] = -0;
          calls.push(() => kernel(x, undefined, undefined, 0, n, false, 0, undefined));
        }
        expect(callsOptimized(kernel, calls)).toBe(calls.length);
      });
    }
  }

  // Compaction: a predicate (copyIf), unique (no predicate), partition, stencil forms.
  const forms = [
    ['pred', 'compact', undefined],
    ['unique', 'compact', undefined],
    ['pred', 'partition', undefined],
    ['pred', 'compact', 'f32'],
    ['pred', 'compact', 'counting'],
  ] as const;
  for (const type of ['f32', 'u32'] as const) {
    for (const [kind, mode, stencil] of forms) {
      it(`compaction ${type} ${kind} ${mode} stencil ${stencil ?? 'none'}`, () => {
        const st = stencil === 'f32' ? 'f32' : type;
        const pred =
          kind === 'pred' ? `(v) => v > ${st === 'f32' ? 0.5 : 2 ** 31} /* ${type} ${mode} ${stencil} */` : undefined;
        const kernel = compileOnce<Kernel>(warmCompactSource(pred, type, mode, stencil));
        const r = rng(5);
        const calls: (() => unknown)[] = [];
        for (let n = 4096; n < 4100; n++) {
          // Random values; unique: equal neighbours now and then.
          const x = arrayOf(type, n, (i) =>
            kind === 'unique' ? Math.floor(i / (1 + (i % 3))) : type === 'f32' ? (r() % 1000) / 1000 : r(),
          );
          const s = stencil === 'f32' ? arrayOf('f32', n, () => (r() % 1000) / 1000) : undefined;
          const rej = mode === 'partition' ? arrayOf(type, n, () => 0) : s;
          const y = arrayOf(type, n, () => 0);
          calls.push(() => kernel(x, rej, y, 0, n, false, 0, undefined));
        }
        expect(callsOptimized(kernel, calls)).toBe(calls.length);
      });
    }
  }

  it('a kernel is looked up by a short key: repeated calls return the same entry, no source rebuilt', () => {
    const fns = { op: plusTagged('memo'), keyEq: keyEqual, keyType: 'u32', valueType: 'u32' } as const;
    expect(byKeyKernel('reduce', fns)).toBe(byKeyKernel('reduce', fns));
    expect(byKeyKernel('reduce', fns)).not.toBe(byKeyKernel('unique', fns));
    const m = new Uint32Array(4);
    const v = new Float32Array(4);
    expect(gatherKernel('gather', [m, v, v], undefined)).toBe(gatherKernel('gather', [m, v, v], undefined));
    expect(gatherKernel('gather', [m, v, v], undefined)).not.toBe(gatherKernel('scatter', [v, m, v], undefined));
  });
});
