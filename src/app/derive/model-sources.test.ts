// Tests for model-source checks: repo ids, HF listings, https-only URLs, dropped file sets and
// byte formatting.
import { describe, expect, it } from 'vitest';
import { isRepoId } from '../../protocol/model-source';
import { checkLocalFiles, formatBytes, listingHttpError, parseRepoListing, repoListingUrl } from './model-sources';

describe('Hugging Face repos', () => {
  it('accepts owner/name ids only', () => {
    expect(isRepoId('HuggingFaceTB/SmolLM2-135M-Instruct')).toBe(true);
    expect(isRepoId(' Qwen/Qwen2.5-0.5B-Instruct-GGUF ')).toBe(true);
    expect(isRepoId('SmolLM2')).toBe(false);
    expect(isRepoId('a/b/c')).toBe(false);
    expect(isRepoId('https://huggingface.co/a/b')).toBe(false);
    expect(repoListingUrl('a/b')).toBe('https://huggingface.co/api/models/a/b?blobs=true');
  });

  it('lists GGUF files with sizes and recognises the HF layout', () => {
    const listing = parseRepoListing({
      id: 'a/b',
      siblings: [{ rfilename: 'model-q8_0.gguf', size: 1000 }, { rfilename: 'config.json' }, { rfilename: 'tokenizer.json' }, { rfilename: 'model.safetensors' }, { rfilename: 'a-f16.GGUF' }, { nope: 1 }],
    });
    expect(listing.ggufFiles).toEqual([{ name: 'a-f16.GGUF' }, { name: 'model-q8_0.gguf', size: 1000 }]);
    expect(listing.hasHfLayout).toBe(true);
    expect(listing.numFiles).toBe(5);
    expect(parseRepoListing({ siblings: [{ rfilename: 'config.json' }] }).hasHfLayout).toBe(false);
  });

  it('refuses an answer without a file list', () => {
    expect(() => parseRepoListing({ error: 'Repository not found' })).toThrow(/no file list/);
    expect(() => parseRepoListing(null)).toThrow(/no file list/);
  });
});

describe('listingHttpError', () => {
  it('says what a listing status means for the typed repo', () => {
    expect(listingHttpError(' a/b ', 404)).toContain('no repo "a/b"');
    expect(listingHttpError('a/b', 401)).toContain('private or gated');
    expect(listingHttpError('a/b', 429)).toContain('rate-limiting');
    expect(listingHttpError('a/b', 500)).toContain('HTTP 500');
  });
});

describe('checkLocalFiles', () => {
  it('accepts one GGUF or an HF folder and explains anything else', () => {
    expect(checkLocalFiles(['m.gguf'])).toEqual({ ok: true });
    expect(checkLocalFiles(['model/config.json', 'model/tokenizer.json', 'model/model.safetensors'])).toEqual({ ok: true });
    expect(checkLocalFiles(['a.gguf', 'b.gguf'])).toMatchObject({ ok: false, error: expect.stringContaining('2 .gguf') });
    expect(checkLocalFiles(['cat.png'])).toMatchObject({ ok: false, error: expect.stringContaining('not a model') });
    expect(checkLocalFiles([])).toMatchObject({ ok: false });
  });
});

describe('formatBytes', () => {
  it('picks a readable unit', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.50 KB');
    expect(formatBytes(5 * 1024 * 1024)).toBe('5.00 MB');
    expect(formatBytes(300 * 1024 * 1024)).toBe('300 MB');
    expect(formatBytes(-1)).toBe('?');
  });
});
