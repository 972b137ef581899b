// A Gemma 3 model with the published tokenizer (262,144 embedding rows, <image_soft_token> past them,
// tokens that begin with U+FEFF), as a Hugging Face folder and as a GGUF: both load, chat greedily and stop where llama.cpp stops.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Llama, Token } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineCore } from '../engine/engine-core';
import type { ChatMessage } from '../engine/types';
import { CpuRunner } from '../reference/cpu-runner';
import { hfToGguf, type HfModelParts } from '../../tools/models/hf-to-gguf';
import { fileSource, folderOpener } from '../../tools/models/node-files';
import { hfFiles, syntheticModel } from './testing/synthetic-model-fixtures';
import { openGgufModel, openHfModel, type OpenedModel } from './open-model';
import { oracleLlama } from './testing/llama-cpp-oracle-fixtures';
import { publishedTokenizerFiles } from './testing/published-tokenizer-fixtures';

const ROWS = 262_144;
/** Gemma 3's end tokens as llama.cpp reads them: <eos>, <end_of_turn>, and </s> by its text. */
const GEMMA_ENDS = [1, 106, 212];
const CLOSE_S = 212;
const MAX_NEW_TOKENS = 8;
const CHAT: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Hello! 12345 😀' },
];

const llama = await oracleLlama();
const dir = mkdtempSync(join(tmpdir(), 'cohort-gemma3-published-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A random-weight gemma3 at the real vocabulary, with the published tokenizer files and generation_config. */
function gemmaParts(): HfModelParts {
  const parts = syntheticModel({
    arch: 'gemma3',
    seed: 3,
    tieWordEmbeddings: true,
    dims: { hidden: 64, intermediate: 128, layers: 2, heads: 2, kvHeads: 1, headDim: 32, vocab: ROWS },
  });
  const files = publishedTokenizerFiles('gemma3');
  Object.assign(parts.config, { bos_token_id: 2, eos_token_id: [1, 106], pad_token_id: 0 });
  return { ...parts, tokenizer: files.tokenizer, tokenizerConfig: files.tokenizerConfig, name: 'gemma3-published-tokenizer' };
}

/** llama.cpp's greedy continuation of `prompt`, ended where llama.cpp ends it (an end-of-generation token, kept) or at `max`. */
async function llamaCppGreedy(path: string, prompt: number[], max: number): Promise<number[]> {
  const model = await (llama as Llama).loadModel({ modelPath: path });
  const context = await model.createContext({ contextSize: 128, threads: 2 });
  const out: number[] = [];
  try {
    // Token by token: node-llama-cpp's evaluate() would end at an end token without yielding it.
    const sequence = context.getSequence();
    const generateNext = { token: true, options: { temperature: 0 } };
    let input: Array<Token | [Token, { generateNext: typeof generateNext }]> = prompt.map((id) => id as Token);
    input[input.length - 1] = [prompt[prompt.length - 1] as Token, { generateNext }];
    while (out.length < max) {
      const outputs = await sequence.controlledEvaluate(input);
      const token = outputs[input.length - 1]?.next?.token;
      if (token == null) throw new Error('llama.cpp returned no next token');
      out.push(Number(token));
      if (model.isEogToken(token)) break;
      input = [[token, { generateNext }]];
    }
  } finally {
    await context.dispose();
    await model.dispose();
  }
  return out;
}

/** Cohort's greedy chat turn on the CPU reference runner. */
async function cohortGreedy(opened: OpenedModel): Promise<{ prompt: number[]; output: number[]; finishReason: string }> {
  const runner = new CpuRunner(opened.desc, { blockSize: 16, numBlocks: 16, kvCacheType: 'f32' });
  const engine = new EngineCore({ runner, tokenizer: opened.tokenizer, chatTemplate: opened.chatTemplate });
  try {
    const session = engine.createSession({ maxNewTokens: MAX_NEW_TOKENS, systemPrompt: CHAT[0].content, sampling: { temperature: 0 } });
    engine.send(session, CHAT[1].content);
    const turn = await engine.waitForTurn(session);
    return { prompt: turn.promptTokenIds, output: turn.outputTokenIds, finishReason: turn.finishReason };
  } finally {
    await engine.dispose();
  }
}

describe.skipIf(!llama)('Gemma 3 with its published tokenizer, HF folder and GGUF, against llama.cpp', () => {
  const hfDir = join(dir, 'hf');
  const ggufPath = join(dir, 'model.gguf');
  /** The unmodified model's greedy tokens, and the step by which the crafted one ends on </s>. */
  let free: number[] = [];
  let stopStep = 0;

  beforeAll(async () => {
    const parts = gemmaParts();
    // Craft a stop llama.cpp and Cohort must both see: the unmodified model's first greedy token
    // that differs from its first (random tied models repeat), scaled by 1.5 into </s>'s (tied)
    // embedding row, makes </s> win the step that token would have won.
    const probe = join(dir, 'probe.gguf');
    writeFileSync(probe, hfToGguf(parts, 'f32'));
    const { tokenizer, chatTemplate } = await openGgufModel(fileSource(probe, 'probe.gguf'));
    const prompt = tokenizer.encodeChat!(chatTemplate, CHAT, true);
    free = await llamaCppGreedy(probe, prompt, MAX_NEW_TOKENS);
    rmSync(probe);
    expect(free).toHaveLength(MAX_NEW_TOKENS);
    stopStep = Math.max(0, free.findIndex((t) => t !== free[0]));
    const winner = free[stopStep];
    expect(GEMMA_ENDS).not.toContain(winner);
    const embedding = parts.tensors.get('model.embed_tokens.weight')!;
    const hidden = embedding.shape[1];
    for (let k = 0; k < hidden; k++) embedding.values[CLOSE_S * hidden + k] = 1.5 * embedding.values[winner * hidden + k];

    mkdirSync(hfDir, { recursive: true });
    for (const [name, bytes] of hfFiles(parts, 'f32')) writeFileSync(join(hfDir, name), bytes);
    writeFileSync(join(hfDir, 'generation_config.json'), JSON.stringify({ bos_token_id: 2, eos_token_id: [1, 106], pad_token_id: 0 }));
    writeFileSync(ggufPath, hfToGguf(parts, 'f32'));
  }, 300_000);

  it('the folder loads: <image_soft_token> (262144) set aside, the end tokens llama.cpp uses', async () => {
    const opened = await openHfModel(folderOpener(hfDir), 'gemma3');
    expect(opened.setAsideTokens).toEqual([{ id: 262_144, content: '<image_soft_token>' }]);
    expect(opened.endTokens).toEqual([{ id: 1, content: '<eos>' }, { id: 106, content: '<end_of_turn>' }, { id: 212, content: '</s>' }]);
  }, 120_000);

  it('the GGUF loads: tokens that begin with U+FEFF kept apart, the same end tokens', async () => {
    const opened = await openGgufModel(fileSource(ggufPath, 'model.gguf'));
    const tokenizer = opened.tokenizer as unknown as { idToToken(id: number): string | undefined };
    expect(tokenizer.idToToken(135_260)).toBe('\uFEFF//');
    expect(tokenizer.idToToken(715)).toBe('//');
    expect(opened.setAsideTokens).toEqual([]);
    expect(opened.endTokens.map((t) => t.id)).toEqual(GEMMA_ENDS);
  }, 120_000);

  it.each([['HF folder'], ['GGUF']])('%s: greedy chat on the CPU runner is llama.cpp\'s, ending on </s> where llama.cpp ends', async (layout) => {
    const opened = layout === 'GGUF' ? await openGgufModel(fileSource(ggufPath, 'model.gguf')) : await openHfModel(folderOpener(hfDir), 'gemma3');
    const ours = await cohortGreedy(opened);
    const theirs = await llamaCppGreedy(ggufPath, ours.prompt, MAX_NEW_TOKENS);
    // </s> wins at stopStep or earlier (its logit is 1.5 times that token's at every step), after
    // at least one ordinary token; the tokens before it are the unmodified model's.
    expect(theirs.length).toBeGreaterThan(1);
    expect(theirs.length).toBeLessThanOrEqual(stopStep + 1);
    expect(theirs).toEqual([...free.slice(0, theirs.length - 1), CLOSE_S]);
    expect(ours.output).toEqual(theirs);
    expect(ours.finishReason).toBe('eos');
  }, 300_000);
});
