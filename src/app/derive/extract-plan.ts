// The "Extract x N" preset as data: N greedy sessions, each with one generated document and the
// same JSON schema as its response format, sent at once; each reply's verdict and the run's tally.
import { extractSchemaText, judgeExtraction, makeExtractSuite, type ExtractKind, type ExtractValue, type ExtractVerdict } from '../../protocol/extract';
import { DEFAULT_SETTINGS, type SessionSettings } from './session-settings';
import type { SpeculationSetting } from './speculation-view';

/** The document this pane extracts from; `verdict` is set when its turn ends. */
export interface ExtractMark {
  kind: ExtractKind;
  expected: Record<string, ExtractValue>;
  verdict?: ExtractVerdict;
}

export interface ExtractPlan {
  seed: number;
  settings: SessionSettings;
  items: Array<{ prompt: string; mark: ExtractMark }>;
}

/** Enough for five short fields of JSON with any model's tokens. */
export const EXTRACT_MAX_NEW_TOKENS = 160;

/** Greedy, the kind's schema as response format; speculation as the person set it for new sessions. */
export function planExtract(n: number, seed: number, kind: ExtractKind, speculation: SpeculationSetting = 'auto'): ExtractPlan {
  const cases = makeExtractSuite(seed, n, kind);
  const settings: SessionSettings = { ...DEFAULT_SETTINGS, temperature: 0, topP: 1, topK: 0, maxNewTokens: EXTRACT_MAX_NEW_TOKENS, seed: 0, speculation, responseFormat: 'json_schema', jsonSchema: extractSchemaText(kind) };
  return { seed, settings, items: cases.map((c) => ({ prompt: c.prompt, mark: { kind, expected: c.expected } })) };
}

export function judgeExtract(mark: ExtractMark, reply: string): ExtractMark {
  return { ...mark, verdict: judgeExtraction(mark.kind, reply, mark.expected) };
}

export interface ExtractTally {
  numSessions: number;
  numJudged: number;
  numParsed: number;
  numMatchSchema: number;
  /** Fields equal to the document's, over all judged replies. */
  numCorrect: number;
  numFields: number;
}

export function tallyExtract(marks: readonly ExtractMark[]): ExtractTally {
  const judged = marks.map((m) => m.verdict).filter((v): v is ExtractVerdict => v !== undefined);
  return {
    numSessions: marks.length,
    numJudged: judged.length,
    numParsed: judged.filter((v) => v.parsed).length,
    numMatchSchema: judged.filter((v) => v.matchesSchema).length,
    numCorrect: judged.reduce((sum, v) => sum + v.numCorrect, 0),
    numFields: judged.reduce((sum, v) => sum + v.numFields, 0),
  };
}
