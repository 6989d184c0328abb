/**
 * f32 `x * P + C` with one rounding (emit-js.ts, `scaledPlusConstant`): the JS form equals the f32
 * form with every intermediate rounded, `Math.fround(Math.fround(x * P) +- C)`, for every f32 x
 * (the specials: +-0, subnormals, the least normal, FLT_MAX, 2^127, the infinities, NaN; and random
 * bit patterns), every P = +-2^k and C of the rule's bounds, both operand orders, add and sub;
 * expressions outside the rule (C too large, P = 2^-k, a non-constant other operand) keep both
 * roundings.
 */
import { describe, expect, it } from 'vitest';
import { lambda } from './lambda';

const FLT_MAX = 3.4028234663852886e38;
const f32 = Math.fround;
const bits = new Float32Array(1);
const bitsU = new Uint32Array(bits.buffer);

/** The f32 values to try: specials and 2000 random bit patterns (NaNs included). */
function values(): number[] {
  const v = [0, -0, 2 ** -149, -(2 ** -149), 2 ** -127, 2 ** -126, -(2 ** -126), 1, -1, 1.5, FLT_MAX, -FLT_MAX];
  v.push(2 ** 127, -(2 ** 127), 2 ** 126 * 1.5, f32(FLT_MAX / 2), f32(FLT_MAX / 4) * 3, 2 ** 64, 2 ** -64);
  v.push(Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN, f32(0.1), f32(-3.7e-39));
  let h = 12345;
  for (let i = 0; i < 2000; i++) {
    h = Math.imul(h ^ (h >>> 15), 2246822519) >>> 0;
    h ^= h >>> 13;
    bitsU[0] = h;
    v.push(bits[0] as number);
  }
  return v;
}

/** A lambda of source `src` (the constants are literals of the source, as users write them). */
function fromSource(src: string) {
  return lambda(new Function(`return (${src});`)() as (x: number) => number).js(['f32']) as (x: number) => number;
}

function literal(v: number): string {
  return Object.is(v, -0) ? '-0' : v < 0 ? `(${v})` : String(v);
}

describe('f32 x * P + C: one rounding, the f32 result', () => {
  const xs = values();
  const powers = [1, 2, -2, 4, 2 ** 10, -(2 ** 10), 2 ** 64];
  // Within the rule's bound (2^100) and beyond it (kept both roundings; 2^104 and up change results).
  const constants = [
    0,
    -0,
    1,
    -1,
    3,
    f32(0.1),
    2 ** -149,
    2 ** 100,
    -(2 ** 100),
    f32(7.5e29),
    2 ** 104,
    -(2 ** 105),
    -FLT_MAX,
  ];
  const forms: [string, (x: number, p: number, c: number) => number][] = [
    ['x * P + C', (x, p, c) => f32(f32(x * p) + c)],
    ['P * x + C', (x, p, c) => f32(f32(p * x) + c)],
    ['C + x * P', (x, p, c) => f32(c + f32(x * p))],
    ['x * P - C', (x, p, c) => f32(f32(x * p) - c)],
    ['C - x * P', (x, p, c) => f32(c - f32(x * p))],
    ['C - P * x', (x, p, c) => f32(c - f32(p * x))],
  ];
  for (const [form, ref] of forms) {
    it(form, () => {
      for (const p of powers) {
        for (const c of constants) {
          const src = `(x) => ${form.replace('P', literal(p)).replace('C', literal(c))}`;
          const fn = fromSource(src);
          for (const x of xs) {
            const got = fn(x);
            const want = ref(x, p, c);
            if (!Object.is(got, want)) expect({ src, x, got }).toEqual({ src, x, got: want });
          }
        }
      }
    });
  }

  it('emits one rounding for the rule, both otherwise', () => {
    const src = (s: string) => lambda(new Function(`return (${s});`)() as (x: number) => number).jsSource(['f32']);
    expect(src('(x) => x * 2 + 1')).toBe('(a) => Math.fround(Math.fround(a) * 2 + 1)');
    expect(src('(x) => 1 - 4 * x')).toBe('(a) => Math.fround(1 - Math.fround(a) * 4)');
    // x already rounded by its own form: no second Math.fround around it.
    expect(src('(x) => (x + 1) * 2 + 3')).toBe('(a) => Math.fround(Math.fround(a + 1) * 2 + 3)');
    // Outside the rule: a constant beyond 2^100, P = 0.5, a parameter as the other operand.
    expect(src('(x) => x * 2 - 3.4028234663852886e38')).toContain('Math.fround(Math.fround(a * 2) -');
    expect(src('(x) => x * 0.5 + 1')).toBe('(a) => Math.fround(Math.fround(a * 0.5) + 1)');
    expect(lambda((x: number, y: number) => x * 2 + y).jsSource(['f32', 'f32'])).toBe(
      '(a, b) => Math.fround(Math.fround(a * 2) + b)',
    );
  });

  it('outside the rule the results are the f32 form too (both roundings kept)', () => {
    const cases: [string, (x: number) => number][] = [
      ['(x) => x * 2 - 3.4028234663852886e38', (x) => f32(f32(x * 2) - FLT_MAX)],
      ['(x) => x * 0.5 + 1e-45', (x) => f32(f32(x * 0.5) + f32(1e-45))],
      ['(x) => (x + 1) * 2 + 3', (x) => f32(f32(f32(x + 1) * 2) + 3)],
    ];
    for (const [s, ref] of cases) {
      const fn = fromSource(s);
      for (const x of values()) {
        if (!Object.is(fn(x), ref(x))) expect({ s, x, got: fn(x) }).toEqual({ s, x, got: ref(x) });
      }
    }
  });

  it('a non-f32 double passed to js() is rounded to f32 first, as an f32 parameter', () => {
    const fn = fromSource('(x) => x * 2 + 1e-45');
    for (const x of [1.5 * 2 ** -149, 0.1, 1 + 2 ** -40, 2 ** 128 * (1 - 2 ** -25)]) expect(fn(x)).toBe(fn(f32(x)));
  });
});
