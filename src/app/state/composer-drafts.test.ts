// The composer's drafts over a Map-backed storage: kept per pane, forgotten when emptied or
// forgotten, and a storage that refuses leaves every call working with nothing kept.
import { describe, expect, it } from 'vitest';
import { createComposerDrafts, DRAFT_KEY_PREFIX, type DraftStorage } from './composer-drafts';

function mapStorage(): DraftStorage & { entries: Map<string, string> } {
  const entries = new Map<string, string>();
  return {
    entries,
    getItem: (key) => entries.get(key) ?? null,
    setItem: (key, value) => void entries.set(key, value),
    removeItem: (key) => void entries.delete(key),
  };
}

describe('composer drafts', () => {
  it('keeps each pane\'s text apart, reads it back, and forgets it when emptied or forgotten', () => {
    const storage = mapStorage();
    const drafts = createComposerDrafts(() => storage);
    expect(drafts.read('p1')).toBe('');
    drafts.write('p1', 'half a thought');
    drafts.write('p2', 'another pane');
    expect(drafts.read('p1')).toBe('half a thought');
    expect(drafts.read('p2')).toBe('another pane');
    // a second page over the same storage (a reload) reads the same drafts
    expect(createComposerDrafts(() => storage).read('p1')).toBe('half a thought');
    drafts.write('p1', '');
    expect(drafts.read('p1')).toBe('');
    expect(storage.entries.has(DRAFT_KEY_PREFIX + 'p1')).toBe(false);
    drafts.forget('p2');
    expect(storage.entries.size).toBe(0);
  });

  it('a storage that throws (disabled, full) or is missing keeps nothing and throws nothing', () => {
    const refusing: DraftStorage = {
      getItem: () => { throw new Error('SecurityError'); },
      setItem: () => { throw new Error('QuotaExceededError'); },
      removeItem: () => { throw new Error('SecurityError'); },
    };
    for (const drafts of [createComposerDrafts(() => refusing), createComposerDrafts(() => null), createComposerDrafts(() => { throw new Error('denied'); })]) {
      expect(() => drafts.write('p1', 'text')).not.toThrow();
      expect(drafts.read('p1')).toBe('');
      expect(() => drafts.forget('p1')).not.toThrow();
    }
  });
});
