// How a failed fetch is explained in a page: CORS refused vs nothing answering (told apart by a
// no-cors probe), a denied local-network-access prompt, timeouts; and HTTP failures by status.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { explainHttpFailure, explainNetworkFailure, isLocalHost } from './server-errors';

const failed = new TypeError('Failed to fetch');

afterEach(() => {
  vi.unstubAllGlobals();
});

/** A page scope (CORS applies there), with a fetch whose no-cors probe answers or not. */
function inPage(probeAnswers: boolean): typeof fetch {
  vi.stubGlobal('document', {});
  return (async (_url: string, init?: RequestInit) => {
    if (init?.mode !== 'no-cors') throw failed;
    if (!probeAnswers) throw failed;
    return new Response(null, { status: 200 });
  }) as typeof fetch;
}

describe('explainNetworkFailure in a page', () => {
  it('a server that answers a no-cors request but failed the real one refused this origin (CORS)', async () => {
    const err = await explainNetworkFailure('http://127.0.0.1:8080/v1/models', failed, inPage(true), 'http://127.0.0.1:5173');
    expect(err.code).toBe('cors');
    expect(err.message).toContain("refused this page's origin (http://127.0.0.1:5173)");
  });

  it('a private address nothing answers from a public page: the local-network-access prompt', async () => {
    const err = await explainNetworkFailure('http://192.168.1.20:8080/v1/models', failed, inPage(false), 'https://cohort.example');
    expect(err.code).toBe('local-network');
    expect(err.message).toMatch(/Local network access/);
  });

  it('a private address from a local page, with nothing answering, is just unreachable', async () => {
    const err = await explainNetworkFailure('http://127.0.0.1:9/v1/models', failed, inPage(false), 'http://127.0.0.1:5173');
    expect(err.code).toBe('unreachable');
  });

  it('an offline browser says so first', async () => {
    const fetchFn = inPage(true);
    vi.stubGlobal('navigator', { onLine: false });
    expect((await explainNetworkFailure('https://gpu.example/v1/models', failed, fetchFn, 'https://cohort.example')).code).toBe('offline');
  });
});

describe('explainNetworkFailure in Node', () => {
  it('tells DNS, refused connections and timeouts apart from the cause', async () => {
    const never = (async () => Promise.reject(failed)) as typeof fetch;
    const dns = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ENOTFOUND' } });
    expect((await explainNetworkFailure('http://nope.invalid/v1/models', dns, never)).message).toMatch(/No host named nope.invalid/);
    const refused = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
    expect((await explainNetworkFailure('http://127.0.0.1:9/v1/models', refused, never)).message).toMatch(/Nothing is listening at http:\/\/127.0.0.1:9/);
    const timeout = Object.assign(new Error('timed out'), { name: 'TimeoutError' });
    expect((await explainNetworkFailure('http://10.0.0.2/v1/models', timeout, never)).code).toBe('timeout');
  });
});

describe('explainHttpFailure', () => {
  it('401 and 403 are the key; 404 is the address; other statuses carry the server reason', async () => {
    expect((await explainHttpFailure(new Response('{"error":{"message":"Invalid API Key"}}', { status: 401 }), 'GET /v1/models')).message).toMatch(/refused the API key \(401: Invalid API Key\)/);
    expect((await explainHttpFailure(new Response('', { status: 403 }), 'GET /v1/models')).code).toBe('unauthorized');
    expect((await explainHttpFailure(new Response('Not Found', { status: 404 }), 'GET /v1/models')).code).toBe('not-found');
    expect((await explainHttpFailure(new Response('{"error":"boom"}', { status: 500 }), 'POST /v1/chat/completions')).message).toBe('POST /v1/chat/completions failed with 500: boom');
  });

  it("reads llama.cpp's context overflow with both counts", async () => {
    const body = '{"error":{"code":400,"message":"request (619 tokens) exceeds the available context size (256 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":619,"n_ctx":256}}';
    const err = await explainHttpFailure(new Response(body, { status: 400 }), 'POST /v1/chat/completions');
    expect(err).toMatchObject({ code: 'context-length', numPromptTokens: 619, numContextTokens: 256 });
  });
});

describe('isLocalHost', () => {
  it('knows loopback and private ranges', () => {
    for (const host of ['localhost', '127.0.0.1', '[::1]', '10.1.2.3', '192.168.0.9', '172.20.0.1', 'gpu-box.local']) expect(isLocalHost(host), host).toBe(true);
    for (const host of ['example.com', '8.8.8.8', '172.32.0.1']) expect(isLocalHost(host), host).toBe(false);
  });
});
