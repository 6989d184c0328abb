/**
 * JS form vs WGSL form of lambdas on a real WebGPU device (lavapipe in CI). Every suite links many
 * lambdas into one kernel that applies each of them to every input pair and stores the results as
 * bits, so a suite costs one pipeline; fast-check then feeds it batches of random inputs (plus every
 * pair of special values: 0, -1, 2^31-1, 2^31, 2^32-1, NaN, -0, infinities, subnormals...).
 *
 * A last suite runs lambdas generated at random by fast-check from every exact operator.
 *
 * Comparison: integers and bools exactly; f32 bit-exactly (any NaN matches any NaN; -0 and +0
 * differ) except for the cases marked approximate, which must agree within
 * |got - want| <= rel * max(|got|, |want|) + abs, with infinities counted as 2^128:
 * - sqrt, log, sin, cos, tan: rel 1e-6 (about 8 ulp), abs 1e-6; sin/cos/tan for |x| <= 100 (WGSL
 *   states no accuracy outside [-pi, pi]). Measured on lavapipe: sqrt exact, the others <= 3.5e-7.
 * - exp (|x| <= 100) and pow: rel 1e-5 (WGSL allows exp 3 + 2|x| ulp), abs 1e-6. Measured on
 *   lavapipe: <= 5.2e-6.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { GpuDevice } from '../device';
import { DeviceArray } from '../device-array';
import { LambdaError } from '../errors';
import type { GpuFunction } from '../operators';
import { getPipeline } from '../pipeline-cache';
import { gpuForTests } from '../testing/gpu';
import type { NumericType } from '../types';
import { fragment, mangle } from '../wgsl/fragment';
import { type LambdaFn, lambda, toGpuFunction } from './lambda';

const gpu = await gpuForTests();

/** Tolerances for the approximate cases: relative, plus absolute near zero (see the file comment). */
const TOLERANCE = { rel: 1e-6, abs: 1e-6 };
const POW_TOLERANCE = { rel: 1e-5, abs: 1e-6 };

interface Case {
  readonly label: string;
  readonly fn: GpuFunction;
  readonly tol?: { rel: number; abs: number };
  /** Inputs where the comparison applies (approximate cases restrict the domain). */
  readonly domain?: (a: number, b: number) => boolean;
}

const f32 = (x: number) => Math.fround(x);
const I32_MIN = -(2 ** 31);
const FLT_MAX = f32(3.4028234663852886e38);

const SPECIALS: Readonly<Record<NumericType, readonly number[]>> = {
  u32: [0, 1, 2, 3, 7, 31, 32, 33, 0x7fffffff, 0x80000000, 0x80000001, 0xfffffffe, 0xffffffff, 0x10000, 0xffff],
  i32: [0, 1, -1, 2, -2, 3, -7, 31, 32, -32, 0x7fffffff, I32_MIN, I32_MIN + 1, 0x10000, -0x10000],
  f32: [
    0,
    -0,
    1,
    -1,
    0.5,
    -0.5,
    1.5,
    2.5,
    -2.5,
    f32(0.49999997),
    f32(0.1),
    3,
    -7,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    f32(1e-45),
    f32(-1e-45),
    f32(1.1754942e-38),
    f32(1.17549435e-38),
    FLT_MAX,
    -FLT_MAX,
    2 ** 31,
    2 ** 32,
    -(2 ** 31),
    2 ** 31 - 128,
    2 ** 23 + 1,
    2 ** 24 + 2,
    1e10,
    f32(Math.PI),
  ],
};

function valueArb(t: NumericType): fc.Arbitrary<number> {
  const specials = fc.constantFrom(...SPECIALS[t]);
  switch (t) {
    case 'u32':
      return fc.oneof(specials, fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 64 }));
    case 'i32':
      return fc.oneof(specials, fc.integer({ min: I32_MIN, max: 0x7fffffff }), fc.integer({ min: -64, max: 64 }));
    case 'f32':
      return fc.oneof(
        specials,
        fc.float(),
        fc.float({ min: -100, max: 100, noNaN: true }),
        fc.integer({ min: -64, max: 64 }),
        fc.integer({ min: -64, max: 64 }).map((x) => x / 4),
      );
  }
}

function hostArray(t: NumericType, xs: readonly number[]): Uint32Array | Int32Array | Float32Array {
  return t === 'u32' ? Uint32Array.from(xs) : t === 'i32' ? Int32Array.from(xs) : Float32Array.from(xs);
}

/** Bits of a JS-form result as the kernel stores it. */
function bitsOf(type: string, v: number | boolean): number {
  if (type === 'bool') return v ? 1 : 0;
  if (typeof v === 'boolean') throw new Error(`JS form returned a boolean for ${type}`);
  if (type === 'u32') return v >>> 0;
  if (type === 'i32') return (v | 0) >>> 0;
  return new Uint32Array(Float32Array.of(v).buffer)[0] as number;
}

const bitsToF32 = (b: number) => new Float32Array(Uint32Array.of(b).buffer)[0] as number;

const TO_BITS: Readonly<Record<string, (e: string) => string>> = {
  u32: (e) => e,
  i32: (e) => `bitcast<u32>(${e})`,
  f32: (e) => `bitcast<u32>(${e})`,
  bool: (e) => `select(0u, 1u, ${e})`,
};

/** Runs every case on every input pair in one dispatch; returns bits[case][i]. */
async function runOnGpu(
  device: GpuDevice,
  cases: readonly Case[],
  types: readonly [NumericType, NumericType],
  as: readonly number[],
  bs: readonly number[],
): Promise<Uint32Array[]> {
  const n = as.length;
  const fns = cases.map((c) => c.fn.wgsl(c.fn.arity === 1 ? [types[0]] : types));
  const calls = cases.map((c, k) => {
    const r = c.fn.resultType(c.fn.arity === 1 ? [types[0]] : types);
    const call = `${fns[k]?.name}(${c.fn.arity === 1 ? 'a' : 'a, b'})`;
    return `  outp[${k}u * n + i] = ${(TO_BITS[r] as (e: string) => string)(call)};`;
  });
  const main = fragment({
    name: mangle('lambda_test', ...types, ...cases.map((c) => c.fn.name)),
    deps: fns,
    code: `@group(0) @binding(0) var<storage, read> in_a: array<${types[0]}>;
@group(0) @binding(1) var<storage, read> in_b: array<${types[1]}>;
@group(0) @binding(2) var<storage, read_write> outp: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let n = arrayLength(&in_a);
  let i = gid.x;
  if (i >= n) { return; }
  let a = in_a[i];
  let b = in_b[i];
${calls.join('\n')}
}`,
  });
  const pipeline = await getPipeline(device, main);
  const inA = DeviceArray.from(device, hostArray(types[0], as));
  const inB = DeviceArray.from(device, hostArray(types[1], bs));
  const out = DeviceArray.create(device, 'u32', n * cases.length);
  await device.queue.submit('lambda test', (rec) => {
    const pass = rec.beginPass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(
      0,
      device.gpu.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: [
          { binding: 0, resource: { buffer: inA.buffer, offset: 0, size: inA.byteLength } },
          { binding: 1, resource: { buffer: inB.buffer } },
          { binding: 2, resource: { buffer: out.buffer } },
        ],
      }),
    );
    pass.dispatchWorkgroups(Math.ceil(n / 64));
    pass.end();
  });
  const bits = await out.read();
  inA.destroy();
  inB.destroy();
  out.destroy();
  return cases.map((_, k) => bits.slice(k * n, (k + 1) * n));
}

function approxEqual(got: number, want: number, tol: { rel: number; abs: number }): boolean {
  if (Number.isNaN(got) || Number.isNaN(want)) return Number.isNaN(got) && Number.isNaN(want);
  const big = (x: number) => (Number.isFinite(x) ? x : Math.sign(x) * 2 ** 128);
  const g = big(got);
  const w = big(want);
  return Math.abs(g - w) <= tol.rel * Math.max(Math.abs(g), Math.abs(w)) + tol.abs;
}

/** Compares GPU bits with the JS form; returns a description of the first mismatches. */
function mismatches(
  cases: readonly Case[],
  types: readonly [NumericType, NumericType],
  as: readonly number[],
  bs: readonly number[],
  gpuBits: readonly Uint32Array[],
): string[] {
  const out: string[] = [];
  // Inputs as the GPU saw them (f32 rounded, integers wrapped).
  const ha = Array.from(hostArray(types[0], as));
  const hb = Array.from(hostArray(types[1], bs));
  cases.forEach((c, k) => {
    const argTypes = c.fn.arity === 1 ? [types[0]] : [...types];
    const r = c.fn.resultType(argTypes);
    const js = c.fn.js(argTypes);
    const got = gpuBits[k] as Uint32Array;
    let bad = 0;
    for (let i = 0; i < ha.length; i++) {
      const a = ha[i] as number;
      const b = hb[i] as number;
      if (c.domain && !c.domain(a, b)) continue;
      const want = bitsOf(r, js(a, b));
      const g = got[i] as number;
      let ok = g === want;
      if (!ok && r === 'f32') {
        const gf = bitsToF32(g);
        const wf = bitsToF32(want);
        ok = c.tol ? approxEqual(gf, wf, c.tol) : Number.isNaN(gf) && Number.isNaN(wf);
      }
      if (!ok && bad++ < 3) {
        const show = (bits: number) => (r === 'f32' ? `${bitsToF32(bits)}` : r === 'i32' ? `${bits | 0}` : `${bits}`);
        out.push(`${c.label} <${argTypes.join(',')}>(${a}, ${b}): gpu ${show(g)}, js ${show(want)}`);
      }
    }
  });
  return out;
}

/** Every pair of special values of the suite's types, then fast-check's random batches. */
async function checkSuite(
  device: GpuDevice,
  cases: readonly Case[],
  types: readonly [NumericType, NumericType],
  runs = 3,
  batch = 512,
): Promise<void> {
  const sa = SPECIALS[types[0]];
  const sb = SPECIALS[types[1]];
  const pa = sa.flatMap((a) => sb.map(() => a));
  const pb = sa.flatMap(() => sb);
  const first = mismatches(cases, types, pa, pb, await runOnGpu(device, cases, types, pa, pb));
  expect(first, 'special values').toEqual([]);
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(valueArb(types[0]), valueArb(types[1])), { minLength: batch, maxLength: batch }),
      async (pairs) => {
        const as = pairs.map((p) => p[0]);
        const bs = pairs.map((p) => p[1]);
        const bad = mismatches(cases, types, as, bs, await runOnGpu(device, cases, types, as, bs));
        expect(bad).toEqual([]);
      },
    ),
    { numRuns: runs, seed: 0x5eed + types.join().length, endOnFailure: true },
  );
}

const L = (label: string, f: LambdaFn, options?: Parameters<typeof lambda>[1], extra?: Partial<Case>): Case => ({
  label,
  fn: lambda(f, options),
  ...extra,
});

/** Exact cases: arithmetic with overflow and division by zero, comparisons, ternaries, bits, Math, captures. */
const EXACT: readonly Case[] = [
  L('a + b', (a, b) => a + b),
  L('a - b', (a, b) => a - b),
  L('a * b', (a, b) => a * b),
  L('a / b', (a, b) => a / b),
  L('a % b', (a, b) => a % b),
  L('-a', (a) => -a),
  L('a * 3 - b * 7 + 5', (a, b) => a * 3 - b * 7 + 5),
  L('a * a * a', (a) => a * a * a),
  L('a / b + a % b', (a, b) => a / b + (a % b)),
  L('a / 0', (a) => a / 0),
  L('a % 0', (a) => a % 0),
  L('a / -1', (a) => a / -1),
  L('a % -1', (a) => a % -1),
  L('(a + 1) / (b - 1)', (a, b) => (a + 1) / (b - 1)),
  L('a < b', (a, b) => a < b),
  L('a <= b', (a, b) => a <= b),
  L('a > b', (a, b) => a > b),
  L('a >= b', (a, b) => a >= b),
  L('a === b', (a, b) => a === b),
  L('a !== b', (a, b) => a !== b),
  L('a > 0.5', (a) => a > 0.5),
  // Against finite normal constants the GPU compares floats natively (NaN tested on the bits).
  L('a < -0.5', (a) => a < -0.5),
  L('0.5 <= a', (a) => 0.5 <= a),
  L('!(a >= 1.5)', (a) => !(a >= 1.5)),
  L('a === 2.5', (a) => a === 2.5),
  L('a !== 2.5', (a) => a !== 2.5),
  L('a < 1.17549435e-38 (least normal)', (a) => a < 1.1754943508222875e-38),
  L('a > -1.17549435e-38', (a) => a > -1.1754943508222875e-38),
  L('a > 3.4028234663852886e38', (a) => a > 3.4028234663852886e38),
  L('a < 0 || a > 1e10', (a) => a < 0 || a > 1e10),
  // biome-ignore lint/suspicious/noSelfCompare: the NaN check is what is tested
  L('a == a', (a) => a === a),
  // biome-ignore lint/suspicious/noSelfCompare: the NaN check is what is tested
  L('a != a', (a) => a !== a),
  L('!(a < b) && a !== b', (a, b) => !(a < b) && a !== b),
  L('!a', (a) => !a),
  L('a && b', (a, b) => a && b),
  L('a || b', (a, b) => a || b),
  L('(a > b) + (a < b) * 2', (a, b) => +(a > b) + +(a < b) * 2),
  // biome-ignore lint/complexity/useMathMinMax: the ternary is what is tested
  L('a > b ? a : b', (a, b) => (a > b ? a : b)),
  L('a ? b : -b', (a, b) => (a ? b : -b)),
  L('a < 0 ? 1.5 : a', (a) => (a < 0 ? 1.5 : a)),
  L('a & b', (a, b) => a & b),
  L('a | b', (a, b) => a | b),
  L('a ^ b', (a, b) => a ^ b),
  L('~a', (a) => ~a),
  L('a << b', (a, b) => a << b),
  L('a >> b', (a, b) => a >> b),
  L('a >>> b', (a, b) => a >>> b),
  L('a | 0', (a) => a | 0),
  L('a >>> 0', (a) => a >>> 0),
  L('hash', (a) => ((a ^ (a >>> 16)) * 0x45d9f3b) ^ (a << 5)),
  // f32 pow is approximate (pow(|x|, y) on the device); integer pow is exact.
  L('a ** (b & 7)', (a, b) => a ** (b & 7), undefined, { tol: POW_TOLERANCE }),
  L('Math.min', (a, b) => Math.min(a, b)),
  L('Math.max', (a, b) => Math.max(a, b)),
  L('Math.min(a, b, 3)', (a, b) => Math.min(a, b, 3)),
  L('Math.abs', (a) => Math.abs(a)),
  L('Math.sign', (a) => Math.sign(a)),
  L('Math.floor', (a) => Math.floor(a)),
  L('Math.ceil', (a) => Math.ceil(a)),
  L('Math.round', (a) => Math.round(a)),
  L('Math.trunc', (a) => Math.trunc(a)),
  L('Math.fround', (a) => Math.fround(a)),
  L('Math.floor(a / 3)', (a) => Math.floor(a / 3)),
  L('a * k + off', (a) => a * k + off, { captures: { k: 3, off: -7 } }),
  L('flag ? a : -a', (a) => (flag ? a : -a), { captures: { flag: false } }),
  L('a * scale', (a) => a * scale, { captures: { scale: 0.25 } }),
  L('a + b * Math.PI', (a, b) => a + b * Math.PI),
  L('Math.fround(a) * 0.5 + b', (a, b) => Math.fround(a) * 0.5 + b),
  {
    label: 'explicit { js, wgsl }',
    fn: toGpuFunction({ js: (x: number, y: number) => x === y, wgsl: 'return x == y;', resultType: 'bool' }, 'op', 2),
    domain: (a, b) => !Number.isNaN(a) && !Number.isNaN(b),
  },
];

declare const k: number;
declare const off: number;
declare const flag: boolean;
declare const scale: number;

const small = (x: number) => Math.abs(x) <= 100;
/** Transcendental cases, compared within TOLERANCE on their well-conditioned domains. */
const APPROX: readonly Case[] = [
  L('Math.sqrt', (a) => Math.sqrt(a), undefined, { tol: TOLERANCE }),
  L('Math.exp', (a) => Math.exp(a), undefined, { tol: POW_TOLERANCE, domain: (a) => small(a) }),
  L('Math.log', (a) => Math.log(a), undefined, { tol: TOLERANCE }),
  L('Math.pow', (a, b) => a ** b, undefined, {
    tol: POW_TOLERANCE,
    domain: (a, b) => Math.abs(b) <= 16 && (a === 0 || (Math.abs(a) >= 1e-3 && Math.abs(a) <= 1e3)),
  }),
  L('a ** 0.5', (a) => a ** 0.5, undefined, { tol: POW_TOLERANCE, domain: (a) => Math.abs(a) <= 1e30 }),
  L('Math.sin', (a) => Math.sin(a), undefined, { tol: TOLERANCE, domain: (a) => small(a) }),
  L('Math.cos', (a) => Math.cos(a), undefined, { tol: TOLERANCE, domain: (a) => small(a) }),
  L('Math.tan', (a) => Math.tan(a), undefined, { tol: TOLERANCE, domain: (a) => small(a) }),
  L('hypot', (a, b) => Math.sqrt(a * a + b * b), undefined, { tol: TOLERANCE }),
];

const OPS = [
  '+',
  '-',
  '*',
  '/',
  '%',
  '&',
  '|',
  '^',
  '<<',
  '>>',
  '>>>',
  '==',
  '===',
  '!=',
  '!==',
  '<',
  '<=',
  '>',
  '>=',
  '&&',
  '||',
];
const LEAVES = [
  '0',
  '1',
  '2',
  '3',
  '7',
  '31',
  '32',
  '65535',
  '2147483647',
  '4294967295',
  '0.5',
  '1.5',
  '0.1',
  '1e10',
  'Math.PI',
  'true',
  'NaN',
];
const UNARY_MATH = ['abs', 'floor', 'ceil', 'round', 'trunc', 'sign', 'fround'];

/** Random lambda bodies over every exact construct (pow and transcendentals excluded). */
const expressionArb: fc.Arbitrary<string> = fc.letrec<{ expr: string }>((tie) => ({
  expr: fc.oneof(
    { maxDepth: 3, depthIdentifier: 'expr' },
    { arbitrary: fc.constantFrom('a', 'b'), weight: 4 },
    fc.constantFrom(...LEAVES),
    fc.tuple(fc.constantFrom('-', '!', '~', '+'), tie('expr')).map(([op, x]) => `(${op}${x})`),
    fc.tuple(tie('expr'), fc.constantFrom(...OPS), tie('expr')).map(([l, op, r]) => `(${l} ${op} ${r})`),
    fc.tuple(tie('expr'), tie('expr'), tie('expr')).map(([c, x, y]) => `(${c} ? ${x} : ${y})`),
    fc.tuple(fc.constantFrom('min', 'max'), tie('expr'), tie('expr')).map(([f, x, y]) => `Math.${f}(${x}, ${y})`),
    fc.tuple(fc.constantFrom(...UNARY_MATH), tie('expr')).map(([f, x]) => `Math.${f}(${x})`),
  ),
})).expr;

describe.skipIf(!gpu)('lambda: JS form and WGSL form agree on the GPU', () => {
  const device = gpu as GpuDevice;
  for (const t of ['u32', 'i32', 'f32'] as const) {
    it(`exact cases on ${t}`, async () => {
      await checkSuite(device, EXACT, [t, t]);
    });
  }
  it('approximate cases (sqrt, exp, log, pow, sin, cos, tan) on f32, and promoted from u32/i32', async () => {
    await checkSuite(device, APPROX, ['f32', 'f32']);
    await checkSuite(device, APPROX, ['i32', 'i32'], 1);
  });
  it('mixed argument types: u32 with i32, f32 with u32', async () => {
    const mixed = EXACT.filter((c) => c.fn.arity === 2 && !c.label.startsWith('explicit'));
    await checkSuite(device, mixed, ['u32', 'i32'], 2);
    await checkSuite(device, mixed, ['f32', 'u32'], 2);
  });
  it('random lambdas generated by fast-check, on u32, i32 and f32', async () => {
    const cases: Case[] = [];
    let rejected = 0;
    for (const body of fc.sample(expressionArb, { numRuns: 40, seed: 20240601 })) {
      try {
        cases.push({ label: body, fn: lambda(new Function(`return (a, b) => ${body};`)() as LambdaFn) });
      } catch (e) {
        // '===' between a boolean and a number is a LambdaError by design; anything else is a bug.
        if (!(e instanceof LambdaError && /between a boolean and a number/.test(e.message))) throw e;
        rejected++;
      }
    }
    expect(cases.length).toBeGreaterThan(30);
    expect(rejected + cases.length).toBe(40);
    for (const t of ['u32', 'i32', 'f32'] as const) await checkSuite(device, cases, [t, t], 1, 256);
  });
});
