// The capacity benchmark's pieces: llama.cpp's KV formula on published shapes, admission through the
// engine's scheduler on small pools, the pool's block count, the ratios against the target and the report.
import { describe, expect, it } from 'vitest';
import { kvBytesPerToken, KV_CACHE_TYPES } from '../src/model/kv-types';
import { sessionsThatFit } from '../src/app/model/kv-figures';
import { admitSessions, poolBlocks, PUBLISHED_KV_SHAPES } from './capacity';
import { admissionProblems, capacityRatios, ggmlRowSize, llamaCppKvBytesPerToken, llamaCppSessions, renderMarkdown, type CapacityReport, type CapacityRow } from './capacity-report';

const shape = (name: string) => PUBLISHED_KV_SHAPES.find((s) => s.name === name)!;

describe("llama.cpp's KV bytes per token", () => {
  it('is n_layer x (K row + V row) in ggml type sizes', () => {
    expect(ggmlRowSize('q8_0', 64)).toBe(68);
    expect(() => ggmlRowSize('q8_0', 48)).toThrow(/multiples of 32/);
    expect(llamaCppKvBytesPerToken('f32', 16, 8, 64)).toBe(65536); // Llama-3.2-1B
    expect(llamaCppKvBytesPerToken('f16', 16, 8, 64)).toBe(32768);
    expect(llamaCppKvBytesPerToken('q8_0', 16, 8, 64)).toBe(17408);
    expect(llamaCppKvBytesPerToken('q8_0', 32, 5, 64)).toBe(21760); // SmolLM2-360M: 10 blocks of 34 a row
    expect(llamaCppKvBytesPerToken('f16', 24, 2, 64)).toBe(12288); // Qwen2.5-0.5B
  });

  it("equals Cohort's pool bytes for every published shape and type", () => {
    for (const s of PUBLISHED_KV_SHAPES) {
      for (const type of KV_CACHE_TYPES) expect(kvBytesPerToken(type, s.numLayers, s.numKvHeads * s.headDim)).toBe(llamaCppKvBytesPerToken(type, s.numLayers, s.numKvHeads, s.headDim));
    }
  });

  it('shares its cells between sessions', () => {
    expect(llamaCppSessions(2 ** 30, 17408, 2048)).toBe(30); // 61,680 cells
    expect(llamaCppSessions(2 ** 30, 65536, 4096)).toBe(4);
  });
});

describe('admitSessions', () => {
  it("holds as many sessions at once as the card's arithmetic, and completes every one sent", () => {
    for (const [numBlocks, tokens] of [[257, 2048], [1000, 2048], [1000, 4096], [513, 256]] as const) {
      const fit = sessionsThatFit(numBlocks, 16, tokens);
      const run = admitSessions(numBlocks, 16, tokens, fit + 3);
      expect(run.peakHeld).toBe(fit);
      expect(run.completed).toBe(fit + 3);
    }
  });

  it('holds one fewer when the pool is one block short, and cannot exceed the sessions sent', () => {
    expect(admitSessions(256, 16, 2048, 5).peakHeld).toBe(1);
    expect(admitSessions(100_000, 16, 2048, 3).peakHeld).toBe(3);
  });
});

describe('poolBlocks', () => {
  it("gives planKvArena's block count for the budget", () => {
    const limits = { maxStorageBufferBindingSize: 2 ** 30, maxBufferSize: 2 ** 30, minStorageBufferOffsetAlignment: 256 };
    expect(poolBlocks(shape('Llama-3.2-1B'), 'f32', 2 ** 30, limits, 16)).toBe(1024); // 1 MiB a block (16 x 64 KiB)
    // one binding caps a layer: 16 MiB addresses 256 blocks of 64 KiB a layer
    expect(poolBlocks(shape('Llama-3.2-1B'), 'f32', 2 ** 30, { ...limits, maxStorageBufferBindingSize: 2 ** 24 }, 16)).toBe(256);
  });
});

function row(model: string, type: CapacityRow['type'], admitted: number[], extra: Partial<CapacityRow> = {}): CapacityRow {
  return {
    model, type, bytesPerToken: 1, llamaCppBytesPerToken: 1, llamaCppMeasuredBytesPerToken: null, numBlocks: 1, poolBytes: 1,
    sessions: admitted.map((a, i) => ({ tokens: 2048 * (i + 1), admitted: a, card: a, llamaCpp: a, requests: a + 2, completed: a + 2, preemptions: 0 })),
    ...extra,
  };
}

describe('the report', () => {
  const rows = [row('m', 'f32', [16, 8]), row('m', 'f16', [32, 16]), row('m', 'q8_0', [60, 30])];
  const report: CapacityReport = {
    date: '2026-12-03', commit: 'abc1234', budgetBytes: 2 ** 30, blockSize: 16, limits: { maxStorageBufferBindingSize: 2 ** 30, maxBufferSize: 2 ** 30 },
    shapes: [{ name: 'm', numLayers: 16, numKvHeads: 8, headDim: 64, source: 'config.json' }], rows, llamaCppNote: 'formula only', llamaCppCells: null,
  };

  it('gives each type over f32 per length, against 1.9x and 3.5x', () => {
    expect(capacityRatios(rows)).toEqual([
      { model: 'm', tokens: 2048, type: 'f16', ratio: 2, target: 1.9, met: true },
      { model: 'm', tokens: 4096, type: 'f16', ratio: 2, target: 1.9, met: true },
      { model: 'm', tokens: 2048, type: 'q8_0', ratio: 3.75, target: 3.5, met: true },
      { model: 'm', tokens: 4096, type: 'q8_0', ratio: 3.75, target: 3.5, met: true },
    ]);
    expect(capacityRatios([rows[0]!, row('m', 'q8_0', [50, 28])]).map((r) => r.met)).toEqual([false, true]); // 3.125x, then exactly 3.5x
  });

  it('names a run that left sessions out, a count off the card, and llama.cpp off its formula', () => {
    expect(admissionProblems(rows)).toEqual([]);
    const off = row('m', 'f16', [32, 16]);
    off.sessions[0] = { ...off.sessions[0]!, completed: 30, card: 33 };
    expect(admissionProblems([off])).toEqual(['m f16 2048: 4 of 34 sessions did not complete', 'm f16 2048: the scheduler held 32 at once, the card says 33']);
    const measured = (bytes: number) => admissionProblems([row('m', 'f16', [1], { llamaCppBytesPerToken: 32768, llamaCppMeasuredBytesPerToken: bytes })], 8192);
    expect(measured(32768.9)).toEqual([]); // within the log's rounding over 8192 cells (1.28 bytes)
    expect(measured(32770)).toHaveLength(1);
  });

  it('renders the table with sessions, ratios and llama.cpp beside them', () => {
    const md = renderMarkdown(report);
    expect(md).toContain('| m | q8_0 | 1 | 1 | 60 (3.75x) | 60 | 30 (3.75x) | 30 |');
    expect(md).toContain('f16 / f32: at least 2.00x (target 1.9x); q8_0 / f32: at least 3.75x (target 3.5x). Every model and length meets both.');
    expect(md).toContain('Admission check: every run completed all its sessions');
    expect(renderMarkdown({ ...report, rows: [rows[0]!, row('m', 'f16', [30, 15]), rows[2]!] })).toContain('Missed: m f16 2048: 1.88x; m f16 4096: 1.88x.');
  });
});
