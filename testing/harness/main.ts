// Harness page entry: starts the engine worker exactly as the app does and exposes it on
// window.cohort for Playwright (recall test, benchmark). Renders nothing; not part of the UI.
import * as Comlink from 'comlink';
import type { EngineApi, EngineNotice } from '../../src/protocol/api';
import { runTurns, StepLog, type RunRecord, type RunRequest, type StepRecord } from './driver';
import { drawThroughputChart, type ChartSeries } from './chart';
import { cancelStorm, type StormOptions, type StormResult } from './storm';

export interface CohortHarness {
  api: Comlink.Remote<EngineApi>;
  /** Every step event since the page loaded, as plain data. */
  events: StepRecord[];
  /** Every engine notice (GPU lost, restored) since the page loaded. */
  notices: EngineNotice[];
  /** Sends a workload and resolves with its turns and steps (see driver.ts). */
  run(request: RunRequest): Promise<RunRecord>;
  /** Draws a tokens/sec-vs-sessions chart into the page for a screenshot. */
  drawChart(title: string, series: ChartSeries[]): void;
  /** Random cancels, closes and new sessions against generating ones (see storm.ts). */
  storm(options: StormOptions): Promise<StormResult>;
}

declare global {
  interface Window {
    cohort: CohortHarness;
  }
}

const worker = new Worker(new URL('../../workers/engine.worker.ts', import.meta.url), { type: 'module', name: 'cohort-engine' });
const api = Comlink.wrap<EngineApi>(worker);
const log = new StepLog();

// The remote's methods return Promise-wrapped values; the driver only needs EngineApi's shape.
const engine = api as unknown as EngineApi;

window.cohort = {
  api,
  events: log.steps,
  notices: [],
  run: (request) => runTurns(engine, log, request),
  drawChart: (title, series) => drawThroughputChart(document.body, title, series),
  storm: (options) => cancelStorm(engine, options),
};

// harness.html?log prints one line per step to the console (Playwright can forward it).
const logSteps = new URLSearchParams(location.search).has('log');

void api.subscribeNotices(Comlink.proxy((notice) => void window.cohort.notices.push(notice)));

void api.subscribe(Comlink.proxy((event) => {
  log.push(event);
  if (logSteps) {
    const rows = event.rows.map((r) => `${r.sessionId}:${r.kind === 'decode' ? 'd' : 'p'}${r.numTokens}`).join(' ');
    console.log(`step ${event.stepIndex} ${event.mode} ${event.elapsedMs.toFixed(0)} ms [${rows}] queue ${event.queueDepth}`);
  }
})).then(() => {
  document.getElementById('status')!.textContent = 'ready';
  document.body.dataset.ready = 'true';
});
