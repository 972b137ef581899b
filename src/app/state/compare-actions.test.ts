// The Compare card's runs over a fake engine client whose turns end only in the step feed (its
// waitForTurn refuses): each side ends on its sessions' finishes, even one that came before its send
// returned; a side whose turn failed shows that turn's error. No worker, no timers to wait out.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { StepEvent } from '../../protocol/events';
import type { FinishReason } from '../../protocol/events';
import { row, step } from '../../protocol/testing/step-fixtures';
import { getEngineClient } from '../engine-client';
import { modelInfo, type FakeEngineClient } from '../testing/fake-engine-client';
import { runCompare, runSpeculationCompare } from './compare-actions';
import { useModelStore } from './model-store';
import { useRunsStore } from './runs-store';
import { useSessionsStore } from './sessions-store';
import { startStepFeed } from './step-feed';

vi.mock('../engine-client', async () => {
  const { fakeEngineClient: make } = await import('../testing/fake-engine-client');
  const fake = make();
  return { getEngineClient: () => fake, restartEngineClient: () => fake };
});

const engine = getEngineClient() as FakeEngineClient;
const initialSessions = useSessionsStore.getState();
const initialRuns = useRunsStore.getState();
let onStep: (event: StepEvent) => void = () => undefined;
let stepIndex = 0;
/** How the fake engine answers a send: the turn's steps, emitted now (inside send) or after it returned. */
let answer: { when: 'inside-send' | 'after-send'; reason: FinishReason; error?: string };

/** A turn of 3 decode tokens in 3 steps of 2 ms, the last carrying the finish. */
function emitTurn(sessionId: string): void {
  for (let i = 0; i < 3; i++) {
    const finished = i === 2 ? [{ sessionId, requestId: `${sessionId}:1`, reason: answer.reason, newText: '', ...(answer.error ? { error: answer.error } : {}) }] : [];
    onStep(step(stepIndex, stepIndex * 2, 2, [row(sessionId, 'decode', 1, [5], 'a')], { finished }));
    stepIndex++;
  }
}

describe('the Compare card reads turn ends from the step feed', () => {
  beforeEach(async () => {
    vi.stubGlobal('requestAnimationFrame', (callback: () => void) => setTimeout(callback, 0));
    vi.stubGlobal('cancelAnimationFrame', (id: ReturnType<typeof setTimeout>) => clearTimeout(id));
    useSessionsStore.setState(initialSessions, true);
    useRunsStore.setState(initialRuns, true);
    useModelStore.getState().set({ model: modelInfo('m') });
    engine.clear();
    engine.setMode = async () => undefined;
    engine.subscribe = async (callback) => {
      onStep = callback;
      return 1;
    };
    engine.send = async (sessionId, input) => {
      engine.calls.push({ method: 'send', args: [sessionId, input] });
      if (answer.when === 'inside-send') emitTurn(sessionId);
      else setTimeout(() => emitTurn(sessionId), 0);
    };
    await startStepFeed(engine);
  });

  it('batched vs serialized: each side ends on its finishes, whether they come before or after send returns', async () => {
    for (const when of ['inside-send', 'after-send'] as const) {
      answer = { when, reason: 'length' };
      useRunsStore.setState(initialRuns, true);
      await runCompare(2);
      const compare = useRunsStore.getState().compare;
      expect(compare.error).toBeUndefined();
      expect(compare.status).toBe('done');
      // 2 sessions x 3 decode tokens per side, every step of each side counted (3 tokens per 6 ms of steps per session)
      expect(compare.serialized?.decodeTokens).toBe(6);
      expect(compare.batched?.decodeTokens).toBe(6);
      expect(compare.ratio).toBe(1);
    }
  });

  it('speculation off vs on: the same, the card shows both sides', async () => {
    answer = { when: 'after-send', reason: 'length' };
    await runSpeculationCompare(2);
    const compare = useRunsStore.getState().compare;
    expect(compare.status).toBe('done');
    expect(compare.speculationOff?.decodeTokens).toBe(6);
    expect(compare.speculationOn?.decodeTokens).toBe(6);
  });

  it('a turn that failed ends its side with that turn\'s error', async () => {
    answer = { when: 'after-send', reason: 'error', error: 'the GPU was lost' };
    await runCompare(2);
    const compare = useRunsStore.getState().compare;
    expect(compare.status).toBe('error');
    expect(compare.error).toBe('a serialized session failed: the GPU was lost');
  });
});
