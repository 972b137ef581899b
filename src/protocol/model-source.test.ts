// Tests for the shared model-source rules: which URLs may be fetched and how sources are named.
// The page's own checks (listings, dropped files) are tested in src/app/derive.
import { describe, expect, it } from 'vitest';
import { checkModelUrl, describeSource } from './model-source';

describe('checkModelUrl', () => {
  it('takes https or the page origin, and refuses other schemes and non-URLs', () => {
    expect(checkModelUrl(' https://example.org/m.gguf ')).toEqual({ ok: true, url: 'https://example.org/m.gguf' });
    expect(checkModelUrl('http://example.org/m.gguf')).toEqual({ ok: false, error: "only https:// URLs (or this page's own origin) can be loaded, not http://" });
    expect(checkModelUrl('http://localhost:4173/models/m.gguf', 'http://localhost:4173')).toEqual({ ok: true, url: 'http://localhost:4173/models/m.gguf' });
    expect(checkModelUrl('/models/m.gguf', 'http://localhost:4173')).toEqual({ ok: true, url: 'http://localhost:4173/models/m.gguf' });
    expect(checkModelUrl('http://localhost:9999/m.gguf', 'http://localhost:4173').ok).toBe(false);
    expect(checkModelUrl('file:///etc/passwd').ok).toBe(false);
    expect(checkModelUrl('model.gguf')).toMatchObject({ ok: false, error: expect.stringContaining('not a URL') });
  });
});

describe('describeSource', () => {
  it('names each kind of source', () => {
    expect(describeSource({ kind: 'embedded' })).toBe('the embedded model');
    expect(describeSource({ kind: 'huggingface', repoId: 'a/b', file: 'm.gguf' })).toBe('a/b/m.gguf');
    expect(describeSource({ kind: 'url', url: 'https://x.org/m.gguf' })).toBe('https://x.org/m.gguf');
  });
});
