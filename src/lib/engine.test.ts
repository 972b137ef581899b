// CohortEngine's step fan-out over a link that only subscribes: every listener gets every step, a
// faulty one is logged and skipped, unsubscribing stops one. Requests are completions.test.ts's.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { StepEvent } from '../protocol/events';
import { row, step } from '../protocol/testing/step-fixtures';
import type { EngineLink } from './completions';
import { CohortEngine } from './engine';

/** A link whose subscribe hands back the step callback; nothing else is called. */
function subscribingLink(): { link: EngineLink; emit: (event: StepEvent) => void } {
  let onStep: ((event: StepEvent) => void) | null = null;
  const link = {
    subscribe: async (cb: (event: StepEvent) => void) => ((onStep = cb), 1),
    subscribeNotices: async () => 2,
    unsubscribe: async () => {},
  } as unknown as EngineLink;
  return { link, emit: (event) => onStep!(event) };
}

afterEach(() => vi.restoreAllMocks());

describe('CohortEngine.onStep', () => {
  it('gives every listener every step; a throwing one is logged and the rest still run', async () => {
    const { link, emit } = subscribingLink();
    const engine = new CohortEngine(link);
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    const seen: string[] = [];
    engine.onStep(() => {
      throw new Error('faulty listener');
    });
    const off = engine.onStep((e) => seen.push(`b${e.stepIndex}`));
    engine.onStep((e) => seen.push(`c${e.stepIndex}`));
    await vi.waitFor(() => expect(() => emit(step(0, 0, 1, [row('s1', 'decode', 1, [5])]))).not.toThrow());
    expect(seen).toEqual(['b0', 'c0']);
    expect(logged).toHaveBeenCalledTimes(1);
    off();
    emit(step(1, 1, 1, [row('s1', 'decode', 1, [6])]));
    expect(seen).toEqual(['b0', 'c0', 'c1']);
  });
});
