// Structured output and sampling features side by side in one run on one engine: 8 JSON-schema
// sessions batched vs serialized, the same 8 constrained vs unconstrained (batched), and sampling with
// penalties, bias and logprobs vs plain sampling (batched). Each case's two sides alternate first
// per repeat; ratios are medians of per-repeat ratios. Not the per-step kernel costs (bench:constraints).
import { Validator, type Schema } from '@cfworker/json-schema';
import type { SessionOptions } from '../src/protocol/api';
import { median } from '../src/protocol/metrics';
import { JSON_SCHEMAS } from '../src/reference/testing/json-schemas';
import type { RunRecord } from '../testing/harness/driver';
import type { FeatureCase, FeaturePoint, FeatureSide, RunSummary } from './report';
import { chatPrompts, type BenchSettings } from './settings';
import { greedy, summarize, type RunWorkload } from './workload';

/** Eight of the test schemas (nested objects, arrays, enums, numbers, required fields), one per session. */
const SCHEMA_NAMES = ['person', 'nested', 'invoice', 'scores', 'status', 'address', 'extraction', 'nullable'];

/** Plain sampling as bench:sampling has it; the featured side adds every per-row feature to it. */
const PLAIN_SAMPLING = { temperature: 0.8, topK: 40, topP: 0.95 };
const FEATURED_SAMPLING = { ...PLAIN_SAMPLING, frequencyPenalty: 0.5, presencePenalty: 0.3, repetitionPenalty: 1.1, logitBias: { 13: -100, 42: 5 }, logprobs: 5 };

export const FEATURE_CASES: FeatureCase[] = [
  { name: 'JSON schema x8', sessions: 8, a: 'serialized', b: 'batched' },
  { name: 'JSON schema x8, batched', sessions: 8, a: 'unconstrained', b: 'constrained' },
  { name: 'sampling x8, batched', sessions: 8, a: 'plain', b: 'penalties + bias + logprobs (top 5)' },
];

interface SideRun {
  mode: 'batched' | 'serialized';
  turns: { prompt: string; options: SessionOptions }[];
}

/** The turns of one side of a case, `newTokens` each at most. */
function sideRun(c: FeatureCase, side: 'a' | 'b', newTokens: number): SideRun {
  const prompts = chatPrompts(c.sessions);
  const label = side === 'a' ? c.a : c.b;
  if (c.name.startsWith('sampling')) {
    const sampling = label === 'plain' ? PLAIN_SAMPLING : FEATURED_SAMPLING;
    // full length on both sides (EOS ignored), seeded per session, speculation off as in the grid
    return { mode: 'batched', turns: prompts.map((prompt, i) => ({ prompt, options: { ...greedy(newTokens), sampling: { ...sampling, seed: 100 + i } } })) };
  }
  const constrained = label !== 'unconstrained';
  const turns = prompts.map((prompt, i) => {
    const name = SCHEMA_NAMES[i % SCHEMA_NAMES.length]!;
    // a constrained reply ends where its grammar does, so EOS counts; greedy, so both modes must agree
    // unconstrained: full length (EOS ignored), so its steps keep every row, as a constrained side's do until a reply ends
    const options: SessionOptions = { sampling: { temperature: 0 }, maxNewTokens: newTokens, speculation: 'off', ...(constrained ? {} : { ignoreEos: true }) };
    if (constrained) options.sampling = { temperature: 0, constraint: { kind: 'json_schema', schema: JSON.stringify(JSON_SCHEMAS[name]) } };
    return { prompt: `${prompt} Reply with ${name} as JSON.`, options };
  });
  return { mode: label === 'serialized' ? 'serialized' : 'batched', turns };
}

/** Replies that stopped (EOS or a stop token, not cut by maxNewTokens) and of those the ones that parse and validate against their schema. */
function validity(c: FeatureCase, side: 'a' | 'b', record: RunRecord): { stopped: number; valid: number } | null {
  const label = side === 'a' ? c.a : c.b;
  if (c.name.startsWith('sampling') || label === 'unconstrained') return null;
  let stopped = 0;
  let valid = 0;
  record.turns.forEach((t, i) => {
    if (t.result.finishReason !== 'eos' && t.result.finishReason !== 'stop') return; // ended where its grammar may end
    stopped++;
    try {
      const schema = JSON_SCHEMAS[SCHEMA_NAMES[i % SCHEMA_NAMES.length]!] as Schema;
      if (new Validator(schema, '2020-12').validate(JSON.parse(t.result.text)).valid) valid++;
    } catch {
      // not JSON: counted as stopped, not valid
    }
  });
  return { stopped, valid };
}

/** Median wall ms of a run's decode-only steps that carry all `rows` rows (null: none did). */
function fullStepMs(record: RunRecord, rows: number): number | null {
  const ms = record.steps.filter((s) => s.rows.length === rows && s.rows.every((r) => r.kind === 'decode')).map((s) => s.elapsedMs);
  return ms.length > 0 ? median(ms) : null;
}

async function measureCase(run: RunWorkload, settings: BenchSettings, c: FeatureCase): Promise<FeaturePoint> {
  const runs: Record<'a' | 'b', RunSummary[]> = { a: [], b: [] };
  const ratios: number[] = [];
  const stepRatios: number[] = [];
  const checks: Record<'a' | 'b', { stopped: number; valid: number; replies: number }> = { a: { stopped: 0, valid: 0, replies: 0 }, b: { stopped: 0, valid: 0, replies: 0 } };
  const finishReasons: Record<'a' | 'b', Record<string, number>> = { a: {}, b: {} };
  let outputsMatch = true;
  // warm-up on both sides: pipelines, grammars compiled (the engine's cache), the prefix cache
  for (const side of ['a', 'b'] as const) {
    const { mode, turns } = sideRun(c, side, 4);
    await run({ mode, turns });
  }
  for (let repeat = 0; repeat < settings.repeats; repeat++) {
    const sides: ('a' | 'b')[] = repeat % 2 === 0 ? ['a', 'b'] : ['b', 'a'];
    const outputs: Partial<Record<'a' | 'b', string>> = {};
    const tokensPerSec: Partial<Record<'a' | 'b', number>> = {};
    const stepMs: Partial<Record<'a' | 'b', number | null>> = {};
    for (const side of sides) {
      const record = await run(sideRun(c, side, settings.featureTokens));
      const summary = summarize(record, repeat);
      runs[side].push(summary);
      tokensPerSec[side] = summary.tokensPerSec;
      stepMs[side] = fullStepMs(record, c.sessions);
      outputs[side] = JSON.stringify(record.turns.map((t) => t.result.outputTokenIds));
      for (const t of record.turns) finishReasons[side][t.result.finishReason] = (finishReasons[side][t.result.finishReason] ?? 0) + 1;
      const errors = record.turns.flatMap((t) => (t.result.error ? [t.result.error] : []));
      if (errors.length > 0) console.log(`${c.name} ${side === 'a' ? c.a : c.b}: ${errors.length} turns ended with an error, e.g. ${errors[0]}`);
      const v = validity(c, side, record);
      if (v) {
        checks[side].stopped += v.stopped;
        checks[side].valid += v.valid;
        checks[side].replies += record.turns.length;
      }
      console.log(`${c.name} ${side === 'a' ? c.a : c.b} #${repeat + 1}: ${summary.tokensPerSec.toFixed(1)} tok/s (${summary.decodeTokens} tokens in ${summary.forwardPasses} passes)`);
    }
    ratios.push(tokensPerSec.b! / tokensPerSec.a!);
    if (stepMs.a && stepMs.b) stepRatios.push(stepMs.b / stepMs.a);
    outputsMatch &&= outputs.a === outputs.b;
  }
  const side = (s: 'a' | 'b'): FeatureSide => ({ medianTokensPerSec: median(runs[s].map((r) => r.tokensPerSec)), runs: runs[s], finishReasons: finishReasons[s], ...(checks[s].replies > 0 ? { replies: checks[s] } : {}) });
  // only the serialized-vs-batched case must give the same tokens; the others change what is sampled
  return { ...c, newTokens: settings.featureTokens, sideA: side('a'), sideB: side('b'), ratio: median(ratios), ratios, ...(stepRatios.length > 0 ? { stepRatio: median(stepRatios) } : {}), ...(c.a === 'serialized' ? { outputsMatch } : {}) };
}

export async function runFeaturesGrid(run: RunWorkload, settings: BenchSettings, cases = FEATURE_CASES): Promise<FeaturePoint[]> {
  const points: FeaturePoint[] = [];
  for (const c of cases) points.push(await measureCase(run, settings, c));
  return points;
}
