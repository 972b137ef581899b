// What the page does with the engine at start and when a model is chosen: GPU report, self-check,
// the embedded model, loads from other sources. The old model serves until a new one is ready;
// messages sent meanwhile wait in their panes and go out when the load ends.
import type { KvCacheType, ModelSource } from '../../protocol/api';
import { kvLoadOptions } from '../derive/kv-memory';
import { getEngineClient, restartEngineClient, type EngineClient } from '../engine-client';
import { describeSource } from '../../protocol/model-source';
import { errorMessage } from '../derive/error-message';
import { isActive } from '../derive/session-view';
import { useModelStore, withProgress } from './model-store';
import { returnHeldMessages, sendHeldMessages } from './session-actions';
import { useSessionsStore } from './sessions-store';
import { clearSteps, startStepFeed, stopStepFeed } from './step-feed';

let started = false;

/** Once per page: ask for the GPU, run the self-check, subscribe to steps, load the default model. */
export function startEngine(): void {
  if (started) return;
  started = true;
  // For browser tests and people poking at failure paths from the console.
  (globalThis as { cohortDebug?: unknown }).cohortDebug = { closeWorker: () => getEngineClient().debugCloseWorker() };
  useModelStore.getState().set({ booting: true });
  boot(getEngineClient(), { kind: 'embedded' });
}

/** The last source that loaded, reloaded when the engine worker is restarted. */
let lastSource: ModelSource | null = null;

/** The engine could not start: nothing will load, so held messages go back to their composers. */
function bootFailed(reason: string): void {
  useModelStore.getState().set({ booting: false });
  returnHeldMessages(reason);
}

function boot(engine: EngineClient, source: ModelSource): void {
  const store = useModelStore.getState();
  engine.onUnresponsive(() =>
    useModelStore.getState().set({ workerDead: 'The engine worker stopped responding (it may have crashed or run out of memory). Restart it to reload the model; your transcripts stay.' }),
  );
  engine
    .gpuInfo()
    .then((gpu) => {
      store.set({ gpu });
      if (gpu.status !== 'ok') return bootFailed(`No GPU: ${gpu.message}`);
      engine
        .selfCheck()
        .then((result) => store.set({ selfCheck: { status: result.ok ? 'pass' : 'fail', result } }))
        .catch((error: unknown) => store.set({ selfCheck: { status: 'error', message: errorMessage(error) } }));
      void engine.subscribeNotices((notice) => useModelStore.getState().set({ notice }));
      void startStepFeed(engine)
        .then(() => loadModel(source, { confirm: () => true }))
        .catch((error: unknown) => bootFailed(`The engine did not start: ${errorMessage(error)}`));
    })
    .catch((error: unknown) => {
      store.set({ selfCheck: { status: 'error', message: errorMessage(error) } });
      bootFailed(`The engine did not start: ${errorMessage(error)}`);
    });
}

/**
 * A fresh engine worker after the old one died: the same model is loaded again and every pane
 * keeps its transcript, which its next message carries into a new engine session.
 */
export function restartEngine(): void {
  stopStepFeed();
  clearSteps();
  useModelStore.getState().set({ workerDead: null, notice: null, model: null, loading: null, booting: true, gpu: { status: 'pending' }, selfCheck: { status: 'running' } });
  useSessionsStore.getState().detachAll();
  boot(restartEngineClient(), lastSource ?? { kind: 'embedded' });
}

/** Asks before a load that would cut turns in progress (their panes and transcripts stay). */
function confirmCut(numActive: number, label: string): boolean {
  return window.confirm(`${numActive} session${numActive === 1 ? ' is' : 's are'} generating. Loading ${label} stops ${numActive === 1 ? 'it' : 'them'} (transcripts are kept). Load anyway?`);
}

/**
 * Loads a model; on failure the error is shown and the serving model (if any) stays. On success
 * every pane keeps its transcript and hands it to its next engine session as history; when
 * that would cut a turn in progress, the person is asked first.
 */
export async function loadModel(source: ModelSource, options: { confirm?: (numActive: number, label: string) => boolean } = {}): Promise<boolean> {
  const store = useModelStore.getState();
  if (store.loading) {
    store.set({ error: 'A model is already loading: wait for it to finish.' });
    return false;
  }
  const label = describeSource(source);
  const kv = kvLoadOptions(store.kvControl.kvCacheType, store.kvControl.sizeMib);
  if (!kv.ok) {
    store.set({ error: kv.message });
    return false;
  }
  const numActive = [...useSessionsStore.getState().views.values()].filter(isActive).length;
  if (numActive > 0 && !(options.confirm ?? confirmCut)(numActive, label)) return false;
  store.set({ loading: { label, phase: 'fetch', fetchedBytes: 0, fetchTotalBytes: 0, uploadTotalBytes: 0, message: `opening ${label}` }, booting: false, error: null });
  try {
    const info = await getEngineClient().loadModel(source, (progress) => {
      const loading = useModelStore.getState().loading;
      if (loading) useModelStore.getState().set({ loading: withProgress(loading, progress) });
    }, kv.options);
    // The previous engine sessions are gone; the panes carry their transcripts to new ones.
    clearSteps();
    useSessionsStore.getState().detachAll('The model changed during this turn; send it again.');
    lastSource = source;
    useModelStore.getState().set({ model: info, loading: null, error: null, loadCount: useModelStore.getState().loadCount + 1 });
    await sendHeldMessages();
    return true;
  } catch (error) {
    const serving = useModelStore.getState().model;
    const message = `Could not load ${label}: ${errorMessage(error)}` + (serving ? ` — ${serving.name} is still serving.` : '');
    useModelStore.getState().set({ loading: null, error: message, loadCount: useModelStore.getState().loadCount + 1 });
    returnHeldMessages(message);
    return false;
  }
}

/** The KV memory control changed: the next load takes it (the serving model keeps its pool). */
export function setKvControl(patch: Partial<{ kvCacheType: KvCacheType; sizeMib: string }>): void {
  const store = useModelStore.getState();
  store.set({ kvControl: { ...store.kvControl, ...patch } });
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
