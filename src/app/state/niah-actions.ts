// The "NIAH x N" preset: N greedy panes, each with its own needle and haystack length, sent a
// few hundred ms apart; each pane is judged when its turn ends, from the engine's full text.
import { judgeNiah, planNiah } from '../derive/niah-plan';
import { errorMessage } from '../derive/error-message';
import { useRunsStore } from './runs-store';
import { addSessions, sendMessage, waitForTurn } from './session-actions';
import { useSessionsStore } from './sessions-store';

export const NIAH_STAGGER_MS = 300;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The preset with the new-session settings' speculation (its other settings are the protocol's). */
export async function runNiah(n: number, maxTokens: number): Promise<void> {
  const seed = Math.floor(Math.random() * 0x7fffffff);
  const plan = planNiah(n, seed, maxTokens, NIAH_STAGGER_MS, useSessionsStore.getState().newSettings.speculation);
  const marks = plan.items.map((item) => ({ code: item.code, numLines: item.numLines, allCodes: plan.allCodes }));
  const paneIds = addSessions(n, plan.settings, { labelPrefix: 'N', niah: marks });
  useRunsStore.getState().setNiah({ seed, maxTokens, paneIds });
  await Promise.all(
    plan.items.map(async (item, i) => {
      const paneId = paneIds[i];
      await sleep(item.delayMs);
      if (!(await sendMessage(paneId, item.prompt))) return;
      try {
        const result = await waitForTurn(paneId);
        useSessionsStore.getState().updateView(paneId, (view) => (view.niah ? { ...view, niah: judgeNiah(view.niah, result.text) } : view));
      } catch (error) {
        useSessionsStore.getState().updateView(paneId, (view) => ({ ...view, state: 'error', error: errorMessage(error) }));
      }
    }),
  );
}
