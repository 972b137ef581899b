// Suggested Hugging Face models that run in Cohort, each with its quant and size, loaded with one
// click: downloaded into the browser cache with progress (here and in the load card), then served.
import { useEffect, useState } from 'react';
import { formatBytes } from '../derive/model-sources';
import { isSuggestionCached, SUGGESTED_MODELS, suggestionSource, type SuggestedModel } from '../derive/suggested-models';
import { loadModel } from '../state/model-actions';
import { useModelStore } from '../state/model-store';
import { listCachedFiles } from './model-cache';

/** The cache's URLs, re-read after every load (a finished download adds one). */
function useCachedUrls(): ReadonlySet<string> {
  const loadCount = useModelStore((s) => s.loadCount);
  const [urls, setUrls] = useState<ReadonlySet<string>>(new Set());
  useEffect(() => {
    let live = true;
    listCachedFiles()
      .then((files) => live && setUrls(new Set(files.map((f) => f.url))))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [loadCount]);
  return urls;
}

function Progress() {
  const loading = useModelStore((s) => s.loading);
  if (!loading) return null;
  const percent = loading.phase === 'fetch' && loading.fetchTotalBytes > 0 ? Math.floor((100 * loading.fetchedBytes) / loading.fetchTotalBytes) : null;
  const text = loading.phase === 'fetch' ? (percent === null ? `downloading ${formatBytes(loading.fetchedBytes)}` : `downloading ${percent}%`) : 'uploading to the GPU';
  return (
    <span className="small" data-testid="suggested-progress" data-phase={loading.phase}>
      {text}
    </span>
  );
}

function Suggestion({ model, cached, active, busy, onLoad }: { model: SuggestedModel; cached: boolean; active: boolean; busy: boolean; onLoad: () => void }) {
  return (
    <li className="suggested-model" data-testid="suggested-model" data-id={model.id} data-cached={cached}>
      <div className="suggested-text">
        <span className="suggested-name">{model.label}</span>
        <span className="muted small">
          {model.quant} · ≈{formatBytes(model.approxBytes)}
          {cached ? ' · downloaded' : ''} · {model.note}
        </span>
      </div>
      {active && busy ? (
        <Progress />
      ) : (
        <button type="button" data-testid="suggested-load" disabled={busy} aria-label={`${cached ? 'Load' : 'Download and load'} ${model.label} ${model.quant}`} onClick={onLoad}>
          {cached ? 'Load' : 'Get'}
        </button>
      )}
    </li>
  );
}

export function SuggestedModels() {
  const busy = useModelStore((s) => s.loading !== null);
  const cachedUrls = useCachedUrls();
  const [activeId, setActiveId] = useState<string | null>(null);
  return (
    <div className="suggested" data-testid="suggested-models">
      <h3>Suggested models</h3>
      <ul>
        {SUGGESTED_MODELS.map((model) => (
          <Suggestion
            key={model.id}
            model={model}
            cached={isSuggestionCached(model, cachedUrls)}
            active={activeId === model.id}
            busy={busy}
            onLoad={() => {
              setActiveId(model.id);
              void loadModel(suggestionSource(model));
            }}
          />
        ))}
      </ul>
      <p className="muted small">Downloads go to this browser's cache (listed under Downloaded files); sizes are approximate.</p>
    </div>
  );
}
