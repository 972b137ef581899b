// Tests of what the page shows of speculation: the setting's form round trip and saved reading,
// a row's drafted/accepted mark, the tooltip's per-row and per-step lines, the setting as options.
import { describe, expect, it } from 'vitest';
import { row, step } from '../../protocol/testing/step-fixtures';
import { fromPersisted, toPersisted } from './persisted-sessions';
import { changeSettings, newSessionView } from './session-view';
import { DEFAULT_SETTINGS, toSessionOptions } from './session-settings';
import { draftMark, readSpeculation, rowDraftLabel, sameSpeculation, speculationFromForm, speculationMode, speculationSummary, stepSpeculationLine } from './speculation-view';

describe('the speculation setting', () => {
  it('goes through the form: auto, off, a fixed length clamped to 0..32', () => {
    expect(speculationFromForm('auto', 4)).toBe('auto');
    expect(speculationFromForm('off', 4)).toBe('off');
    expect(speculationFromForm('fixed', 6)).toEqual({ maxDraftTokens: 6 });
    expect(speculationFromForm('fixed', 99)).toEqual({ maxDraftTokens: 32 });
    expect(speculationFromForm('fixed', NaN)).toEqual({ maxDraftTokens: 4 });
    expect(speculationMode({ maxDraftTokens: 2 })).toBe('fixed');
    expect(speculationMode('off')).toBe('off');
    expect([speculationSummary('auto'), speculationSummary('off'), speculationSummary({ maxDraftTokens: 6 })]).toEqual(['', ' · no drafts', ' · ≤ 6 drafts']);
  });

  it('reads saved values back, anything odd as auto', () => {
    expect(readSpeculation('off')).toBe('off');
    expect(readSpeculation({ maxDraftTokens: 3 })).toEqual({ maxDraftTokens: 3 });
    expect(readSpeculation({ maxDraftTokens: -1 })).toBe('auto');
    expect(readSpeculation(undefined)).toBe('auto');
    const view = newSessionView('p1', '#1', { ...DEFAULT_SETTINGS, speculation: { maxDraftTokens: 5 } });
    const back = fromPersisted(toPersisted(['p1'], new Map([['p1', view]]), 2, DEFAULT_SETTINGS));
    expect(back?.views.get('p1')?.settings.speculation).toEqual({ maxDraftTokens: 5 });
  });

  it("becomes the engine option (auto left to the engine's default), and a change drops the engine session", () => {
    expect(toSessionOptions(DEFAULT_SETTINGS).speculation).toBeUndefined();
    expect(toSessionOptions({ ...DEFAULT_SETTINGS, speculation: 'off' }).speculation).toBe('off');
    expect(toSessionOptions({ ...DEFAULT_SETTINGS, speculation: { maxDraftTokens: 3 } }).speculation).toEqual({ maxDraftTokens: 3 });
    expect(sameSpeculation({ maxDraftTokens: 3 }, { maxDraftTokens: 3 })).toBe(true);
    expect(sameSpeculation({ maxDraftTokens: 3 }, 'auto')).toBe(false);
    const view = { ...newSessionView('p1', '#1', DEFAULT_SETTINGS), engineId: 's1', state: 'done' as const };
    expect(changeSettings(view, { ...DEFAULT_SETTINGS }).engineId).toBe('s1');
    expect(changeSettings(view, { ...DEFAULT_SETTINGS, speculation: 'off' }).engineId).toBeUndefined();
  });
});

describe('drafted and accepted on the timeline', () => {
  const verify = row('a', 'decode', 5, [1, 2, 3], '', { numDrafted: 4, numAccepted: 2 });
  const plain = row('b', 'decode', 1, [7]);

  it('marks a verify row by its accepted share, and no mark for a plain row', () => {
    expect(draftMark(verify)).toEqual({ numDrafted: 4, numAccepted: 2, acceptedShare: 0.5 });
    expect(draftMark(plain)).toBeNull();
    expect(draftMark(row('c', 'decode', 3, [1], '', { numDrafted: 2, numAccepted: 0 }))?.acceptedShare).toBe(0);
  });

  it('gives the tooltip per-row counts and the step tokens per row-step', () => {
    expect(rowDraftLabel(verify)).toBe('drafted 4, accepted 2');
    expect(rowDraftLabel(plain)).toBe('');
    // a: 3 tokens, b: 1 over 2 decode row-steps
    expect(stepSpeculationLine(step(0, 0, 1, [verify, plain]))).toBe('speculation: 2/4 drafts accepted · 2.00 tokens per row-step');
    expect(stepSpeculationLine(step(1, 0, 1, [plain]))).toBeNull();
  });
});
