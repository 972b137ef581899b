// Test support: constrained turns through the whole engine on a random-weight model (the byte-level
// vocabulary, or Qwen3's published one) on CpuRunner or any runner, compiled by XGrammar. Shared by
// the CPU and GPU constraint tests, the tool-call tests and the constraint bench. Not product code.
import { EngineCore } from '../../engine/engine-core';
import type { EngineMode } from '../../engine/events';
import type { Speculation } from '../../engine/speculation';
import type { ConstraintCompiler } from '../../engine/constraints';
import type { ChatTemplate, ModelRunner, OutputConstraint, SamplingParams, Tokenizer } from '../../engine/types';
import type { ModelDesc } from '../../model/desc';
import { HfTokenizer } from '../../model/tokenizer';
import { XGrammarCompiler } from '../../model/xgrammar';
import { byteLevelTokenizer, syntheticModelDesc } from '../../model/testing/synthetic-model-fixtures';
import { publishedTokenizerFiles, PUBLISHED_TOKENIZERS } from '../../model/testing/published-tokenizer-fixtures';

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

/** A vocabulary to run turns in: its tokenizer and XGrammar's compiler over it. */
export interface ConstrainedVocab {
  tokenizer: Tokenizer;
  compiler: () => Promise<ConstraintCompiler>;
}

const QWEN3_ROWS = PUBLISHED_TOKENIZERS.find((t) => t.family === 'qwen3')!.rows;

/** Qwen3's published tokenizer (151,936 rows; <tool_call> is one token) and a compiler whose tool calls take `format`. */
export function qwen3Vocab(format: Parameters<typeof XGrammarCompiler.create>[2]): ConstrainedVocab {
  const files = publishedTokenizerFiles('qwen3');
  const tokenizer = HfTokenizer.fromFiles({ tokenizerJson: files.tokenizer, tokenizerConfig: files.tokenizerConfig }, QWEN3_ROWS);
  let built: Promise<XGrammarCompiler> | null = null;
  return { tokenizer, compiler: () => (built ??= XGrammarCompiler.create(tokenizer.grammarVocabulary(QWEN3_ROWS), QWEN3_ROWS, format)) };
}

/** A 2-layer random llama over Qwen3's vocabulary (qwen3Vocab). */
export function randomQwen3VocabModel(seed = 13): ModelDesc {
  return syntheticModelDesc({ arch: 'llama', seed, dims: { hidden: 32, intermediate: 48, layers: 2, heads: 4, kvHeads: 2, headDim: 8, vocab: QWEN3_ROWS } });
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
  /** This turn's own sampling settings over the run's (a logit bias, say). */
  sampling?: Partial<SamplingParams>;
  /** This turn's own token limit over the run's. */
  maxNewTokens?: number;
}

export interface ConstrainedRunOptions {
  temperature?: number;
  maxNewTokens?: number;
  mode?: EngineMode;
  speculation?: Speculation;
  sampling?: Partial<SamplingParams>;
  maxRows?: number;
  /** The vocabulary (default: the byte-level one of randomByteModel). */
  vocab?: ConstrainedVocab;
}

/** Sends each (prompt, constraint) as its own session in one engine; returns every reply in order. */
export async function runConstrained(runner: ModelRunner, turns: ConstrainedTurn[], options: ConstrainedRunOptions = {}): Promise<ConstrainedReply[]> {
  const engine = new EngineCore({
    runner,
    tokenizer: options.vocab?.tokenizer ?? byteTokenizer(),
    chatTemplate: template,
    manualSteps: true,
    constraints: await (options.vocab?.compiler() ?? byteCompiler()),
    speculation: options.speculation ?? 'off',
    ...(options.mode ? { mode: options.mode } : {}),
    ...(options.maxRows ? { maxRows: options.maxRows } : {}),
  });
  const ids = turns.map((t, i) =>
    engine.createSession({
      maxNewTokens: t.maxNewTokens ?? options.maxNewTokens ?? 1000,
      seed: t.seed ?? 100 + i,
      sampling: { temperature: options.temperature ?? 1, ...options.sampling, ...t.sampling, ...(t.constraint ? { constraint: t.constraint } : {}) },
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
