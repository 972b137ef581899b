// A resent conversation on the embedded model (cohort-tiny, in-process EngineHost on CpuRunner):
// the second turn finds the first turn's prompt and answer in the prefix cache, not only its prompt.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { EngineHost } from '../host/engine-host';
import { CpuRunner } from '../reference/cpu-runner';
import { CohortEngine } from './engine';

const MODEL_DIR = new URL('../../public/models/cohort-tiny/', import.meta.url);
let engine: CohortEngine;

beforeAll(async () => {
  const names = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json'];
  const files = names.map((name) => new File([readFileSync(new URL(name, MODEL_DIR))], name));
  // CpuRunner steps synchronously, so an in-process host needs no worker thread
  engine = new CohortEngine(new EngineHost({ makeRunner: async (desc) => new CpuRunner(desc, { numBlocks: 129 }), embeddedModelUrl: MODEL_DIR.href }));
  await engine.load({ kind: 'files', files });
});

describe('a resent conversation', () => {
  it('reuses the blocks of the earlier prompt and answer', async () => {
    // sized so the answer crosses a block boundary: its own tokens must match for the count below
    const system = { role: 'system' as const, content: 'Note 0000: this paragraph is unrelated padding and does not contain it.' };
    const user = { role: 'user' as const, content: 'IMPORTANT: the secret code is MAPLE-7890. Question: what is the secret code? Answer:' };
    const first = await engine.chat.completions.create({ messages: [system, user], max_tokens: 24 });
    const answer = first.choices[0]!.message.content!;
    expect(answer).toContain('MAPLE-7890');
    const second = await engine.chat.completions.create({ messages: [system, user, { role: 'assistant', content: answer }, { role: 'user', content: 'Again?' }], max_tokens: 8 });
    const blockSize = engine.models[0]!.blockSize;
    const promptBlocks = Math.floor(first.usage.prompt_tokens / blockSize) * blockSize;
    // every token the first turn computed (all but its last sampled one) ends up in full blocks
    const computedBlocks = Math.floor((first.usage.prompt_tokens + first.usage.completion_tokens - 1) / blockSize) * blockSize;
    expect(computedBlocks).toBeGreaterThan(promptBlocks);
    expect(second.usage.prompt_tokens_details.cached_tokens).toBe(computedBlocks);
  });
});
