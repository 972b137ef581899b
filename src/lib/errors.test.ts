// How a failed turn becomes a typed error, over a scripted EngineLink (no engine): GPU lost is a
// retryable 503, another engine error a 500, an engine-side cancel after unload a 404.
import { describe, expect, it } from 'vitest';
import type { EngineNotice, ModelInfo } from '../protocol/api';
import type { FinishedEvent, SessionSnapshot, StepEvent } from '../protocol/events';
import { step } from '../protocol/testing/step-fixtures';
import type { EngineLink } from './completions';
import { CohortEngine } from './engine';
import { EngineError, GpuLostError, ModelNotLoadedError } from './errors';

const MODEL = { name: 'scripted', blockSize: 16, numBlocks: 65, contextTokens: 1024 } as ModelInfo;

/** A link whose send() ends the turn as `finished` says, after the notices in `before`. */
function scriptedLink(finished: Omit<FinishedEvent, 'sessionId' | 'requestId'>, before: EngineNotice[] = [], modelAfter: ModelInfo | null = MODEL): EngineLink {
  let onStep: (e: StepEvent) => void = () => {};
  let onNotice: (n: EngineNotice) => void = () => {};
  let model: ModelInfo | null = MODEL;
  const stats = { tokensIn: 5, tokensOut: 0, cachedTokens: 0, totalTokensIn: 5, totalTokensOut: 0 };
  return {
    loadModel: async () => MODEL,
    currentModel: async () => model,
    unloadModel: async () => void (model = null),
    createSession: async () => 's1',
    send: async () => {
      setTimeout(() => {
        for (const notice of before) onNotice(notice);
        model = modelAfter;
        const event: StepEvent = { ...step(0, 0, 1, []), finished: [{ sessionId: 's1', requestId: 's1:1', ...finished }] };
        onStep(event);
      }, 0);
    },
    cancel: async () => {},
    closeSession: async () => {},
    getSession: async (): Promise<SessionSnapshot> => ({ sessionId: 's1', state: 'error', numTurns: 1, stats }),
    subscribe: async (cb) => ((onStep = cb), 1),
    subscribeNotices: async (cb) => ((onNotice = cb), 2),
    unsubscribe: async () => {},
    ping: async () => true,
    setStepBudget: async () => {},
  };
}

const request = { messages: [{ role: 'user' as const, content: 'hi' }] };

describe('typed errors for failed turns', () => {
  it('GPU lost during the request: a retryable 503', async () => {
    const engine = new CohortEngine(scriptedLink({ reason: 'error', newText: '', error: 'device lost' }, [{ kind: 'gpu-lost', message: 'lost' }]));
    const err = await engine.chat.completions.create(request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GpuLostError);
    expect(err).toMatchObject({ status: 503, retryable: true, code: 'gpu_lost' });
  });

  it('another engine error: a 500 with the engine\'s message', async () => {
    const engine = new CohortEngine(scriptedLink({ reason: 'error', newText: '', error: 'the model produced NaN/Inf logits' }));
    const err = await engine.chat.completions.create({ ...request, stream: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect(err).toMatchObject({ status: 500, retryable: false, message: 'the model produced NaN/Inf logits' });
  });

  it('cancelled by the engine with the model gone: a 404', async () => {
    const engine = new CohortEngine(scriptedLink({ reason: 'cancelled', newText: '' }, [], null));
    await expect(engine.chat.completions.create(request)).rejects.toBeInstanceOf(ModelNotLoadedError);
  });
});
