// Downloaded model files kept in the browser (Cache Storage 'cohort-models'): name, size and a
// delete button each. Re-read after every model load and on demand.
import { useCallback, useEffect, useState } from 'react';
import { formatBytes } from '../derive/model-sources';
import { errorMessage } from '../derive/error-message';
import { useModelStore } from '../state/model-store';
import { clearCachedFiles, deleteCachedFile, listCachedFiles, type CachedFile } from './model-cache';

function shortName(url: string): string {
  try {
    const u = new URL(url);
    return decodeURIComponent(u.pathname.split('/').filter(Boolean).slice(-3).join('/'));
  } catch {
    return url;
  }
}

export function ModelCacheList() {
  const loadCount = useModelStore((s) => s.loadCount);
  const [files, setFiles] = useState<CachedFile[] | null>(null);
  const [note, setNote] = useState('');

  const refresh = useCallback(() => {
    listCachedFiles()
      .then((list) => {
        setFiles(list);
        setNote('');
      })
      .catch((error: unknown) => setNote(`cache unavailable: ${errorMessage(error)}`));
  }, []);

  useEffect(refresh, [refresh, loadCount]);

  const total = files?.reduce((n, f) => n + f.size, 0) ?? 0;
  return (
    <section className="card" data-testid="model-cache">
      <div className="card-head">
        <h2>Downloaded files</h2>
        <button type="button" className="link" onClick={refresh}>
          refresh
        </button>
      </div>
      {note && <p className="muted small">{note}</p>}
      {files && files.length === 0 && <p className="muted small">Nothing cached in this browser yet.</p>}
      {files && files.length > 0 && (
        <>
          <ul className="cache-list">
            {files.map((f) => (
              <li key={f.url} data-testid="cache-entry" title={f.url}>
                <span className="cache-name">{shortName(f.url)}</span>
                <span className="cache-size">{formatBytes(f.size)}</span>
                <button type="button" className="link danger" aria-label={`Delete ${shortName(f.url)}`} onClick={() => void deleteCachedFile(f.url).then(refresh)}>
                  delete
                </button>
              </li>
            ))}
          </ul>
          <div className="card-head">
            <span className="muted small">
              {files.length} files, {formatBytes(total)}
            </span>
            <button type="button" className="link danger" onClick={() => void clearCachedFiles().then(refresh)}>
              delete all
            </button>
          </div>
        </>
      )}
    </section>
  );
}
