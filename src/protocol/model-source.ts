// What both sides of the worker boundary say and check about a model source: its label, whether a
// string is a Hugging Face repo id, and which URLs may be fetched. Pure functions; no fetching.
import type { ModelSource } from './api';

export const HF_BASE = 'https://huggingface.co';

const REPO_ID = /^[\w.-]+\/[\w.-]+$/;

/** `owner/name`, as the Hugging Face Hub spells a repository (surrounding spaces ignored). */
export function isRepoId(value: string): boolean {
  return REPO_ID.test(value.trim());
}

/** https anywhere, or the page's own origin (where the embedded model is served); else why not. */
export function checkModelUrl(raw: string, pageOrigin?: string): { ok: true; url: string } | { ok: false; error: string } {
  let url: URL;
  try {
    url = new URL(raw.trim(), pageOrigin);
  } catch {
    return { ok: false, error: `"${raw}" is not a URL` };
  }
  if (url.protocol !== 'https:' && url.origin !== pageOrigin) return { ok: false, error: `only https:// URLs (or this page's own origin) can be loaded, not ${url.protocol}//` };
  return { ok: true, url: url.href };
}

// A Record, so adding a kind to ModelSource fails to compile until it is listed here.
const KINDS: Record<ModelSource['kind'], true> = { embedded: true, huggingface: true, url: true, files: true, server: true };
/** Every ModelSource kind, for checks and for messages that list them. */
export const MODEL_SOURCE_KINDS = Object.keys(KINDS) as ReadonlyArray<ModelSource['kind']>;

/**
 * What is wrong with a source given as plain data (a page may pass anything), naming the field as
 * `model.<field>`, or null when its shape is right. Whether the model is there is the loader's to find.
 */
export function checkModelSource(source: unknown): { param: string; message: string } | null {
  const kinds = MODEL_SOURCE_KINDS.map((k) => `'${k}'`).join(', ');
  if (source === null || typeof source !== 'object') return { param: 'model', message: `a model source must be an object such as { kind: 'embedded' }, not ${typeof source === 'string' ? `"${source}"` : String(source)}` };
  const s = source as Record<string, unknown>;
  if (!MODEL_SOURCE_KINDS.includes(s.kind as ModelSource['kind'])) {
    const given = s.kind === undefined ? 'no kind was given' : `${JSON.stringify(s.kind)} is not one`;
    return { param: 'model.kind', message: `model.kind must be one of ${kinds}: ${given}` };
  }
  const text = (field: string): boolean => typeof s[field] === 'string' && (s[field] as string).trim() !== '';
  switch (s.kind as ModelSource['kind']) {
    case 'huggingface':
      if (!text('repoId') || !isRepoId(s.repoId as string)) return { param: 'model.repoId', message: `model.repoId must be a Hugging Face repo id (owner/name), not ${JSON.stringify(s.repoId)}` };
      return null;
    case 'url':
      return text('url') ? null : { param: 'model.url', message: `model.url must be a URL, not ${JSON.stringify(s.url)}` };
    case 'files':
      return Array.isArray(s.files) && s.files.length > 0 ? null : { param: 'model.files', message: 'model.files must be a non-empty array of File objects' };
    case 'server':
      return text('baseUrl') ? null : { param: 'model.baseUrl', message: `model.baseUrl must be the server's URL, not ${JSON.stringify(s.baseUrl)}` };
    case 'embedded':
      return null;
  }
}

/** A short label for progress lines and errors. */
export function describeSource(source: ModelSource): string {
  switch (source.kind) {
    case 'embedded':
      return 'the embedded model';
    case 'huggingface':
      return `${source.repoId}${source.file ? `/${source.file}` : ''}`;
    case 'url':
      return source.url;
    case 'files':
      return source.files.length === 1 ? source.files[0].name : `${source.files.length} local files`;
    case 'server':
      return `the server at ${source.baseUrl}`;
  }
}
