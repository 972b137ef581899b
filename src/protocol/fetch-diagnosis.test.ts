// Tests for fetch failures a person can act on: offline, timeout, CORS refused, unreachable,
// with fake fetch functions (no network). HTTP statuses pass through untouched.
import { describe, expect, it, vi } from 'vitest';
import { classifyFetchFailure, diagnosedFetch, FetchFailure, fetchWithDiagnosis } from './fetch-diagnosis';

const URL_ = 'https://huggingface.co/api/models/a/b';

/** A fetch that fails like a browser does on CORS: the normal request throws, no-cors answers. */
function corsRefusingFetch(): typeof fetch {
  return async (_input, init) => {
    if (init?.mode === 'no-cors') return new Response(null, { status: 200 });
    throw new TypeError('Failed to fetch');
  };
}

const failing: typeof fetch = async () => {
  throw new TypeError('Failed to fetch');
};

/** Never answers until aborted. */
const silent: typeof fetch = (_input, init) =>
  new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))));

async function failureOf(promise: Promise<unknown>): Promise<FetchFailure> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof FetchFailure) return error;
    throw error;
  }
  throw new Error('expected a FetchFailure');
}

describe('classifyFetchFailure', () => {
  it('puts offline first, then our timeout, then what the no-cors probe saw', () => {
    expect(classifyFetchFailure({ onLine: false, timedOut: true, reachableWithoutCors: true })).toBe('offline');
    expect(classifyFetchFailure({ onLine: true, timedOut: true, reachableWithoutCors: false })).toBe('timeout');
    expect(classifyFetchFailure({ onLine: undefined, timedOut: false, reachableWithoutCors: true })).toBe('cors');
    expect(classifyFetchFailure({ onLine: true, timedOut: false, reachableWithoutCors: false })).toBe('unreachable');
  });
});

describe('fetchWithDiagnosis', () => {
  it('passes responses through, 404s included', async () => {
    const res = await fetchWithDiagnosis(URL_, {}, { fetchFn: async () => new Response('no', { status: 404 }), isOnline: () => true });
    expect(res.status).toBe(404);
  });

  it('fails at once when the browser is offline, without fetching', async () => {
    let called = false;
    const failure = await failureOf(fetchWithDiagnosis(URL_, {}, { fetchFn: async () => ((called = true), new Response()), isOnline: () => false }));
    expect(failure.kind).toBe('offline');
    expect(failure.message).toMatch(/offline/);
    expect(called).toBe(false);
  });

  it('tells a CORS refusal from an unreachable server', async () => {
    const cors = await failureOf(fetchWithDiagnosis(URL_, {}, { fetchFn: corsRefusingFetch(), isOnline: () => true }));
    expect(cors.kind).toBe('cors');
    expect(cors.message).toContain('huggingface.co answered but does not allow this page');
    const down = await failureOf(fetchWithDiagnosis(URL_, {}, { fetchFn: failing, isOnline: () => true }));
    expect(down.kind).toBe('unreachable');
    expect(down.message).toContain('huggingface.co could not be reached');
  });

  it('gives up on a silent server after the timeout, not a minute later', async () => {
    vi.useFakeTimers(); // the test's own clock: the bound holds however slow the machine is
    try {
      let settled = false;
      const outcome = failureOf(fetchWithDiagnosis(URL_, {}, { fetchFn: silent, timeoutMs: 50, isOnline: () => true })).finally(() => (settled = true));
      await vi.advanceTimersByTimeAsync(49);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1999 - 49);
      expect(settled).toBe(true);
      const failure = await outcome;
      expect(failure.kind).toBe('timeout');
      expect(failure.message).toContain('did not answer within 0 s');
    } finally {
      vi.useRealTimers();
    }
  });

  it('leaves a caller\'s own abort an abort', async () => {
    const controller = new AbortController();
    const pending = fetchWithDiagnosis(URL_, { signal: controller.signal }, { fetchFn: silent, isOnline: () => true });
    controller.abort(new DOMException('stop', 'AbortError'));
    await expect(pending).rejects.not.toBeInstanceOf(FetchFailure);
  });

  it('wraps a fetch function for code that takes one', async () => {
    const wrapped = diagnosedFetch(corsRefusingFetch(), { isOnline: () => true });
    expect((await failureOf(wrapped(URL_))).kind).toBe('cors');
  });
});
