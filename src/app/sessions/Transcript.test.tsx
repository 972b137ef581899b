// Model output and typed text are rendered as text: markup in them never becomes elements; a
// message waiting for the model shows last, marked for eyes and screen readers.
// Server-side rendering in Node stands in for the DOM (no browser needed for this property).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { HELD_NOTE, Transcript } from './Transcript';

describe('Transcript', () => {
  it('renders HTML and script in model output and user text as inert text', () => {
    const hostile = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"><a href="javascript:alert(1)">x</a>';
    const html = renderToStaticMarkup(
      createElement(Transcript, { lines: [{ role: 'user', text: hostile }, { role: 'assistant', text: hostile }], streaming: false }),
    );
    expect(html).not.toMatch(/<script|<img|<a /);
    expect(html.match(/&lt;script&gt;window.pwned = 1&lt;\/script&gt;/g)).toHaveLength(2);
  });

  it('shows a message waiting for the model last, as inert text with a status saying so, instead of the empty hint', () => {
    const html = renderToStaticMarkup(
      createElement(Transcript, { lines: [{ role: 'user', text: 'a' }, { role: 'assistant', text: 'b' }], streaming: false, held: '<b>next</b>' }),
    );
    expect(html).toMatch(/data-testid="msg-held".*&lt;b&gt;next&lt;\/b&gt;.*role="status"[^>]*>waiting for the model to load</);
    expect(html.lastIndexOf('msg-held')).toBeGreaterThan(html.lastIndexOf('>b<'));
    expect(HELD_NOTE).toBe('waiting for the model to load');
    const empty = renderToStaticMarkup(createElement(Transcript, { lines: [], streaming: false, held: 'x', empty: createElement('p', null, 'EMPTY HINT') }));
    expect(empty).not.toContain('EMPTY HINT');
    expect(empty).toContain('msg-held');
  });

  it('shades a reply with logprobs token by token, each focusable in turn and described, its text still inert', () => {
    const tokens = [
      { id: 1, token: '<b>', logprob: 0, top: [{ id: 1, token: '<b>', logprob: 0 }] },
      { id: 2, token: ' hi', logprob: Math.log(0.25), top: [{ id: 3, token: ' yo', logprob: Math.log(0.5) }] },
    ];
    const html = renderToStaticMarkup(createElement(Transcript, { lines: [{ role: 'user', text: 'q' }, { role: 'assistant', text: '<b> hi', tokens }], streaming: false }));
    expect(html).toContain('data-testid="token-shading"');
    const spans = html.match(/<span class="tok"[^>]*>[^<]*<\/span>/g)!;
    expect(spans).toHaveLength(2);
    // one tab stop (the arrow keys move on), every token described by the line under them
    expect(spans[0]).toMatch(/tabindex="0"/);
    expect(spans[1]).toMatch(/tabindex="-1"/);
    expect(spans[1]).toMatch(/--shade:0.75/);
    expect(spans[1]).toContain('title="&quot; hi&quot; 25.0% · alternatives: &quot; yo&quot; 50.0%"');
    const describedBy = /aria-describedby="([^"]+)"/.exec(spans[0]!)![1];
    expect(html).toContain(`id="${describedBy}"`);
    expect(html).toContain('&lt;b&gt;</span>');
    expect(html).toContain('data-testid="msg-shading-toggle"');
  });

  it('shows a finished reply that is a tool call as a call card, and the same text while streaming as text', () => {
    const lines = [{ role: 'user' as const, text: 'weather?' }, { role: 'assistant' as const, text: '{"name": "get_weather", "arguments": {"city": "<Oslo>"}}' }];
    const done = renderToStaticMarkup(createElement(Transcript, { lines, streaming: false }));
    expect(done).toMatch(/data-testid="tool-call" data-name="get_weather".*<code>get_weather<\/code>.*&quot;city&quot;: &quot;&lt;Oslo&gt;&quot;/s);
    const streaming = renderToStaticMarkup(createElement(Transcript, { lines, streaming: true }));
    expect(streaming).not.toContain('tool-call');
  });
});
