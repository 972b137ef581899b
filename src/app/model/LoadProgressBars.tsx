// Progress of the load in flight: bytes fetched (or read from disk), then the weight upload
// to the GPU. Display only; the figures are the worker's LoadProgress reports.
import { formatBytes } from '../derive/model-sources';
import { useModelStore } from '../state/model-store';

function Bar({ label, value, max, detail, testId }: { label: string; value: number; max: number; detail: string; testId: string }) {
  // max 0 = size unknown: an indeterminate bar.
  return (
    <div className="progress-row">
      <span className="progress-label">{label}</span>
      <progress data-testid={testId} value={max > 0 ? value : undefined} max={max > 0 ? max : undefined} />
      <span className="progress-detail">{detail}</span>
    </div>
  );
}

export function LoadProgressBars() {
  const loading = useModelStore((s) => s.loading);
  if (!loading) return null;
  const fetchDetail = loading.fetchTotalBytes > 0 ? `${formatBytes(loading.fetchedBytes)} / ${formatBytes(loading.fetchTotalBytes)}` : formatBytes(loading.fetchedBytes);
  const uploading = loading.phase === 'upload' || loading.phase === 'parse';
  return (
    <section className="card" data-testid="load-progress" data-phase={loading.phase}>
      <h3>Loading {loading.label}</h3>
      <Bar label="Fetch" testId="progress-fetch" value={loading.phase === 'fetch' ? loading.fetchedBytes : 1} max={loading.phase === 'fetch' ? loading.fetchTotalBytes : 1} detail={fetchDetail} />
      <Bar
        label="Upload"
        testId="progress-upload"
        value={0}
        max={uploading ? 0 : 1}
        detail={uploading ? formatBytes(loading.uploadTotalBytes) : 'waiting'}
      />
      <p className="muted small">{loading.message}</p>
    </section>
  );
}
