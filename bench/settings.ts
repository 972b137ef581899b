// What the benchmark runs: the session grid, repeats and the two workloads' prompts, from
// environment variables that bench/run.ts and bench:headless set. Data only; the measuring is in the spec.
import { makeNiahCase, makeNiahSuite, NIAH_MAX_NEW_TOKENS, seededRandom } from '../src/protocol/niah';
import type { Workload } from './report';

export interface BenchSettings {
  quick: boolean;
  sessions: number[];
  repeats: number;
  workloads: Workload[];
  chatNewTokens: number;
  niahNewTokens: number;
  /** Decoding sessions a long prompt joins in the latency measurement (0 skips it). */
  joinDecoders: number;
  joinPromptTokens: number;
  /** Speculation off vs on after the grid ('on'), instead of it ('only'), or not at all ('off'). */
  speculation: 'on' | 'off' | 'only';
  /** Structured output and sampling features side by side after the grid ('on'), instead of it ('only'), or not ('off'): features-grid.ts. */
  features: 'on' | 'off' | 'only';
  /** Most new tokens per features turn: 48 in small rounds, 128 with COHORT_BENCH_FEATURES_FULL=1. */
  featureTokens: number;
}

function numberList(value: string | undefined): number[] | undefined {
  if (!value) return undefined;
  const list = value.split(',').map((s) => Number(s.trim()));
  if (list.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`not a list of positive integers: ${value}`);
  return list;
}

function onOffOnly(name: string, value = 'on'): 'on' | 'off' | 'only' {
  if (value !== 'on' && value !== 'off' && value !== 'only') throw new Error(`${name}=${value}: on, off or only`);
  return value;
}

/**
 * Full grid: 1-16 sessions, 3 repeats, 64 new tokens per chat turn and the NIAH protocol's 24.
 * Quick grid: 1, 2 and 4 sessions, 32 new tokens per chat turn.
 */
export function benchSettings(env: NodeJS.ProcessEnv = process.env): BenchSettings {
  const quick = env.COHORT_BENCH_QUICK === '1';
  const workloads = (env.COHORT_BENCH_WORKLOADS ?? 'chat,niah').split(',').map((w) => w.trim());
  for (const w of workloads) if (w !== 'chat' && w !== 'niah') throw new Error(`unknown workload ${w} (chat, niah)`);
  const sessions = numberList(env.COHORT_BENCH_SESSIONS) ?? (quick ? [1, 2, 4] : [1, 2, 4, 8, 16]);
  return {
    quick,
    sessions,
    repeats: numberList(env.COHORT_BENCH_REPEATS)?.[0] ?? 3,
    workloads: workloads as Workload[],
    chatNewTokens: numberList(env.COHORT_BENCH_CHAT_TOKENS)?.[0] ?? (quick ? 32 : 64),
    niahNewTokens: NIAH_MAX_NEW_TOKENS,
    joinDecoders: Number(env.COHORT_BENCH_JOIN_DECODERS ?? 4),
    joinPromptTokens: numberList(env.COHORT_BENCH_JOIN_TOKENS)?.[0] ?? 1900,
    speculation: onOffOnly('COHORT_BENCH_SPECULATION', env.COHORT_BENCH_SPECULATION),
    features: onOffOnly('COHORT_BENCH_FEATURES', env.COHORT_BENCH_FEATURES),
    featureTokens: numberList(env.COHORT_BENCH_FEATURE_TOKENS)?.[0] ?? (env.COHORT_BENCH_FEATURES_FULL === '1' ? 128 : 48),
  };
}

/** Short chat turns (~50 tokens with the chat template around them). */
const CHAT_PROMPTS = [
  'Tell me a short story about a fox.',
  'What makes the sky look blue today?',
  'Give me three tips for a good nap.',
  'Write a haiku about autumn leaves.',
  'How do bees find their way home?',
  'Suggest a name for a small red boat.',
  'Why do cats like to sit in boxes?',
  'Describe the taste of a ripe mango.',
  'What is a good first word to learn?',
  'Write two lines about a rainy city.',
  'How should I start a tiny garden?',
  'Explain what a cloud is made of.',
  'Name a few games to play on a bus.',
  'What do owls do during the day?',
  'Write a riddle about a candle.',
  'How can I keep my tea warm longer?',
];

export function chatPrompts(n: number): string[] {
  return Array.from({ length: n }, (_, i) => CHAT_PROMPTS[i % CHAT_PROMPTS.length]!);
}

/**
 * Target for NIAH prompts of ~1,238 tokens, the reference result's context: niahLinesFor()
 * budgets more template overhead than the byte-level chat template takes, so 1,300 asked gives
 * 14 haystack lines, ~1,227 tokens (1,238 asked gives 13 lines, ~1,146). The report records the
 * measured mean.
 */
const NIAH_TARGET_TOKENS = 1300;

/** NIAH prompts of ~1,238 tokens, needles at spread depths. */
export function niahPrompts(n: number): Array<{ prompt: string; code: string }> {
  return makeNiahSuite(1238, n, NIAH_TARGET_TOKENS, NIAH_TARGET_TOKENS).map(({ prompt, code }) => ({ prompt, code }));
}

/**
 * A long prompt that shares nothing past the chat template with any other bench prompt (its
 * needle opens it), so the prefix cache cannot shorten its prefill; a new code per repeat.
 */
export function joinPrompt(targetTokens: number, repeat: number): string {
  return makeNiahCase(seededRandom(9000 + repeat), targetTokens, 0).prompt;
}
