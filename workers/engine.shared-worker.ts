// The shared engine worker: one engine (worker-engine.ts) for every tab of the origin, EngineApi
// served with comlink on each tab's port (tab-connection.ts). Wiring only; the library starts it.
import * as Comlink from 'comlink';
import { SharedLoads, TabConnection } from './tab-connection';
import { engine } from './worker-engine';

/** SharedWorkerGlobalScope's one event this file needs (the WebWorker lib is not in tsconfig). */
interface ConnectScope {
  addEventListener(type: 'connect', listener: (event: MessageEvent) => void): void;
}

/** How often silent tabs are looked for; a tab's own timeout is what it asked for in hello(). */
const HEARTBEAT_CHECK_MS = 500;

const loads = new SharedLoads(engine);
const tabs = new Set<TabConnection>();

(self as unknown as ConnectScope).addEventListener('connect', (event) => {
  const port = event.ports[0]!;
  // The port stays open after a tab ends: a tab that was only frozen gets errors, not silence.
  const tab = new TabConnection(engine, loads, (ended, reason) => {
    tabs.delete(ended);
    console.info(`cohort shared worker: a tab left (${reason}); ${tabs.size} remain`);
  });
  tabs.add(tab);
  Comlink.expose(tab.api, port);
});

setInterval(() => {
  const nowMs = Date.now();
  for (const tab of [...tabs]) tab.checkHeartbeat(nowMs);
}, HEARTBEAT_CHECK_MS);
