// The "compare" actions: the same prompts in fresh greedy sessions, first serialized then batched
// (or batched with speculation off, then on), each side's decode tok/s from its own decode-only
// steps, and their ratio.
import type { EngineMode, FinishedEvent, StepEvent } from '../../protocol/events';
import { getEngineClient } from '../engine-client';
import { DEFAULT_SETTINGS, type SessionSettings } from '../derive/session-settings';
import { compareOutcome, speculationCompareOutcome, type CompareSide } from '../derive/compare';
import type { SpeculationSetting } from '../derive/speculation-view';
import { errorMessage } from '../derive/error-message';
import { useRunsStore } from './runs-store';
import { addSessions, closeSession, sendMessage } from './session-actions';
import { useSessionsStore } from './sessions-store';
import { tapSteps } from './step-feed';
import { useTelemetryStore } from './telemetry-store';

export const COMPARE_PROMPTS = [
  'Count from one to ten.',
  'Name three colours.',
  'Write a short greeting.',
  'What is two plus two?',
  'List four animals.',
  'Say something about the sea.',
  'Spell the word cohort.',
  'Describe a tree.',
];

/** Greedy with a fixed seed, so both modes generate the same tokens. */
const COMPARE_SETTINGS: SessionSettings = { ...DEFAULT_SETTINGS, temperature: 0, topP: 1, topK: 0, maxNewTokens: 32, seed: 1 };

/** The open panes' last prompts when there are at least two, else the first n fixed ones. */
export function comparePrompts(n: number): string[] {
  const { order, views } = useSessionsStore.getState();
  const last = order.map((id) => views.get(id)).filter((v) => v && !v.tag && v.lastPrompt && !v.niah).map((v) => v!.lastPrompt!);
  return last.length >= 2 ? last : COMPARE_PROMPTS.slice(0, Math.max(2, Math.min(n, COMPARE_PROMPTS.length)));
}

export async function setMode(mode: EngineMode): Promise<void> {
  useTelemetryStore.getState().setRequestedMode(mode);
  await getEngineClient().setMode(mode);
}

/** Sets the engine's step-time budget: a multiple of the decode rows' own step, or null (off). */
export async function setStepMultiple(multiple: number | null): Promise<void> {
  await getEngineClient().setStepBudget(multiple === null ? null : { multiple });
}

/**
 * Runs the prompts in fresh panes under one mode (and speculation setting); returns the steps and its
 * sessions' ids. A side ends when every one of its sessions has finished in the step feed, as the
 * library reads turn ends: the step that ends a turn carries its last tokens, so nothing is waited on twice.
 */
async function runSide(mode: EngineMode, prompts: string[], speculation?: SpeculationSetting): Promise<CompareSide> {
  await setMode(mode);
  // panes: S1.. serialized, B1.. batched; in the speculation comparison O1.. off, D1.. drafting
  const side = speculation === undefined ? { labelPrefix: mode === 'batched' ? 'B' : 'S', tag: `compare-${mode}` } : speculation === 'off' ? { labelPrefix: 'O', tag: 'compare-speculation-off' } : { labelPrefix: 'D', tag: 'compare-speculation-on' };
  const paneIds = addSessions(prompts.length, { ...COMPARE_SETTINGS, ...(speculation !== undefined ? { speculation } : {}) }, side);
  const steps: StepEvent[] = [];
  const finished = new Map<string, FinishedEvent>();
  let onFinished = (): void => undefined;
  const untap = tapSteps((event) => {
    steps.push(event);
    for (const done of event.finished) finished.set(done.sessionId, done);
    if (event.finished.length > 0) onFinished();
  });
  try {
    const sent = await Promise.all(paneIds.map((id, i) => sendMessage(id, prompts[i])));
    if (sent.some((ok) => !ok)) throw new Error(`a ${mode} session could not start (see its pane)`);
    const engineIds = paneIds.map((id) => useSessionsStore.getState().views.get(id)?.engineId).filter((id): id is string => !!id);
    // the taps saw every step since before the sends, so a turn that ended already is in `finished`
    await new Promise<void>((resolve) => {
      onFinished = () => {
        if (engineIds.every((id) => finished.has(id))) resolve();
      };
      onFinished();
    });
    const failed = engineIds.map((id) => finished.get(id)!).find((done) => done.reason === 'error');
    if (failed) throw new Error(`a ${mode} session failed: ${failed.error ?? 'see its pane'}`);
    return { steps, sessionIds: new Set(engineIds) };
  } finally {
    untap();
    await Promise.all(paneIds.map(closeSession));
  }
}

export async function runCompare(numPrompts: number): Promise<void> {
  const runs = useRunsStore.getState();
  if (runs.compare.status === 'running') return;
  const prompts = comparePrompts(numPrompts);
  const originalMode = useTelemetryStore.getState().requestedMode;
  runs.setCompare({ ...CLEARED, status: 'running', phase: 'warming up', numPrompts: prompts.length, kind: 'modes' });
  try {
    await runSide('serialized', prompts.slice(0, 1));
    useRunsStore.getState().setCompare({ phase: `serialized: ${prompts.length} prompts one at a time` });
    const serialized = await runSide('serialized', prompts);
    useRunsStore.getState().setCompare({ serialized: compareOutcome(serialized, serialized).serialized, phase: `batched: ${prompts.length} prompts together` });
    const batched = await runSide('batched', prompts);
    useRunsStore.getState().setCompare({ status: 'done', phase: '', ...compareOutcome(serialized, batched) });
  } catch (error) {
    useRunsStore.getState().setCompare({ status: 'error', phase: '', error: errorMessage(error) });
  } finally {
    await setMode(originalMode).catch(() => undefined);
  }
}

const CLEARED = { batched: undefined, serialized: undefined, ratio: undefined, speculationOff: undefined, speculationOn: undefined, speculationFigures: undefined, error: undefined };

/**
 * The speculating side's setting: the new-session settings' fixed draft length when they have
 * one, else 'auto' (which drafts only where the engine's cost model says it pays).
 */
function speculationOn(): SpeculationSetting {
  const setting = useSessionsStore.getState().newSettings.speculation;
  return typeof setting === 'object' ? setting : 'auto';
}

/** The same prompts batched, with speculation off, then on; the ratio is on over off. */
export async function runSpeculationCompare(numPrompts: number): Promise<void> {
  const runs = useRunsStore.getState();
  if (runs.compare.status === 'running') return;
  const prompts = comparePrompts(numPrompts);
  const on = speculationOn();
  const originalMode = useTelemetryStore.getState().requestedMode;
  runs.setCompare({ ...CLEARED, status: 'running', phase: 'warming up', numPrompts: prompts.length, kind: 'speculation' });
  try {
    await runSide('batched', prompts.slice(0, 1), 'off');
    useRunsStore.getState().setCompare({ phase: `speculation off: ${prompts.length} prompts together` });
    const off = await runSide('batched', prompts, 'off');
    useRunsStore.getState().setCompare({ speculationOff: speculationCompareOutcome(off, off).off, phase: `speculation ${typeof on === 'object' ? `at ${on.maxDraftTokens} drafts` : on}: ${prompts.length} prompts together` });
    const outcome = speculationCompareOutcome(off, await runSide('batched', prompts, on));
    useRunsStore.getState().setCompare({ status: 'done', phase: '', speculationOff: outcome.off, speculationOn: outcome.on, speculationFigures: outcome.onFigures, ratio: outcome.ratio });
  } catch (error) {
    useRunsStore.getState().setCompare({ status: 'error', phase: '', error: errorMessage(error) });
  } finally {
    await setMode(originalMode).catch(() => undefined);
  }
}
