// Reads a text/event-stream body (what /v1/chat/completions streams) as its `data:` payloads.
// Not a general EventSource: no reconnects, ids or retry; `[DONE]` ends the stream.

/** Each event's data (multi-line data joined by \n), until the body ends or sends `[DONE]`. */
export async function* readSseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = eventEnd(buffer)) >= 0) {
        const data = dataOf(buffer.slice(0, end));
        buffer = buffer.slice(end).replace(/^(\r?\n){1,2}/, '');
        if (data === null) continue;
        if (data === '[DONE]') return;
        yield data;
      }
    }
    const tail = dataOf(buffer + decoder.decode());
    if (tail !== null && tail !== '[DONE]') yield tail;
  } finally {
    reader.releaseLock();
  }
}

/** Index of the blank line that ends the first event, or -1 while it is incomplete. */
function eventEnd(buffer: string): number {
  const lf = buffer.indexOf('\n\n');
  const crlf = buffer.indexOf('\r\n\r\n');
  if (lf < 0) return crlf;
  return crlf < 0 ? lf : Math.min(lf, crlf);
}

function dataOf(event: string): string | null {
  const lines = event.split(/\r?\n/).filter((line) => line.startsWith('data:'));
  if (lines.length === 0) return null;
  return lines.map((line) => line.slice(5).replace(/^ /, '')).join('\n');
}
