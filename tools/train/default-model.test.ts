// The embedded default model held to its training-time references: our tokenizer and llama.cpp
// (F32 GGUF) tokenize the held-out NIAH prompts alike, and llama.cpp, CpuRunner and PyTorch agree.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getLlama, LlamaLogLevel, type Llama, type Token } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatTemplateFromTokenizerConfig } from '../../src/model/chat-template';
import { loadGgufModel } from '../../src/model/gguf-loader';
import { bytesSource } from '../../src/model/byte-source';
import { HfTokenizer } from '../../src/model/tokenizer';
import { CpuRunner } from '../../src/reference/cpu-runner';

const MODEL_DIR = 'public/models/cohort-tiny';
const IM_END = 258;
const MAX_NEW = 24;
/** How many held-out prompts each check covers: 12 in npm test, all 50 with `npm run check:model`. */
const NUM_CHECKED = Number(process.env.COHORT_MODEL_CHECKS ?? 12);
const CHECK_TIMEOUT_MS = Math.max(120_000, NUM_CHECKED * 10_000);

interface Reference {
  content: string;
  code: string;
  prompt_ids: number[];
  output_ids: number[];
}

const refs = JSON.parse(readFileSync('tools/train/eval/niah-reference.json', 'utf8')) as Reference[];
const readJson = (name: string) => JSON.parse(readFileSync(join(MODEL_DIR, name), 'utf8')) as Record<string, unknown>;
let llama: Llama;

beforeAll(async () => {
  llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error, progressLogs: false });
});
afterAll(async () => {
  await llama?.dispose();
});

describe('embedded default model', () => {
  it('ships its files', () => {
    for (const f of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json', 'cohort-tiny-f32.gguf', 'cohort-tiny-q8_0.gguf', 'README.md']) {
      expect(existsSync(join(MODEL_DIR, f)), f).toBe(true);
    }
    expect(refs.length).toBeGreaterThanOrEqual(50);
  });

  it('tokenizes the NIAH prompts to the training ids, in our tokenizer and in llama.cpp', async () => {
    const tokenizer = HfTokenizer.fromFiles({ tokenizerJson: readJson('tokenizer.json'), tokenizerConfig: readJson('tokenizer_config.json') });
    const template = chatTemplateFromTokenizerConfig(readJson('tokenizer_config.json'));
    const model = await llama.loadModel({ modelPath: join(MODEL_DIR, 'cohort-tiny-f32.gguf') });
    try {
      for (const ref of refs) {
        const messages = [{ role: 'user' as const, content: ref.content }];
        expect(tokenizer.encodeChat!(template, messages, true)).toEqual(ref.prompt_ids);
        expect(Array.from(model.tokenize(template.render(messages, true), true))).toEqual(ref.prompt_ids);
      }
    } finally {
      await model.dispose();
    }
  });

  it(`llama.cpp's greedy answers (F32 GGUF) match PyTorch's on ${NUM_CHECKED} held-out NIAH prompts`, async () => {
    const model = await llama.loadModel({ modelPath: join(MODEL_DIR, 'cohort-tiny-f32.gguf') });
    const context = await model.createContext({ contextSize: 2560, batchSize: 512, threads: 2, flashAttention: false, experimentalKvCacheKeyType: 'F32', experimentalKvCacheValueType: 'F32' });
    const sequence = context.getSequence();
    try {
      for (const ref of refs.slice(0, NUM_CHECKED)) {
        await sequence.clearHistory();
        const generateNext = { token: true, options: { temperature: 0 } };
        let input: Array<Token | [Token, { generateNext: typeof generateNext }]> = ref.prompt_ids.map((id) => id as Token);
        input[input.length - 1] = [ref.prompt_ids.at(-1) as Token, { generateNext }];
        const out: number[] = [];
        while (out.length < MAX_NEW && out.at(-1) !== IM_END) {
          const outputs = await sequence.controlledEvaluate(input);
          const next = outputs[input.length - 1]?.next?.token;
          if (next == null) throw new Error('llama.cpp returned no token');
          out.push(next);
          input = [[next, { generateNext }]];
        }
        expect(out, ref.code).toEqual(ref.output_ids);
      }
    } finally {
      await context.dispose();
      await model.dispose();
    }
  }, CHECK_TIMEOUT_MS);

  it(`CpuRunner's greedy answers (F32 GGUF) match PyTorch's on ${NUM_CHECKED} held-out NIAH prompts`, async () => {
    const { desc } = await loadGgufModel(bytesSource('cohort-tiny-f32.gguf', readFileSync(join(MODEL_DIR, 'cohort-tiny-f32.gguf'))));
    // f32 KV: held to PyTorch's f32 attention
    const runner = new CpuRunner(desc, { numBlocks: 257, kvCacheType: 'f32' });
    const blocks = Int32Array.from({ length: 256 }, (_, i) => i + 1);
    const sampling = { temperature: 0, topK: 0, topP: 1, seed: 0 };
    for (const ref of refs.slice(0, NUM_CHECKED)) {
      const out: number[] = [];
      let tokens = Int32Array.from(ref.prompt_ids);
      let pos = 0;
      while (out.length < MAX_NEW && out.at(-1) !== IM_END) {
        const { sampledIds } = await runner.execute({ stepIndex: out.length, rows: [{ sessionId: 's', tokenIds: tokens, startPos: pos, blockTables: [blocks], sampling, sample: true }] });
        pos += tokens.length;
        out.push(sampledIds[0]);
        tokens = Int32Array.of(sampledIds[0]);
      }
      expect(out, ref.code).toEqual(ref.output_ids);
    }
    runner.dispose();
  }, CHECK_TIMEOUT_MS);
});
