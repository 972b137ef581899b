// A published shape's random GGUF read back by both engines bench:peer compares: Cohort's loader (tensor names,
// shapes, q4_K with its q4_0 fallback rows) and llama.cpp (node-llama-cpp, CPU): it loads and samples a token.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { getLlama, type Token } from 'node-llama-cpp';
import { loadGgufModel } from '../../src/model/gguf-loader';
import { fileSource } from './node-files';
import { matrixType, writePublishedShapeGguf } from './published-gguf';
import { MODEL_SHAPES } from './published-shapes';

const dir = mkdtempSync(join(tmpdir(), 'cohort-published-gguf-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('published-shape GGUF', () => {
  it('q4_K falls back to q4_0 only where rows are not whole super-blocks', () => {
    expect(matrixType('q4_K', 576)).toBe('q4_0');
    expect(matrixType('q4_K', 2048)).toBe('q4_K');
    expect(matrixType('q8_0', 576)).toBe('q8_0');
  });

  it('SmolLM2-135M q4_K: Cohort and llama.cpp both load it', async () => {
    const path = join(dir, 'smol-q4k.gguf');
    const bytes = writePublishedShapeGguf(path, 'SmolLM2-135M', 'q4_K');
    expect(statSync(path).size).toBe(bytes);
    const { desc } = await loadGgufModel(fileSource(path));
    const config = MODEL_SHAPES['SmolLM2-135M']!;
    expect(desc.config.numLayers).toBe(config.numLayers);
    expect(desc.config.vocabSize).toBe(config.vocabSize);
    expect(desc.tensors.get('model.layers.0.mlp.down_proj.weight')?.dtype).toBe('q4_K'); // rows of 1536
    expect(desc.tensors.get('model.layers.0.mlp.up_proj.weight')?.dtype).toBe('q4_0'); // rows of 576

    const llama = await getLlama({ gpu: false, build: 'never', skipDownload: true });
    const model = await llama.loadModel({ modelPath: path });
    try {
      expect(model.fileInfo.metadata.general.architecture).toBe('llama');
      expect(model.tokens.eos).toBe(258);
      const context = await model.createContext({ contextSize: 32, threads: 1 });
      const out = await context.getSequence().controlledEvaluate([1 as Token, [2 as Token, { generateNext: { token: true, options: { temperature: 0 } } }]]);
      const next = out[1]?.next?.token;
      expect(next).toBeGreaterThanOrEqual(0);
      expect(next).toBeLessThan(config.vocabSize);
      await context.dispose();
    } finally {
      await model.dispose();
    }
  }, 120_000);
});
