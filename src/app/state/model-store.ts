// Zustand store of what the model panel shows: GPU report, kernel self-check, the serving model,
// the load in progress, the last load error, engine notices and the KV memory control. Written by model-actions.ts only.
import { create } from 'zustand';
import type { EngineNotice, GpuInfo, KvCacheType, LoadProgress, ModelInfo } from '../../protocol/api';
import type { SelfCheckState } from '../SelfCheckPanel';

export interface LoadingState {
  /** What is being loaded, for people. */
  label: string;
  phase: LoadProgress['phase'];
  fetchedBytes: number;
  /** 0 when unknown. */
  fetchTotalBytes: number;
  uploadTotalBytes: number;
  message: string;
}

interface ModelState {
  gpu: GpuInfo | { status: 'pending' };
  selfCheck: SelfCheckState;
  model: ModelInfo | null;
  loading: LoadingState | null;
  /** From the engine's start (page load, worker restart) until its first load begins or the start fails. */
  booting: boolean;
  error: string | null;
  /** The engine's latest notice (GPU lost / restored / failed), until dismissed. */
  notice: EngineNotice | null;
  /** Set when the engine worker stopped answering: what to tell the person. */
  workerDead: string | null;
  /** The KV memory control: the type and the pool size in MiB as typed ('' = from the GPU), used by every load after. */
  kvControl: { kvCacheType: KvCacheType; sizeMib: string };
  /** Bumps after every finished load (success or not), e.g. to re-read the download cache. */
  loadCount: number;
  set(patch: Partial<Omit<ModelState, 'set'>>): void;
}

export const useModelStore = create<ModelState>()((set) => ({
  gpu: { status: 'pending' },
  selfCheck: { status: 'running' },
  model: null,
  loading: null,
  booting: false,
  error: null,
  notice: null,
  workerDead: null,
  kvControl: { kvCacheType: 'f16', sizeMib: '' },
  loadCount: 0,
  set(patch) {
    set(patch);
  },
}));

/**
 * Whether a model is on its way: a load runs, or the engine is starting and its first load
 * has not begun. A message sent now waits for it (a load ends every engine session, so a turn begun
 * now would be cut off). Not while the worker is dead: only a restart brings a model then.
 */
export function modelIsComing(state: Pick<ModelState, 'loading' | 'booting' | 'workerDead'>): boolean {
  return state.workerDead === null && (state.loading !== null || state.booting);
}

/** Folds one progress report into the loading state. */
export function withProgress(loading: LoadingState, progress: LoadProgress): LoadingState {
  switch (progress.phase) {
    case 'fetch':
      return { ...loading, phase: 'fetch', fetchedBytes: progress.loadedBytes, fetchTotalBytes: progress.totalBytes, message: progress.message };
    case 'upload':
      return { ...loading, phase: 'upload', fetchedBytes: Math.max(loading.fetchedBytes, loading.fetchTotalBytes), uploadTotalBytes: progress.totalBytes, message: progress.message };
    default:
      return { ...loading, phase: progress.phase, message: progress.message };
  }
}
