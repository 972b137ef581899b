// The needle-in-a-haystack protocol of DESIGN.md as data: seeded prompt generation and the
// pass check, shared by the UI preset, the e2e recall test and the bench. No engine, no DOM.
import { mulberry32 } from '../engine/seeded-random';

export const NIAH_PREFIXES = [
  'ALPHA', 'BETA', 'GAMMA', 'DELTA', 'EPSILON', 'ZETA', 'ETA', 'THETA', 'IOTA', 'KAPPA',
  'ORCHID', 'PINE', 'MAPLE', 'OAK', 'BIRCH',
] as const;
export const NIAH_QUESTION = 'Question: what is the secret code? Answer:';
export const NIAH_MAX_NEW_TOKENS = 24;

/** Bytes of one haystack line plus its newline; the default model's tokens are bytes. */
const LINE_TOKENS = 81;
/** Chat-template and question overhead around the haystack, in tokens. */
const OVERHEAD_TOKENS = 110;

export interface NiahCase {
  /** The user message (wrapped by the chat template when sent). */
  prompt: string;
  code: string;
  numLines: number;
  /** Line index the needle was inserted at (0..numLines). */
  needleLine: number;
}

/** The prompts' seeded stream (mulberry32), so a suite is reproducible from its seed. */
export function seededRandom(seed: number): () => number {
  return mulberry32(seed);
}

export function niahLine(i: number): string {
  return `Note ${String(i).padStart(4, '0')}: this paragraph is unrelated padding and does not contain the answer.`;
}

/** Haystack lines, the needle at needleLine with blank lines around it, then the question. */
export function niahPrompt(numLines: number, needleLine: number, code: string): string {
  const lines = Array.from({ length: numLines }, (_, i) => niahLine(i));
  lines.splice(needleLine, 0, '', `IMPORTANT: the secret code is ${code}.`, '');
  return lines.join('\n') + '\n\n' + NIAH_QUESTION;
}

/** Lines that make a chat prompt of about targetTokens with a byte-level tokenizer. */
export function niahLinesFor(targetTokens: number): number {
  return Math.max(1, Math.floor((targetTokens - OVERHEAD_TOKENS) / LINE_TOKENS));
}

export function makeNiahCase(random: () => number, targetTokens: number, depth: number): NiahCase {
  const prefix = NIAH_PREFIXES[Math.floor(random() * NIAH_PREFIXES.length)];
  const code = `${prefix}-${1000 + Math.floor(random() * 9000)}`;
  const numLines = niahLinesFor(targetTokens);
  const needleLine = Math.min(numLines, Math.max(0, Math.round(depth * numLines)));
  return { prompt: niahPrompt(numLines, needleLine, code), code, numLines, needleLine };
}

/**
 * n cases with distinct codes, lengths spread evenly over [minTokens, maxTokens] and depths
 * spread over 0..100%, shuffled together so length and depth are not correlated.
 */
export function makeNiahSuite(seed: number, n: number, minTokens: number, maxTokens: number): NiahCase[] {
  const random = seededRandom(seed);
  const depths = Array.from({ length: n }, (_, i) => (n === 1 ? 0.5 : i / (n - 1)));
  for (let i = depths.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [depths[i], depths[j]] = [depths[j], depths[i]];
  }
  const cases: NiahCase[] = [];
  const codes = new Set<string>();
  for (let i = 0; i < n; i++) {
    const target = n === 1 ? minTokens : minTokens + ((maxTokens - minTokens) * i) / (n - 1);
    let c = makeNiahCase(random, target, depths[i]);
    while (codes.has(c.code)) c = makeNiahCase(random, target, depths[i]);
    codes.add(c.code);
    cases.push(c);
  }
  return cases;
}

/** A session passes when its own code appears in its output. */
export function niahPassed(output: string, code: string): boolean {
  return output.includes(code);
}

/** Codes of other cases that leaked into this output (must always be empty). */
export function niahLeaks(output: string, code: string, allCodes: string[]): string[] {
  return allCodes.filter((c) => c !== code && output.includes(c));
}
