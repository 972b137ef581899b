// The text in each pane's composer, kept in localStorage so a reload (or a second one) never loses
// a message not sent yet. Not the pane's record: a draft is saved on every keystroke, last writer wins.
// localStorage rather than the records' IndexedDB: the composer reads it synchronously as it mounts.

/** What the drafts need of a Storage (localStorage in the page, a Map in tests). */
export interface DraftStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export interface ComposerDrafts {
  /** The pane's unsent text ('' when none). */
  read(paneId: string): string;
  /** Keeps the text; an empty text forgets the draft. */
  write(paneId: string, text: string): void;
  /** The pane was closed (here or in another tab), or its message sent. */
  forget(paneId: string): void;
}

export const DRAFT_KEY_PREFIX = 'cohort.draft.';

/**
 * A storage that refuses (disabled, private mode, full) leaves the composer working as before, in
 * memory: the page already says once that its storage refused (StorageNotice), so no second notice.
 */
export function createComposerDrafts(storage: () => DraftStorage | null): ComposerDrafts {
  const attempt = <T>(use: (s: DraftStorage) => T, otherwise: T): T => {
    try {
      const s = storage();
      return s ? use(s) : otherwise;
    } catch {
      return otherwise;
    }
  };
  const forget = (paneId: string) => attempt((s) => s.removeItem(DRAFT_KEY_PREFIX + paneId), undefined);
  return {
    read: (paneId) => attempt((s) => s.getItem(DRAFT_KEY_PREFIX + paneId) ?? '', ''),
    write: (paneId, text) => (text === '' ? forget(paneId) : attempt((s) => s.setItem(DRAFT_KEY_PREFIX + paneId, text), undefined)),
    forget,
  };
}

export const composerDrafts = createComposerDrafts(() => (typeof localStorage === 'undefined' ? null : localStorage));
