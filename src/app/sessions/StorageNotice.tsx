// Says once, above the panes, when saved sessions cannot be kept (storage refused: the page works
// in memory) or could not be read (set aside, untouched). Not the saving itself: state/session-persistence.ts.
import { useStorageNoticeStore } from '../state/storage-notice-store';

export function StorageNotice() {
  const memory = useStorageNoticeStore((s) => s.memory);
  const unreadable = useStorageNoticeStore((s) => s.unreadable);
  const dismiss = useStorageNoticeStore((s) => s.dismiss);
  if (memory === null && unreadable.length === 0) return null;
  return (
    <div className="storage-notice" role="status" data-testid="storage-notice" data-kind={memory !== null ? 'memory' : 'unreadable'}>
      {memory !== null && (
        <p>
          Sessions cannot be saved in this window (the browser refused storage: {memory}). They are kept while this page is open, and other tabs
          of the page still see them.
        </p>
      )}
      {unreadable.length > 0 && (
        <p>
          Could not read {unreadable.length === 1 ? 'a saved session' : `${unreadable.length} saved sessions`} ({[...new Set(unreadable.map((u) => u.why))].join('; ')}). Kept aside in
          this site's IndexedDB, unchanged, under {unreadable.map((u) => u.asideKey).join(', ')}.
        </p>
      )}
      <button type="button" className="link" data-testid="storage-notice-dismiss" onClick={dismiss}>
        Dismiss
      </button>
    </div>
  );
}
