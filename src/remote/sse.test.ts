// readSseData over bodies cut at awkward places: inside a line, inside a UTF-8 character, between
// the two newlines that end an event, CRLF framing, comments, and [DONE] ending the stream early.
import { describe, expect, it } from 'vitest';
import { readSseData } from './sse';

function body(parts: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

async function read(parts: Uint8Array[]): Promise<string[]> {
  const out: string[] = [];
  for await (const data of readSseData(body(parts))) out.push(data);
  return out;
}

const bytes = (text: string) => new TextEncoder().encode(text);

describe('readSseData', () => {
  it('yields each event data whatever the chunking, up to [DONE]', async () => {
    const text = 'data: {"a":1}\n\n: keep-alive comment\n\ndata: {"b":"é"}\n\ndata: [DONE]\n\ndata: {"after":true}\n\n';
    const all = bytes(text);
    expect(await read([all])).toEqual(['{"a":1}', '{"b":"é"}']);
    // every split point, including inside the two-byte é and between the two newlines
    for (let cut = 1; cut < all.length; cut++) expect(await read([all.slice(0, cut), all.slice(cut)])).toEqual(['{"a":1}', '{"b":"é"}']);
  });

  it('reads CRLF framing, multi-line data, and a last event without its blank line', async () => {
    expect(await read([bytes('data: one\r\n\r\ndata: two\ndata: lines\n\ndata: tail')])).toEqual(['one', 'two\nlines', 'tail']);
  });
});
