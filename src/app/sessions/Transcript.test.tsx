// Model output and typed text are rendered as text: markup in them never becomes elements.
// Server-side rendering in Node stands in for the DOM (no browser needed for this property).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { Transcript } from './Transcript';

describe('Transcript', () => {
  it('renders HTML and script in model output and user text as inert text', () => {
    const hostile = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"><a href="javascript:alert(1)">x</a>';
    const html = renderToStaticMarkup(
      createElement(Transcript, { lines: [{ role: 'user', text: hostile }, { role: 'assistant', text: hostile }], streaming: false }),
    );
    expect(html).not.toMatch(/<script|<img|<a /);
    expect(html.match(/&lt;script&gt;window.pwned = 1&lt;\/script&gt;/g)).toHaveLength(2);
  });
});
