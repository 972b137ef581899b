// Whole random-weight models at the published vocabularies, one per family this project runs (gemma2 with the Gemma 3
// tokenizer), HF folder and GGUF, against llama.cpp: prompt ids, greedy tokens and log-probability gaps (CpuRunner), greedy tokens (GpuRunner).
// npm test runs the Llama 2 case (its 32k vocabulary is the cheapest); the full set runs with COHORT_PUBLISHED_MODELS=1 (minutes).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getLlama, LlamaLogLevel, type Llama, type Token } from 'node-llama-cpp';
import { afterAll, describe, expect, it } from 'vitest';
import type { ChatMessage, ModelRunner } from '../../src/engine/types';
import { GpuRunner } from '../../src/gpu/gpu-runner';
import { testPipelineCache } from '../../src/gpu/testing/kernel-harness';
import { kernelSettingFromEnv, loadShader } from '../../src/gpu/testing/node-gpu';
import { CpuRunner } from '../../src/reference/cpu-runner';
import { argmax } from '../../src/reference/sample';
import { fileSource, folderOpener } from './node-files';
import type { Arch } from '../../src/model/desc';
import { openGgufModel, openHfModel, type OpenedModel } from '../../src/model/open-model';
import { publishedModelParts, writePublishedModel } from '../../src/model/testing/published-model-fixtures';
import { PUBLISHED_TOKENIZERS, type PublishedTokenizer } from '../../src/model/testing/published-tokenizer-fixtures';

const FULL = process.env.COHORT_PUBLISHED_MODELS === '1';
const NUM_GENERATED = 8;
/** f32 weights on both sides, sums in different orders: log-probabilities agree to about this. */
const LOGPROB_TOLERANCE = 1e-2;
const CHAT: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Hello! 12345 😀 naïve 中文' },
];

const llama: Llama | null = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.disabled }).catch(() => null);
const dir = mkdtempSync(join(tmpdir(), 'cohort-published-models-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cases: Array<{ name: string; published: PublishedTokenizer; arch: Arch }> = PUBLISHED_TOKENIZERS.map((published) => ({
  name: `${published.arch} with the ${published.family} tokenizer`,
  published,
  arch: published.arch,
}));
cases.push({ name: 'gemma2 with the gemma3 tokenizer', published: PUBLISHED_TOKENIZERS[0], arch: 'gemma2' });
const selected = FULL ? cases : cases.filter((c) => c.published.family === 'llama2');

/** llama.cpp's greedy tokens after `prompt`, with each step's next-token probabilities (no stop at end tokens). */
async function llamaCppSteps(path: string, prompt: number[]): Promise<Array<{ token: number; probabilities: Map<Token, number> }>> {
  const model = await (llama as Llama).loadModel({ modelPath: path });
  const context = await model.createContext({ contextSize: 128, threads: 2 });
  const steps: Array<{ token: number; probabilities: Map<Token, number> }> = [];
  try {
    const sequence = context.getSequence();
    const generateNext = { token: true, probabilities: true, options: { temperature: 0 } };
    let input: Array<Token | [Token, { generateNext: typeof generateNext }]> = prompt.map((id) => id as Token);
    input[input.length - 1] = [prompt[prompt.length - 1] as Token, { generateNext }];
    while (steps.length < NUM_GENERATED) {
      const outputs = await sequence.controlledEvaluate(input);
      const next = outputs[input.length - 1]?.next;
      if (next?.token == null || !next.probabilities) throw new Error('llama.cpp returned no next token');
      steps.push({ token: Number(next.token), probabilities: next.probabilities });
      input = [[next.token, { generateNext }]];
    }
  } finally {
    await context.dispose();
    await model.dispose();
  }
  return steps;
}

/** Teacher-forced on llama.cpp's tokens: how many of our argmax tokens match, and the largest log-probability gap. */
function teacherForced(opened: OpenedModel, prompt: number[], steps: Array<{ token: number; probabilities: Map<Token, number> }>) {
  // gemma's local layers: every position in the one pool, the window applied by masking (one block table per row).
  const runner = new CpuRunner(opened.desc, { blockSize: 16, numBlocks: 16, kvCacheType: 'f32', windowKv: false });
  const blockTable = Int32Array.of(1, 2, 3, 4, 5, 6, 7, 8);
  const greedy = { temperature: 0, topK: 0, topP: 1, seed: 0 };
  let fed = Int32Array.from(prompt);
  let pos = 0;
  let equal = 0;
  let maxGap = 0;
  steps.forEach((step, i) => {
    const { logits } = runner.executeDetailed({ stepIndex: i, rows: [{ sessionId: 'a', tokenIds: fed, startPos: pos, blockTables: [blockTable], sampling: greedy, sample: true }] });
    pos += fed.length;
    const ours = argmax(logits);
    if (ours === step.token) equal++;
    const max = logits[ours];
    const logSumExp = max + Math.log(logits.reduce((s, l) => s + Math.exp(l - max), 0));
    for (const [token, p] of step.probabilities) if (p > 1e-4) maxGap = Math.max(maxGap, Math.abs(Math.log(p) - (logits[Number(token)] - logSumExp)));
    fed = Int32Array.of(step.token);
  });
  runner.dispose();
  return { equal, maxGap };
}

/** Teacher-forced on llama.cpp's tokens: how many tokens `runner` samples greedily as llama.cpp did. */
async function greedyEqual(runner: ModelRunner, prompt: number[], tokens: number[]): Promise<number> {
  const blockTable = Int32Array.of(1, 2, 3, 4, 5, 6, 7, 8);
  const greedy = { temperature: 0, topK: 0, topP: 1, seed: 0 };
  let fed = Int32Array.from(prompt);
  let pos = 0;
  let equal = 0;
  for (const [i, token] of tokens.entries()) {
    const { sampledIds } = await runner.execute({ stepIndex: i, rows: [{ sessionId: 'a', tokenIds: fed, startPos: pos, blockTables: [blockTable], sampling: greedy, sample: true }] });
    pos += fed.length;
    if (sampledIds[0] === token) equal++;
    fed = Int32Array.of(token);
  }
  return equal;
}

describe.skipIf(!llama).each(selected)('$name: HF folder and GGUF against llama.cpp', ({ published, arch }) => {
  it('same prompt ids in both layouts; greedy tokens and log-probabilities as llama.cpp\'s', async () => {
    const caseDir = join(dir, `${arch}-${published.family}`);
    const { hfDir, ggufPath } = writePublishedModel(publishedModelParts(published, arch), published.generationEos, caseDir);
    const hf = await openHfModel(folderOpener(hfDir), arch);
    const gguf = await openGgufModel(fileSource(ggufPath, 'model.gguf'));
    const prompt = gguf.tokenizer.encodeChat!(gguf.chatTemplate, CHAT, true);
    expect(hf.tokenizer.encodeChat!(hf.chatTemplate, CHAT, true)).toEqual(prompt);
    const steps = await llamaCppSteps(ggufPath, prompt);
    for (const [layout, opened] of [['HF', hf], ['GGUF', gguf]] as const) {
      const { equal, maxGap } = teacherForced(opened, prompt, steps);
      console.log(`${arch} + ${published.family} (${layout}): ${equal}/${NUM_GENERATED} teacher-forced greedy tokens equal, max |dlogp| ${maxGap.toExponential(2)}`);
      expect(equal).toBe(NUM_GENERATED);
      expect(maxGap).toBeLessThan(LOGPROB_TOLERANCE);
    }
    // GpuRunner (npm webgpu, SwiftShader) on the GGUF: the same greedy tokens, teacher-forced.
    const pipelines = await testPipelineCache();
    const gpu = await GpuRunner.create({ device: pipelines.device, pipelines, model: gguf.desc, shaderSource: loadShader, blockSize: 16, numBlocks: 16, maxTokensPerStep: 64, maxRows: 1, maxContext: 128, windowKv: false, kernels: kernelSettingFromEnv() });
    try {
      const equal = await greedyEqual(gpu, prompt, steps.map((step) => step.token));
      console.log(`${arch} + ${published.family} (GGUF, GpuRunner): ${equal}/${NUM_GENERATED} teacher-forced greedy tokens equal`);
      expect(equal).toBe(NUM_GENERATED);
    } finally {
      gpu.dispose();
    }
    rmSync(caseDir, { recursive: true, force: true });
  }, 600_000);
});
