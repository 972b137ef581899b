// Zustand store of the preset runs: the comparison (batched vs serialized, or speculation off vs on), the latest
// NIAH x N and Extract x N runs. Plain results; the runs themselves live in compare-, niah- and extract-actions.ts.
import { create } from 'zustand';
import type { ExtractKind } from '../../protocol/extract';
import type { DecodeThroughput, SpeculationFigures } from '../../protocol/metrics';

/** What the Compare card compares: the two serving modes, or speculation off and on (batched). */
export type CompareKind = 'modes' | 'speculation';

export interface CompareState {
  status: 'idle' | 'running' | 'done' | 'error';
  /** What the run is doing now, for people. */
  phase: string;
  numPrompts: number;
  kind: CompareKind;
  batched?: DecodeThroughput;
  serialized?: DecodeThroughput;
  /** kind 'modes': batched over serialized; 'speculation': on over off. */
  ratio?: number | null;
  speculationOff?: DecodeThroughput;
  speculationOn?: DecodeThroughput;
  /** The speculating side's tokens per row-step and acceptance. */
  speculationFigures?: SpeculationFigures;
  error?: string;
}

export interface NiahRunState {
  seed: number;
  maxTokens: number;
  paneIds: string[];
}

export interface ExtractRunState {
  seed: number;
  kind: ExtractKind;
  paneIds: string[];
}

interface RunsState {
  compare: CompareState;
  niah: NiahRunState | null;
  extract: ExtractRunState | null;
  setCompare(patch: Partial<CompareState>): void;
  setNiah(run: NiahRunState | null): void;
  setExtract(run: ExtractRunState | null): void;
}

export const useRunsStore = create<RunsState>()((set) => ({
  compare: { status: 'idle', phase: '', numPrompts: 0, kind: 'modes' },
  niah: null,
  extract: null,
  setCompare(patch) {
    set((s) => ({ compare: { ...s.compare, ...patch } }));
  },
  setNiah(run) {
    set({ niah: run });
  },
  setExtract(run) {
    set({ extract: run });
  },
}));
