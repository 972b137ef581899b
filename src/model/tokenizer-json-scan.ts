// A single bounded pass over tokenizer.json's raw bytes that counts the entries of every array
// and object in it, so an oversized table is refused before JSON.parse and the tokenizer library
// build anything. Not a JSON parser: malformed JSON passes through here and is refused by JSON.parse.
import { ModelFormatError } from './errors';
import { MAX_VOCAB_ENTRIES } from './vocab-limits';

/**
 * Real tokenizer.json files nest about 7 levels deep (post_processor.processors[i].special_tokens
 * ...ids); far deeper is not a tokenizer, and the scan keeps per-level state only this deep.
 */
export const MAX_TOKENIZER_JSON_NESTING = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;

/** What each byte means to the scan outside strings; 0 (all others) starts or continues a scalar. */
const IGNORED = 1;
const COMMA = 2;
const STRING = 3;
const OPEN = 4;
const CLOSE = 5;
const BYTE_KIND = (() => {
  const kinds = new Uint8Array(256);
  for (const c of ' \t\n\r:') kinds[c.charCodeAt(0)] = IGNORED;
  kinds[0x2c] = COMMA;
  kinds[QUOTE] = STRING;
  kinds[OPEN_OBJECT] = OPEN;
  kinds[0x5b] = OPEN;
  kinds[0x7d] = CLOSE;
  kinds[0x5d] = CLOSE;
  return kinds;
})();

/** Tables whose names the refusal spells out as the parsed-object check does. */
const TABLE_NAMES: Readonly<Record<string, string>> = { 'model.vocab': 'the vocabulary (model.vocab)' };

/** Per nesting level of the containers around the current one (level 0 = outside the top value). */
interface Levels {
  isObject: Uint8Array;
  /** Entries seen so far; the last one is the entry that holds the level above. */
  entries: Uint32Array;
  awaitingEntry: Uint8Array;
  /** Byte range of the latest key, quotes included (objects only). */
  keyStart: Int32Array;
  keyEnd: Int32Array;
}

/**
 * Refuses a tokenizer.json in which any array or object (model.vocab, model.merges,
 * added_tokens, or anything else) has more than `limit` entries, or that nests past
 * MAX_TOKENIZER_JSON_NESTING. It stops at the first entry past the limit, so refusing costs
 * one pass over the bytes up to there and a few kilobytes, whatever the file holds after.
 * Sound for real tokenizers: for valid JSON the counts are exactly the parsed lengths, and the
 * limit is the one the parsed tables were already held to, far above real ones (Gemma 3's
 * 262,144 tokens and 514,906 merges, Llama 3's 128k tokens, Qwen's 151k).
 */
export function checkTokenizerJsonEntries(file: string, bytes: Uint8Array, limit = MAX_VOCAB_ENTRIES): void {
  const size = MAX_TOKENIZER_JSON_NESTING + 1;
  const saved: Levels = {
    isObject: new Uint8Array(size),
    entries: new Uint32Array(size),
    awaitingEntry: new Uint8Array(size),
    keyStart: new Int32Array(size),
    keyEnd: new Int32Array(size),
  };
  // The innermost open container lives in locals; the ones around it in `saved`.
  let depth = 0;
  let isObject = 0;
  let entries = 0;
  let awaitingEntry = 0;
  let keyStart = 0;
  let keyEnd = 0;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const kind = BYTE_KIND[bytes[i]];
    if (kind === IGNORED) continue;
    if (kind === COMMA) {
      awaitingEntry = 1;
      continue;
    }
    // An entry starts at the first byte of a key (objects) or of a value (arrays).
    const startsEntry = awaitingEntry === 1 && depth > 0 && kind !== CLOSE;
    if (startsEntry) {
      awaitingEntry = 0;
      if (++entries > limit) throw tooManyEntries(file, bytes, i, saved, depth, limit);
    }
    if (kind === STRING) {
      let end = i + 1;
      while (end < n && bytes[end] !== QUOTE) end += bytes[end] === BACKSLASH ? 2 : 1;
      if (end >= n) return; // unterminated: JSON.parse refuses it
      if (startsEntry && isObject) {
        keyStart = i;
        keyEnd = end + 1;
      }
      i = end;
    } else if (kind === OPEN) {
      if (depth === MAX_TOKENIZER_JSON_NESTING) {
        throw new ModelFormatError(file, `nests deeper than ${MAX_TOKENIZER_JSON_NESTING} levels (at byte ${i}); no tokenizer does`);
      }
      saved.isObject[depth] = isObject;
      saved.entries[depth] = entries;
      saved.awaitingEntry[depth] = awaitingEntry;
      saved.keyStart[depth] = keyStart;
      saved.keyEnd[depth] = keyEnd;
      depth++;
      isObject = bytes[i] === OPEN_OBJECT ? 1 : 0;
      entries = 0;
      awaitingEntry = 1;
    } else if (kind === CLOSE && depth > 0) {
      // Brackets that do not match are JSON.parse's to refuse; the scan only keeps its depth.
      depth--;
      isObject = saved.isObject[depth];
      entries = saved.entries[depth];
      awaitingEntry = saved.awaitingEntry[depth];
      keyStart = saved.keyStart[depth];
      keyEnd = saved.keyEnd[depth];
    }
  }
}

function tooManyEntries(file: string, bytes: Uint8Array, at: number, saved: Levels, depth: number, limit: number): ModelFormatError {
  const path = pathTo(bytes, saved, depth);
  const what = TABLE_NAMES[path] ?? (path === '' ? 'the top-level value' : path);
  return new ModelFormatError(file, `${what} has more than ${limit} entries, past the limit (counted up to byte ${at} of ${bytes.length})`);
}

/** "model.vocab", "added_tokens", "post_processor.processors[1]": where the container at `depth` sits. */
function pathTo(bytes: Uint8Array, saved: Levels, depth: number): string {
  let path = '';
  for (let level = 1; level < depth; level++) {
    if (!saved.isObject[level]) {
      path += `[${saved.entries[level] - 1}]`;
      continue;
    }
    const name = keyText(bytes.subarray(saved.keyStart[level], saved.keyEnd[level]));
    path += path === '' ? name : `.${name}`;
  }
  return path;
}

/** A key as JSON.parse reads it (escapes resolved); a long one cut short. */
function keyText(quoted: Uint8Array): string {
  const decoder = new TextDecoder();
  if (quoted.length > 200) return `${decoder.decode(quoted.subarray(1, 61))}…`;
  try {
    return JSON.parse(decoder.decode(quoted)) as string;
  } catch {
    return decoder.decode(quoted.subarray(1, quoted.length - 1));
  }
}
