/**
 * Lambda translation without a GPU: the JS form's semantics, result types, the WGSL text, names and
 * caching, toGpuFunction, and every error (construct and position). GPU agreement lives in
 * lambda.gpu.test.ts.
 */
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { ArgumentError, LambdaError, UnsupportedTypeError } from '../errors';
import { plus } from '../operators';
import type { NumericType } from '../types';
import { link, mangle } from '../wgsl/fragment';
import { JS_FROM_SOURCE, type LambdaFn, type LambdaOptions, lambda, lambdaParseCount, toGpuFunction } from './lambda';

declare const k: number;
declare const flag: boolean;

const I32_MIN = -(2 ** 31);
const run = (f: LambdaFn, types: NumericType[], ...args: number[]) => lambda(f).js(types)(...args);

/** The LambdaError thrown by lambda(f, options). */
function lambdaErrorOf(f: unknown, options?: LambdaOptions): LambdaError {
  try {
    lambda(f as LambdaFn, options);
  } catch (e) {
    if (e instanceof LambdaError) return e;
    throw e;
  }
  throw new Error('expected a LambdaError');
}

describe('lambda: JS form semantics', () => {
  it('integer arithmetic wraps: u32 mod 2^32, i32 two complement', () => {
    expect(run((x) => x * 2, ['u32'], 2 ** 31)).toBe(0);
    expect(run((x) => x + 1, ['u32'], 0xffffffff)).toBe(0);
    expect(run((x) => x - 1, ['u32'], 0)).toBe(0xffffffff);
    expect(run((x) => -x, ['u32'], 1)).toBe(0xffffffff);
    expect(run((x) => x + 1, ['i32'], 0x7fffffff)).toBe(I32_MIN);
    expect(run((x) => x * x, ['i32'], 0x10001)).toBe(Math.imul(0x10001, 0x10001));
    expect(run((x) => -x, ['i32'], I32_MIN)).toBe(I32_MIN);
    expect(run((x) => Math.abs(x), ['i32'], I32_MIN)).toBe(I32_MIN);
    expect(run((x) => x ** 3, ['u32'], 0x10000)).toBe(0);
    expect(run((x) => x ** 2, ['i32'], -3)).toBe(9);
    expect(run((a, b) => a ** b, ['i32', 'i32'], 2, -1)).toBe(0);
    expect(run((a, b) => a ** b, ['i32', 'i32'], -1, -3)).toBe(-1);
  });

  it('integer division truncates; division and remainder by zero follow WGSL', () => {
    expect(run((a, b) => a / b, ['i32', 'i32'], -7, 2)).toBe(-3);
    expect(run((a, b) => a % b, ['i32', 'i32'], -7, 2)).toBe(-1);
    expect(run((a, b) => a / b, ['u32', 'u32'], 7, 0)).toBe(7);
    expect(run((a, b) => a % b, ['u32', 'u32'], 7, 0)).toBe(0);
    expect(run((a, b) => a / b, ['i32', 'i32'], -7, 0)).toBe(-7);
    expect(run((a, b) => a % b, ['i32', 'i32'], -7, 0)).toBe(0);
    expect(run((a, b) => a / b, ['i32', 'i32'], I32_MIN, -1)).toBe(I32_MIN);
    expect(run((a, b) => a % b, ['i32', 'i32'], I32_MIN, -1)).toBe(0);
    expect(run((a, b) => a / b, ['u32', 'u32'], 0xffffffff, 3)).toBe(0x55555555);
    expect(run((x) => x / 0, ['u32'], 5)).toBe(5);
  });

  it('f32 rounds every intermediate, keeps IEEE division and JS remainder', () => {
    expect(run((a, b) => a + b, ['f32', 'f32'], 1, 2 ** -24)).toBe(1);
    expect(run((a, b) => a * b, ['f32', 'f32'], Math.fround(0.1), 3)).toBe(Math.fround(Math.fround(0.1) * 3));
    expect(run((a, b) => a / b, ['f32', 'f32'], 1, 0)).toBe(Number.POSITIVE_INFINITY);
    expect(run((a, b) => a / b, ['f32', 'f32'], 0, 0)).toBeNaN();
    expect(run((a, b) => a % b, ['f32', 'f32'], -7.5, 2)).toBe(-1.5);
    expect(
      Object.is(
        run((a) => -a, ['f32'], 0),
        -0,
      ),
    ).toBe(true);
  });

  it('literals take the other operand type; non-integers and f32 promote to f32', () => {
    const half = lambda((x) => x * 0.5);
    expect(half.resultType(['u32'])).toBe('f32');
    expect(half.js(['u32'])(3)).toBe(1.5);
    expect(lambda((x) => x * 2).resultType(['i32'])).toBe('i32');
    expect(lambda((x) => x + Math.PI).resultType(['u32'])).toBe('f32');
    expect(lambda((x) => Math.sqrt(x)).resultType(['u32'])).toBe('f32');
    expect(lambda((x) => Math.fround(x)).resultType(['i32'])).toBe('f32');
    expect(lambda((x) => x - 1).js(['u32'])(0)).toBe(0xffffffff);
    expect(lambda((a, b) => a + b).resultType(['u32', 'i32'])).toBe('i32');
    expect(lambda((a, b) => a + b).resultType(['u32', 'f32'])).toBe('f32');
    // constants alone take the first argument's type
    expect(lambda((_x) => 1 + 2).resultType(['u32'])).toBe('u32');
    expect(lambda((_x) => 1 + 2).resultType(['f32'])).toBe('f32');
    expect(lambda((_x) => 7 / 2).js(['f32'])(0)).toBe(3.5);
    expect(lambda((_x) => 7 / 2).js(['i32'])(0)).toBe(3);
  });

  it('comparisons and ! are predicates (bool); && || ?: pick operands like JS', () => {
    const gt = lambda((x) => x > 0.5);
    expect(gt.resultType(['f32'])).toBe('bool');
    expect(gt.js(['f32'])(0.75)).toBe(true);
    expect(lambda((x) => !x).resultType(['u32'])).toBe('bool');
    expect(lambda((a, b) => a > 0 && b > 0).resultType(['i32', 'i32'])).toBe('bool');
    const and = lambda((a, b) => a && b);
    expect(and.resultType(['i32', 'i32'])).toBe('i32');
    expect(and.js(['i32', 'i32'])(0, 5)).toBe(0);
    expect(and.js(['i32', 'i32'])(3, 5)).toBe(5);
    expect(lambda((a, b) => a || b).js(['f32', 'f32'])(Number.NaN, 2)).toBe(2);
    expect(lambda((x) => (x > 1 ? x : 0.5)).resultType(['u32'])).toBe('f32');
    expect(lambda((a, b) => +(a > b) + +(a < b)).js(['u32', 'u32'])(1, 2)).toBe(1);
    // u32 against i32 compares values
    expect(lambda((a, b) => a < b).js(['u32', 'i32'])(0x80000000, -1)).toBe(false);
  });

  it('NaN compares as in JS; Math.min/max propagate NaN and order -0 < +0', () => {
    const nan = Number.NaN;
    expect(run((a, b) => a < b, ['f32', 'f32'], nan, 1)).toBe(false);
    expect(run((a, b) => a >= b, ['f32', 'f32'], nan, 1)).toBe(false);
    expect(run((a, b) => a !== b, ['f32', 'f32'], nan, nan)).toBe(true);
    // biome-ignore lint/suspicious/noSelfCompare: the NaN check is what is tested
    expect(run((a) => a === a, ['f32'], nan)).toBe(false);
    expect(run((a, b) => Math.min(a, b), ['f32', 'f32'], nan, 1)).toBeNaN();
    expect(
      Object.is(
        run((a, b) => Math.min(a, b), ['f32', 'f32'], 0, -0),
        -0,
      ),
    ).toBe(true);
    expect(
      Object.is(
        run((a, b) => Math.max(a, b), ['f32', 'f32'], -0, 0),
        0,
      ),
    ).toBe(true);
    expect(run((a) => !a, ['f32'], nan)).toBe(true);
  });

  it('bitwise operators: ToInt32 for f32, u32 stays u32, >>> gives u32, shift counts mod 32', () => {
    const trunc = lambda((x) => x | 0);
    expect(trunc.resultType(['f32'])).toBe('i32');
    expect(trunc.js(['f32'])(-3.75)).toBe(-3);
    expect(trunc.js(['f32'])(2 ** 32 + 5)).toBe(5);
    expect(trunc.js(['f32'])(Number.NaN)).toBe(0);
    expect(run((x) => x >> 1, ['u32'], 0x80000000)).toBe(0x40000000);
    expect(run((x) => x >> 1, ['i32'], I32_MIN)).toBe(-(2 ** 30));
    expect(lambda((x) => x >>> 0).resultType(['i32'])).toBe('u32');
    expect(run((x) => x >>> 0, ['i32'], -1)).toBe(0xffffffff);
    expect(run((x) => x << 33, ['u32'], 1)).toBe(2);
    expect(run((x) => ~x, ['u32'], 0)).toBe(0xffffffff);
    expect(run((a, b) => a & b, ['u32', 'u32'], 0xffffffff, 0x80000001)).toBe(0x80000001);
  });

  it('Math.round is JS round-half-up (not half-to-even), exact at 0.49999997 and above 2^23', () => {
    const r = lambda((x) => Math.round(x)).js(['f32']);
    expect(r(2.5)).toBe(3);
    expect(r(-2.5)).toBe(-2);
    expect(Object.is(r(-0.5), -0)).toBe(true);
    expect(r(Math.fround(0.49999997))).toBe(0);
    expect(r(2 ** 23 + 1)).toBe(2 ** 23 + 1);
    expect(run((x) => Math.round(x), ['i32'], -7)).toBe(-7);
    expect(run((x) => Math.sign(x), ['u32'], 9)).toBe(1);
  });

  it('captures are inlined constants of the right type', () => {
    const f = lambda((x) => x * k + (flag ? 1 : 0), { captures: { k: 3, flag: true } });
    expect(f.captures).toEqual({ k: 3, flag: true });
    expect(f.js(['u32'])(2)).toBe(7);
    expect(f.jsSource(['u32'])).not.toContain('k');
    expect(f.wgsl(['u32']).code).toContain('3u');
    const g = lambda((x) => x + k, { captures: { k: -1 } });
    expect(g.js(['u32'])(5)).toBe(4);
    expect(g.wgsl(['u32']).code).toContain('4294967295u');
    expect(lambda((x) => x * k, { captures: { k: 0.5 } }).resultType(['i32'])).toBe('f32');
    expect(lambda((x) => x + k, { captures: { k: Number.NaN } }).js(['f32'])(1)).toBeNaN();
  });

  it('constant subexpressions are folded with the JS semantics (no WGSL constant-expression errors)', () => {
    const code = lambda((x) => x + (1 - 2) * 3 + 2147483647 * 2).wgsl(['i32']).code;
    expect(code).toContain('return (');
    expect(code).not.toMatch(/2147483647i \*/);
    expect(lambda((x) => x / (1 - 1)).js(['u32'])(9)).toBe(9);
  });

  it('jsSource is self-contained: it runs in a context holding nothing but the built-ins', () => {
    const cases: [string, NumericType[], number[]][] = [
      ['(a, b) => (a / b) % 7', ['i32', 'i32'], [-100, 3]],
      ['(a, b) => a ** b + k', ['u32', 'u32'], [3, 4]],
      ['(x) => (x > 0 ? Math.sqrt(x) : NaN === x ? 1 : 0)', ['f32'], [2]],
      ['(x) => x + Infinity - Math.PI', ['f32'], [1]],
    ];
    for (const [source, types, args] of cases) {
      const fn = lambda(new Function(`return (${source});`)() as LambdaFn, { captures: { k: 2 } });
      const src = fn.jsSource(types);
      const rebuilt = runInNewContext(`(${src})`, Object.create(null)) as LambdaFn;
      expect(rebuilt(...args), src).toEqual(fn.js(types)(...args));
    }
  });
});

describe('lambda: WGSL form, names, caching', () => {
  it('declares fn <fragment.name>(a: T0[, b: T1]) -> R and links', () => {
    const f = lambda((a, b) => a < b);
    const frag = f.wgsl(['f32', 'f32']);
    expect(frag.code).toContain(`fn ${frag.name}(a: f32, b: f32) -> bool`);
    const unary = lambda((x) => x * 2).wgsl(['u32']);
    expect(unary.code).toContain(`fn ${unary.name}(a: u32) -> u32`);
    expect(link(frag).code).toContain('fn wdpl_lam_flt');
    expect(frag.name).toContain('f32');
  });

  it('Math.round is emitted exactly, not as WGSL round nor floor(x + 0.5)', () => {
    const m = link(lambda((x) => Math.round(x)).wgsl(['f32'])).code;
    expect(m).toContain('fn wdpl_lam_round');
    expect(m).not.toMatch(/\bround\(/);
  });

  it('has a stable name: a hash of source, captures and options, valid after mangle', () => {
    const a = lambda((x) => x + 1);
    const b = lambda((x) => x + 1);
    expect(a.name).toBe(b.name);
    expect(mangle(a.name)).toBe(a.name);
    expect(a.name).toMatch(/^lambda_[0-9a-f]{16}$/);
    expect(lambda((x) => x + k, { captures: { k: 1 } }).name).not.toBe(
      lambda((x) => x + k, { captures: { k: 2 } }).name,
    );
    expect(lambda((x) => x + 1, { commutative: true }).name).not.toBe(a.name);
    expect(lambda((x) => x + 1, { identity: 0 }).name).not.toBe(a.name);
    expect(a.builtin).toBe(false);
    expect(a.commutative).toBe(false);
    expect(a.subgroupOp('u32')).toBeUndefined();
    expect(a.source).toBe('(x) => x + 1');
  });

  it('caches translations per source, captures and argument types', () => {
    const a = lambda((x) => x * 3 + 1);
    const b = lambda((x) => x * 3 + 1);
    expect(a.wgsl(['u32'])).toBe(b.wgsl(['u32']));
    expect(a.js(['u32'])).toBe(b.js(['u32']));
    expect(a.wgsl(['i32'])).not.toBe(a.wgsl(['u32']));
  });

  it('identity and commutative come from the options', () => {
    const f = lambda((a, b) => Math.max(a, b), { identity: -1, commutative: true });
    expect(f.arity).toBe(2);
    expect(f.commutative).toBe(true);
    expect(f.identity('u32')).toBe(0xffffffff);
    expect(f.identity('i32')).toBe(-1);
    expect(lambda((a, b) => a + b).identity('u32')).toBeUndefined();
  });

  it('supports u32, i32, f32; other element types are UnsupportedTypeError', () => {
    const f = lambda((x) => x + 1);
    expect(f.supports(['u32'])).toBe(true);
    expect(f.supports(['f16' as NumericType])).toBe(false);
    expect(() => f.wgsl(['f16' as NumericType])).toThrow(UnsupportedTypeError);
    expect(() => f.js(['f16' as NumericType])).toThrow(UnsupportedTypeError);
    expect(() => f.resultType(['f64' as NumericType])).toThrow(UnsupportedTypeError);
  });

  it('accepts function expressions with a single return and method shorthand', () => {
    // biome-ignore lint/complexity/useArrowFunction: the function form is what is tested
    const f = lambda(function (x: number) {
      return x * 2;
    });
    expect(f.js(['i32'])(-4)).toBe(-8);
    const m = lambda(
      {
        twice(x: number) {
          return x * 2;
        },
      }.twice,
    );
    expect(m.js(['u32'])(4)).toBe(8);
  });
});

describe('lambda: errors name the construct and its position', () => {
  /** A function whose toString() is exactly `source` (test sources are not reprinted by the bundler). */
  const fnOf = (source: string): unknown => new Function(`return (${source});`)();
  const cases: [string, string, RegExp, string][] = [
    ['free variable', '(x) => x + y', /free variable 'y'.*captures/, 'y'],
    ['call of a non-Math function', '(x) => foo(x)', /call of 'foo'/, 'foo('],
    ['unsupported Math function', '(x) => Math.random() * x', /Math\.random is not supported/, 'Math.random'],
    ['wrong Math arity', '(x) => Math.sqrt(x, x)', /Math\.sqrt takes 1 argument/, 'Math.sqrt'],
    ['member access', '(x) => x + obj.n', /member access 'obj\.n'/, 'obj.n'],
    ['Number.* member access', '(x) => x + Number.EPSILON', /member access 'Number\.EPSILON'/, 'Number'],
    ['string literal', "(x) => x > 0 ? 'a' : 'b'", /string literal 'a'/, "'a'"],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the source of a template string
    ['template string', '(x) => `${x}`', /template string/, '`'],
    ['this', 'function (x) { return x + this; }', /`this`/, 'this'],
    ['new', '(x) => new Number(x)', /`new`/, 'new'],
    ['nested function', '(x) => (z) => z + x', /nested function \(closure\)/, '(z)'],
    ['nested function called', '(x) => ((z) => z)(x)', /call of '\(z\) => z'/, '((z'],
    ['array literal', '(x) => [x][0]', /member access/, '[x]'],
    ['assignment', '(x) => (x = 2)', /an assignment/, 'x = 2'],
    ['increment', '(x) => x++', /increment/, 'x++'],
    ['comma', '(x) => (x, 1)', /comma expression/, 'x, 1'],
    ['typeof', "(x) => typeof x === 'number'", /'typeof' operator/, 'typeof'],
    ['nullish', '(x) => x ?? 1', /'\?\?' operator/, 'x ??'],
    ['in', "(x) => 'a' in x", /string literal|'in' operator/, "'a' in"],
    ['undefined', '(x) => x + undefined', /`undefined`/, 'undefined'],
    ['BigInt', '(x) => x + 1n', /BigInt/, '1n'],
    ['declaration', '(x) => { const z = x * 2; return z; }', /declaration \(a statement\)/, 'const'],
    ['loop', '(x) => { for (;;) return x; }', /for loop/, 'for'],
    ['if statement', '(x) => { if (x) return 1; return 0; }', /if statement/, 'if'],
    ['second statement', '(x) => { return x; x; }', /after the return/, 'x; }'],
    ['empty body', '(x) => {}', /empty body/, '{}'],
    ['default parameter', '(x = 1) => x', /default parameter/, 'x = 1'],
    ['rest parameter', '(...xs) => xs', /rest parameter/, '...xs'],
    ['destructuring', '({ a }) => a', /destructuring/, '{ a }'],
    ['no parameters', '() => 1', /1 or 2 parameters, this one takes 0/, '()'],
    ['three parameters', '(a, b, c) => a + b + c', /1 or 2 parameters, this one takes 3/, '(a'],
    ['async', 'async (x) => x', /async/, 'async'],
    ['generator', 'function* (x) { return x; }', /generator/, 'function'],
    ['class', 'class {}', /a class is not a function/, 'class'],
    ['=== between bool and number', '(x) => (x > 0) === 1', /'===' between a boolean and a number/, '(x > 0) ==='],
  ];
  for (const [what, source, message, at] of cases) {
    it(what, () => {
      const e = lambdaErrorOf(fnOf(source));
      expect(e.message).toMatch(message);
      expect(e.source).toBe(source);
      const where = source.indexOf(at);
      expect(where).toBeGreaterThanOrEqual(0);
      expect(e.position).toBe(where);
      expect(e.message).toContain(`(at position ${where})`);
    });
  }

  it('unreadable sources: native and bound functions, non-functions', () => {
    expect(lambdaErrorOf(Math.abs).message).toMatch(/cannot be read.*native or bound/);
    expect(lambdaErrorOf(((x: number) => x).bind(null)).message).toMatch(/native or bound/);
    expect(lambdaErrorOf('x => x').message).toMatch(/expected a function/);
  });

  it('captures: wrong types are LambdaErrors, a non-object is an ArgumentError', () => {
    expect(lambdaErrorOf((x: number) => x + k, { captures: { k: '1' as unknown as number } }).message).toMatch(
      /capture 'k' must be a number or a boolean.*string/,
    );
    expect(lambdaErrorOf((x: number) => x + k, { captures: { k: {} as unknown as number } }).message).toMatch(
      /capture 'k'/,
    );
    expect(() => lambda((x) => x, { captures: 5 as unknown as Record<string, number> })).toThrow(ArgumentError);
  });
});

describe('toGpuFunction', () => {
  it('passes GpuFunctions through and checks their arity', () => {
    expect(toGpuFunction(plus, 'op', 2)).toBe(plus);
    expect(() => toGpuFunction(plus, 'pred', 1)).toThrow(/pred: expected a function of 1 argument/);
  });

  it('turns arrow functions into lambdas and checks their arity', () => {
    const f = toGpuFunction((a: number, b: number) => a * b, 'op', 2);
    expect(f.js(['u32', 'u32'])(0x10000, 0x10000)).toBe(0);
    expect(() => toGpuFunction((a: number, b: number) => a * b, 'pred', 1)).toThrow(ArgumentError);
  });

  it('accepts the explicit { js, wgsl } escape hatch with the JS parameter names', () => {
    const f = toGpuFunction({ js: (lhs: number, rhs: number) => lhs + rhs, wgsl: 'return lhs + rhs;' }, 'op', 2);
    expect(f.builtin).toBe(false);
    expect(f.resultType(['i32', 'i32'])).toBe('i32');
    const frag = f.wgsl(['i32', 'i32']);
    expect(frag.code).toBe(`fn ${frag.name}(lhs: i32, rhs: i32) -> i32 {\nreturn lhs + rhs;\n}`);
    expect(f.js(['i32'])(2, 3)).toBe(5);
    expect(f.jsSource(['i32'])).toBe('(lhs, rhs) => lhs + rhs');
    const pred = toGpuFunction(
      { js: (v: number) => v > 1, wgsl: 'return v > 1.0;', resultType: 'bool', identity: 0, commutative: false },
      'pred',
      1,
    );
    expect(pred.resultType(['f32'])).toBe('bool');
    expect(pred.identity('f32')).toBe(0);
  });

  it('caches arrow functions by object, then by source: a new inline arrow is a lookup, not a parse', () => {
    const make = () => (v: number) => v * 7 - 3;
    const first = make();
    const f = toGpuFunction(first, 'fn', 1);
    const parses = lambdaParseCount();
    expect(toGpuFunction(first, 'fn', 1)).toBe(f);
    const second = make();
    expect(second).not.toBe(first);
    expect(toGpuFunction(second, 'fn', 1)).toBe(f);
    expect(lambdaParseCount()).toBe(parses);
    // Another source is another function (and one more parse).
    const g = toGpuFunction((v: number) => v * 7 - 4, 'fn', 1);
    expect(g).not.toBe(f);
    expect(g.name).not.toBe(f.name);
    expect(lambdaParseCount()).toBe(parses + 1);
    // The arity check still applies to a cached function.
    expect(() => toGpuFunction(make(), 'op', 2)).toThrow(/op: expected a function of 2 parameter/);
  });

  it('lambda() with the same source and captures reuses the parse; the name tells options apart', () => {
    const src = () => (v: number) => v + k;
    const a = lambda(src(), { captures: { k: 1 } });
    const parses = lambdaParseCount();
    const b = lambda(src(), { captures: { k: 1 } });
    expect(lambdaParseCount()).toBe(parses);
    expect(b).not.toBe(a);
    expect(b.name).toBe(a.name);
    expect((b as unknown as Record<symbol, unknown>)[JS_FROM_SOURCE]).toBe(true);
    expect(lambda(src(), { captures: { k: 2 } }).name).not.toBe(a.name);
    expect(lambda(src(), { captures: { k: 1 }, commutative: true }).name).not.toBe(a.name);
    expect(lambda(src(), { captures: { k: 1 }, identity: 0 }).name).not.toBe(a.name);
    expect(JS_FROM_SOURCE).toBe(Symbol.for('webdpl.jsFromSource'));
  });

  it('caches explicit functions by the identity of js, never by its source', () => {
    const js = (a: number) => a * 2;
    const f = toGpuFunction({ js, wgsl: 'return a * 2;' }, 'fn', 1);
    expect(toGpuFunction({ js, wgsl: 'return a * 2;' }, 'fn', 1)).toBe(f);
    expect((f as unknown as Record<symbol, unknown>)[JS_FROM_SOURCE]).toBeUndefined();
    // Same source, another closure: another function, running its own js.
    const scale = (m: number) => (a: number) => a * m;
    const two = toGpuFunction({ js: scale(2), wgsl: 'return a * 2;' }, 'fn', 1);
    const three = toGpuFunction({ js: scale(3), wgsl: 'return a * 2;' }, 'fn', 1);
    expect(three).not.toBe(two);
    expect(two.js(['f32'])(5)).toBe(10);
    expect(three.js(['f32'])(5)).toBe(15);
    // Other fields with the same js: another function.
    const g = toGpuFunction({ js, wgsl: 'return a * 2;', resultType: 'f32' }, 'fn', 1);
    expect(g).not.toBe(f);
    expect(g.resultType(['u32'])).toBe('f32');
    expect(f.resultType(['u32'])).toBe('u32');
  });

  it('rejects everything else with an ArgumentError naming the argument', () => {
    expect(() => toGpuFunction('a + b', 'op', 2)).toThrow(/op: expected a GpuFunction.*\(a, b\) => a \+ b.*string/);
    expect(() => toGpuFunction({ js: (a: number) => a }, 'op', 1)).toThrow(/op: expected/);
    expect(() => toGpuFunction(undefined, 'pred', 1)).toThrow(ArgumentError);
    expect(() => toGpuFunction({ js: Math.abs, wgsl: 'return a;' }, 'f', 1)).toThrow(/f\.js: expected a JS function/);
    expect(() => toGpuFunction({ js: (a: number) => a, wgsl: 'return a;' }, 'op', 2)).toThrow(
      /op\.js: expected a function of 2/,
    );
    expect(() => toGpuFunction({ js: (a: number) => a, wgsl: '' }, 'op', 1)).toThrow(/op\.wgsl/);
    expect(() => toGpuFunction({ js: (loop: number) => loop, wgsl: 'return loop;' }, 'op', 1)).toThrow(
      /WGSL identifiers/,
    );
    expect(() =>
      toGpuFunction({ js: (a: number) => a, wgsl: 'return a;', resultType: 'f64' as 'f32' }, 'op', 1),
    ).toThrow(/op\.resultType/);
  });
});
