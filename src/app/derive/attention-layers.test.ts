// The model card's attention line for sliding-window models (gemma2, gemma3) and for the rest.
import { describe, expect, it } from 'vitest';
import { attentionLayersText, layerRanges } from './attention-layers';

describe('attentionLayersText', () => {
  it('says nothing for models whose every layer sees every position', () => {
    expect(attentionLayersText(undefined)).toBeNull();
    expect(attentionLayersText([0, 0, 0])).toBeNull();
  });

  it("names gemma3-1b's local and global layers as ranges", () => {
    const windows = Array.from({ length: 26 }, (_, l) => (l % 6 < 5 ? 512 : 0));
    expect(attentionLayersText(windows)).toBe('local (window 512): layers 0-4, 6-10, 12-16, 18-22, 24-25; global: 5, 11, 17, 23');
  });

  it('lists gemma2 alternating layers and a model with only local layers', () => {
    expect(attentionLayersText([4096, 0, 4096, 0])).toBe('local (window 4,096): layers 0, 2; global: 1, 3');
    expect(attentionLayersText([8, 8])).toBe('local (window 8): layers 0-1; no global layer');
    expect(layerRanges([])).toBe('');
  });
});
