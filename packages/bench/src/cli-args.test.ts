import { describe, expect, it } from 'vitest';
import { defaultSizes, parseArgs, parseSizes, UsageError } from './cli-args';

describe('parseSizes', () => {
  it('reads ranges, stepped ranges, lists and mixes', () => {
    expect(parseSizes('10..14')).toEqual([10, 11, 12, 13, 14]);
    expect(parseSizes('10..24:2')).toEqual([10, 12, 14, 16, 18, 20, 22, 24]);
    expect(parseSizes('20,10,16')).toEqual([10, 16, 20]);
    expect(parseSizes('10..12, 20,11')).toEqual([10, 11, 12, 20]);
    expect(parseSizes('28')).toEqual([28]);
  });

  it.each([
    ['', 'empty'],
    ['24..10', 'goes down'],
    ['10..', 'not a log2 size'],
    ['1e6', 'not a log2 size'],
    ['2^20', 'not a log2 size'],
    ['31', '[0, 30]'],
    ['10..40', '[0, 30]'],
    ['10..20:0', '[1, 30]'],
    ['-3', 'not a log2 size'],
  ])('rejects %j', (spec, why) => {
    expect(() => parseSizes(spec)).toThrow(UsageError);
    expect(() => parseSizes(spec)).toThrow(why);
  });
});

describe('parseArgs', () => {
  it('has defaults for a plain run', () => {
    const o = parseArgs([]);
    expect(o.algorithms).toBeUndefined();
    expect(o.sizes).toBeUndefined();
    expect(o.max).toBe(24);
    expect([...o.policies]).toEqual(['js', 'seq', 'par', 'device']);
    expect(o.out).toBe('bench-results');
    expect(o.json).toBeUndefined();
    expect(o.deviceOnly).toBe(false);
    expect(o.quick).toBe(false);
    expect(o.timeMs).toBe(100);
    expect(o.charts).toBe(true);
    expect(defaultSizes(o)).toEqual([10, 12, 14, 16, 18, 20, 22, 24]);
  });

  it('reads every option, with values after a space or an equals sign', () => {
    const o = parseArgs([
      '--algorithms',
      'reduce,sort-f32',
      '--sizes=10..12',
      '--policies',
      'js,device',
      '--out',
      'o',
      '--json=r.json',
      '--quick',
      '--time',
      '99',
      '--no-charts',
      '--software-gpu-max',
      '16',
    ]);
    expect(o.algorithms).toEqual(['reduce', 'sort-f32']);
    expect(o.sizes).toEqual([10, 11, 12]);
    expect([...o.policies]).toEqual(['js', 'device']);
    expect(o.out).toBe('o');
    expect(o.json).toBe('r.json');
    expect(o.quick).toBe(true);
    expect(o.timeMs).toBe(99);
    expect(o.charts).toBe(false);
    expect(o.softwareGpuMax).toBe(16);
  });

  it('--device-only measures the device policy only', () => {
    const o = parseArgs(['--device-only', '--sizes', '16,20,24,28']);
    expect([...o.policies]).toEqual(['device']);
    expect(o.deviceOnly).toBe(true);
    expect(defaultSizes(o)).toEqual([16, 20, 24, 28]);
  });

  it('--quick shortens budgets and sizes; --max moves the top size', () => {
    expect(parseArgs(['--quick']).timeMs).toBe(40);
    expect(defaultSizes(parseArgs(['--quick']))).toEqual([10, 14, 18, 20]);
    expect(defaultSizes(parseArgs(['--max', '28']))).toEqual([10, 12, 14, 16, 18, 20, 22, 24, 26, 28]);
    expect(defaultSizes(parseArgs(['--max', '15']))).toEqual([10, 12, 14, 15]);
    expect(defaultSizes(parseArgs(['--max', '8']))).toEqual([8]);
  });

  it('--shared runs the CPU policies on allocShared arrays; not with --device-only', () => {
    expect(parseArgs([]).shared).toBe(false);
    expect(parseArgs(['--shared']).shared).toBe(true);
    expect(() => parseArgs(['--device-only', '--shared'])).toThrow(/--shared applies to the CPU policies/);
  });

  it('ignores a leading -- (pnpm passes it through)', () => {
    expect(parseArgs(['--', '--quick']).quick).toBe(true);
  });

  it('reads --help and -h', () => {
    expect(parseArgs(['-h']).help).toBe(true);
    expect(parseArgs(['--help']).help).toBe(true);
  });

  it.each([
    [['--nope'], "unknown option '--nope'"],
    [['reduce'], "unexpected argument 'reduce'"],
    [['--sizes'], '--sizes: missing value'],
    [['--sizes', '--quick'], '--sizes: missing value'],
    [['--policies', 'gpu'], "unknown policy 'gpu'"],
    [['--policies', ','], '--policies: empty list'],
    [['--algorithms='], '--algorithms: empty list'],
    [['--time', 'fast'], '--time: expected an integer'],
    [['--time', '0'], '--time: expected an integer in'],
    [['--max', '40'], '--max: expected an integer in [0, 30]'],
    [['--json='], '--json: empty file name'],
    [['--quick=yes'], '--quick: takes no value'],
    [['--sizes', '10', '--sizes', '12'], '--sizes: given twice'],
    [['--device-only', '--policies', 'seq'], '--device-only measures the device policy only'],
  ])('rejects %j', (argv, why) => {
    expect(() => parseArgs(argv)).toThrow(UsageError);
    expect(() => parseArgs(argv)).toThrow(why);
  });
});
