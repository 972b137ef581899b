// The "Extract x N" preset: N greedy panes, each with one generated document and the same JSON
// schema as response format, all sent at once; each pane is judged when its turn ends, from the engine's full text.
import type { ExtractKind } from '../../protocol/extract';
import { judgeExtract, planExtract } from '../derive/extract-plan';
import { errorMessage } from '../derive/error-message';
import { useRunsStore } from './runs-store';
import { addSessions, sendMessage, waitForTurn } from './session-actions';
import { useSessionsStore } from './sessions-store';

export async function runExtract(n: number, kind: ExtractKind): Promise<void> {
  const seed = Math.floor(Math.random() * 0x7fffffff);
  const plan = planExtract(n, seed, kind, useSessionsStore.getState().newSettings.speculation);
  const paneIds = addSessions(n, plan.settings, { labelPrefix: 'X', extract: plan.items.map((item) => item.mark) });
  useRunsStore.getState().setExtract({ seed, kind, paneIds });
  await Promise.all(
    plan.items.map(async (item, i) => {
      const paneId = paneIds[i]!;
      if (!(await sendMessage(paneId, item.prompt))) return;
      try {
        const result = await waitForTurn(paneId);
        useSessionsStore.getState().updateView(paneId, (view) => (view.extract ? { ...view, extract: judgeExtract(view.extract, result.text) } : view));
      } catch (error) {
        useSessionsStore.getState().updateView(paneId, (view) => ({ ...view, state: 'error', error: errorMessage(error) }));
      }
    }),
  );
}
