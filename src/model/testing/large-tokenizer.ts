// BPE tokenizer.json files of any size written straight to bytes: real-sized ones (Gemma's 262k
// vocabulary) and hostile ones (millions of entries), for the table-size tests and
// tools/models/tokenizer-refusal.node.ts. Their merges are not meaningful: not for encoding text.

const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** Letters only: a key of digits is an array index to V8, which parses far faster than real tokens. */
export function largeTokenName(id: number): string {
  let name = '';
  let rest = id;
  do {
    name += LETTERS[rest % LETTERS.length];
    rest = Math.floor(rest / LETTERS.length);
  } while (rest > 0);
  return name;
}

export interface LargeTokenizerShape {
  /** Entries of model.vocab, token ids 0..vocabEntries-1. */
  vocabEntries: number;
  /** Entries of model.merges, each a ["left","right"] pair (the current format, the larger one). */
  merges: number;
}

/** A BPE tokenizer.json with the given table sizes; no added tokens. */
export function largeBpeTokenizerJson(shape: LargeTokenizerShape): Uint8Array {
  const enc = new TextEncoder();
  const head = enc.encode('{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],"normalizer":null,"pre_tokenizer":null,"post_processor":null,"decoder":null,"model":{"type":"BPE","dropout":null,"unk_token":null,"vocab":{');
  const middle = enc.encode('},"merges":[');
  const tail = enc.encode(']}}');
  // A vocabulary entry is at most `"name":id,` (names <= 5 letters, ids <= 8 digits), a merge `["name","name"],`.
  const out = new Uint8Array(head.length + shape.vocabEntries * 17 + middle.length + shape.merges * 18 + tail.length);
  let at = 0;
  const put = (bytes: Uint8Array) => {
    out.set(bytes, at);
    at += bytes.length;
  };
  const write = (text: string) => {
    at += enc.encodeInto(text, out.subarray(at)).written;
  };
  put(head);
  for (let id = 0; id < shape.vocabEntries; id++) write(`${id > 0 ? ',' : ''}"${largeTokenName(id)}":${id}`);
  put(middle);
  const names = Math.max(1, shape.vocabEntries);
  for (let i = 0; i < shape.merges; i++) {
    write(`${i > 0 ? ',' : ''}["${largeTokenName(i % names)}","${largeTokenName((i * 7 + 1) % names)}"]`);
  }
  put(tail);
  return out.subarray(0, at);
}
