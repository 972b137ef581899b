// The speculation grid over a scripted workload runner: sides alternate, 'off' asks for no drafts,
// the prediction case predicts each secret, and the figures come from the recorded steps.
import { describe, expect, it } from 'vitest';
import type { RunRecord, RunRequest } from '../testing/harness/driver';
import { speculationMarkdown } from './report';
import { benchSettings } from './settings';
import { runSpeculationGrid, SPECULATION_CASES } from './speculation-grid';

/** One session, 4 decode tokens: off in 4 steps of 10 ms, on in 2 steps of 10 ms (2 drafted, 1 accepted each). */
function scriptedRun(requests: RunRequest[]) {
  return async (request: RunRequest): Promise<RunRecord> => {
    requests.push(request);
    const on = request.turns[0]!.options?.speculation !== 'off';
    const rows = (i: number) => [{ sessionId: 's', kind: 'decode' as const, numTokens: on ? 3 : 1, position: i, newTokenIds: on ? [1, 2] : [1], ...(on ? { numDrafted: 2, numAccepted: 1 } : {}) }];
    const steps = Array.from({ length: on ? 2 : 4 }, (_, i) => ({ stepIndex: i, startedAtMs: 10 * i, elapsedMs: 10, mode: 'batched' as const, numTokens: 1, queueDepth: 0, numRunning: 1, kvBlocksUsed: 1, receivedAtMs: 0, rows: rows(i) }));
    const result = { promptTokenIds: [0], outputTokenIds: [1, 1, 1, 1], outputText: '', finishReason: 'length' } as unknown as RunRecord['turns'][number]['result'];
    return { mode: request.mode, wallMs: 40, steps, turns: [{ sessionId: 's', sentAtMs: 0, sentAfterSteps: 0, result }] };
  };
}

describe('runSpeculationGrid', () => {
  it('measures off against on with alternating sides and reads drafts from the steps', async () => {
    const requests: RunRequest[] = [];
    const settings = { ...benchSettings({}), repeats: 2 };
    const [niah, predicted] = await runSpeculationGrid(scriptedRun(requests), settings, [SPECULATION_CASES[0]!, SPECULATION_CASES[5]!]);
    expect(niah!.off.medianTokensPerSec).toBeCloseTo(100); // 4 tokens in 40 ms
    expect(niah!.on.medianTokensPerSec).toBeCloseTo(200); // 4 tokens in 20 ms
    expect(niah!.ratio).toBeCloseTo(2);
    expect(niah!.on.acceptanceRate).toBeCloseTo(0.5);
    expect(niah!.on.tokensPerRowStep).toBeCloseTo(2);
    expect(niah!.off.acceptanceRate).toBeNull();
    expect(niah!.outputsMatch).toBe(true);
    // per case: warm-up off and on, then repeat 1 off first, repeat 2 on first
    const sides = requests.slice(0, 6).map((r) => r.turns[0]!.options?.speculation ?? 'auto');
    expect(sides).toEqual(['off', 'auto', 'off', 'auto', 'auto', 'off']);
    expect(requests.every((r) => r.mode === 'batched')).toBe(true);
    const predictedOn = requests.slice(6).find((r) => r.turns[0]!.options?.speculation !== 'off')!;
    expect(predictedOn.turns[0]!.options?.predictionText).toMatch(/^[A-Z]+-\d{4}$/);
    expect(predictedOn.turns[0]!.prompt).toContain(predictedOn.turns[0]!.options!.predictionText!);
    expect(speculationMarkdown([niah!, predicted!]).join('\n')).toContain('| NIAH x1 | 100.0 | 200.0 | 2.00x | 50% | 2.00 | yes |');
  });

  it("includes a 128-token chat session whose drafts rarely match, asked for 128 tokens on both sides after a 4-token warm-up", async () => {
    const requests: RunRequest[] = [];
    const chat128 = SPECULATION_CASES.find((c) => c.name === 'chat x1, 128 tokens')!;
    expect(chat128).toMatchObject({ workload: 'chat', sessions: 1, prediction: false });
    await runSpeculationGrid(scriptedRun(requests), { ...benchSettings({}), repeats: 1 }, [chat128]);
    expect(requests.map((r) => r.turns[0]!.options?.maxNewTokens)).toEqual([4, 4, 128, 128]);
    expect(requests.map((r) => r.turns[0]!.options?.speculation ?? 'auto')).toEqual(['off', 'auto', 'off', 'auto']);
  });
});
