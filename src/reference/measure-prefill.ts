// Measures how long the CPU reference takes to prefill a long prompt through a ~5M-parameter
// llama model, then decode a few tokens. A manual check (`npx tsx src/reference/measure-prefill.ts`), not a test.
import { CpuRunner } from './cpu-runner';
import { randomModel } from './random-model';

const numPromptTokens = Number(process.argv[2] ?? 1300);
const numDecodeTokens = 16;
const model = randomModel({
  arch: 'llama', vocabSize: 259, hiddenSize: 256, intermediateSize: 768, numLayers: 6, numHeads: 8, numKvHeads: 4, headDim: 32,
});
let numParams = 0;
for (const t of model.tensors.values()) numParams += t.shape.reduce((a, b) => a * b, 1);

const runner = new CpuRunner(model, { maxTokensPerStep: numPromptTokens });
const blockTable = Int32Array.from({ length: Math.ceil((numPromptTokens + numDecodeTokens) / runner.blockSize) }, (_, i) => i + 1);
const greedy = { temperature: 0, topK: 0, topP: 1, seed: 0 };
const prompt = Int32Array.from({ length: numPromptTokens }, (_, i) => (i * 7 + 3) % 259);

const cpuStart = process.cpuUsage();
const prefillStart = performance.now();
let next = runner.executeDetailed({ stepIndex: 0, rows: [{ sessionId: 's', tokenIds: prompt, startPos: 0, blockTable, sampling: greedy, sample: true }] }).sampledIds[0];
const prefillMs = performance.now() - prefillStart;
// CPU time as well as wall time: on a busy machine the wall clock mostly measures waiting.
const prefillCpu = process.cpuUsage(cpuStart);
const prefillCpuMs = (prefillCpu.user + prefillCpu.system) / 1000;

const decodeStart = performance.now();
for (let i = 0; i < numDecodeTokens; i++) {
  const rows = [{ sessionId: 's', tokenIds: Int32Array.of(next), startPos: numPromptTokens + i, blockTable, sampling: greedy, sample: true }];
  next = runner.executeDetailed({ stepIndex: 1 + i, rows }).sampledIds[0];
}
const decodeMs = performance.now() - decodeStart;

console.log(
  `${(numParams / 1e6).toFixed(2)}M parameters: prefill of ${numPromptTokens} tokens ${(prefillMs / 1000).toFixed(1)} s ` +
    `wall, ${(prefillCpuMs / 1000).toFixed(1)} s CPU ` +
    `(${((numPromptTokens / prefillMs) * 1000).toFixed(0)} tokens/s); decode ${(decodeMs / numDecodeTokens).toFixed(1)} ms/token`,
);
