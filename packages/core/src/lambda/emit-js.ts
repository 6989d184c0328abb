/**
 * JS form of a typed lambda: plain JS with exactly the WGSL form's semantics. Integers wrap
 * (`>>> 0`, `| 0`, Math.imul), f32 rounds every intermediate with Math.fround, and integer division
 * and remainder by zero follow WGSL (x / 0 == x, x % 0 == 0, i32 MIN / -1 == MIN, MIN % -1 == 0).
 * The source is self-contained (no free variables but Math) so worker threads can rebuild it.
 */
import type { NumericType } from '../types';
import type { TExpr, ValueType } from './infer';

/** Helper functions a JS form may need, by name, with the helpers each one uses. */
const HELPERS: Readonly<Record<string, { code: string; deps?: readonly string[] }>> = {
  divU32: { code: 'const divU32 = (x, y) => (y === 0 ? x : (x / y) >>> 0);' },
  divI32: { code: 'const divI32 = (x, y) => (y === 0 ? x : (x / y) | 0);' },
  remU32: { code: 'const remU32 = (x, y) => (y === 0 ? 0 : x % y);' },
  remI32: { code: 'const remI32 = (x, y) => (y === 0 ? 0 : (x % y) | 0);' },
  powU32: {
    code: 'const powU32 = (x, y) => { let r = 1; while (y !== 0) { if (y & 1) r = Math.imul(r, x); x = Math.imul(x, x); y >>>= 1; } return r >>> 0; };',
  },
  powI32: {
    code: 'const powI32 = (x, y) => (y < 0 ? (x === 1 ? 1 : x === -1 ? (y & 1 ? -1 : 1) : 0) : powU32(x, y) | 0);',
    deps: ['powU32'],
  },
};

/** JS source of a constant. */
export function jsLiteral(v: number | boolean): string {
  if (typeof v === 'boolean') return String(v);
  // Written without the globals NaN and Infinity: the source may name no free variable but Math.
  if (Number.isNaN(v)) return '(0 / 0)';
  if (v === Number.POSITIVE_INFINITY) return '(1 / 0)';
  if (v === Number.NEGATIVE_INFINITY) return '(-1 / 0)';
  if (Object.is(v, -0)) return '(-0)';
  return v < 0 ? `(${v})` : String(v);
}

/** Parameter names: a, b, then p2.. (tuple lambdas flatten up to 8 scalar parameters). */
const PARAMS = ['a', 'b', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7'];

class JsEmitter {
  readonly helpers = new Set<string>();

  private use(name: string): string {
    const h = HELPERS[name];
    for (const d of h?.deps ?? []) this.use(d);
    this.helpers.add(name);
    return name;
  }

  /** Helper definitions, dependencies first. */
  prelude(): string {
    const order = Object.keys(HELPERS).filter((k) => this.helpers.has(k));
    return order.map((k) => (HELPERS[k] as { code: string }).code).join('\n');
  }

  emit(e: TExpr): string {
    const t = e.type;
    switch (e.op) {
      case 'lit':
        return jsLiteral(e.value);
      case 'param':
        return PARAMS[e.index] as string;
      case 'conv':
        return this.conv(this.emit(e.arg), e.arg.type, t);
      case 'neg': {
        const x = this.emit(e.arg);
        return t === 'u32' ? `((-${x}) >>> 0)` : t === 'i32' ? `((-${x}) | 0)` : `(-${x})`;
      }
      case 'not':
        return `(!${this.emit(e.arg)})`;
      case 'bnot': {
        const x = this.emit(e.arg);
        return t === 'u32' ? `((~${x}) >>> 0)` : `(~${x})`;
      }
      case 'cond':
        return `(${this.emit(e.test)} ? ${this.emit(e.yes)} : ${this.emit(e.no)})`;
      case 'call':
        return this.call(
          e.fn,
          t,
          e.args.map((a) => this.emit(a)),
        );
      default: {
        const l = this.emit(e.left);
        const r = this.emit(e.right);
        switch (e.op) {
          case 'add':
          case 'sub': {
            const fused = t === 'f32' ? this.scaledPlusConstant(e.op, e.left, e.right) : undefined;
            if (fused !== undefined) return fused;
            const s = `${l} ${e.op === 'add' ? '+' : '-'} ${r}`;
            return t === 'u32' ? `((${s}) >>> 0)` : t === 'i32' ? `((${s}) | 0)` : `Math.fround(${s})`;
          }
          case 'mul':
            return t === 'u32'
              ? `(Math.imul(${l}, ${r}) >>> 0)`
              : t === 'i32'
                ? `Math.imul(${l}, ${r})`
                : `Math.fround(${l} * ${r})`;
          case 'div':
            return t === 'f32'
              ? `Math.fround(${l} / ${r})`
              : `${this.use(t === 'u32' ? 'divU32' : 'divI32')}(${l}, ${r})`;
          case 'rem':
            return t === 'f32' ? `(${l} % ${r})` : `${this.use(t === 'u32' ? 'remU32' : 'remI32')}(${l}, ${r})`;
          case 'pow':
            return t === 'f32'
              ? `Math.fround(${l} ** ${r})`
              : `${this.use(t === 'u32' ? 'powU32' : 'powI32')}(${l}, ${r})`;
          case 'and':
          case 'or':
          case 'xor': {
            const s = `${l} ${e.op === 'and' ? '&' : e.op === 'or' ? '|' : '^'} ${r}`;
            return t === 'u32' ? `((${s}) >>> 0)` : `(${s})`;
          }
          case 'shl':
            return t === 'u32' ? `((${l} << ${r}) >>> 0)` : `(${l} << ${r})`;
          case 'shr':
            return t === 'u32' ? `(${l} >>> ${r})` : `(${l} >> ${r})`;
          case 'lt':
            return `(${l} < ${r})`;
          case 'le':
            return `(${l} <= ${r})`;
          case 'gt':
            return `(${l} > ${r})`;
          case 'ge':
            return `(${l} >= ${r})`;
          case 'eq':
            return `(${l} === ${r})`;
          case 'ne':
            return `(${l} !== ${r})`;
          case 'land':
            return `(${l} && ${r})`;
          case 'lor':
            return `(${l} || ${r})`;
        }
      }
    }
  }

  /**
   * `x * P + C` (or `C + x * P`, `x * P - C`, `C - x * P`) of f32, with P = +-2^k (0 <= k <= 64)
   * and C a finite constant of magnitude <= 2^100: one rounding, `Math.fround(x' * P + C)`, where
   * the f32 form rounds twice, `Math.fround(Math.fround(x * P) + C)`. x' is x's value as an f32:
   * x's own form when that ends in a rounding, else `Math.fround(x)` (free on a value loaded from
   * a Float32Array; V8 keeps no f32 arithmetic of its own, and the inner rounding cost ~45% of
   * transform f32 x*2+1, 0.77 -> 0.53 ms at 2^20). Undefined when the operands do not match.
   *
   * Exactly the f32 form for every f32 x (an f32 parameter gets f32 values from the algorithms;
   * a non-f32 double passed straight to `js()` is rounded first, as WGSL's f32 parameter is):
   * 1. x * P is exact in f64: x has at most 24 significant bits and |x| <= FLT_MAX < 2^128, so
   *    2^-149 <= |x * P| < 2^192 for x != 0 (no f64 overflow or subnormal); +-0 * P is the same
   *    signed zero either way.
   * 2. |x * P| <= FLT_MAX: x * P still has 24 significant bits and an exponent no lower than x's,
   *    so it is an f32 value, Math.fround(x * P) === x * P and both forms compute the same.
   * 3. |x * P| > FLT_MAX (x finite): a number of 24 significant bits above FLT_MAX is >= 2^128,
   *    so the f32 form's inner rounding gives s * Infinity (s the sign) and its sum s * Infinity.
   *    Here |x * P +- C| >= 2^128 - 2^100 before f64 rounding, and after it (rounding is monotone,
   *    2^128 - 2^100 is a double), above f32's overflow threshold 2^128 - 2^103 (the midpoint
   *    between FLT_MAX and 2^128, whose tie rounds to the even side, Infinity): the outer rounding
   *    gives s * Infinity too.
   * 4. x infinite: x * P is the same infinity in both; x NaN: NaN in both.
   * A larger C breaks step 3 (2^128 - FLT_MAX = 2^104 is finite), a non-constant other operand
   * too (Infinity - Infinity is NaN, 2^128 - 2^128 is 0); P = 2^-k is inexact for subnormal
   * results: those keep both roundings.
   */
  private scaledPlusConstant(op: 'add' | 'sub', left: TExpr, right: TExpr): string | undefined {
    const constant = (e: TExpr) =>
      e.op === 'lit' && typeof e.value === 'number' && Number.isFinite(e.value) && Math.abs(e.value) <= 2 ** 100
        ? e.value
        : undefined;
    const power = (e: TExpr) => {
      if (e.op !== 'lit' || typeof e.value !== 'number') return undefined;
      const a = Math.abs(e.value);
      const k = Math.log2(a);
      return Number.isInteger(k) && k >= 0 && k <= 64 && 2 ** k === a ? e.value : undefined;
    };
    const scaled = (e: TExpr): string | undefined => {
      if (e.op !== 'mul' || e.type !== 'f32') return undefined;
      const [x, p] = power(e.right) !== undefined ? [e.left, e.right] : [e.right, e.left];
      if (power(p) === undefined || x.type !== 'f32') return undefined;
      const rounded = ['add', 'sub', 'mul', 'div', 'pow'].includes(x.op) || (x.op === 'conv' && x.arg.type !== 'f32');
      const xs = this.emit(x);
      return `${rounded ? xs : `Math.fround(${xs})`} * ${this.emit(p)}`;
    };
    const sign = op === 'add' ? '+' : '-';
    if (constant(right) !== undefined) {
      const m = scaled(left);
      if (m !== undefined) return `Math.fround(${m} ${sign} ${this.emit(right)})`;
    }
    if (constant(left) !== undefined) {
      const m = scaled(right);
      if (m !== undefined) return `Math.fround(${this.emit(left)} ${sign} ${m})`;
    }
    return undefined;
  }

  private conv(x: string, from: ValueType, to: ValueType): string {
    if (from === to) return x;
    if (from === 'bool') return `(${x} ? 1 : 0)`;
    if (to === 'bool') return `(!!${x})`;
    if (to === 'f32') return `Math.fround(${x})`;
    // Integer targets: JS ToInt32/ToUint32 (f32 truncates, wraps mod 2^32, NaN/Infinity give 0).
    return to === 'u32' ? `(${x} >>> 0)` : `(${x} | 0)`;
  }

  private call(fn: string, t: ValueType, args: string[]): string {
    const [x, y] = args;
    switch (fn) {
      case 'min':
      case 'max':
        return `Math.${fn}(${x}, ${y})`;
      case 'abs':
        return t === 'i32' ? `(Math.abs(${x}) | 0)` : t === 'u32' ? (x as string) : `Math.abs(${x})`;
      case 'sign':
        return `Math.sign(${x})`;
      case 'floor':
      case 'ceil':
      case 'round':
      case 'trunc':
        // f32 in, f32 out: the result is an integer or x itself, exact in f32.
        return `Math.${fn}(${x})`;
      default:
        return `Math.fround(Math.${fn}(${x}))`;
    }
  }
}

/**
 * Source of a self-contained JS function expression for `body` with `arity` parameters (a, b, p2, ...).
 * Helpers, when needed, live in an immediately invoked arrow function around it.
 */
export function jsFunctionSource(body: TExpr, arity: number): string {
  const em = new JsEmitter();
  const expr = em.emit(body);
  const head = `(${PARAMS.slice(0, arity).join(', ')})`;
  if (em.helpers.size === 0) return `${head} => ${expr}`;
  return `(() => {\n${em.prelude()}\nreturn ${head} => ${expr};\n})()`;
}

/** Compiles a source from jsFunctionSource. */
export function compileJs(source: string): (...args: number[]) => number | boolean {
  return new Function(`"use strict";\nreturn (${source});`)() as (...args: number[]) => number | boolean;
}

/** Evaluates a parameter-free typed tree with the JS form's semantics. */
export function evalConst(e: TExpr): number | boolean {
  const em = new JsEmitter();
  const expr = em.emit(e);
  const v = new Function(`"use strict";\n${em.prelude()}\nreturn ${expr};`)() as number | boolean;
  return typeof v === 'number' && e.type !== 'bool' ? normalize(e.type as NumericType, v) : v;
}

function normalize(type: NumericType, v: number): number {
  return type === 'f32' ? Math.fround(v) : type === 'u32' ? v >>> 0 : v | 0;
}
