/**
 * Comparator arguments of the sorting family: `less` / `greater`, a GpuFunction or `{ js, wgsl }`
 * pair, or a plain arrow function `(a, b) => boolean` ("a goes before b", a strict weak order).
 * A plain function the lambda translator cannot take stays usable on the CPU ('host-only').
 */
import {
  ArgumentError,
  describe,
  type GpuFunction,
  isGpuFunction,
  LambdaError,
  type NumericType,
  toGpuFunction,
} from '@webdpl/core';
import type { CpuComparator } from '../bricks/sort';
import { type BuiltinComparator, builtinOrder, less } from './comparators';

/** What a caller may pass as a comparator. */
export type ComparatorArg = BuiltinComparator | GpuFunction | ((a: number, b: number) => boolean) | object;

/** A checked comparator. */
export type Comparator =
  | { readonly kind: 'builtin'; readonly fn: BuiltinComparator; readonly descending: boolean }
  | { readonly kind: 'gpu'; readonly fn: GpuFunction }
  | { readonly kind: 'host-only'; readonly js: (a: number, b: number) => boolean; readonly why: string };

const EXPECTED =
  "a comparator: less, greater, a function (a, b) => boolean ('a goes before b'), a GpuFunction or { js, wgsl }";

/** Checks a comparator argument (undefined: `less`). Throws ArgumentError naming `argument`. */
export function checkComparator(x: unknown, argument: string): Comparator {
  if (x === undefined) return { kind: 'builtin', fn: less, descending: false };
  if (isGpuFunction(x)) {
    const order = builtinOrder(x);
    if (order) return { kind: 'builtin', fn: x as BuiltinComparator, descending: order === 'descending' };
  }
  if (!isGpuFunction(x) && typeof x !== 'function' && (typeof x !== 'object' || x === null)) {
    throw new ArgumentError(argument, EXPECTED, describe(x));
  }
  try {
    return { kind: 'gpu', fn: toGpuFunction(x, argument, 2) };
  } catch (e) {
    if (e instanceof LambdaError && typeof x === 'function') {
      if ((x as (...a: unknown[]) => unknown).length !== 2) {
        throw new ArgumentError(argument, `${EXPECTED} of 2 parameters`, `a function of ${(x as () => void).length}`);
      }
      return { kind: 'host-only', js: x as (a: number, b: number) => boolean, why: e.message };
    }
    throw e;
  }
}

/** Throws unless a GPU-form comparator returns bool for `type` (catches `(a, b) => a - b`). */
export function checkComparatorType(c: Comparator, type: NumericType, argument: string): void {
  if (c.kind !== 'gpu') return;
  if (!c.fn.supports([type, type])) {
    throw new ArgumentError(argument, `${EXPECTED} defined for ${type} keys`, `'${c.fn.name}'`);
  }
  const rt = c.fn.resultType([type, type]);
  if (rt !== 'bool') {
    throw new ArgumentError(
      argument,
      'a predicate (a, b) => boolean that is true when a goes before b (not a three-way comparator such as (a, b) => a - b)',
      `a function returning ${rt}`,
    );
  }
}

/** The CPU form of a comparator for keys of `type`. */
export function cpuComparator(c: Comparator, type: NumericType): CpuComparator {
  switch (c.kind) {
    case 'builtin':
      return {
        kind: 'builtin',
        descending: c.descending,
        before: c.fn.js([type, type]) as (a: number, b: number) => boolean,
        source: c.fn.jsSource([type, type]),
      };
    case 'gpu': {
      const before = c.fn.js([type, type]) as (a: number, b: number) => boolean;
      let source: string | undefined;
      try {
        source = c.fn.jsSource([type, type]);
      } catch {
        source = undefined;
      }
      return { kind: 'function', before, source };
    }
    case 'host-only':
      return { kind: 'function', before: c.js };
  }
}
