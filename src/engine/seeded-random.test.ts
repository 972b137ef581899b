// Golden values of the one mulberry32: the NIAH prompts, synthetic models and random schedules
// all draw from it, so a change to it (or a caller's own copy) shows here first.
import { describe, expect, it } from 'vitest';
import { mulberry32 } from './seeded-random';
import { makeRandom } from './testing/test-support';

describe('mulberry32', () => {
  it('gives the recorded sequence for a seed', () => {
    const next = mulberry32(7);
    expect([next(), next(), next(), next()]).toEqual([0.011704753153026104, 0.06195825757458806, 0.97690763277933, 0.6990287057124078]);
  });

  it('reads the seed as 32 bits, so seeds 2^32 apart are one stream', () => {
    const a = mulberry32(7);
    const b = mulberry32(7 + 2 ** 32);
    expect([b(), b()]).toEqual([a(), a()]);
  });

  it("is what the engine tests' makeRandom draws from, unchanged", () => {
    const random = makeRandom(42);
    expect([random.next(), random.int(0, 100), random.int(-5, 5), random.pick(['a', 'b', 'c', 'd'])]).toEqual([0.6011037519201636, 45, 4, 'c']);
  });
});
