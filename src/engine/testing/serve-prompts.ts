// Test scaffolding: prompts arriving at given steps, served greedily through a manual EngineCore on
// any runner until all are done; the runners' tests compare what two such runs computed.
import { EngineCore } from '../engine-core';
import type { StepEvent } from '../events';
import type { Speculation } from '../speculation';
import type { ChatTemplate, ModelRunner, Tokenizer } from '../types';

export interface TimedPrompt {
  tokens: number[];
  /** The step at which it is sent. */
  arriveAt: number;
  /** The session's predictionTokenIds: drafts, where `speculation` is on. */
  prediction?: number[];
}

export interface ServeOptions {
  tokenizer: Tokenizer;
  chatTemplate: ChatTemplate;
  maxTokensPerStep: number;
  maxRows: number;
  maxNewTokens: number;
  /** The engine's speculation (default 'off': one token a row-step). */
  speculation?: Speculation;
  /** Called with the engine before its first step (a wrapping runner that inspects its pools). */
  onEngine?: (engine: EngineCore) => void;
}

/** Each prompt's greedy output and every step's event; disposes the engine and with it the runner. */
export async function servePrompts(runner: ModelRunner, prompts: readonly TimedPrompt[], o: ServeOptions): Promise<{ outputs: number[][]; events: StepEvent[] }> {
  const engine = new EngineCore({ runner, tokenizer: o.tokenizer, chatTemplate: o.chatTemplate, maxTokensPerStep: o.maxTokensPerStep, maxRows: o.maxRows, manualSteps: true, speculation: o.speculation ?? 'off' });
  o.onEngine?.(engine);
  const ids = prompts.map((p) => engine.createSession({ maxNewTokens: o.maxNewTokens, sampling: { temperature: 0 }, ...(p.prediction ? { predictionTokenIds: p.prediction } : {}) }));
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

/** Where two runs' logits (keyed `session@position`) part: a missing key, a non-finite value or a differing bit; null when bitwise equal. */
export function logitsDifference(got: ReadonlyMap<string, Float32Array>, want: ReadonlyMap<string, Float32Array>): string | null {
  const keys = [...want.keys()].sort();
  if ([...got.keys()].sort().join() !== keys.join()) return `positions differ: ${[...got.keys()].length} vs ${keys.length}`;
  for (const key of keys) {
    const a = got.get(key)!;
    const b = want.get(key)!;
    if (!a.every((x) => Number.isFinite(x))) return `${key}: non-finite logits`;
    const aBits = new Uint32Array(a.buffer, a.byteOffset, a.length);
    const bBits = new Uint32Array(b.buffer, b.byteOffset, b.length);
    if (aBits.length !== bBits.length || aBits.some((x, i) => x !== bBits[i])) return `${key}: logits differ`;
  }
  return null;
}

/** Rows that started before what their request had computed (recomputes after preemption) and first rows past position 0 (prefix hits). */
export function recomputesAndHits(events: readonly StepEvent[]): { recomputes: number; hits: number } {
  const seen = new Map<string, number>();
  let recomputes = 0;
  let hits = 0;
  for (const e of events) {
    for (const r of e.rows) {
      if (r.position < (seen.get(r.requestId) ?? 0)) recomputes++;
      if (!seen.has(r.requestId) && r.position > 0) hits++;
      seen.set(r.requestId, r.position + r.numTokens);
    }
  }
  return { recomputes, hits };
}
