// The soak's report: its JSON shape, how request outcomes are sorted into expected and unexpected
// errors, the pass/fail checks and the markdown. Pure (no browser, no files); the driver is soak.ts.
import { objectBytes, type HeapRetained } from './heap-snapshot';

/** Why a request may end with an error without anything being wrong: what the soak did to it. */
export type Disturbance = 'aborted' | 'reload' | 'frozen' | 'closed';

/** How one request ended, as the driver saw it. */
export interface RequestEnd {
  client: string;
  stream: boolean;
  n: number;
  /** 'deadline': still open at its deadline; 'lost': its tab went away under it (closed page). */
  end: 'ok' | 'error' | 'deadline' | 'lost';
  errorName: string | null;
  errorMessage: string | null;
  /** What the soak did while it ran (its own abort, a reload, its tab frozen or closed). */
  disturbances: Disturbance[];
  elapsedMs: number;
  completionTokens: number;
}

export interface Sample {
  atMs: number;
  /** JS heap used after a forced GC, bytes: the steady tab, the shared worker, the playground page. */
  pageHeapBytes: number;
  workerHeapBytes: number;
  playgroundHeapBytes: number | null;
  /** GPU buffers alive on the shared worker's device (created and not destroyed). */
  gpuBytes: number;
  gpuBuffers: number;
}

export interface SoakReport {
  date: string;
  commit: string;
  seed: number;
  durationMs: number;
  heartbeat: { intervalMs: number; timeoutMs: number };
  requestDeadlineMs: number;
  events: Array<{ atMs: number; kind: string; detail: string }>;
  requests: { served: number; total: number; byClient: Record<string, number>; tokens: number };
  errors: { expected: Record<string, number>; unexpected: Record<string, number>; unexpectedExamples: string[] };
  consoleErrors: string[];
  /** Requests that reached more than one end (a second finish_reason, a chunk after one), from the pages. */
  doubleEnds: number;
  /** Requests the pages started minus those that reached an end. */
  unended: number;
  samples: Sample[];
  kvBlocksUsedAtEnd: number | null;
  workerRestarts: number;
  /** Heap snapshots of the steady tab and the worker at the first sample past warm-up and at the end, compared (when taken). */
  heapKept?: { page?: HeapRetained; worker?: HeapRetained };
  /** The playground tabs (each its own dedicated worker, their panes shared): turns sent, how they ended, and the messages each reload kept. */
  playground: PlaygroundOutcome | null;
}

export interface PlaygroundOutcome {
  tabs: number;
  turns: number;
  done: number;
  failed: number;
  errors: Record<string, number>;
  /** After each reload of a playground tab: the messages sent in any tab (shown on screen before) against those the reloaded tab shows. */
  reloads: ReloadCount[];
}

export interface ReloadCount {
  atMs: number;
  tab: number;
  sent: number;
  present: number;
  /** Of the messages answered before the reload, how many still have their answer after it. */
  answered: number;
  answeredPresent: number;
  /** The markers of the messages (or answers) this reload did not bring back, so a loss can be traced to its turn. */
  missing: string[];
}

/** A message the soak sent in the playground: its marker, and whether its answer was on screen. */
export interface SentMessage {
  marker: string;
  answered: boolean;
}

/** The messages a page shows: each pane's lines, in order. */
export type ShownPanes = Array<Array<{ role: 'user' | 'assistant'; text: string }>>;

/** How many sent messages a page shows after a reload, and how many of the answered ones still have an answer. */
export function countPresent(sent: readonly SentMessage[], panes: ShownPanes, atMs: number, tab: number): ReloadCount {
  const shown = new Map<string, boolean>();
  for (const lines of panes) {
    lines.forEach((line, i) => {
      if (line.role !== 'user') return;
      const marker = /^\[soak [^\]]+\]/.exec(line.text)?.[0];
      if (marker) shown.set(marker, (shown.get(marker) ?? false) || (lines[i + 1]?.role === 'assistant' && lines[i + 1]!.text !== ''));
    });
  }
  const answered = sent.filter((m) => m.answered);
  return {
    atMs,
    tab,
    sent: sent.length,
    present: sent.filter((m) => shown.has(m.marker)).length,
    answered: answered.length,
    answeredPresent: answered.filter((m) => shown.get(m.marker) === true).length,
    missing: sent.filter((m) => !shown.has(m.marker) || (m.answered && shown.get(m.marker) !== true)).map((m) => m.marker),
  };
}

/** Messages (and answers) missing after the reloads, summed. */
export function lostMessages(reloads: readonly ReloadCount[]): number {
  return reloads.reduce((sum, r) => sum + (r.sent - r.present) + (r.answered - r.answeredPresent), 0);
}

/** AbortError after this page aborted; the lost tab's errors; typed errors of a reload or a freeze. */
export function classify(end: RequestEnd): { expected: boolean; type: string } | null {
  if (end.end === 'ok') return null;
  if (end.end === 'deadline') return { expected: false, type: 'deadline' };
  if (end.end === 'lost') return { expected: end.disturbances.includes('closed'), type: 'tab-closed' };
  const name = end.errorName ?? 'Error';
  if (name === 'AbortError' && end.disturbances.includes('aborted')) return { expected: true, type: 'AbortError' };
  // a reload ends every turn (ModelNotLoadedError) and refuses requests until the model is back
  if (end.disturbances.includes('reload') && name === 'ModelNotLoadedError') return { expected: true, type: `${name} (reload)` };
  // the worker ended the silent tab: its turns are cancelled and its connection refuses calls
  // (TabExpiredError); the thawed tab then terminates its engine and joins again, ending what still ran
  const frozenEnd = name === 'AbortError' || name === 'EngineTerminatedError' || /engine connection ended/.test(end.errorMessage ?? '');
  if (end.disturbances.includes('frozen') && frozenEnd) return { expected: true, type: `${name} (frozen tab)` };
  return { expected: false, type: name };
}

export function tallyErrors(ends: RequestEnd[]): SoakReport['errors'] {
  const errors: SoakReport['errors'] = { expected: {}, unexpected: {}, unexpectedExamples: [] };
  for (const end of ends) {
    const kind = classify(end);
    if (!kind) continue;
    const bucket = kind.expected ? errors.expected : errors.unexpected;
    bucket[kind.type] = (bucket[kind.type] ?? 0) + 1;
    if (!kind.expected && errors.unexpectedExamples.length < 10) {
      errors.unexpectedExamples.push(`${end.client} ${end.stream ? 'stream' : 'create'} n=${end.n} [${end.disturbances.join(',')}] ${kind.type}: ${end.errorMessage ?? ''}`.trim());
    }
  }
  return errors;
}

/**
 * Samples at each end of the measured span that growth compares by their median. A heap read after a
 * forced GC still moves by a few percent between samples (compiled code and V8's own metadata come and
 * go as functions tier up or are flushed; the worker's whole heap is ~2 MiB): one sample is not a trend.
 */
export const GROWTH_WINDOW = 3;

const medianOf = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * Growth over the samples past warm-up, as a fraction (0.05 = 5%): the median of the last
 * GROWTH_WINDOW samples against the median of the first ones (first against last with fewer than
 * two windows of samples); null with < 2 samples.
 */
export function growth(samples: Sample[], field: 'pageHeapBytes' | 'workerHeapBytes' | 'gpuBytes', warmUpMs: number): number | null {
  const after = samples.filter((s) => s.atMs >= warmUpMs).map((s) => s[field]);
  if (after.length < 2) return null;
  const window = after.length >= 2 * GROWTH_WINDOW ? GROWTH_WINDOW : 1;
  const first = medianOf(after.slice(0, window));
  const last = medianOf(after.slice(-window));
  return first === 0 ? (last === 0 ? 0 : Infinity) : (last - first) / first;
}

export interface Check {
  name: string;
  ok: boolean;
  value: string;
}

const mib = (bytes: number | null) => (bytes === null ? '-' : (bytes / 2 ** 20).toFixed(2));

/** Growth past warm-up may be at most this (heap and GPU bytes). */
export const MAX_GROWTH = 0.05;

/** What a soak must show; growth checks only when there are samples past warm-up to compare. */
export function checks(report: SoakReport, warmUpMs: number): Check[] {
  const unexpected = Object.values(report.errors.unexpected).reduce((a, b) => a + b, 0);
  const list: Check[] = [
    { name: 'requests served', ok: report.requests.served > 0, value: String(report.requests.served) },
    { name: 'unexpected errors', ok: unexpected === 0, value: String(unexpected) },
    { name: 'console errors', ok: report.consoleErrors.length === 0, value: String(report.consoleErrors.length) },
    { name: 'requests ended exactly once', ok: report.doubleEnds === 0 && report.unended === 0, value: `${report.doubleEnds} double, ${report.unended} unended` },
    { name: 'KV blocks in use at the end', ok: report.kvBlocksUsedAtEnd === 0, value: String(report.kvBlocksUsedAtEnd) },
    { name: 'worker restarts', ok: report.workerRestarts === 0, value: String(report.workerRestarts) },
  ];
  if (report.playground) {
    const { reloads } = report.playground;
    const lost = lostMessages(reloads);
    const sent = Math.max(0, ...reloads.map((r) => r.sent));
    list.push({ name: 'playground messages lost over reloads', ok: reloads.length > 0 && lost === 0, value: `${lost} lost; ${reloads.length} reloads of ${report.playground.tabs} tabs, ${sent} messages sent` });
  }
  // A heap read is compiled code and V8's metadata as well as objects: where snapshots tell them
  // apart, the check is on the objects and the sampled growth is a figure (figures() below).
  for (const field of ['pageHeapBytes', 'workerHeapBytes', 'gpuBytes'] as const) {
    if (field !== 'gpuBytes' && report.heapKept?.[field === 'pageHeapBytes' ? 'page' : 'worker']) continue;
    const g = growth(report.samples, field, warmUpMs);
    if (g !== null) list.push({ name: `${field} growth after warm-up`, ok: g <= MAX_GROWTH, value: `${(g * 100).toFixed(1)}%` });
  }
  for (const [target, kept] of Object.entries(report.heapKept ?? {})) {
    const start = objectBytes(kept.startByType);
    const g = (objectBytes(kept.endByType) - start) / start;
    list.push({ name: `${target} heap objects growth after warm-up (snapshots)`, ok: g <= MAX_GROWTH, value: `${(g * 100).toFixed(1)}% (${mib(start)} to ${mib(objectBytes(kept.endByType))} MiB)` });
  }
  return list;
}

const counts = (record: Record<string, number>) =>
  Object.keys(record).length === 0
    ? 'none'
    : Object.entries(record)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');

/** What the report shows beside its checks: the sampled heaps' growth and compiled code, where snapshots make them no check. */
export function figures(report: SoakReport, warmUpMs: number): Array<{ name: string; value: string }> {
  const list: Array<{ name: string; value: string }> = [];
  for (const [target, kept] of Object.entries(report.heapKept ?? {})) {
    const g = growth(report.samples, target === 'page' ? 'pageHeapBytes' : 'workerHeapBytes', warmUpMs);
    if (g !== null) list.push({ name: `${target} heap as sampled (objects, compiled code and V8 metadata)`, value: `${(g * 100).toFixed(1)}%` });
    const code = (t: Record<string, number>) => t['code'] ?? 0;
    list.push({ name: `${target} compiled code (snapshots)`, value: `${mib(code(kept.startByType))} to ${mib(code(kept.endByType))} MiB` });
  }
  return list;
}

export function renderMarkdown(report: SoakReport, warmUpMs: number): string {
  const results = checks(report, warmUpMs);
  return [
    `# Soak ${report.date} (${(report.durationMs / 60_000).toFixed(1)} min, seed ${report.seed}, ${report.commit})`,
    '',
    `Three tabs of one origin on the shared engine worker plus ${report.playground ? `${report.playground.tabs} playground tabs` : 'no playground'}, in headless Chromium; heartbeat ${report.heartbeat.intervalMs}/${report.heartbeat.timeoutMs} ms, per-request deadline ${report.requestDeadlineMs} ms.`,
    `${results.every((c) => c.ok) ? 'All checks pass.' : `FAILED: ${results.filter((c) => !c.ok).map((c) => c.name).join(', ')}.`}`,
    '',
    '| check | value | ok |',
    '| --- | --- | --- |',
    ...results.map((c) => `| ${c.name} | ${c.value} | ${c.ok ? 'yes' : 'NO'} |`),
    ...figures(report, warmUpMs).map((f) => `| ${f.name} | ${f.value} | (figure) |`),
    '',
    `Requests: ${report.requests.served} served of ${report.requests.total} (${counts(report.requests.byClient)}), ${report.requests.tokens} completion tokens.`,
    `Expected errors: ${counts(report.errors.expected)}. Unexpected: ${counts(report.errors.unexpected)}.`,
    ...report.errors.unexpectedExamples.map((e) => `- ${e}`),
    ...(report.consoleErrors.length ? ['', 'Console errors:', ...report.consoleErrors.slice(0, 10).map((e) => `- ${e}`)] : []),
    ...(report.playground ? ['', `Playground (${report.playground.tabs} tabs): ${report.playground.turns} turns, ${report.playground.done} done, ${report.playground.failed} not${Object.keys(report.playground.errors).length > 0 ? ` (${Object.entries(report.playground.errors).map(([why, n]) => `${why}: ${n}`).join('; ')})` : ''}.`] : []),
    ...(report.playground?.reloads.length ? ['', '| reload at (s) | tab | messages sent | present | answered | answer present |', '| --- | --- | --- | --- | --- | --- |', ...report.playground.reloads.map((r) => `| ${(r.atMs / 1000).toFixed(0)} | ${r.tab} | ${r.sent} | ${r.present} | ${r.answered} | ${r.answeredPresent} |`)] : []),
    '',
    `Events: ${report.events.map((e) => `${(e.atMs / 1000).toFixed(0)} s ${e.kind}`).join('; ') || 'none'}.`,
    '',
    ...Object.entries(report.heapKept ?? {}).flatMap(([target, kept]) => keptLines(target, kept)),
    '| t (s) | page heap MiB | worker heap MiB | playground heap MiB | GPU MiB | GPU buffers |',
    '| --- | --- | --- | --- | --- | --- |',
    ...report.samples.map((s) => `| ${(s.atMs / 1000).toFixed(0)} | ${mib(s.pageHeapBytes)} | ${mib(s.workerHeapBytes)} | ${mib(s.playgroundHeapBytes)} | ${mib(s.gpuBytes)} | ${s.gpuBuffers} |`),
    '',
  ].join('\n');
}

function keptLines(target: string, kept: HeapRetained): string[] {
  const kib = (bytes: number) => (bytes / 1024).toFixed(1);
  const types = Object.keys(kept.endByType).filter((t) => (kept.endByType[t] ?? 0) >= 1024);
  return [
    `The ${target}'s heap snapshots (first sample past warm-up, end), KiB by type: ${types.map((t) => `${t} ${kib(kept.startByType[t] ?? 0)} to ${kib(kept.endByType[t]!)}`).join(', ')}.`,
    `Allocated in between and alive at the end: ${kib(kept.newAliveBytes)} KiB, the largest kinds:`,
    '',
    '| kind | count | KiB |',
    '| --- | --- | --- |',
    ...kept.byKind.map((g) => `| ${g.kind} | ${g.count} | ${kib(g.bytes)} |`),
    '',
  ];
}
