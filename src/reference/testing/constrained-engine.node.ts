// Test support: constrained turns through the whole engine on a random-weight byte-level model
// (CpuRunner, or any runner), compiled by XGrammar. Shared by the CPU and GPU constraint tests
// and the constraint bench. Not product code.
import { EngineCore } from '../../engine/engine-core';
import type { EngineMode } from '../../engine/events';
import type { Speculation } from '../../engine/speculation';
import type { ChatTemplate, ModelRunner, OutputConstraint, SamplingParams } from '../../engine/types';
import type { ModelDesc } from '../../model/desc';
import { HfTokenizer } from '../../model/tokenizer';
import { XGrammarCompiler } from '../../model/xgrammar';
import { byteLevelTokenizer, syntheticModelDesc } from '../../model/testing/synthetic-model-fixtures';

/** A 2-layer random llama on the 259-token byte vocabulary (258 <|im_end|> ends a reply). */
export function randomByteModel(seed = 11): ModelDesc {
  return syntheticModelDesc({ arch: 'llama', seed, dims: { hidden: 32, intermediate: 48, layers: 2, heads: 4, kvHeads: 2, headDim: 8, vocab: 259 } });
}

export function byteTokenizer(): HfTokenizer {
  const { tokenizer, tokenizerConfig } = byteLevelTokenizer();
  return HfTokenizer.fromFiles({ tokenizerJson: tokenizer, tokenizerConfig }, 259);
}

let compiler: Promise<XGrammarCompiler> | null = null;
/** XGrammar's compiler over the byte vocabulary, built once per test file. */
export function byteCompiler(): Promise<XGrammarCompiler> {
  compiler ??= XGrammarCompiler.create(byteTokenizer().grammarVocabulary(259), 259);
  return compiler;
}

const template: ChatTemplate = { render: (messages) => messages.map((m) => `${m.role}: ${m.content}\n`).join('') + 'assistant: ' };

export interface ConstrainedReply {
  text: string;
  ids: number[];
  finishReason: string;
  error?: string;
  /** Drafted tokens its verify rows carried. */
  numDrafted: number;
}

export interface ConstrainedTurn {
  prompt: string;
  constraint?: OutputConstraint;
  /** Sampling seed (default 100 + its index). */
  seed?: number;
}

export interface ConstrainedRunOptions {
  temperature?: number;
  maxNewTokens?: number;
  mode?: EngineMode;
  speculation?: Speculation;
  sampling?: Partial<SamplingParams>;
  maxRows?: number;
}

/** Sends each (prompt, constraint) as its own session in one engine; returns every reply in order. */
export async function runConstrained(runner: ModelRunner, turns: ConstrainedTurn[], options: ConstrainedRunOptions = {}): Promise<ConstrainedReply[]> {
  const engine = new EngineCore({
    runner,
    tokenizer: byteTokenizer(),
    chatTemplate: template,
    manualSteps: true,
    constraints: await byteCompiler(),
    speculation: options.speculation ?? 'off',
    ...(options.mode ? { mode: options.mode } : {}),
    ...(options.maxRows ? { maxRows: options.maxRows } : {}),
  });
  const ids = turns.map((t, i) =>
    engine.createSession({
      maxNewTokens: options.maxNewTokens ?? 1000,
      seed: t.seed ?? 100 + i,
      sampling: { temperature: options.temperature ?? 1, ...options.sampling, ...(t.constraint ? { constraint: t.constraint } : {}) },
    }),
  );
  const drafted = ids.map(() => 0);
  engine.subscribe((e) => e.rows.forEach((row) => (drafted[ids.indexOf(row.sessionId)]! += row.numDrafted ?? 0)));
  ids.forEach((id, i) => engine.send(id, turns[i]!.prompt));
  while (await engine.step());
  const replies: ConstrainedReply[] = [];
  for (const [i, id] of ids.entries()) {
    const r = await engine.waitForTurn(id);
    replies.push({ text: r.text, ids: r.outputTokenIds, finishReason: r.finishReason, ...(r.error !== undefined ? { error: r.error } : {}), numDrafted: drafted[i]! });
  }
  await engine.dispose();
  return replies;
}
