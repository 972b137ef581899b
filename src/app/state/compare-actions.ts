// The "compare" action: the same prompts in fresh greedy sessions, first serialized then
// batched, each side's decode tok/s from its own decode-only steps, and their ratio.
import type { EngineMode, StepEvent } from '../../protocol/events';
import { getEngineClient } from '../engine-client';
import type { SessionSettings } from '../derive/session-view';
import { compareOutcome, type CompareSide } from '../derive/compare';
import { errorMessage } from '../derive/error-message';
import { useRunsStore } from './runs-store';
import { addSessions, closeSession, sendMessage, waitForTurn } from './session-actions';
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
const COMPARE_SETTINGS: SessionSettings = { systemPrompt: '', temperature: 0, topP: 1, topK: 0, maxNewTokens: 32, seed: 1, speculation: 'auto' };

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

/** Runs the prompts in fresh panes under one mode; returns the steps and its sessions' ids. */
async function runSide(mode: EngineMode, prompts: string[]): Promise<CompareSide> {
  await setMode(mode);
  const paneIds = addSessions(prompts.length, COMPARE_SETTINGS, { labelPrefix: mode === 'batched' ? 'B' : 'S', tag: `compare-${mode}` });
  const steps: StepEvent[] = [];
  const untap = tapSteps((event) => steps.push(event));
  try {
    const sent = await Promise.all(paneIds.map((id, i) => sendMessage(id, prompts[i])));
    if (sent.some((ok) => !ok)) throw new Error(`a ${mode} session could not start (see its pane)`);
    await Promise.all(paneIds.map(waitForTurn));
    const engineIds = new Set(paneIds.map((id) => useSessionsStore.getState().views.get(id)?.engineId).filter((id): id is string => !!id));
    return { steps, sessionIds: engineIds };
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
  runs.setCompare({ status: 'running', phase: 'warming up', numPrompts: prompts.length, batched: undefined, serialized: undefined, ratio: undefined, error: undefined });
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
