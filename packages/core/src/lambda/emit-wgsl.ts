/**
 * WGSL form of a typed lambda: one function whose body is one expression, plus helper fragments
 * (shared by name across lambdas) for everything WGSL does not do the JS way by itself:
 *
 * - Every f32 add, subtract, multiply and divide result goes through a rounding barrier
 *   (wdpl_lam_fx), since WGSL compilers may fuse a * b + c into an fma or reassociate sums.
 * - f32 comparisons, min/max, truthiness, sign and abs work on the bits, so NaN behaves as in JS
 *   (every comparison but != is false) even where the shader compiler assumes no NaN, and subnormals
 *   are never flushed by a comparison.
 * - f32 `%` is an exact fmod (JS semantics), not WGSL's x - y * trunc(x / y).
 * - f32 to integer conversion in bitwise operators is JS ToInt32 (wrapping), not WGSL's saturation.
 * - Integer division and remainder spell out WGSL's rules (x / 0 == x, x % 0 == 0, i32 MIN / -1 ==
 *   MIN, MIN % -1 == 0) in a function, so a constant zero divisor never becomes a constant-expression
 *   error.
 * - Math.round is JS's round-half-up, computed exactly (not WGSL's round-half-to-even, and not
 *   floor(x + 0.5), which rounds wrongly at 0.49999997 and above 2^23).
 * - pow, sqrt, exp, log, sin, cos, tan return JS's results for NaN, infinities, zeros, negative
 *   arguments and tiny arguments; elsewhere they are the device's (WGSL's stated accuracy).
 */
import { wgslLiteral } from '../operators';
import type { NumericType } from '../types';
import { fragment, type WgslFragment } from '../wgsl/fragment';
import type { TExpr, ValueType } from './infer';

interface HelperSpec {
  readonly code: string;
  readonly deps?: readonly string[];
}

const NAN = 'wdpl_f32_bits(0x7fc00000u)';
const INF = 'wdpl_f32_bits(0x7f800000u)';

const HELPER_SPECS: Readonly<Record<string, HelperSpec>> = {
  wdpl_lam_isnan: {
    code: 'fn wdpl_lam_isnan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }',
  },
  wdpl_lam_fkey: {
    code: `/** Order key of a non-NaN f32 (-0 and +0 equal); compares without float instructions. */
fn wdpl_lam_fkey(x: f32) -> u32 {
  let u = bitcast<u32>(x);
  if ((u & 0x7fffffffu) == 0u) { return 0x80000000u; }
  return select(u | 0x80000000u, ~u, (u & 0x80000000u) != 0u);
}`,
  },
  wdpl_lam_flt: {
    code: 'fn wdpl_lam_flt(a: f32, b: f32) -> bool { return !wdpl_lam_isnan(a) && !wdpl_lam_isnan(b) && wdpl_lam_fkey(a) < wdpl_lam_fkey(b); }',
    deps: ['wdpl_lam_isnan', 'wdpl_lam_fkey'],
  },
  wdpl_lam_fle: {
    code: 'fn wdpl_lam_fle(a: f32, b: f32) -> bool { return !wdpl_lam_isnan(a) && !wdpl_lam_isnan(b) && wdpl_lam_fkey(a) <= wdpl_lam_fkey(b); }',
    deps: ['wdpl_lam_isnan', 'wdpl_lam_fkey'],
  },
  wdpl_lam_feq: {
    code: 'fn wdpl_lam_feq(a: f32, b: f32) -> bool { return !wdpl_lam_isnan(a) && !wdpl_lam_isnan(b) && wdpl_lam_fkey(a) == wdpl_lam_fkey(b); }',
    deps: ['wdpl_lam_isnan', 'wdpl_lam_fkey'],
  },
  wdpl_lam_truthy: {
    code: '/** JS truthiness of an f32: not 0, -0 or NaN. */\nfn wdpl_lam_truthy(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) - 1u < 0x7f800000u; }',
  },
  wdpl_lam_okey: {
    code: `/**
 * Order key of an f32 (-0 below +0), lifted by 2^23 - 1 so that every NaN, of either sign, keys below
 * -Infinity (positive NaNs wrap to the bottom); no float instruction (compilers may assume no NaN,
 * devices may flush subnormals). +Infinity keys at 0xffffffff.
 */
fn wdpl_lam_okey(x: f32) -> u32 {
  let u = bitcast<u32>(x);
  return (u ^ (bitcast<u32>(bitcast<i32>(u) >> 31u) | 0x80000000u)) + 0x007fffffu;
}`,
  },
  wdpl_lam_fmin: {
    // Integer compares of order keys (about 10 integer instructions, no branch): the smaller key
    // wins, and NaNs key below everything, so a NaN operand propagates and -0 < +0.
    code: `/** Math.min: NaN propagates, -0 < +0. */
fn wdpl_lam_fmin(a: f32, b: f32) -> f32 {
  return select(a, b, wdpl_lam_okey(b) < wdpl_lam_okey(a));
}`,
    deps: ['wdpl_lam_okey'],
  },
  wdpl_lam_fmax: {
    // Keys 2^24 - 2 below wdpl_lam_okey's (the order key less 2^23 - 1): -Infinity keys at 0, NaNs of
    // either sign above +Infinity (negative NaNs wrap to the top), so a NaN operand propagates.
    code: `/** Math.max: NaN propagates, -0 < +0. */
fn wdpl_lam_fmax(a: f32, b: f32) -> f32 {
  return select(a, b, wdpl_lam_okey(b) - 0x00fffffeu > wdpl_lam_okey(a) - 0x00fffffeu);
}`,
    deps: ['wdpl_lam_okey'],
  },
  wdpl_lam_to_i32: {
    code: `/** JS ToInt32 of an f32: truncate, wrap mod 2^32; NaN and infinities give 0. */
fn wdpl_lam_to_i32(x: f32) -> i32 {
  let u = bitcast<u32>(x);
  let e = i32((u >> 23u) & 0xffu) - 127;
  if (e < 0 || e == 128) { return 0i; }
  let m = (u & 0x7fffffu) | 0x800000u;
  var r = 0u;
  if (e <= 23) { r = m >> u32(23 - e); } else if (e < 55) { r = m << u32(e - 23); }
  if ((u & 0x80000000u) != 0u) { r = 0u - r; }
  return bitcast<i32>(r);
}`,
  },
  wdpl_lam_fx: {
    code: `/**
 * Rounding barrier for f32 results. WGSL compilers may treat float math as inexact: contract a * b + c
 * into an fma and reassociate (a - b) + c, which skips or moves roundings (lavapipe does both). Each
 * f32 operation's result goes through this select, which hides it from those patterns; its condition
 * is never true (no arithmetic result is a signaling NaN), but the compiler cannot know that.
 */
fn wdpl_lam_fx(x: f32) -> f32 {
  return select(x, 0.0f, bitcast<u32>(x) == 0x7f800001u);
}`,
  },
  wdpl_lam_div_f32: {
    code: `/** f32 division with JS's results for a zero divisor (compilers may fold x / 0.0 differently). */
fn wdpl_lam_div_f32(a: f32, b: f32) -> f32 {
  let ub = bitcast<u32>(b);
  if ((ub & 0x7fffffffu) == 0u) {
    let ua = bitcast<u32>(a);
    if ((ua & 0x7fffffffu) == 0u || (ua & 0x7fffffffu) > 0x7f800000u) { return ${NAN}; }
    return bitcast<f32>(0x7f800000u | ((ua ^ ub) & 0x80000000u));
  }
  return wdpl_lam_fx(a / b);
}`,
    deps: ['wdpl_lam_fx'],
  },
  wdpl_lam_div_u32: {
    code: 'fn wdpl_lam_div_u32(a: u32, b: u32) -> u32 { if (b == 0u) { return a; } return a / b; }',
  },
  wdpl_lam_div_i32: {
    code: 'fn wdpl_lam_div_i32(a: i32, b: i32) -> i32 { if (b == 0i || (b == -1i && a == i32(-2147483647 - 1))) { return a; } return a / b; }',
  },
  wdpl_lam_rem_u32: {
    code: 'fn wdpl_lam_rem_u32(a: u32, b: u32) -> u32 { if (b == 0u) { return 0u; } return a % b; }',
  },
  wdpl_lam_rem_i32: {
    code: 'fn wdpl_lam_rem_i32(a: i32, b: i32) -> i32 { if (b == 0i || b == -1i) { return 0i; } return a % b; }',
  },
  wdpl_lam_fmod: {
    code: `/** Exact f32 remainder with the dividend's sign (JS %): long division on the significands. */
fn wdpl_lam_fmod(x: f32, y: f32) -> f32 {
  let ux = bitcast<u32>(x);
  let sx = ux & 0x80000000u;
  let ax = ux & 0x7fffffffu;
  let ay = bitcast<u32>(y) & 0x7fffffffu;
  if (ay == 0u || ax >= 0x7f800000u || ay > 0x7f800000u) { return ${NAN}; }
  if (ax < ay) { return x; }
  var ex = i32(ax >> 23u);
  var ey = i32(ay >> 23u);
  var mx = ax & 0x7fffffu;
  var my = ay & 0x7fffffu;
  if (ex == 0) { ex = 1; } else { mx = mx | 0x800000u; }
  if (ey == 0) { ey = 1; } else { my = my | 0x800000u; }
  mx = mx % my;
  loop {
    if (ex <= ey) { break; }
    let step = min(ex - ey, 8);
    mx = (mx << u32(step)) % my;
    ex = ex - step;
  }
  if (mx == 0u) { return bitcast<f32>(sx); }
  let shift = min(i32(countLeadingZeros(mx)) - 8, ey - 1);
  mx = mx << u32(shift);
  ey = ey - shift;
  if (mx >= 0x800000u) { return bitcast<f32>(sx | (u32(ey) << 23u) | (mx & 0x7fffffu)); }
  return bitcast<f32>(sx | mx);
}`,
  },
  wdpl_lam_pow_u32: {
    code: `/** x ** y mod 2^32 by squaring. */
fn wdpl_lam_pow_u32(x: u32, y: u32) -> u32 {
  var r = 1u;
  var b = x;
  var e = y;
  loop {
    if (e == 0u) { break; }
    if ((e & 1u) != 0u) { r = r * b; }
    b = b * b;
    e = e >> 1u;
  }
  return r;
}`,
  },
  wdpl_lam_pow_i32: {
    code: `/** x ** y wrapped to i32; a negative exponent gives the truncated result (1, -1 or 0). */
fn wdpl_lam_pow_i32(x: i32, y: i32) -> i32 {
  if (y < 0i) {
    if (x == 1i) { return 1i; }
    if (x == -1i) { return select(1i, -1i, (y & 1i) != 0i); }
    return 0i;
  }
  return bitcast<i32>(wdpl_lam_pow_u32(bitcast<u32>(x), bitcast<u32>(y)));
}`,
    deps: ['wdpl_lam_pow_u32'],
  },
  wdpl_lam_pow_f32: {
    code: `/** Math.pow on f32: JS's special cases (NaN, infinities, zeros, negative bases), else pow(|x|, y). */
fn wdpl_lam_pow_f32(x: f32, y: f32) -> f32 {
  let ux = bitcast<u32>(x);
  let uy = bitcast<u32>(y);
  let ax = ux & 0x7fffffffu;
  let ay = uy & 0x7fffffffu;
  let inf = ${INF};
  if (ay == 0u) { return 1.0f; }
  if (ax > 0x7f800000u || ay > 0x7f800000u) { return ${NAN}; }
  let xneg = (ux & 0x80000000u) != 0u;
  let yneg = (uy & 0x80000000u) != 0u;
  if (ay == 0x7f800000u) {
    if (ax == 0x3f800000u) { return ${NAN}; }
    return select(0.0f, inf, (ax > 0x3f800000u) != yneg);
  }
  let ey = i32(ay >> 23u) - 127;
  let my = (ay & 0x7fffffu) | 0x800000u;
  var yint = ey >= 23;
  var yodd = false;
  if (ey >= 0 && ey <= 23) {
    let sh = u32(23 - ey);
    yint = (my & ((1u << sh) - 1u)) == 0u;
    yodd = yint && ((my >> sh) & 1u) == 1u;
  }
  if (ax == 0u) {
    if (!yneg) { return bitcast<f32>(select(0u, ux, yodd)); }
    return select(inf, -inf, xneg && yodd);
  }
  if (ax == 0x7f800000u) {
    if (!yneg) { return select(inf, -inf, xneg && yodd); }
    return bitcast<f32>(select(0u, 0x80000000u, xneg && yodd));
  }
  if (xneg && !yint) { return ${NAN}; }
  let r = pow(bitcast<f32>(ax), y);
  return select(r, -r, xneg && yodd);
}`,
  },
  wdpl_lam_sqrt: {
    code: `fn wdpl_lam_sqrt(x: f32) -> f32 {
  let u = bitcast<u32>(x);
  if ((u & 0x7fffffffu) == 0u || u == 0x7f800000u) { return x; }
  if (u > 0x7f800000u) { return ${NAN}; }
  if (u < 0x800000u) { return sqrt(f32(u) * 2.0f) * 2.64697796e-23f; }
  return sqrt(x);
}`,
  },
  wdpl_lam_exp: {
    code: `fn wdpl_lam_exp(x: f32) -> f32 {
  if (wdpl_lam_isnan(x)) { return x; }
  return exp(clamp(x, -104.0f, 89.0f));
}`,
    deps: ['wdpl_lam_isnan'],
  },
  wdpl_lam_log: {
    code: `fn wdpl_lam_log(x: f32) -> f32 {
  let u = bitcast<u32>(x);
  if ((u & 0x7fffffffu) == 0u) { return -${INF}; }
  if (u >= 0x7f800000u) { return select(${NAN}, x, u == 0x7f800000u); }
  if (u < 0x800000u) { return log(f32(u)) - 103.278931f; }
  return log(x);
}`,
  },
  wdpl_lam_sin: {
    code: `fn wdpl_lam_sin(x: f32) -> f32 {
  let a = bitcast<u32>(x) & 0x7fffffffu;
  if (a >= 0x7f800000u) { return ${NAN}; }
  if (a < 0x39800000u) { return x; }
  return sin(x);
}`,
  },
  wdpl_lam_cos: {
    code: `fn wdpl_lam_cos(x: f32) -> f32 {
  let a = bitcast<u32>(x) & 0x7fffffffu;
  if (a >= 0x7f800000u) { return ${NAN}; }
  if (a < 0x39800000u) { return 1.0f; }
  return cos(x);
}`,
  },
  wdpl_lam_tan: {
    code: `fn wdpl_lam_tan(x: f32) -> f32 {
  let a = bitcast<u32>(x) & 0x7fffffffu;
  if (a >= 0x7f800000u) { return ${NAN}; }
  if (a < 0x39800000u) { return x; }
  return tan(x);
}`,
  },
  wdpl_lam_round: {
    code: `/** Math.round: half rounds up, -0.5 <= x <= -0 gives -0. */
fn wdpl_lam_round(x: f32) -> f32 {
  let f = floor(x);
  let r = select(f, f + 1.0f, x - f >= 0.5f);
  return bitcast<f32>(bitcast<u32>(r) | (bitcast<u32>(x) & 0x80000000u));
}`,
  },
  wdpl_lam_sign: {
    code: `fn wdpl_lam_sign(x: f32) -> f32 {
  let u = bitcast<u32>(x);
  let a = u & 0x7fffffffu;
  if (a == 0u || a > 0x7f800000u) { return x; }
  return select(1.0f, -1.0f, (u & 0x80000000u) != 0u);
}`,
  },
  wdpl_lam_abs: {
    code: 'fn wdpl_lam_abs(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) & 0x7fffffffu); }',
  },
  wdpl_lam_cmp_ui: {
    code: `/** Three-way comparison of a u32 with an i32 by value: -1, 0 or 1. */
fn wdpl_lam_cmp_ui(a: u32, b: i32) -> i32 {
  if (b < 0i) { return 1i; }
  let ub = u32(b);
  return select(select(0i, 1i, a > ub), -1i, a < ub);
}`,
  },
};

const helperCache = new Map<string, WgslFragment>();

/** The helper fragment `name` (with its dependencies). */
function helper(name: string): WgslFragment {
  let f = helperCache.get(name);
  if (!f) {
    const spec = HELPER_SPECS[name] as HelperSpec;
    f = fragment({ name, code: spec.code, deps: (spec.deps ?? []).map(helper) });
    helperCache.set(name, f);
  }
  return f;
}

function literal(type: ValueType, v: number | boolean): string {
  if (type === 'bool') return v ? 'true' : 'false';
  const s = wgslLiteral(type, v as number);
  return s.startsWith('-') ? `(${s})` : s;
}

const ZERO: Readonly<Record<NumericType, string>> = { u32: '0u', i32: '0i', f32: '0.0f' };
const ONE: Readonly<Record<NumericType, string>> = { u32: '1u', i32: '1i', f32: '1.0f' };

/** Parameter names: a, b, then p2.. (tuple lambdas flatten up to 8 scalar parameters). */
const PARAMS = ['a', 'b', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7'];

/** An f32 literal of finite normal magnitude (>= 2^-126): see WgslEmitter.compare. */
function isNormalF32(e: TExpr): boolean {
  return e.op === 'lit' && typeof e.value === 'number' && Number.isFinite(e.value) && Math.abs(e.value) >= 2 ** -126;
}

const CMP_OPS: Readonly<Record<string, string>> = { lt: '<', le: '<=', gt: '>', ge: '>=', eq: '==', ne: '!=' };
const SWAPPED: Readonly<Record<string, string>> = { lt: 'gt', le: 'ge', gt: 'lt', ge: 'le', eq: 'eq', ne: 'ne' };

class WgslEmitter {
  readonly deps = new Map<string, WgslFragment>();

  private use(name: string): string {
    if (!this.deps.has(name)) this.deps.set(name, helper(name));
    return name;
  }

  emit(e: TExpr): string {
    const t = e.type;
    switch (e.op) {
      case 'lit':
        return literal(t, e.value);
      case 'param':
        return PARAMS[e.index] as string;
      case 'conv':
        return this.conv(this.emit(e.arg), e.arg.type, t);
      case 'neg': {
        const x = this.emit(e.arg);
        return t === 'u32' ? `(0u - ${x})` : `(-${x})`;
      }
      case 'not':
        return `(!${this.emit(e.arg)})`;
      case 'bnot':
        return `(~${this.emit(e.arg)})`;
      case 'cond':
        return `select(${this.emit(e.no)}, ${this.emit(e.yes)}, ${this.emit(e.test)})`;
      case 'call':
        return this.call(
          e.fn,
          t as NumericType,
          e.args.map((a) => this.emit(a)),
        );
      default: {
        const l = this.emit(e.left);
        const r = this.emit(e.right);
        switch (e.op) {
          case 'add':
          case 'sub':
          case 'mul': {
            const s = `${l} ${e.op === 'add' ? '+' : e.op === 'sub' ? '-' : '*'} ${r}`;
            return t === 'f32' ? `${this.use('wdpl_lam_fx')}(${s})` : `(${s})`;
          }
          case 'div':
            return `${this.use(`wdpl_lam_div_${t}`)}(${l}, ${r})`;
          case 'rem':
            return t === 'f32'
              ? `${this.use('wdpl_lam_fmod')}(${l}, ${r})`
              : `${this.use(`wdpl_lam_rem_${t}`)}(${l}, ${r})`;
          case 'pow':
            return `${this.use(`wdpl_lam_pow_${t}`)}(${l}, ${r})`;
          case 'and':
            return `(${l} & ${r})`;
          case 'or':
            return `(${l} | ${r})`;
          case 'xor':
            return `(${l} ^ ${r})`;
          case 'shl':
          case 'shr': {
            const count = e.right.op === 'lit' ? `${(e.right.value as number) & 31}u` : `(${r} & 31u)`;
            return `(${l} ${e.op === 'shl' ? '<<' : '>>'} ${count})`;
          }
          case 'land':
            return `(${l} && ${r})`;
          case 'lor':
            return `(${l} || ${r})`;
          default:
            return this.compare(e.op, e.left, e.right, l, r);
        }
      }
    }
  }

  private compare(op: string, left: TExpr, right: TExpr, l: string, r: string): string {
    const lt = left.type;
    const rt = right.type;
    if (lt !== rt) {
      // u32 against i32, by value.
      if (lt === 'u32') return `(${this.use('wdpl_lam_cmp_ui')}(${l}, ${r}) ${CMP_OPS[op]} 0i)`;
      return `(${this.use('wdpl_lam_cmp_ui')}(${r}, ${l}) ${CMP_OPS[SWAPPED[op] as string]} 0i)`;
    }
    if (lt !== 'f32') return `(${l} ${CMP_OPS[op]} ${r})`;
    // Against a finite normal constant, the float compare decides as the order keys do: a device
    // that flushes subnormals to zero moves them to +-0, which stays on the same side of a constant
    // of magnitude >= 2^-126; -0 and +0 compare equal either way. NaN is tested on the bits (WGSL
    // lets compilers assume there is none), with non-short-circuit & and | (no branches).
    const other = isNormalF32(right) ? l : isNormalF32(left) ? r : undefined;
    if (other !== undefined) {
      const nan = `${this.use('wdpl_lam_isnan')}(${other})`;
      return op === 'ne' ? `(${nan} | (${l} != ${r}))` : `(!${nan} & (${l} ${CMP_OPS[op]} ${r}))`;
    }
    switch (op) {
      case 'lt':
        return `${this.use('wdpl_lam_flt')}(${l}, ${r})`;
      case 'gt':
        return `${this.use('wdpl_lam_flt')}(${r}, ${l})`;
      case 'le':
        return `${this.use('wdpl_lam_fle')}(${l}, ${r})`;
      case 'ge':
        return `${this.use('wdpl_lam_fle')}(${r}, ${l})`;
      case 'eq':
        return `${this.use('wdpl_lam_feq')}(${l}, ${r})`;
      default:
        return `(!${this.use('wdpl_lam_feq')}(${l}, ${r}))`;
    }
  }

  private conv(v: string, from: ValueType, to: ValueType): string {
    if (from === to) return v;
    if (from === 'bool') return `select(${ZERO[to as NumericType]}, ${ONE[to as NumericType]}, ${v})`;
    if (to === 'bool') return from === 'f32' ? `${this.use('wdpl_lam_truthy')}(${v})` : `(${v} != ${ZERO[from]})`;
    if (to === 'f32') return `f32(${v})`;
    if (from === 'f32') {
      const i = `${this.use('wdpl_lam_to_i32')}(${v})`;
      return to === 'i32' ? i : `bitcast<u32>(${i})`;
    }
    return `bitcast<${to}>(${v})`;
  }

  private call(fn: string, t: NumericType, args: string[]): string {
    const [a, b] = args as [string, string];
    switch (fn) {
      case 'min':
      case 'max':
        return t === 'f32' ? `${this.use(`wdpl_lam_f${fn}`)}(${a}, ${b})` : `${fn}(${a}, ${b})`;
      case 'abs':
        return t === 'f32' ? `${this.use('wdpl_lam_abs')}(${a})` : t === 'i32' ? `abs(${a})` : a;
      case 'sign':
        return t === 'f32' ? `${this.use('wdpl_lam_sign')}(${a})` : t === 'i32' ? `sign(${a})` : `min(${a}, 1u)`;
      case 'floor':
      case 'ceil':
      case 'trunc':
        return `${fn}(${a})`;
      default:
        // round, sqrt, exp, log, sin, cos, tan (f32 only)
        return `${this.use(`wdpl_lam_${fn}`)}(${a})`;
    }
  }
}

/**
 * The WGSL fragment `fn <name>(a: T0[, b: T1]) -> R { return ...; }` for a typed body, with its helper
 * fragments as dependencies.
 */
export function wgslFunction(name: string, body: TExpr, argTypes: readonly NumericType[]): WgslFragment {
  const em = new WgslEmitter();
  const expr = em.emit(body);
  const params = argTypes.map((t, i) => `${PARAMS[i]}: ${t}`).join(', ');
  return fragment({
    name,
    code: `fn ${name}(${params}) -> ${body.type} {\n  return ${expr};\n}`,
    deps: [...em.deps.values()],
  });
}
