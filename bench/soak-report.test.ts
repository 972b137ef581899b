// The soak report's sorting of request ends into expected and unexpected errors, its growth figure and checks,
// and the playground's messages counted after each reload.
import { describe, expect, it } from 'vitest';
import { checks, classify, countPresent, figures, growth, lostMessages, tallyErrors, type RequestEnd, type Sample, type SoakReport } from './soak-report';

const end = (fields: Partial<RequestEnd>): RequestEnd => ({ client: 'tab0.0', stream: true, n: 1, end: 'error', errorName: null, errorMessage: null, disturbances: [], elapsedMs: 10, completionTokens: 0, ...fields });

describe('classify', () => {
  it('counts an AbortError as expected only when the page aborted the request', () => {
    expect(classify(end({ errorName: 'AbortError', disturbances: ['aborted'] }))).toEqual({ expected: true, type: 'AbortError' });
    expect(classify(end({ errorName: 'AbortError' }))).toEqual({ expected: false, type: 'AbortError' });
  });

  it('expects ModelNotLoadedError during a reload and nothing else from it', () => {
    expect(classify(end({ errorName: 'ModelNotLoadedError', disturbances: ['reload'] }))?.expected).toBe(true);
    expect(classify(end({ errorName: 'ModelNotLoadedError' }))?.expected).toBe(false);
    expect(classify(end({ errorName: 'EngineError', disturbances: ['reload'] }))?.expected).toBe(false);
  });

  it("expects a frozen tab's cancelled turns and ended connection", () => {
    expect(classify(end({ errorName: 'Error', errorMessage: "this tab's engine connection ended (silent): create a new engine", disturbances: ['frozen'] }))?.expected).toBe(true);
    expect(classify(end({ errorName: 'AbortError', disturbances: ['frozen'] }))?.expected).toBe(true);
    expect(classify(end({ errorName: 'TabExpiredError', errorMessage: "this tab's engine connection ended (silent): the engine dropped this tab after its heartbeat expired", disturbances: ['frozen'] }))?.expected).toBe(true);
    expect(classify(end({ errorName: 'EngineTerminatedError', disturbances: ['frozen'] }))?.expected).toBe(true);
    expect(classify(end({ errorName: 'EngineTerminatedError' }))?.expected).toBe(false);
    expect(classify(end({ errorName: 'Error', errorMessage: 'boom', disturbances: ['frozen'] }))?.expected).toBe(false);
  });

  it('never expects a deadline; a lost request only when its tab was closed', () => {
    expect(classify(end({ end: 'deadline', disturbances: ['reload', 'aborted'] }))).toEqual({ expected: false, type: 'deadline' });
    expect(classify(end({ end: 'lost', disturbances: ['closed'] }))?.expected).toBe(true);
    expect(classify(end({ end: 'lost' }))?.expected).toBe(false);
    expect(classify(end({ end: 'ok' }))).toBeNull();
  });

  it('tallies by type and keeps examples of the unexpected ones', () => {
    const errors = tallyErrors([end({ end: 'ok' }), end({ errorName: 'AbortError', disturbances: ['aborted'] }), end({ end: 'deadline', errorMessage: 'late' })]);
    expect(errors.expected).toEqual({ AbortError: 1 });
    expect(errors.unexpected).toEqual({ deadline: 1 });
    expect(errors.unexpectedExamples).toEqual(['tab0.0 stream n=1 [] deadline: late']);
  });
});

const sample = (atMs: number, bytes: number): Sample => ({ atMs, pageHeapBytes: bytes, workerHeapBytes: bytes, playgroundHeapBytes: null, gpuBytes: bytes, gpuBuffers: 1 });

describe('growth and checks', () => {
  it('measures growth from the first sample past warm-up', () => {
    expect(growth([sample(0, 50), sample(30_000, 100), sample(60_000, 104)], 'pageHeapBytes', 30_000)).toBeCloseTo(0.04);
    expect(growth([sample(0, 50), sample(30_000, 100)], 'pageHeapBytes', 30_000)).toBeNull();
  });

  it('compares the medians of the first and last samples once there are two windows of them', () => {
    // one high reading at either end is not growth; a rise the last samples share is
    const noisy = [100, 90, 100, 101, 100, 112].map((b, i) => sample(30_000 * (i + 1), b));
    expect(growth(noisy, 'workerHeapBytes', 30_000)).toBeCloseTo(0.01); // 101 against 100: neither 90 nor 112 counts
    const rising = [100, 100, 100, 108, 108, 108].map((b, i) => sample(30_000 * (i + 1), b));
    expect(growth(rising, 'workerHeapBytes', 30_000)).toBeCloseTo(0.08);
  });

  it('checks heap objects by snapshots where they were taken, the sampled heap then only a figure', () => {
    const kept = (endObjects: number) => ({ startBytes: 0, endBytes: 0, startByType: { object: 1000, code: 500 }, endByType: { object: endObjects, code: 900 }, newAliveBytes: 10, byKind: [] });
    const base = { date: '2026-01-01', commit: 'abc', seed: 1, durationMs: 60_000, heartbeat: { intervalMs: 250, timeoutMs: 3000 }, requestDeadlineMs: 1000, events: [],
      requests: { served: 5, total: 5, byClient: {}, tokens: 10 }, errors: { expected: {}, unexpected: {}, unexpectedExamples: [] },
      consoleErrors: [], doubleEnds: 0, unended: 0, samples: [], kvBlocksUsedAtEnd: 0, workerRestarts: 0, playground: null };
    const snapshotCheck = (r: SoakReport) => checks(r, 0).find((c) => c.name === 'worker heap objects growth after warm-up (snapshots)');
    expect(snapshotCheck(base)).toBeUndefined();
    // compiled code growing 80% is no object kept
    expect(snapshotCheck({ ...base, heapKept: { worker: kept(1040) } })?.ok).toBe(true);
    expect(snapshotCheck({ ...base, heapKept: { worker: kept(1060) } })?.ok).toBe(false);
    const grown = { ...base, samples: [sample(0, 100), sample(30_000, 120)], heapKept: { worker: kept(1000) } };
    expect(checks(grown, 0).map((c) => c.name)).toContain('pageHeapBytes growth after warm-up');
    expect(checks(grown, 0).map((c) => c.name)).not.toContain('workerHeapBytes growth after warm-up');
    expect(figures(grown, 0)).toEqual([
      { name: 'worker heap as sampled (objects, compiled code and V8 metadata)', value: '20.0%' },
      { name: 'worker compiled code (snapshots)', value: '0.00 to 0.00 MiB' },
    ]);
  });

  it('fails each check on its own figure', () => {
    const report: SoakReport = {
      date: '2026-01-01', commit: 'abc', seed: 1, durationMs: 60_000, heartbeat: { intervalMs: 250, timeoutMs: 3000 }, requestDeadlineMs: 1000, events: [],
      requests: { served: 5, total: 6, byClient: {}, tokens: 10 },
      errors: { expected: { AbortError: 1 }, unexpected: {}, unexpectedExamples: [] },
      consoleErrors: [], doubleEnds: 0, unended: 0,
      samples: [sample(30_000, 100), sample(60_000, 106)], kvBlocksUsedAtEnd: 0, workerRestarts: 0, playground: null,
    };
    const failed = (r: SoakReport) => checks(r, 30_000).filter((c) => !c.ok).map((c) => c.name);
    expect(failed(report)).toEqual(['pageHeapBytes growth after warm-up', 'workerHeapBytes growth after warm-up', 'gpuBytes growth after warm-up']);
    const flat = { ...report, samples: [sample(30_000, 100), sample(60_000, 100)] };
    expect(failed(flat)).toEqual([]);
    expect(failed({ ...flat, kvBlocksUsedAtEnd: 3, workerRestarts: 1, doubleEnds: 1, consoleErrors: ['x'], errors: { ...flat.errors, unexpected: { deadline: 1 } } })).toEqual([
      'unexpected errors', 'console errors', 'requests ended exactly once', 'KV blocks in use at the end', 'worker restarts',
    ]);
  });

  it('counts the playground\'s sent messages a reloaded tab shows, with their answers, and fails on one lost or on no reload', () => {
    const sent = [{ marker: '[soak 0.0]', answered: true }, { marker: '[soak 1.0]', answered: true }, { marker: '[soak 0.1]', answered: false }];
    const panes = [
      [{ role: 'user' as const, text: '[soak 0.0] hello' }, { role: 'assistant' as const, text: 'hi' }, { role: 'user' as const, text: '[soak 0.1] cut' }],
      [{ role: 'user' as const, text: '[soak 1.0] again' }, { role: 'assistant' as const, text: '' }],
    ];
    const count = countPresent(sent, panes, 5000, 1);
    expect(count).toEqual({ atMs: 5000, tab: 1, sent: 3, present: 3, answered: 2, answeredPresent: 1, missing: ['[soak 1.0]'] });
    expect(lostMessages([count])).toBe(1);
    const whole = countPresent(sent.slice(0, 1), panes, 0, 0);
    const base = { date: '2026-01-01', commit: 'abc', seed: 1, durationMs: 60_000, heartbeat: { intervalMs: 250, timeoutMs: 3000 }, requestDeadlineMs: 1000, events: [],
      requests: { served: 5, total: 5, byClient: {}, tokens: 10 }, errors: { expected: {}, unexpected: {}, unexpectedExamples: [] },
      consoleErrors: [], doubleEnds: 0, unended: 0, samples: [], kvBlocksUsedAtEnd: 0, workerRestarts: 0 };
    const check = (reloads: ReturnType<typeof countPresent>[]) => checks({ ...base, playground: { tabs: 2, turns: 3, done: 3, failed: 0, errors: {}, reloads } }, 0).find((c) => c.name === 'playground messages lost over reloads')!;
    expect(check([whole])).toEqual({ name: 'playground messages lost over reloads', ok: true, value: '0 lost; 1 reloads of 2 tabs, 1 messages sent' });
    expect(check([whole, count]).ok).toBe(false);
    expect(check([]).ok).toBe(false);
  });
});
