/**
 * Tuple lambdas, for zipped arguments (`zip(a, b, ...)` in @webdpl/algorithms): a pure arrow function
 * of up to 5 parameters whose parameters may be tuples (read as `p[0]`, `p[1]`, ...) and whose body
 * may be an array literal `[e0, e1, ...]` (a tuple result). Each element of the result is compiled on
 * its own into an ordinary scalar function of the flattened arguments (parameter 0's components, then
 * parameter 1's, ...), so the CPU kernels and the GPU engines run tuples as several scalar functions
 * over several arrays or registers: no new expression forms reach type inference or the emitters.
 *
 * `(a, b) => [Math.min(a[0], b[0]), a[1] + b[1]]` over tuples of 2 becomes two functions of 4
 * arguments: `(a0, a1, b0, b1) => Math.min(a0, b0)` and `(a0, a1, b0, b1) => a1 + b1`.
 */
import { ArgumentError, describe, LambdaError } from '../errors';
import { type GpuFunction, isGpuFunction } from '../operators';
import { functionOfCore, hashString } from './lambda';
import { type Expr, functionSource, lambdaError, type ParsedLambda, parseLambda, TUPLE_MAX_PARAMS } from './parse';

/** A function over zipped arguments (see the file comment); made by `tupleLambda` or `tupleFunction`. */
export interface TupleFunction {
  readonly kind: 'tuple-function';
  /** A hash of the source and captures (or the wrapped GpuFunction's name). */
  readonly name: string;
  /** Declared parameters (1 to 5). */
  readonly params: number;
  /** Elements of the result tuple, or 0 for a scalar result. */
  readonly width: number;
  /**
   * The scalar functions computing each element of the result (one for a scalar result) for
   * parameters shaped `shape` (per parameter: 0 a number, m a tuple of m numbers). Each takes the
   * flattened arguments, has no identity and does not commute.
   * @throws LambdaError where the body indexes a number, uses a tuple without an index, or indexes past
   * a tuple's end
   */
  components(shape: readonly number[]): readonly GpuFunction[];
}

/** Options of `tupleLambda`. */
export interface TupleLambdaOptions {
  /** Values of outside variables the body names, inlined as constants (as in `lambda`). @default {} */
  readonly captures?: Readonly<Record<string, number | boolean>>;
}

/** Whether `x` is a TupleFunction. */
export function isTupleFunction(x: unknown): x is TupleFunction {
  return typeof x === 'object' && x !== null && (x as { kind?: unknown }).kind === 'tuple-function';
}

const cache = new Map<string, TupleFunction>();
const byFunction = new WeakMap<object, TupleFunction>();

/** `e` with every parameter reference replaced by its flattened index (checked against `shape`). */
function flatten(parsed: ParsedLambda, e: Expr, shape: readonly number[], offsets: readonly number[]): Expr {
  const go = (x: Expr): Expr => flatten(parsed, x, shape, offsets);
  switch (e.kind) {
    case 'number':
    case 'boolean':
      return e;
    case 'param': {
      const m = shape[e.index] ?? 0;
      const at = offsets[e.index] as number;
      if (e.component === undefined) {
        if (m > 0) {
          throw lambdaError(
            parsed.source,
            e.pos,
            `'${e.name}' is a tuple of ${m} numbers here: use its elements ${e.name}[0] to ${e.name}[${m - 1}]`,
          );
        }
        return { kind: 'param', index: at, name: e.name, pos: e.pos };
      }
      if (m === 0) {
        throw lambdaError(parsed.source, e.pos, `'${e.name}' is a number here, not a tuple: write ${e.name}`);
      }
      if (e.component >= m) {
        throw lambdaError(
          parsed.source,
          e.pos,
          `${e.name}[${e.component}] is past the end of '${e.name}', a tuple of ${m} numbers`,
        );
      }
      return { kind: 'param', index: at + e.component, name: `${e.name}${e.component}`, pos: e.pos };
    }
    case 'unary':
      return { ...e, arg: go(e.arg) };
    case 'binary':
    case 'logical':
      return { ...e, left: go(e.left), right: go(e.right) };
    case 'conditional':
      return { ...e, test: go(e.test), yes: go(e.yes), no: go(e.no) };
    case 'call':
      return { ...e, args: e.args.map(go) };
  }
}

/** One element of a tuple lambda's result as a GpuFunction over `arity` flattened arguments. */
function component(parsed: ParsedLambda, body: Expr, arity: number, name: string): GpuFunction {
  const params = Array.from({ length: arity }, (_, k) => `p${k}`);
  const flat: ParsedLambda = { source: parsed.source, params, body };
  return functionOfCore({ parsed: flat, hash: hashString(name), translations: new Map() }, name, {
    commutative: false,
  });
}

function fromParsed(parsed: ParsedLambda, name: string): TupleFunction {
  const shapes = new Map<string, readonly GpuFunction[]>();
  const items = parsed.items ?? [parsed.body];
  return {
    kind: 'tuple-function',
    name,
    params: parsed.params.length,
    width: parsed.items ? parsed.items.length : 0,
    components: (shape) => {
      const key = shape.join('_');
      let fns = shapes.get(key);
      if (!fns) {
        const offsets: number[] = [];
        let arity = 0;
        for (let p = 0; p < parsed.params.length; p++) {
          offsets.push(arity);
          arity += Math.max(1, shape[p] ?? 0);
        }
        fns = items.map((it, k) =>
          component(parsed, flatten(parsed, it, shape, offsets), arity, `tlambda_${name}_s${key}_r${k}`),
        );
        shapes.set(key, fns);
      }
      return fns;
    },
  };
}

function parsedTuple(source: string, captures: Readonly<Record<string, number | boolean>>): TupleFunction {
  const keyCaptures = Object.keys(captures)
    .sort()
    .map((k) => `${k}=${String(captures[k])}`)
    .join(',');
  const key = `${source}\u0000${keyCaptures}`;
  let t = cache.get(key);
  if (!t) {
    t = fromParsed(parseLambda(source, captures, true), hashString(key));
    if (cache.size >= 1024) cache.delete(cache.keys().next().value as string);
    cache.set(key, t);
  }
  return t;
}

/**
 * A tuple lambda with captures (plain arrow functions need no wrapping): `fn` may take up to 5
 * parameters, read tuple parameters as `p[k]` (k a literal) and return an array literal of 1 to 4
 * elements; everything else is as in `lambda` (same expressions, types and semantics).
 * @throws LambdaError for unsupported constructs and free variables
 */
export function tupleLambda(fn: (...args: never[]) => unknown, options: TupleLambdaOptions = {}): TupleFunction {
  const captures = options.captures ?? {};
  if (typeof captures !== 'object' || captures === null || Array.isArray(captures)) {
    throw new ArgumentError('options.captures', 'an object of numbers and booleans', describe(captures));
  }
  for (const [k, v] of Object.entries(captures)) {
    if (typeof v !== 'number' && typeof v !== 'boolean') {
      throw new LambdaError(`lambda: capture '${k}' must be a number or a boolean, got ${describe(v)}`);
    }
  }
  return parsedTuple(functionSource(fn), captures);
}

/**
 * Normalizes a function argument over zipped arrays: a TupleFunction, an arrow function (parsed as a
 * tuple lambda, cached by function object and by source), a lambda from `lambda()` (its source and
 * captures), or any other GpuFunction (a scalar function of its arity).
 * @throws ArgumentError naming `argument` for anything else; LambdaError for unsupported constructs
 */
export function tupleFunction(x: unknown, argument: string): TupleFunction {
  if (isTupleFunction(x)) return x;
  if (typeof x === 'function') {
    let t = byFunction.get(x);
    if (!t) {
      t = parsedTuple(functionSource(x), {});
      byFunction.set(x, t);
    }
    return t;
  }
  if (isGpuFunction(x)) {
    if (x.source !== undefined && x.captures !== undefined) return parsedTuple(x.source, x.captures);
    const fn = x;
    return {
      kind: 'tuple-function',
      name: fn.name,
      params: fn.arity,
      width: 0,
      components: (shape) => {
        if (shape.some((m) => m > 0)) {
          throw new ArgumentError(argument, 'a lambda whose parameters may be tuples', `${fn.name}, of numbers`);
        }
        return [fn];
      },
    };
  }
  throw new ArgumentError(
    argument,
    `an arrow function of up to ${TUPLE_MAX_PARAMS} parameters such as (x, y) => x * y or (x, y) => [x + y, x - y]`,
    describe(x),
  );
}
