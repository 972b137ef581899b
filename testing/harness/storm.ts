// The cancel/close storm: random cancels, closes and new sessions against sessions that are
// generating, through any EngineApi (the browser worker from the harness page, the Node worker
// in tests). Drives and counts; asserts nothing.
import type { EngineApi } from '../../src/protocol/api';
import type { FinishReason } from '../../src/protocol/events';

type StormApi = Pick<EngineApi, 'createSession' | 'send' | 'cancel' | 'closeSession' | 'waitForTurn'>;

export interface StormOptions {
  /** Sessions generating before the first operation. */
  numSessions: number;
  numOperations: number;
  seed: number;
  prompts: string[];
}

export interface StormResult {
  counts: { cancel: number; close: number; create: number };
  /** How every turn the storm started ended ('closed' when its session was closed first). */
  reasons: Array<FinishReason | 'closed'>;
}

export async function cancelStorm(api: StormApi, options: StormOptions): Promise<StormResult> {
  let state = options.seed;
  const random = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const live = new Set<string>();
  const turns: Array<Promise<FinishReason | 'closed'>> = [];
  const start = async () => {
    const id = await api.createSession({ maxNewTokens: 12 + Math.floor(random() * 48), sampling: { temperature: 0.8, seed: Math.floor(random() * 1000) } });
    await api.send(id, options.prompts[Math.floor(random() * options.prompts.length)]!);
    live.add(id);
    turns.push(api.waitForTurn(id).then((r) => r.finishReason, () => 'closed' as const));
  };
  for (let i = 0; i < options.numSessions; i++) await start();
  const counts = { cancel: 0, close: 0, create: 0 };
  for (let op = 0; op < options.numOperations; op++) {
    const ids = [...live];
    const pick = ids[Math.floor(random() * ids.length)];
    const r = random();
    if (r < 0.4 && pick) {
      counts.cancel++;
      await api.cancel(pick);
    } else if (r < 0.7 && pick) {
      counts.close++;
      live.delete(pick);
      await api.closeSession(pick);
    } else {
      counts.create++;
      await start();
    }
    // Now and then let steps run between operations, so some land mid-step and some between.
    if (op % 8 === 0) await new Promise((resolve) => setTimeout(resolve, 30 * random()));
  }
  return { counts, reasons: await Promise.all(turns) };
}
