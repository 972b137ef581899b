// export-gguf against llama.cpp itself (node-llama-cpp, CPU): the exported synthetic llama
// loads, tokenizes text to byte ids and chat markers to special ids, and generates.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { getLlama } from 'node-llama-cpp';
import { exportGguf } from './export-gguf';
import { writeSyntheticModel } from '../../src/model/testing/synthetic-model-fixtures';

let llamaPromise: ReturnType<typeof getLlama> | null = null;
const llamaOnce = () => (llamaPromise ??= getLlama({ gpu: false, build: 'never' }));

const dir = mkdtempSync(join(tmpdir(), 'cohort-export-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('export-gguf read by llama.cpp', () => {
  const hfDir = join(dir, 'hf');
  writeSyntheticModel({ arch: 'llama', format: 'hf', dtype: 'bf16', dir: hfDir, seed: 7 });

  // Every stored type, so llama.cpp also accepts the quantized blocks this project writes.
  for (const dtype of ['f32', 'q8_0', 'q4_0', 'q4_K', 'q6_K'] as const) {
    it(`${dtype}: loads, tokenizes bytes and specials, generates`, async () => {
      const path = join(dir, `model-${dtype}.gguf`);
      writeFileSync(path, await exportGguf(hfDir, dtype));
      const llama = await llamaOnce();
      const model = await llama.loadModel({ modelPath: path });
      try {
        const text = 'Note 0042: é\n';
        expect(model.tokenize(text)).toEqual([...new TextEncoder().encode(text)]);
        expect(model.tokenize('<|im_start|>user\n<|im_end|>', true)).toEqual([257, 117, 115, 101, 114, 10, 258]);
        expect(model.tokens.bos).toBe(256);
        expect(model.tokens.eos).toBe(258);
        const ctx = await model.createContext({ contextSize: 64 });
        const seq = ctx.getSequence();
        const generated: number[] = [];
        for await (const token of seq.evaluate(model.tokenize(text), { temperature: 0 })) {
          generated.push(token);
          if (generated.length === 4) break;
        }
        expect(generated.length).toBe(4);
        expect(generated.every((t) => t >= 0 && t < 259)).toBe(true);
        await ctx.dispose();
      } finally {
        await model.dispose();
      }
    }, 120_000);
  }
});
