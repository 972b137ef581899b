// Test scaffolding: prompts arriving at given steps, served greedily through a manual EngineCore on
// any runner until all are done; the runners' tests compare what two such runs computed.
import { EngineCore } from '../engine-core';
import type { StepEvent } from '../events';
import type { ChatTemplate, ModelRunner, Tokenizer } from '../types';

export interface TimedPrompt {
  tokens: number[];
  /** The step at which it is sent. */
  arriveAt: number;
}

export interface ServeOptions {
  tokenizer: Tokenizer;
  chatTemplate: ChatTemplate;
  maxTokensPerStep: number;
  maxRows: number;
  maxNewTokens: number;
  /** Called with the engine before its first step (a wrapping runner that inspects its pools). */
  onEngine?: (engine: EngineCore) => void;
}

/** Each prompt's greedy output and every step's event; disposes the engine and with it the runner. */
export async function servePrompts(runner: ModelRunner, prompts: readonly TimedPrompt[], o: ServeOptions): Promise<{ outputs: number[][]; events: StepEvent[] }> {
  const engine = new EngineCore({ runner, tokenizer: o.tokenizer, chatTemplate: o.chatTemplate, maxTokensPerStep: o.maxTokensPerStep, maxRows: o.maxRows, manualSteps: true, speculation: 'off' });
  o.onEngine?.(engine);
  const ids = prompts.map(() => engine.createSession({ maxNewTokens: o.maxNewTokens, sampling: { temperature: 0 } }));
  const events: StepEvent[] = [];
  for (let step = 0; step < 10_000; step++) {
    prompts.forEach((p, i) => (p.arriveAt === step ? engine.send(ids[i]!, p.tokens) : undefined));
    const event = await engine.step();
    if (event) events.push(event);
    else if (prompts.every((p) => p.arriveAt < step)) break;
  }
  const outputs = await Promise.all(ids.map(async (id) => (await engine.waitForTurn(id)).outputTokenIds));
  await engine.dispose();
  return { outputs, events };
}
