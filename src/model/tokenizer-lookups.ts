// Lookups on a raw tokenizer.json, before the library builds it: token ids by content, whether the
// post-processor adds BOS, which added tokens past the embedding rows are set aside. Not the tokenizer.
/** A parsed JSON object (tokenizer.json and its parts). */
export type JsonObject = Record<string, unknown>;

/**
 * Added tokens at or past `rows` that the model vocabulary does not hold and that are not BOS:
 * text never needs them (transformers loads such folders; llama.cpp's converter drops them).
 * Any other id past the rows stays, for idsOutside to refuse.
 */
export function setAsideIds(tokenizerJson: JsonObject, rows: number, bosTokenId: number | null): number[] {
  const added = (tokenizerJson.added_tokens ?? []) as Array<{ id?: unknown }>;
  const past = added.map((t) => t.id).filter((id): id is number => typeof id === 'number' && id >= rows && id !== bosTokenId);
  if (past.length === 0) return [];
  const vocab = (tokenizerJson.model as JsonObject | undefined)?.vocab;
  const modelIds = new Set<unknown>(
    Array.isArray(vocab) ? vocab.map((_, i) => i) : vocab && typeof vocab === 'object' ? Object.values(vocab) : [],
  );
  return past.filter((id) => !modelIds.has(id));
}

/** content -> id from a raw tokenizer.json (added tokens first, then the model vocabulary). */
export function idLookup(tokenizerJson: JsonObject): (content: string) => number | undefined {
  const added = new Map<string, number>();
  for (const t of (tokenizerJson.added_tokens as Array<{ id: number; content: string }> | undefined) ?? []) {
    added.set(t.content, t.id);
  }
  const model = tokenizerJson.model as JsonObject | undefined;
  const vocab = model?.vocab;
  return (content) => {
    const id = added.get(content);
    if (id !== undefined) return id;
    if (vocab && !Array.isArray(vocab) && typeof vocab === 'object') {
      const v = (vocab as Record<string, unknown>)[content];
      if (typeof v === 'number') return v;
    }
    if (Array.isArray(vocab)) {
      const index = vocab.findIndex((entry) => Array.isArray(entry) && entry[0] === content);
      if (index >= 0) return index;
    }
    return undefined;
  };
}

/** Whether a TemplateProcessing post-processor (maybe inside a Sequence) starts with `content`. */
export function postProcessorAddsFirst(processor: unknown, content: string): boolean {
  if (processor === null || typeof processor !== 'object') return false;
  const p = processor as JsonObject;
  if (p.type === 'Sequence' && Array.isArray(p.processors)) {
    return p.processors.some((inner) => postProcessorAddsFirst(inner, content));
  }
  if (p.type !== 'TemplateProcessing' || !Array.isArray(p.single)) return false;
  const first = p.single[0] as { SpecialToken?: { id?: string } } | undefined;
  return first?.SpecialToken?.id === content;
}
