/**
 * Type inference for lambdas: turns a parsed body and the argument element types into a typed tree
 * in which every node has a concrete type (u32, i32, f32 or bool) and every conversion is explicit.
 *
 * Rules (the TSDoc of `lambda` states them for users):
 * - A numeric literal (or capture) whose value is a safe integer is an untyped integer constant that
 *   takes the type of the other operand (u32, i32 or f32); any other number is an untyped float.
 * - Arithmetic (+ - * / % **, Math.min/max/abs/sign/floor/ceil/round/trunc/pow) on two integer
 *   values of one type stays in that type (wrapping); u32 with i32 runs in i32; anything with an f32
 *   value or an untyped float runs in f32.
 * - Bitwise operators convert f32 operands with JS ToInt32 (so `x | 0` truncates) and run in the
 *   integer type; `>>>` always gives u32. Shift counts use their low 5 bits.
 * - Comparisons and `!` give bool; `&&`, `||` and `?:` give bool when both sides are bool, else a
 *   number (JS picks an operand: `a && b` is `a` when a is falsy, else `b`).
 * - A bool used as a number is 0 or 1; a number used as a condition is true unless 0, -0 or NaN.
 * - Untyped constants with no typed operand take the first argument's type (untyped floats: f32).
 *
 * Subtrees without parameters are folded to one constant with the JS form's semantics, so the WGSL
 * never holds a constant expression that WGSL would reject (overflow, division by zero).
 */
import type { NumericType } from '../types';
import { coerce } from '../types';
import { evalConst } from './emit-js';
import type { BinaryOp, Expr, ParsedLambda } from './parse';
import { lambdaError } from './parse';

/** Concrete type of a typed node. */
export type ValueType = NumericType | 'bool';

/** Binary operations of the typed tree. Comparisons may mix u32 and i32 operands. */
export type TBinaryOp =
  | 'add'
  | 'sub'
  | 'mul'
  | 'div'
  | 'rem'
  | 'pow'
  | 'and'
  | 'or'
  | 'xor'
  | 'shl'
  | 'shr'
  | 'lt'
  | 'le'
  | 'gt'
  | 'ge'
  | 'eq'
  | 'ne'
  | 'land'
  | 'lor';

/** Math functions of the typed tree (fround becomes a conversion; pow a binary op). */
export type TFunction =
  | 'min'
  | 'max'
  | 'abs'
  | 'sign'
  | 'sqrt'
  | 'exp'
  | 'log'
  | 'sin'
  | 'cos'
  | 'tan'
  | 'floor'
  | 'ceil'
  | 'round'
  | 'trunc';

/** Typed tree. `conv` converts its argument's type to `type` (see emitters for the exact rules). */
export type TExpr =
  | { readonly op: 'lit'; readonly type: ValueType; readonly value: number | boolean }
  | { readonly op: 'param'; readonly type: ValueType; readonly index: number }
  | { readonly op: 'conv' | 'neg' | 'not' | 'bnot'; readonly type: ValueType; readonly arg: TExpr }
  | { readonly op: TBinaryOp; readonly type: ValueType; readonly left: TExpr; readonly right: TExpr }
  | { readonly op: 'cond'; readonly type: ValueType; readonly test: TExpr; readonly yes: TExpr; readonly no: TExpr }
  | { readonly op: 'call'; readonly type: ValueType; readonly fn: TFunction; readonly args: readonly TExpr[] };

/** Type of a parsed node before context: concrete, or an untyped integer/float constant. */
type Kind = ValueType | 'int' | 'float';

const isAbstract = (k: Kind): k is 'int' | 'float' => k === 'int' || k === 'float';
const numKind = (k: Kind): Kind => (k === 'bool' ? 'int' : k);
const bitKind = (k: Kind): Kind => (k === 'f32' ? 'i32' : k === 'float' || k === 'bool' ? 'int' : k);

function arithKind(x: Kind, y: Kind): Kind {
  const a = numKind(x);
  const b = numKind(y);
  if (isAbstract(a) && isAbstract(b)) return a === 'float' || b === 'float' ? 'float' : 'int';
  if (a === 'f32' || b === 'f32' || a === 'float' || b === 'float') return 'f32';
  if (isAbstract(a)) return b;
  if (isAbstract(b)) return a;
  return a === b ? a : 'i32';
}

function bitwiseKind(x: Kind, y: Kind): Kind {
  const a = bitKind(x);
  const b = bitKind(y);
  if (isAbstract(a) && isAbstract(b)) return 'int';
  if (isAbstract(a)) return b;
  if (isAbstract(b)) return a;
  return a === b ? a : 'i32';
}

const ARITH: Partial<Record<BinaryOp, TBinaryOp>> = {
  '+': 'add',
  '-': 'sub',
  '*': 'mul',
  '/': 'div',
  '%': 'rem',
  '**': 'pow',
};
const BITWISE: Partial<Record<BinaryOp, TBinaryOp>> = { '&': 'and', '|': 'or', '^': 'xor' };
const COMPARE: Partial<Record<BinaryOp, TBinaryOp>> = {
  '==': 'eq',
  '===': 'eq',
  '!=': 'ne',
  '!==': 'ne',
  '<': 'lt',
  '<=': 'le',
  '>': 'gt',
  '>=': 'ge',
};

/** The value of constant `v` as `type` (JS ToInt32/ToUint32 for integers, fround for f32, truthiness for bool). */
export function constAs(type: ValueType, v: number | boolean): number | boolean {
  if (type === 'bool') return typeof v === 'boolean' ? v : v !== 0 && !Number.isNaN(v);
  return coerce(type, typeof v === 'boolean' ? (v ? 1 : 0) : v);
}

const children = (e: TExpr): readonly TExpr[] => {
  switch (e.op) {
    case 'lit':
    case 'param':
      return [];
    case 'conv':
    case 'neg':
    case 'not':
    case 'bnot':
      return [e.arg];
    case 'cond':
      return [e.test, e.yes, e.no];
    case 'call':
      return e.args;
    default:
      return [e.left, e.right];
  }
};

/** Folds `e` to a literal when all its operands are literals. */
function fold(e: TExpr): TExpr {
  if (e.op === 'lit' || e.op === 'param') return e;
  if (!children(e).every((c) => c.op === 'lit')) return e;
  return { op: 'lit', type: e.type, value: evalConst(e) };
}

/**
 * `x | 0`, `x ^ 0`, `x + 0`, `x - 0`, `x & ~0`, `x << 0`, `x >> 0` on integers of the result's type are
 * `x` (exactly: integers have no -0), so the common `x | 0` and `x >>> 0` idioms cost nothing.
 */
function integerIdentity(op: TBinaryOp, type: ValueType, left: TExpr, right: TExpr): TExpr | undefined {
  if (type !== 'u32' && type !== 'i32') return undefined;
  const lit = (e: TExpr, v: number) => e.op === 'lit' && e.value === v;
  const allOnes = type === 'u32' ? 0xffffffff : -1;
  switch (op) {
    case 'or':
    case 'xor':
    case 'add':
      if (lit(left, 0) && right.type === type) return right;
      return lit(right, 0) && left.type === type ? left : undefined;
    case 'and':
      if (lit(left, allOnes) && right.type === type) return right;
      return lit(right, allOnes) && left.type === type ? left : undefined;
    case 'sub':
      return lit(right, 0) && left.type === type ? left : undefined;
    case 'shl':
    case 'shr':
      return right.op === 'lit' && ((right.value as number) & 31) === 0 && left.type === type ? left : undefined;
    default:
      return undefined;
  }
}

/** Converts `e` to `to` (no-op when it already has that type). */
function convert(e: TExpr, to: ValueType | undefined): TExpr {
  if (to === undefined || e.type === to) return e;
  if (e.op === 'lit') return { op: 'lit', type: to, value: constAs(to, e.value) };
  return { op: 'conv', type: to, arg: e };
}

/**
 * Types `parsed` for arguments of `argTypes` (one per parameter). Throws LambdaError for type errors
 * (a boolean compared with a number through === or !==).
 */
export function inferTypes(parsed: ParsedLambda, argTypes: readonly NumericType[]): TExpr {
  const defaultType = argTypes[0] as NumericType;
  const defaultInt: NumericType = defaultType === 'f32' ? 'i32' : defaultType;
  const kinds = new Map<Expr, Kind>();

  const kindOf = (e: Expr): Kind => {
    let k = kinds.get(e);
    if (k === undefined) {
      k = computeKind(e);
      kinds.set(e, k);
    }
    return k;
  };

  const computeKind = (e: Expr): Kind => {
    switch (e.kind) {
      case 'number':
        return Number.isSafeInteger(e.value) ? 'int' : 'float';
      case 'boolean':
        return 'bool';
      case 'param':
        return argTypes[e.index] as NumericType;
      case 'unary':
        if (e.op === '!') return 'bool';
        if (e.op === '~') return bitKind(kindOf(e.arg));
        return numKind(kindOf(e.arg));
      case 'binary': {
        if (ARITH[e.op]) return arithKind(kindOf(e.left), kindOf(e.right));
        if (BITWISE[e.op]) return bitwiseKind(kindOf(e.left), kindOf(e.right));
        if (e.op === '<<' || e.op === '>>') return bitKind(kindOf(e.left));
        if (e.op === '>>>') return 'u32';
        return 'bool';
      }
      case 'logical':
      case 'conditional': {
        const [a, b] = e.kind === 'logical' ? [e.left, e.right] : [e.yes, e.no];
        const ka = kindOf(a);
        const kb = kindOf(b);
        return ka === 'bool' && kb === 'bool' ? 'bool' : arithKind(ka, kb);
      }
      case 'call': {
        const ks = e.args.map(kindOf);
        switch (e.fn) {
          case 'min':
          case 'max':
            return ks.reduce(arithKind);
          case 'pow':
            return arithKind(ks[0] as Kind, ks[1] as Kind);
          case 'abs':
          case 'sign':
          case 'floor':
          case 'ceil':
          case 'round':
          case 'trunc':
            return numKind(ks[0] as Kind);
          default:
            return isAbstract(numKind(ks[0] as Kind)) ? 'float' : 'f32';
        }
      }
    }
  };

  /** The numeric type an operation of kind `k` runs in, given the type its context wants. */
  const numEval = (k: Kind, want: ValueType | undefined): NumericType => {
    if (k === 'u32' || k === 'i32' || k === 'f32') return k;
    if (k === 'float') return 'f32';
    return want !== undefined && want !== 'bool' ? want : defaultType;
  };
  /** The integer type a bitwise operation of kind `k` runs in. */
  const intEval = (k: Kind, want: ValueType | undefined): NumericType => {
    if (k === 'u32' || k === 'i32') return k;
    return want === 'u32' || want === 'i32' ? want : defaultInt;
  };

  const bin = (op: TBinaryOp, type: ValueType, left: TExpr, right: TExpr): TExpr =>
    integerIdentity(op, type, left, right) ?? fold({ op, type, left, right });

  /** Builds `e` in the type it runs in (chosen with `want` for untyped constants), then converts to `want`. */
  const build = (e: Expr, want?: ValueType): TExpr => convert(natural(e, want), want);

  const natural = (e: Expr, want: ValueType | undefined): TExpr => {
    switch (e.kind) {
      case 'number': {
        const t = want ?? numEval(kindOf(e), undefined);
        return { op: 'lit', type: t, value: constAs(t, e.value) };
      }
      case 'boolean':
        return { op: 'lit', type: want ?? 'bool', value: constAs(want ?? 'bool', e.value) };
      case 'param':
        return { op: 'param', type: argTypes[e.index] as NumericType, index: e.index };
      case 'unary': {
        if (e.op === '!') return fold({ op: 'not', type: 'bool', arg: build(e.arg, 'bool') });
        if (e.op === '~') {
          const t = intEval(kindOf(e), want);
          return fold({ op: 'bnot', type: t, arg: build(e.arg, t) });
        }
        const t = numEval(kindOf(e), want);
        const arg = build(e.arg, t);
        return e.op === '+' ? arg : fold({ op: 'neg', type: t, arg });
      }
      case 'binary': {
        const arith = ARITH[e.op];
        if (arith) {
          const t = numEval(kindOf(e), want);
          return bin(arith, t, build(e.left, t), build(e.right, t));
        }
        const bitwise = BITWISE[e.op];
        if (bitwise) {
          const t = intEval(kindOf(e), want);
          return bin(bitwise, t, build(e.left, t), build(e.right, t));
        }
        if (e.op === '<<' || e.op === '>>') {
          const t = intEval(kindOf(e), want);
          return bin(e.op === '<<' ? 'shl' : 'shr', t, build(e.left, t), build(e.right, 'u32'));
        }
        if (e.op === '>>>') return bin('shr', 'u32', build(e.left, 'u32'), build(e.right, 'u32'));
        const cmp = COMPARE[e.op] as TBinaryOp;
        const kl = kindOf(e.left);
        const kr = kindOf(e.right);
        const eqFamily = cmp === 'eq' || cmp === 'ne';
        if (kl === 'bool' && kr === 'bool' && eqFamily) {
          return bin(cmp, 'bool', build(e.left, 'bool'), build(e.right, 'bool'));
        }
        if ((kl === 'bool') !== (kr === 'bool') && (e.op === '===' || e.op === '!==')) {
          throw lambdaError(
            parsed.source,
            e.pos,
            `'${e.op}' between a boolean and a number is ${e.op === '===' ? 'always false' : 'always true'} in JS: convert the boolean first, e.g. (cond ? 1 : 0)`,
          );
        }
        const nl = numKind(kl);
        const nr = numKind(kr);
        if ((nl === 'u32' && nr === 'i32') || (nl === 'i32' && nr === 'u32')) {
          return bin(cmp, 'bool', build(e.left, nl), build(e.right, nr));
        }
        const t = numEval(arithKind(nl, nr), undefined);
        return bin(cmp, 'bool', build(e.left, t), build(e.right, t));
      }
      case 'logical': {
        const op = e.op === '&&' ? 'land' : 'lor';
        const k = kindOf(e);
        if (k === 'bool' || want === 'bool') {
          return bin(op, 'bool', build(e.left, 'bool'), build(e.right, 'bool'));
        }
        const t = numEval(k, want);
        const test = build(e.left, 'bool');
        const left = build(e.left, t);
        const right = build(e.right, t);
        return fold(
          op === 'land'
            ? { op: 'cond', type: t, test, yes: right, no: left }
            : { op: 'cond', type: t, test, yes: left, no: right },
        );
      }
      case 'conditional': {
        const test = build(e.test, 'bool');
        const k = kindOf(e);
        const t: ValueType = k === 'bool' || want === 'bool' ? 'bool' : numEval(k, want);
        if (test.op === 'lit') return build(test.value ? e.yes : e.no, t);
        return fold({ op: 'cond', type: t, test, yes: build(e.yes, t), no: build(e.no, t) });
      }
      case 'call': {
        const k = kindOf(e);
        switch (e.fn) {
          case 'min':
          case 'max': {
            const t = numEval(k, want);
            const fn = e.fn;
            return e.args.map((a) => build(a, t)).reduce((acc, x) => fold({ op: 'call', type: t, fn, args: [acc, x] }));
          }
          case 'pow': {
            const t = numEval(k, want);
            return bin('pow', t, build(e.args[0] as Expr, t), build(e.args[1] as Expr, t));
          }
          case 'fround':
            return build(e.args[0] as Expr, 'f32');
          case 'abs':
          case 'sign':
          case 'floor':
          case 'ceil':
          case 'round':
          case 'trunc': {
            const t = numEval(k, want);
            const arg = build(e.args[0] as Expr, t);
            if (t === 'f32' || e.fn === 'sign' || (e.fn === 'abs' && t === 'i32')) {
              return fold({ op: 'call', type: t, fn: e.fn, args: [arg] });
            }
            return arg;
          }
          default:
            return fold({ op: 'call', type: 'f32', fn: e.fn, args: [build(e.args[0] as Expr, 'f32')] });
        }
      }
    }
  };

  return build(parsed.body);
}
