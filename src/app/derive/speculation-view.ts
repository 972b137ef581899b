// What the page shows of speculative decoding: the session setting as plain data (auto / off / a
// fixed draft length) and its reading back, a row's drafted/accepted mark on the timeline, and the
// tooltip's per-row and per-step figures (tokens per row-step by src/protocol/metrics.ts). Pure.
import type { SessionOptions } from '../../protocol/api';
import type { StepEvent, StepRowEvent } from '../../protocol/events';
import { speculationFigures } from '../../protocol/metrics';

/** A session's speculation setting, the engine's own shape (src/engine/speculation.ts). */
export type SpeculationSetting = NonNullable<SessionOptions['speculation']>;

/** The form's bounds for a fixed draft length (the engine's MAX_DRAFT_TOKENS is 32). */
export const MAX_DRAFT_TOKENS_SETTING = 32;
/** The length a fixed setting starts at when picked in the form. */
export const DEFAULT_FIXED_DRAFT_TOKENS = 4;

export function sameSpeculation(a: SpeculationSetting, b: SpeculationSetting): boolean {
  return typeof a === 'object' && typeof b === 'object' ? a.maxDraftTokens === b.maxDraftTokens : a === b;
}

/** A saved setting back, or 'auto' for anything malformed. */
export function readSpeculation(raw: unknown): SpeculationSetting {
  if (raw === 'auto' || raw === 'off') return raw;
  const max = typeof raw === 'object' && raw !== null ? (raw as { maxDraftTokens?: unknown }).maxDraftTokens : undefined;
  return Number.isInteger(max) && (max as number) >= 0 && (max as number) <= MAX_DRAFT_TOKENS_SETTING ? { maxDraftTokens: max as number } : 'auto';
}

/** The form's choice: its mode, and the fixed length (kept while another mode is picked). */
export function speculationMode(setting: SpeculationSetting): 'auto' | 'off' | 'fixed' {
  return typeof setting === 'object' ? 'fixed' : setting;
}

export function speculationFromForm(mode: 'auto' | 'off' | 'fixed', maxDraftTokens: number): SpeculationSetting {
  if (mode !== 'fixed') return mode;
  const n = Number.isFinite(maxDraftTokens) ? Math.round(maxDraftTokens) : DEFAULT_FIXED_DRAFT_TOKENS;
  return { maxDraftTokens: Math.max(0, Math.min(MAX_DRAFT_TOKENS_SETTING, n)) };
}

/** The pane's settings line: nothing for 'auto' (the default), else ' · no drafts' or ' · ≤ n drafts'. */
export function speculationSummary(setting: SpeculationSetting): string {
  if (setting === 'auto') return '';
  return setting === 'off' ? ' · no drafts' : ` · ≤ ${setting.maxDraftTokens} drafts`;
}

/** A cell's speculation mark: the share of the row's drafts accepted; null for a row without drafts. */
export interface DraftMark {
  numDrafted: number;
  numAccepted: number;
  /** numAccepted / numDrafted, 0..1: the accepted part of the mark, the rest rejected. */
  acceptedShare: number;
}

export function draftMark(row: StepRowEvent): DraftMark | null {
  const numDrafted = row.numDrafted ?? 0;
  if (numDrafted === 0) return null;
  const numAccepted = row.numAccepted ?? 0;
  return { numDrafted, numAccepted, acceptedShare: numAccepted / numDrafted };
}

/** The tooltip's speculation cell of a row: '' for a row without drafts. */
export function rowDraftLabel(row: StepRowEvent): string {
  const mark = draftMark(row);
  return mark ? `drafted ${mark.numDrafted}, accepted ${mark.numAccepted}` : '';
}

/** The tooltip's speculation line for a step: null when no row drafted. */
export function stepSpeculationLine(event: StepEvent): string | null {
  const figures = speculationFigures([event]);
  if (figures.numDrafted === 0) return null;
  return `speculation: ${figures.numAccepted}/${figures.numDrafted} drafts accepted · ${figures.tokensPerRowStep.toFixed(2)} tokens per row-step`;
}
