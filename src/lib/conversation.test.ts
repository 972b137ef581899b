// chat.completions on the embedded model (cohort-tiny, in-process EngineHost on CpuRunner): NIAH
// streams batched == solo with each its own code, a resent conversation found in the cache, and a
// predicted reply (Predicted Outputs) verified in a few steps with every prediction token accepted.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { EngineHost } from '../host/engine-host';
import { CpuRunner } from '../reference/cpu-runner';
import { makeNiahSuite, NIAH_MAX_NEW_TOKENS, niahLeaks, niahPassed } from '../protocol/niah';
import { CohortEngine } from './engine';

const MODEL_DIR = new URL('../../public/models/cohort-tiny/', import.meta.url);
let engine: CohortEngine;
let host: EngineHost;

beforeAll(async () => {
  const names = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json'];
  const files = names.map((name) => new File([readFileSync(new URL(name, MODEL_DIR))], name));
  // CpuRunner steps synchronously, so an in-process host needs no worker thread
  host = new EngineHost({ makeRunner: async (desc) => new CpuRunner(desc, { numBlocks: 513 }), embeddedModelUrl: MODEL_DIR.href });
  engine = new CohortEngine(host);
  await engine.load({ kind: 'files', files });
});

describe('the embedded model through chat.completions', () => {
  it('8 concurrent NIAH streams each return their own code, token for token their solo runs', async () => {
    const cases = makeNiahSuite(17, 8, 300, 700);
    const params = cases.map((c) => ({ messages: [{ role: 'user' as const, content: c.prompt }], max_tokens: NIAH_MAX_NEW_TOKENS }));
    const solo: string[] = [];
    for (const p of params) solo.push((await engine.chat.completions.create(p)).choices[0]!.message.content!);
    const together = await Promise.all(
      params.map(async (p) => {
        let text = '';
        for await (const chunk of await engine.chat.completions.create({ ...p, stream: true })) text += chunk.choices[0]?.delta.content ?? '';
        return text;
      }),
    );
    expect(together).toEqual(solo);
    const codes = cases.map((c) => c.code);
    cases.forEach((c, i) => {
      expect(niahPassed(together[i]!, c.code), `case ${i}: ${together[i]}`).toBe(true);
      expect(niahLeaks(together[i]!, c.code, codes)).toEqual([]);
    });
  });

  it('verifies a predicted reply in a few steps: every prediction token accepted, none rejected, the same reply', async () => {
    const [c] = makeNiahSuite(5, 1, 300, 400);
    const params = { messages: [{ role: 'user' as const, content: c!.prompt }], max_tokens: NIAH_MAX_NEW_TOKENS };
    const plain = await engine.chat.completions.create({ ...params, speculation: 'off' });
    const reply = plain.choices[0]!.message.content!;
    // CpuRunner's fed token costs about a decode step: the step-time budget would leave no room for drafts
    await host.setStepBudget(null);
    const predicted = await engine.chat.completions.create({ ...params, speculation: { max_draft_tokens: 8 }, prediction: { type: 'content', content: reply } });
    await host.setStepBudget({ multiple: 1.5 });
    expect(predicted.choices[0]!.message.content).toBe(reply);
    // the reply's own tokens, re-encoded; the completion also counts its EOS, which no prediction holds
    expect(predicted.usage.completion_tokens_details).toEqual({ accepted_prediction_tokens: plain.usage.completion_tokens - 1, rejected_prediction_tokens: 0 });
    expect(predicted.usage.timings).toMatchObject({ draft_acceptance_rate: 1 });
    expect(predicted.usage.timings.steps).toBeLessThan(plain.usage.timings.steps / 2);
    expect(predicted.usage.timings.tokens_per_row_step).toBeGreaterThan(3);
    expect(plain.usage.timings).toMatchObject({ tokens_per_row_step: 1, drafted_tokens: 0, draft_acceptance_rate: null });
  });

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
