// Zustand store of the two preset runs: the batched-vs-serialized comparison and the latest
// NIAH x N run. Plain results; the runs themselves live in compare-actions.ts and niah-actions.ts.
import { create } from 'zustand';
import type { DecodeThroughput } from '../../protocol/metrics';

export interface CompareState {
  status: 'idle' | 'running' | 'done' | 'error';
  /** What the run is doing now, for people. */
  phase: string;
  numPrompts: number;
  batched?: DecodeThroughput;
  serialized?: DecodeThroughput;
  ratio?: number | null;
  error?: string;
}

export interface NiahRunState {
  seed: number;
  maxTokens: number;
  paneIds: string[];
}

interface RunsState {
  compare: CompareState;
  niah: NiahRunState | null;
  setCompare(patch: Partial<CompareState>): void;
  setNiah(run: NiahRunState | null): void;
}

export const useRunsStore = create<RunsState>()((set) => ({
  compare: { status: 'idle', phase: '', numPrompts: 0 },
  niah: null,
  setCompare(patch) {
    set((s) => ({ compare: { ...s.compare, ...patch } }));
  },
  setNiah(run) {
    set({ niah: run });
  },
}));
