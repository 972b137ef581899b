// Tests of the step cost model alone: it recovers synthetic coefficients (exactly without noise,
// closely with noise and outliers), never goes negative, and sizes chunks to the largest that fits.
import { describe, expect, it } from 'vitest';
import { StepCostModel, attendedPositions, type StepCostCoefficients } from './step-cost';
import { RECORDED_JOIN_STEPS } from './testing/recorded-join-steps';
import { makeRandom } from './testing/test-support';

const TRUE: StepCostCoefficients = { fixedMs: 4, perTokenMs: 0.3, perRowMs: 0.8, perAttendedMs: 0.0004 };

const cost = (k: StepCostCoefficients, tokens: number, rows: number, attended: number): number =>
  k.fixedMs + k.perTokenMs * tokens + k.perRowMs * rows + k.perAttendedMs * attended;

/** A step as the scheduler makes them: some decode rows at various contexts, sometimes one prefill chunk. */
function randomStep(rnd: ReturnType<typeof makeRandom>): { tokens: number; rows: number; attended: number } {
  const decodes = rnd.int(0, 8);
  let tokens = decodes;
  let attended = 0;
  for (let i = 0; i < decodes; i++) attended += attendedPositions(rnd.int(10, 2000), 1);
  let rows = decodes;
  if (decodes === 0 || rnd.next() < 0.4) {
    const chunk = rnd.int(2, 256);
    tokens += chunk;
    attended += attendedPositions(rnd.int(0, 1500), chunk);
    rows++;
  }
  return { tokens, rows, attended };
}

function expectClose(fit: StepCostCoefficients, want: StepCostCoefficients, relative: number): void {
  for (const key of Object.keys(want) as Array<keyof StepCostCoefficients>) {
    expect(Math.abs(fit[key] - want[key]), key).toBeLessThanOrEqual(relative * want[key] + 1e-12);
  }
}

describe('StepCostModel', () => {
  it('counts causal attention exactly', () => {
    expect(attendedPositions(0, 1)).toBe(1);
    expect(attendedPositions(9, 1)).toBe(10); // a decode at position 9 reads 10 keys
    expect(attendedPositions(0, 4)).toBe(1 + 2 + 3 + 4);
    expect(attendedPositions(100, 3)).toBe(101 + 102 + 103);
  });

  it('is not calibrated until it has seen enough steps, some with prefill chunks', () => {
    const model = new StepCostModel();
    for (let i = 0; i < 50; i++) model.observe(4, 4, 400 + i, cost(TRUE, 4, 4, 400 + i)); // decode only
    expect(model.calibrated).toBe(false);
    for (let i = 0; i < 3; i++) model.observe(64, 2, attendedPositions(64 * i, 64), cost(TRUE, 64, 2, attendedPositions(64 * i, 64)));
    expect(model.calibrated).toBe(true);
    model.reset();
    expect(model.calibrated).toBe(false);
    expect(model.predict(10, 1, 10)).toBe(0);
  });

  it('recovers the synthetic coefficients exactly from noise-free steps', () => {
    const model = new StepCostModel();
    const rnd = makeRandom(3);
    for (let i = 0; i < 60; i++) {
      const s = randomStep(rnd);
      model.observe(s.tokens, s.rows, s.attended, cost(TRUE, s.tokens, s.rows, s.attended));
    }
    expect(model.calibrated).toBe(true);
    expectClose(model.coefficients(), TRUE, 1e-4);
  });

  it('converges under 5% noise and occasional 20x outliers (a GC pause, a background tab)', () => {
    const model = new StepCostModel();
    const rnd = makeRandom(11);
    for (let i = 0; i < 400; i++) {
      const s = randomStep(rnd);
      const noise = 1 + 0.1 * (rnd.next() - 0.5);
      const outlier = i > 30 && i % 37 === 0 ? 20 : 1;
      model.observe(s.tokens, s.rows, s.attended, cost(TRUE, s.tokens, s.rows, s.attended) * noise * outlier);
    }
    const fit = model.coefficients();
    expectClose(fit, TRUE, 0.25); // the fixed cost is the least certain: a few ms among steps of up to ~100
    // what matters to the scheduler: predictions of real steps
    const check = makeRandom(99);
    let sumError = 0;
    for (let i = 0; i < 100; i++) {
      const s = randomStep(check);
      const want = cost(TRUE, s.tokens, s.rows, s.attended);
      const error = Math.abs(model.predict(s.tokens, s.rows, s.attended) - want) / want;
      expect(error).toBeLessThanOrEqual(0.15);
      sumError += error;
    }
    expect(sumError / 100).toBeLessThanOrEqual(0.04);
  });

  it('follows a device that becomes slower', () => {
    const model = new StepCostModel();
    const rnd = makeRandom(5);
    const slow: StepCostCoefficients = { fixedMs: 8, perTokenMs: 0.9, perRowMs: 1.6, perAttendedMs: 0.0012 };
    // each kind of step (decode-only, with a chunk) forgets on its own steps: ~300 of each after the change
    for (let i = 0; i < 800; i++) {
      const s = randomStep(rnd);
      model.observe(s.tokens, s.rows, s.attended, cost(i < 200 ? TRUE : slow, s.tokens, s.rows, s.attended));
    }
    expectClose(model.coefficients(), slow, 0.02);
  });

  it('keeps knowing the decode-only step through a long run of steps that all carry a chunk (recorded on SwiftShader)', () => {
    // every step of a join carries a chunk; the decode-only steps before it must still anchor the fit,
    // or the budget's multiple multiplies an inflated decode step (this trace: 2x too high before)
    const model = new StepCostModel();
    let decodeOnly: readonly [number, number, number, number] | null = null;
    let checked = 0;
    RECORDED_JOIN_STEPS.forEach((step, i) => {
      const [tokens, rows, attended, elapsedMs] = step;
      if (tokens === rows) decodeOnly = step;
      else if (decodeOnly && i > RECORDED_JOIN_STEPS.length / 2) {
        // the second run: its decode-only steps were measured on a warm runner
        const [dTokens, dRows, dAttended, dMs] = decodeOnly;
        expect(Math.abs(model.predictDecodeOnly({ numTokens: dTokens, numRows: dRows, attended: dAttended }) - dMs), `step ${i}`).toBeLessThanOrEqual(0.3 * dMs);
        checked++;
      }
      model.observe(tokens, rows, attended, elapsedMs);
    });
    expect(checked).toBeGreaterThan(40);
  });

  it('predicts the decode-only step from decode-only steps when the joint fit is a compromise', () => {
    // a device where any step with a chunk pays 12 ms more than the features explain: the joint
    // fit must spread that over its coefficients, and a long join (every step mixed) leans it that way
    const model = new StepCostModel();
    const decodeMs = (rows: number, attended: number) => 6 + 1.5 * rows + 0.0002 * attended;
    const decode = (rows: number) => ({ numTokens: rows, numRows: rows, attended: rows * 300 });
    for (let i = 0; i < 20; i++) {
      const rows = 1 + (i % 4);
      model.observe(rows, rows, rows * 300, decodeMs(rows, rows * 300));
    }
    for (let i = 0; i < 200; i++) {
      const chunk = 4 + (i % 9);
      model.observe(4 + chunk, 5, 4 * 300 + attendedPositions(100 + 6 * i, chunk), decodeMs(5, 4 * 300) + 12 + 0.8 * chunk);
    }
    const want = decodeMs(4, 1200);
    expect(Math.abs(model.predictShape(decode(4)) - want)).toBeGreaterThan(0.1 * want); // the joint fit's decode step
    expect(model.predictDecodeOnly(decode(4))).toBeCloseTo(want, 6);
    expect(model.predictDecodeOnly(decode(2))).toBeCloseTo(decodeMs(2, 600), 6);
  });

  it('keeps every coefficient >= 0 where least squares would go negative', () => {
    const model = new StepCostModel();
    const rnd = makeRandom(8);
    // steps whose time falls a little with rows: unconstrained least squares gives perRowMs < 0
    for (let i = 0; i < 100; i++) {
      const s = randomStep(rnd);
      model.observe(s.tokens, s.rows, s.attended, Math.max(0.5, 5 + 0.2 * s.tokens - 0.3 * s.rows + 0.5 * (rnd.next() - 0.5)));
    }
    const fit = model.coefficients();
    for (const value of Object.values(fit)) expect(value).toBeGreaterThanOrEqual(0);
    expect(fit.perRowMs).toBe(0);
    expect(fit.perTokenMs).toBeGreaterThan(0.1);
  });

  it('sizes a chunk to the largest that keeps the step within the target', () => {
    const model = new StepCostModel();
    const rnd = makeRandom(21);
    for (let i = 0; i < 60; i++) {
      const s = randomStep(rnd);
      model.observe(s.tokens, s.rows, s.attended, cost(TRUE, s.tokens, s.rows, s.attended));
    }
    const base = { numTokens: 4, numRows: 4, attended: 4 * 800 };
    const stepWith = (startPos: number, n: number): number =>
      model.predict(base.numTokens + n, base.numRows + 1, base.attended + attendedPositions(startPos, n));
    for (const startPos of [0, 17, 900, 4000]) {
      for (const target of [12, 20, 60, 400]) {
        const n = model.maxChunkTokens(base, startPos, target);
        if (n > 0) expect(stepWith(startPos, n)).toBeLessThanOrEqual(target);
        expect(stepWith(startPos, n + 1)).toBeGreaterThan(target);
      }
    }
    expect(model.maxChunkTokens(base, 0, model.predictShape(base))).toBe(0); // the new row's own cost does not fit
  });
});
