// The "NIAH x N" preset as data: one greedy session per needle, staggered start times, the
// pass/leak verdict and recall. Prompts and the pass check come from src/protocol/niah.ts.
import { makeNiahSuite, NIAH_MAX_NEW_TOKENS, niahLeaks, niahPassed } from '../../protocol/niah';
import type { NiahMark } from './session-view';
import { DEFAULT_SETTINGS, type SessionSettings } from './session-settings';
import type { SpeculationSetting } from './speculation-view';

export interface NiahPlanItem {
  prompt: string;
  code: string;
  numLines: number;
  /** Send this long after the first session's send. */
  delayMs: number;
}

export interface NiahPlan {
  seed: number;
  settings: SessionSettings;
  items: NiahPlanItem[];
  allCodes: string[];
}

/** Greedy decoding, at most 24 new tokens, no system prompt: the protocol of DESIGN.md. */
export const NIAH_SETTINGS: SessionSettings = { ...DEFAULT_SETTINGS, temperature: 0, topP: 1, topK: 0, maxNewTokens: NIAH_MAX_NEW_TOKENS, seed: 0 };

/**
 * n sessions, haystacks from maxTokens/2 to maxTokens, each sent staggerMs after the previous.
 * Speculation never changes a greedy answer, only how many steps it takes, so it is the one
 * setting the preset leaves to the person (the settings for new sessions), to compare off and on.
 */
export function planNiah(n: number, seed: number, maxTokens: number, staggerMs: number, speculation: SpeculationSetting = NIAH_SETTINGS.speculation): NiahPlan {
  if (!Number.isInteger(n) || n < 1) throw new Error(`NIAH needs at least one session, not ${n}`);
  const minTokens = Math.min(maxTokens, Math.max(300, Math.floor(maxTokens / 2)));
  const cases = makeNiahSuite(seed, n, minTokens, maxTokens);
  return {
    seed,
    settings: { ...NIAH_SETTINGS, speculation },
    items: cases.map((c, i) => ({ prompt: c.prompt, code: c.code, numLines: c.numLines, delayMs: i * staggerMs })),
    allCodes: cases.map((c) => c.code),
  };
}

/** Passes when its own code is in the output and no other session's code is. */
export function judgeNiah(mark: NiahMark, output: string): NiahMark {
  const leaks = niahLeaks(output, mark.code, mark.allCodes);
  return { ...mark, passed: niahPassed(output, mark.code) && leaks.length === 0, leaks };
}

export interface Recall {
  numPassed: number;
  numJudged: number;
  numSessions: number;
  /** numPassed / numSessions once all are judged, else null. */
  recall: number | null;
}

export function recallOf(marks: readonly NiahMark[]): Recall {
  const judged = marks.filter((m) => m.passed !== undefined);
  const numPassed = judged.filter((m) => m.passed).length;
  const done = marks.length > 0 && judged.length === marks.length;
  return { numPassed, numJudged: judged.length, numSessions: marks.length, recall: done ? numPassed / marks.length : null };
}

/** A long prompt shortened for display: its head and tail around the count of lines left out. */
export function summarizePrompt(text: string, maxLines = 6): string {
  const lines = text.split('\n');
  if (lines.length <= maxLines) return text;
  const head = Math.ceil(maxLines / 2);
  const tail = maxLines - head;
  return [...lines.slice(0, head), `… ${lines.length - maxLines} more lines …`, ...lines.slice(lines.length - tail)].join('\n');
}
