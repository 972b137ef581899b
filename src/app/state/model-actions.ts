// What the page does with the engine at start and when a model is chosen: GPU report, self-check,
// the embedded model, loads from other sources. The old model serves until a new one is ready.
import type { ModelSource } from '../../protocol/api';
import { getEngineClient } from '../engine-client';
import { describeSource } from '../derive/model-sources';
import { useModelStore, withProgress } from './model-store';
import { useSessionsStore } from './sessions-store';
import { clearSteps, startStepFeed } from './step-feed';

let started = false;

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null && 'message' in error) return String((error as { message: unknown }).message);
  return String(error);
}

/** Once per page: ask for the GPU, run the self-check, subscribe to steps, load the default model. */
export function startEngine(): void {
  if (started) return;
  started = true;
  const engine = getEngineClient();
  const store = useModelStore.getState();
  engine
    .gpuInfo()
    .then((gpu) => {
      store.set({ gpu });
      if (gpu.status !== 'ok') return;
      engine
        .selfCheck()
        .then((result) => store.set({ selfCheck: { status: result.ok ? 'pass' : 'fail', result } }))
        .catch((error: unknown) => store.set({ selfCheck: { status: 'error', message: errorMessage(error) } }));
      void engine.subscribeNotices((notice) => useModelStore.getState().set({ notice }));
      void startStepFeed(engine).then(() => loadModel({ kind: 'embedded' }));
    })
    .catch((error: unknown) => store.set({ selfCheck: { status: 'error', message: errorMessage(error) } }));
}

/** Loads a model; on failure the error is shown and the serving model (if any) stays. */
export async function loadModel(source: ModelSource): Promise<boolean> {
  const store = useModelStore.getState();
  if (store.loading) {
    store.set({ error: 'A model is already loading: wait for it to finish.' });
    return false;
  }
  const label = describeSource(source);
  store.set({ loading: { label, phase: 'fetch', fetchedBytes: 0, fetchTotalBytes: 0, uploadTotalBytes: 0, message: `opening ${label}` }, error: null });
  try {
    const info = await getEngineClient().loadModel(source, (progress) => {
      const loading = useModelStore.getState().loading;
      if (loading) useModelStore.getState().set({ loading: withProgress(loading, progress) });
    });
    // The previous engine and its sessions are gone: panes start over on the new model.
    clearSteps();
    useSessionsStore.getState().detachAll();
    useModelStore.getState().set({ model: info, loading: null, error: null, loadCount: useModelStore.getState().loadCount + 1 });
    return true;
  } catch (error) {
    const serving = useModelStore.getState().model;
    const message = `Could not load ${label}: ${errorMessage(error)}` + (serving ? ` — ${serving.name} is still serving.` : '');
    useModelStore.getState().set({ loading: null, error: message, loadCount: useModelStore.getState().loadCount + 1 });
    return false;
  }
}

export function dismissModelError(): void {
  useModelStore.getState().set({ error: null });
}

export function showModelError(message: string): void {
  useModelStore.getState().set({ error: message });
}

export function dismissNotice(): void {
  useModelStore.getState().set({ notice: null });
}
