// Test support: NIAH-style turns on the embedded cohort-tiny through the whole engine, with and
// without speculation, on any ModelRunner (the CPU and GPU speculative-decoding tests share it).
// Not the NIAH bench (src/protocol's builders): src/reference may not import src/protocol.
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { folderOpener } from '../../../tools/models/node-files';
import { EngineCore } from '../../engine/engine-core';
import type { EngineMode, StepEvent, TokenLogprob } from '../../engine/events';
import type { Speculation } from '../../engine/speculation';
import type { ChatTemplate, ModelRunner, SamplingParams, Tokenizer } from '../../engine/types';
import type { ModelDesc } from '../../model/desc';
import { loadHfModel } from '../../model/hf-loader';

/** cohort-tiny's tokens are bytes; 257/258 open and close a chat message, 258 is EOS. */
const IM_START = 257;
const IM_END = 258;
const tokenizer: Tokenizer = {
  eosTokenIds: [IM_END],
  encode: (text) => Array.from(new TextEncoder().encode(text)),
  decode: (ids) => new TextDecoder().decode(Uint8Array.from(Array.from(ids).filter((id) => id < 256))),
};
const template: ChatTemplate = { render: () => '' }; // turns are sent as token ids
/** DESIGN.md's NIAH protocol, written out here. */
const NIAH_MAX_NEW_TOKENS = 24;
const line = (i: number): string => `Note ${String(i).padStart(4, '0')}: this paragraph is unrelated padding and does not contain the answer.`;
const lines = (from: number, n: number): string[] => Array.from({ length: n }, (_, i) => line(from + i));

export function niahPrompt(numLines: number, needleLine: number, code: string): string {
  return [...lines(0, needleLine), '', `IMPORTANT: the secret code is ${code}.`, '', ...lines(needleLine, numLines - needleLine), 'Question: what is the secret code? Answer:'].join('\n');
}

/** One user message and the assistant's turn opened, as cohort-tiny's template renders them. */
export function chatTokens(user: string): number[] {
  return [IM_START, ...tokenizer.encode(`user\n${user}`), IM_END, 10, IM_START, ...tokenizer.encode('assistant\n')];
}

export function loadCohortTiny(): Promise<ModelDesc> {
  return loadHfModel(folderOpener(fileURLToPath(new URL('../../../public/models/cohort-tiny/', import.meta.url))), { source: 'cohort-tiny' });
}

export interface Answer {
  text: string;
  ids: number[];
  /** Steps whose rows decoded for this turn (verify rows included). */
  decodeSteps: number;
  numDrafted: number;
  numAccepted: number;
  /** The turn's tokens' logprobs as the step events carried them (sessions that asked). */
  logprobs: TokenLogprob[];
}

/** What else answer() may set: sampling fields on top of its own, the engine's mode. */
export interface AnswerOptions {
  sampling?: Partial<SamplingParams>;
  mode?: EngineMode;
}

/** Answers every prompt in one engine over a fresh runner (top-k 20, top-p 0.95, seeds 7, 8, ...); checks the pool ends empty. */
export async function answer(makeRunner: () => Promise<ModelRunner> | ModelRunner, prompts: number[][], speculation: Speculation, temperature = 0, options: AnswerOptions = {}): Promise<{ answers: Answer[]; numSteps: number; wallMs: number }> {
  const runner = await makeRunner();
  const engine = new EngineCore({ runner, tokenizer, chatTemplate: template, manualSteps: true, maxTokensPerStep: Math.min(2048, runner.maxTokensPerStep), speculation, ...(options.mode ? { mode: options.mode } : {}) });
  const ids = prompts.map((_, i) => engine.createSession({ maxNewTokens: NIAH_MAX_NEW_TOKENS, sampling: { temperature, topK: 20, topP: 0.95, ...options.sampling }, seed: 7 + i }));
  const answers: Answer[] = ids.map(() => ({ text: '', ids: [], decodeSteps: 0, numDrafted: 0, numAccepted: 0, logprobs: [] }));
  engine.subscribe((e: StepEvent) => {
    for (const row of e.rows) {
      if (row.newLogprobs) answers[ids.indexOf(row.sessionId)].logprobs.push(...row.newLogprobs);
      if (row.kind !== 'decode') continue;
      const a = answers[ids.indexOf(row.sessionId)];
      a.decodeSteps++;
      a.numDrafted += row.numDrafted ?? 0;
      a.numAccepted += row.numAccepted ?? 0;
    }
  });
  try {
    ids.forEach((id, i) => engine.send(id, prompts[i]));
    let numSteps = 0;
    const start = performance.now();
    while (await engine.step()) numSteps++;
    const wallMs = performance.now() - start;
    for (const [i, id] of ids.entries()) {
      const result = await engine.waitForTurn(id);
      answers[i].text = result.text;
      answers[i].ids = result.outputTokenIds;
    }
    expect(engine.pool.stats().numUsed).toBe(0);
    return { answers, numSteps, wallMs };
  } finally {
    runner.dispose();
  }
}

/** One line of figures for SPEC_REPORT: steps, decode steps per answer, tokens, drafts accepted (and the steps' wall time when given). */
export function report(label: string, answers: Answer[], numSteps: number, wallMs?: number): string {
  const drafted = answers.reduce((n, a) => n + a.numDrafted, 0);
  const acceptedCount = answers.reduce((n, a) => n + a.numAccepted, 0);
  const perAnswer = answers.map((a) => a.decodeSteps).join(',');
  return `${label}: steps ${numSteps}, decode steps per answer [${perAnswer}], tokens ${answers.map((a) => a.ids.length).join(',')}, accepted ${acceptedCount}/${drafted}${wallMs === undefined ? '' : `, ${wallMs.toFixed(0)} ms`}`;
}
