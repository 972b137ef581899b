// Checks the bench option parser: grid options become COHORT_BENCH_* variables, the caller's own
// options pass through, and malformed ones are refused. No benchmark runs here.
import { describe, expect, it } from 'vitest';
import { parseOptions } from './options';

describe('parseOptions', () => {
  it('maps grid options to variables and passes the rest through', () => {
    const { env, other } = parseOptions(['--quick', '--sessions=1,8', '--machine=h200', '--model=/m.gguf', '--no-build']);
    expect(env).toEqual({ COHORT_BENCH_QUICK: '1', COHORT_BENCH_SESSIONS: '1,8', COHORT_BENCH_MACHINE: 'h200' });
    expect([...other]).toEqual([['model', '/m.gguf'], ['no-build', '']]);
  });

  it('refuses grid options without a value and bare words', () => {
    expect(() => parseOptions(['--repeats'])).toThrow(/--repeats needs a value/);
    expect(() => parseOptions(['quick'])).toThrow(/unexpected argument quick/);
  });
});
