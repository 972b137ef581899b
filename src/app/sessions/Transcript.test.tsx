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
});
