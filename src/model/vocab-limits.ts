// The limits every vocabulary is held to at load, for tokenizer.json and GGUF alike: how many
// entries a table may have, and that every token id names an embedding row. Not the tokenizer.
import { ModelFormatError } from './errors';

/** The largest vocabularies in use hold ~260k tokens; a tokenizer past this is hostile or broken. */
export const MAX_VOCAB_ENTRIES = 1_000_000;

/** How many offending ids an error message lists before it only counts the rest. */
const IDS_NAMED = 5;

/** Refuses a vocabulary table (tokens, merges, added tokens) longer than MAX_VOCAB_ENTRIES. */
export function checkVocabEntries(file: string, what: string, count: number): void {
  if (count > MAX_VOCAB_ENTRIES) {
    throw new ModelFormatError(file, `${what} has ${count} entries, more than the limit of ${MAX_VOCAB_ENTRIES}`);
  }
}

/**
 * Refuses a vocabulary with token ids outside the model's embedding rows [0, rows): such a
 * tokenizer loads but every prompt holding one of those tokens (a chat template's specials, say)
 * fails its turn. `ids` are the offending ids, in any order; the message names the lowest few.
 */
export function checkIdsFitEmbedding(file: string, ids: readonly number[], rows: number): void {
  if (ids.length === 0) return;
  const sorted = [...ids].sort((a, b) => a - b);
  const named = sorted.slice(0, IDS_NAMED).join(', ');
  const rest = sorted.length > IDS_NAMED ? ` and ${sorted.length - IDS_NAMED} more` : '';
  const subject = sorted.length === 1 ? `token id ${named} lies` : `token ids ${named}${rest} lie`;
  throw new ModelFormatError(file, `${subject} outside the model's vocabulary of ${rows} tokens (ids 0 to ${rows - 1}, its embedding rows)`);
}
