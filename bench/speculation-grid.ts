// Speculation off vs on, side by side in one run on one engine (batched): NIAH x1 and x8 (the answer
// is copied from the context), chat x1 and x16 (drafts rarely match: 'auto' must not lose, at 64 and
// 128 tokens) and NIAH x1 with a prediction.
import { median, speculationFigures, speedup } from '../src/protocol/metrics';
import { greedy, summarize, workloadPrompts, type RunWorkload } from './workload';
import type { RunSummary, SpeculationCase, SpeculationPoint, SpeculationSide } from './report';
import type { BenchSettings } from './settings';

export const SPECULATION_CASES: SpeculationCase[] = [
  { name: 'NIAH x1', workload: 'niah', sessions: 1, prediction: false },
  { name: 'NIAH x8', workload: 'niah', sessions: 8, prediction: false },
  { name: 'chat x1', workload: 'chat', sessions: 1, prediction: false },
  // 'auto' backs off where drafts rarely match: over a longer turn that must cost (almost) nothing
  { name: 'chat x1, 128 tokens', workload: 'chat', sessions: 1, prediction: false, newTokens: 128 },
  { name: 'chat x16', workload: 'chat', sessions: 16, prediction: false },
  { name: 'NIAH x1, prediction = the answer', workload: 'niah', sessions: 1, prediction: true },
];

type Side = 'off' | 'on';

function caseTurns(settings: BenchSettings, c: SpeculationCase, side: Side, maxNewTokens?: number) {
  const { prompts, newTokens } = workloadPrompts(settings, c.workload, c.sessions, maxNewTokens ?? c.newTokens);
  return prompts.map(({ prompt, code }) => {
    // 'on' is the default a user gets (auto: the cost model and the measured acceptance choose k)
    const options = greedy(newTokens, side === 'on');
    if (c.prediction && side === 'on') options.predictionText = code;
    return { prompt, options };
  });
}

async function measureCase(run: RunWorkload, settings: BenchSettings, c: SpeculationCase): Promise<SpeculationPoint> {
  const runs: Record<Side, RunSummary[]> = { off: [], on: [] };
  const steps: Record<Side, Parameters<typeof speculationFigures>[0][number][]> = { off: [], on: [] };
  let outputsMatch = true;
  // warm-up on both sides: pipelines, the prefix cache with these prompts, and auto's cost model
  for (const side of ['off', 'on'] as const) await run({ mode: 'batched', turns: caseTurns(settings, c, side, 4) });
  for (let repeat = 0; repeat < settings.repeats; repeat++) {
    const sides: Side[] = repeat % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
    const outputs: Partial<Record<Side, string>> = {};
    for (const side of sides) {
      const record = await run({ mode: 'batched', turns: caseTurns(settings, c, side) });
      const summary = summarize(record, repeat);
      runs[side].push(summary);
      steps[side].push(...record.steps);
      outputs[side] = JSON.stringify(record.turns.map((t) => t.result.outputTokenIds));
      console.log(`speculation ${c.name} ${side} #${repeat + 1}: ${summary.tokensPerSec.toFixed(1)} tok/s (${summary.decodeTokens} tokens in ${summary.forwardPasses} passes)`);
    }
    outputsMatch &&= outputs.off === outputs.on;
  }
  const side = (s: Side): SpeculationSide => {
    const figures = speculationFigures(steps[s]);
    return { medianTokensPerSec: median(runs[s].map((r) => r.tokensPerSec)), runs: runs[s], acceptanceRate: figures.acceptanceRate, tokensPerRowStep: figures.tokensPerRowStep };
  };
  const off = side('off');
  const on = side('on');
  return { ...c, off, on, ratio: speedup({ tokensPerSec: on.medianTokensPerSec }, { tokensPerSec: off.medianTokensPerSec }) ?? Number.NaN, outputsMatch };
}

export async function runSpeculationGrid(run: RunWorkload, settings: BenchSettings, cases = SPECULATION_CASES): Promise<SpeculationPoint[]> {
  const points: SpeculationPoint[] = [];
  for (const c of cases) points.push(await measureCase(run, settings, c));
  return points;
}
